#pragma once
// Everything about a plan that does not depend on the strategy: model, training settings, cluster,
// and the compute and network models built from them. Built once per scenario; the analytic model
// and the search evaluate many strategies against one context.
#include "calibration/calibration.hpp"
#include "calibration/error_band.hpp"
#include "model/collective_model.hpp"
#include "model/compute_model.hpp"
#include "model/model_math.hpp"
#include "model/power_curves.hpp"
#include "model/power_model.hpp"
#include "spec/cluster_spec.hpp"
#include "spec/model_spec.hpp"
#include "spec/training_spec.hpp"

namespace parallax {

struct PlanContext {
    ModelSpec model;
    TrainingSpec training;
    ClusterSpec cluster;
    ComputeDevice device; // points into `cluster` — PlanContext is not copyable for that reason
    NetworkModel network;
    ComputeDevice power_device; // `device` without the calibration's scales: what the power model sees
    PowerModel power; // per GPU: idle, dynamic range, V/f curve, cap, thermal limit
    ClockLadder clocks; // the clock levels power curves are built on
    double node_overhead_W = 0; // what a node draws besides its GPUs
    double model_flops_per_token = 0; // Megatron-style, for tflops_per_gpu and MFU
    // Parameters of a dense layer and of an MoE layer (all alike in a model): what memory checks read.
    LayerParams dense_layer_params;
    LayerParams moe_layer_params;
    Calibration calibration;
    // Why the calibration asked for is not the one used (fitted on another GPU); empty when it is.
    std::string calibration_note;
    ErrorBand band; // the throughput's error band for this workload (builtin table)
    ErrorBand memory_band; // the peak memory's error band (builtin table)

    PlanContext(ModelSpec m, TrainingSpec t, ClusterSpec c, const Calibration& cal = builtin_calibration());
    PlanContext(const PlanContext&) = delete;
    PlanContext& operator=(const PlanContext&) = delete;
};

} // namespace parallax

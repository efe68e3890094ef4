#pragma once
// The power of every GPU over the simulated step: a step function per pipeline stage built
// from the ops the event simulator placed (each op's power from LoweredPlan::op_power_W), the cluster
// total (each stage stands for its tp x cp x dp GPUs, plus the nodes' overhead), and a bucketed
// version for plots.
#include "ir/lowering.hpp"
#include "model/plan_context.hpp"
#include "sim/simulator.hpp"

#include <vector>

namespace parallax {

struct PowerStep {
    double t_s = 0; // from here until the next step's time
    double W = 0;
};

struct DevicePower {
    std::vector<PowerStep> steps; // starts at 0, ends with a step at the makespan
    double energy_J = 0; // over [0, makespan]
    double avg_W = 0;
    double peak_W = 0;
    double min_W = 0;
};

struct PowerTrace {
    double makespan_s = 0;
    double gpus_per_device = 1; // tp * cp * dp GPUs behave like each pipeline stage's representative
    std::vector<DevicePower> devices; // per pipeline stage, one GPU
    double avg_W_per_gpu = 0; // over all GPUs
    double peak_W_per_gpu = 0;
    double cluster_overhead_W = 0;
    std::vector<PowerStep> cluster_W; // all GPUs plus node overhead, over the step
    double cluster_peak_W = 0;
    double cluster_min_W = 0;

    // Mean and max power per GPU of each device in `buckets` equal slices of [t0, t1): for plots.
    struct Buckets {
        double t0 = 0, t1 = 0;
        std::vector<float> mean_W, max_W;
    };
    Buckets bucketed(int device, double t0, double t1, int buckets) const;
    Buckets bucketed_cluster(double t0, double t1, int buckets) const;
};

PowerTrace power_trace(const PlanContext& ctx, const Strategy& s, const LoweredPlan& plan, const SimulationResult& sim);

} // namespace parallax

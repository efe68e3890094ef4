#pragma once
// The step of a heterogeneous plan (cluster.groups + strategy.stages, docs/heterogeneous.md): every
// replica of every stage costed on its own GPU and TP with the plain model's per-stage functions, the
// micro-batches of a stage split across its replicas by their speed, each stage paced by its busiest
// replica, the schedule's formula over the uneven stages, pipeline sends and gradient reductions
// across GPU types over the inter-node fabric, memory per replica against its own GPU.
#include "calibration/calibration.hpp"
#include "spec/prediction.hpp"
#include "spec/scenario.hpp"

#include <memory>
#include <string>
#include <vector>

namespace parallax {

class EvaluationCache;
struct PlanContext;

struct HeteroReplicaReport {
    std::string group;
    std::string gpu;
    int tp = 1;
    long long microbatches = 0; // of the step's, this replica's share
    double forward_s = 0; // one micro-batch, pipeline sends included
    double backward_s = 0;
    double busy_s = 0; // microbatches x (forward + backward)
    double peak_memory_bytes = 0;
    double capacity_bytes = 0;
    MemoryBreakdown memory;
};

struct HeteroStageReport {
    int stage = 0;
    int layers = 0;
    double microbatch_s = 0; // forward + backward of one micro-batch on the slowest replica
    double busy_s = 0; // the busiest replica's share of the step
    double grad_sync_s = 0; // gradient reduction (and gather) across the stage's replicas
    bool mixed = false; // replicas on different GPU types, fabrics or TP: synchronised over inter_node
    std::vector<HeteroReplicaReport> replicas;
};

struct HeteroPrediction {
    Prediction prediction;
    std::vector<HeteroStageReport> stages;
    int critical_stage = 0; // the stage whose busiest replica paces the pipeline
    long long gpus_used = 0; // GPUs the replicas hold; the groups' others stay idle
};

// One node group's plan context: the cluster as if it held only this group's GPU, with all the
// cluster's nodes (the error band and the data loaders see the whole cluster), and its layer-cost cache.
struct HeteroGroupModel {
    std::string name;
    std::unique_ptr<PlanContext> ctx;
    std::unique_ptr<EvaluationCache> cache;
};

// The group contexts of one scenario's model, training settings and cluster, built once for many plans
// (a search costs thousands on one cluster; each worker thread owns an evaluator). Not thread-safe.
class HeteroEvaluator {
public:
    explicit HeteroEvaluator(const Scenario& s, const Calibration& cal = builtin_calibration());
    ~HeteroEvaluator();
    HeteroEvaluator(const HeteroEvaluator&) = delete;
    HeteroEvaluator& operator=(const HeteroEvaluator&) = delete;
    // `plan` has the model, training settings and cluster the evaluator was built for, and passes
    // check_hetero_plan().
    HeteroPrediction predict(const Scenario& plan);

private:
    std::vector<HeteroGroupModel> groups_;
};

// `s` must pass check_hetero_plan(). Plain scenarios are not accepted (use AnalyticModel).
HeteroPrediction predict_heterogeneous(const Scenario& s, const Calibration& cal = builtin_calibration());

} // namespace parallax

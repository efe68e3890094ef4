#pragma once
// The step of a heterogeneous plan (cluster.groups + strategy.stages, docs/heterogeneous.md): every
// replica of every stage costed on its own GPU and TP with the plain model's per-stage functions, the
// micro-batches of a stage split across its replicas by their speed, each stage paced by its busiest
// replica, the schedule's formula over the uneven stages, pipeline sends and gradient reductions
// across GPU types over the inter-node fabric, memory per replica against its own GPU.
#include "calibration/calibration.hpp"
#include "model/plan_context.hpp"
#include "model/strategy_costs.hpp"
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
    // The group contexts (a HeteroModel keeps its evaluation, which points into them).
    std::vector<HeteroGroupModel>& groups() { return groups_; }

private:
    std::vector<HeteroGroupModel> groups_;
};

// `s` must pass check_hetero_plan(). Plain scenarios are not accepted (use AnalyticModel).
HeteroPrediction predict_heterogeneous(const Scenario& s, const Calibration& cal = builtin_calibration());

// A stage as the event simulator lowers it (ir/hetero_lowering.hpp): its slowest replica's context,
// plain strategy and costs (the sends to other GPU types included), and the stage's share of the step.
struct HeteroStageSource {
    const PlanContext* ctx = nullptr;
    const Strategy* strategy = nullptr;
    const StrategyCosts* costs = nullptr;
    double clock = 1;
    double microbatch_s = 0; // one micro-batch's forward and backward on the slowest replica, sends included
    double busy_s = 0; // the busiest replica's share of the step
    StageTail tail; // the slowest of its replicas' reductions, gathers and optimizer steps
    bool sends_across_groups = false; // a neighbouring stage holds a replica of another kind
    bool reduces_across_groups = false; // its replicas differ (HeteroStageReport::mixed)
    long long gpus = 0;
    std::string label; // "H100-SXM5-80GB tp4 + A100-SXM4-80GB tp4"
    std::string gpu_types; // its distinct GPU types, short: "H100+A100"
};

class HeteroEvaluation;

// predict_heterogeneous with its evaluation kept, for the simulator to lower.
class HeteroModel {
public:
    explicit HeteroModel(const Scenario& s, const Calibration& cal = builtin_calibration());
    ~HeteroModel();
    HeteroModel(HeteroModel&&) noexcept;
    HeteroModel& operator=(HeteroModel&&) noexcept;

    const Scenario& scenario() const { return *m_scenario; }
    const HeteroPrediction& prediction() const { return m_prediction; }
    // One per stage; they point into this model.
    std::vector<HeteroStageSource> stage_sources() const;
    // The pacing stage's busy time in units of its micro-batch time: the micro-batches it runs back to back.
    double effective_microbatches() const;

private:
    std::unique_ptr<Scenario> m_scenario;
    std::unique_ptr<HeteroEvaluator> m_evaluator;
    std::unique_ptr<HeteroEvaluation> m_eval;
    HeteroPrediction m_prediction;
};

} // namespace parallax

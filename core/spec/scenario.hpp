#pragma once
#include "spec/cluster_spec.hpp"
#include "spec/hetero_stages.hpp"
#include "spec/model_spec.hpp"
#include "spec/reliability_spec.hpp"
#include "spec/strategy.hpp"
#include "spec/training_spec.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace parallax {

// What the composite search tries around the best plain plans ("search.composite",
// docs/composite-strategies.md); unset = plain plans only.
struct CompositeSearchSpec {
    bool recompute_ranges = true; // a heavier recompute on the first layers only, a lighter one elsewhere
    bool edge_stage_layers = true; // lighter first and last pipeline stages (first/last_stage_layers)
    bool range_tp = true; // TP/2 and TP/4 on the longest suffix or prefix of layers that fits (DP regrouped)
    std::vector<int> expert_tp; // expert TP values to try apart from the attention's TP (MoE models)
    int max_candidates = 2000; // composites costed at most (the grid is cut past it, and says so)
    int base_plans = 5; // the best plain plans the composites are built around
    bool operator==(const CompositeSearchSpec&) const = default;
};

// What the search may not change, and limits it must respect ("search": {...} in a scenario).
struct SearchSpec {
    // Dimensions pinned by "search.fix": key -> the value as written (validated on load).
    std::map<std::string, std::string> fix;
    std::optional<double> min_memory_headroom_fraction; // search.limits.memory_headroom
    std::optional<long long> max_gpus; // search.limits.max_gpus
    // Power: the cluster's average power (GPUs + node overhead) may not exceed this.
    std::optional<double> power_budget_kW; // search.limits.power_budget_kW
    // "energy" objective: only plans within this fraction of the fastest plan's step time compete.
    std::optional<double> max_slowdown; // search.limits.max_slowdown
    std::string objective = "throughput";
    std::optional<CompositeSearchSpec> composite; // search.composite
};

// Where each part of the scenario came from, so saving writes preset names back as names.
struct ScenarioRefs {
    std::string model; // preset name, empty when inline
    std::string cluster;
    std::string gpu;
    std::string intra_node;
    std::string inter_node;
};

struct Scenario {
    int schema = 1;
    std::string description;
    ModelSpec model;
    ClusterSpec cluster;
    TrainingSpec training;
    Strategy strategy;
    bool dp_derived = false; // dp was omitted and derived from the GPU count
    // An explicit pipeline over a heterogeneous cluster (strategy.stages). When set, strategy.pp is
    // the stage count and strategy.tp/dp repeat the first stage's first replica and replica count;
    // the other strategy fields (micro_batch, recompute, zero, schedule...) apply to every stage.
    std::vector<PipelineStageSpec> stages;
    BatchSplit batch_split = BatchSplit::by_speed; // strategy.batch_split, with stages only

    bool heterogeneous() const { return !stages.empty(); }
    std::optional<SearchSpec> search;
    // Failures, preemptions and checkpoints; unset = no goodput is computed (docs/goodput.md).
    std::optional<ReliabilitySpec> reliability;
    ScenarioRefs refs;
};

// Tokens per GPU and second of a step of `step_time_s` (global batch x sequence / GPUs / step time):
// what a log that prints only step times measured.
inline double tokens_per_s_per_gpu_at(const Scenario& s, double step_time_s)
{
    const double tokens_per_step
        = static_cast<double>(s.training.global_batch) * static_cast<double>(s.training.seq_len);
    const double gpus = static_cast<double>(s.strategy.total_gpus());
    return step_time_s > 0 && gpus > 0 ? tokens_per_step / gpus / step_time_s : 0.0;
}

} // namespace parallax

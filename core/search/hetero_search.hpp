#pragma once
// Search over heterogeneous plans (docs/heterogeneous.md, "Search"): which node groups are used (the
// others stay idle), how their GPUs form pipeline stages and replicas, TP per replica, layers per
// stage balanced by the stages' speeds, micro-batch, recompute, ZeRO and schedule. Every candidate is
// costed by the heterogeneous model (predict_heterogeneous) on all cores; a coarse pass ranks the
// layouts, the best of them get the full knob search and layer balancing, the winner its what-ifs.
#include "jobs/cancel_token.hpp"
#include "model/hetero_model.hpp"
#include "search/hetero_layout.hpp"
#include "search/search.hpp"
#include "spec/scenario.hpp"

#include <functional>
#include <string>
#include <vector>

namespace parallax {

struct Calibration;

struct HeteroSearchOptions {
    const Calibration* calibration = nullptr; // nullptr = the built-in calibration
    int threads = 0; // 0 = all hardware threads
    int top = 10;
    SearchFix fix; // honoured where an explicit pipeline has the setting (tp, pp, micro_batch, zero, ...)
    // Rank by goodput tokens/s when the scenario has a reliability section (as the plain search does).
    bool rank_by_goodput = false;
    // Layouts kept from the coarse pass for the full knob search (larger = slower, rarely better).
    int beam = 12;
    bool explain = true; // what-ifs for the best plan
    // Called from worker threads with the fraction done (0..1).
    std::function<void(double)> progress;
};

// One what-if neighbour of a plan: the change in words and what it does to the step time.
struct HeteroWhatIf {
    std::string change; // "moving 2 layers from stage 1 (A100-SXM4-80GB) to stage 0 (H100-SXM5-80GB)"
    double step_time_change = 0; // relative: -0.06 = 6% faster; +inf when the neighbour does not fit
    bool feasible = true;
    std::string text() const; // "... would be 6.0% faster"
};

struct HeteroSearchResult {
    HeteroLayout layout; // how the groups' GPUs form the stages
    Strategy strategy; // micro_batch, recompute, zero, schedule, sequence_parallel (pp/tp/dp as the plan's)
    std::vector<PipelineStageSpec> stages;
    HeteroPrediction prediction;
    double objective = 0; // tokens/s, or goodput tokens/s
    double goodput_tokens_per_s = 0; // when ranked by goodput
    std::vector<std::string> idle_groups; // groups that hold no replica
    std::vector<HeteroWhatIf> what_ifs; // the best result's, most favourable first
};

struct HeteroSearchOutcome {
    long long layouts = 0; // candidate layouts enumerated
    long long evaluated = 0; // plans costed by the heterogeneous model
    long long feasible = 0;
    double seconds = 0;
    bool cancelled = false;
    long long gpus = 0; // all groups' GPUs
    bool ranked_by_goodput = false;
    std::vector<HeteroSearchResult> results; // best first
    std::vector<std::string> notes; // settings the search cannot honour, and why nothing was found
};

// `s` has cluster.groups; its strategy's degrees and stages are ignored. A cancelled search returns
// what it has found so far (cancelled = true).
HeteroSearchOutcome search_heterogeneous(
    const Scenario& s, const HeteroSearchOptions& options, const CancelToken& cancel = CancelToken {});

// The plan `result` describes, as a scenario (s with its stages and strategy).
Scenario hetero_plan_scenario(
    const Scenario& s, const Strategy& strategy, const std::vector<PipelineStageSpec>& stages);

// What-if neighbours of one plan of `s`'s cluster: layers moved between neighbouring stages, another
// TP for a group's replicas, a used group dropped (left idle) or an idle one added; most favourable first.
std::vector<HeteroWhatIf> hetero_what_ifs(const Scenario& s, const HeteroLayout& layout, const Strategy& strategy,
    const std::vector<int>& layers, const Calibration& cal);

} // namespace parallax

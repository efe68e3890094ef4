#pragma once
// Strategy search: enumerates every valid combination of the parallel degrees and knobs for a model,
// cluster and training settings (validity = strategy_rules.hpp, the same code as the scenario
// validator), evaluates them with the allocation-free analytic model on all cores, prunes only what
// provably cannot win, refines the best with the simulator, and explains the winners.
#include "calibration/nearest_run.hpp"
#include "jobs/cancel_token.hpp"
#include "model/analytic_model.hpp"
#include "spec/prediction.hpp"
#include "spec/scenario.hpp"

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace parallax {

enum class SearchObjective : unsigned char { throughput, time_to_train, energy };

// Dimensions pinned by the user ("search": {"fix": {...}}); unset = searched.
struct SearchFix {
    std::optional<int> tp, pp, dp, cp, ep, vpp, micro_batch, zero, expert_tp;
    std::optional<bool> sequence_parallel, offload_optimizer, ep_overlap;
    std::optional<Recompute> recompute;
    std::optional<Schedule> schedule;
    std::optional<RankOrder> rank_order;
    std::optional<CpKind> cp_kind;
    std::optional<Optimizer> optimizer;
};
// Parses the validated "search.fix" map of a scenario.
SearchFix search_fix_from(const Scenario& s);

struct Calibration;

struct SearchOptions {
    const Calibration* calibration = nullptr; // nullptr = the built-in calibration
    int threads = 0; // 0 = all hardware threads
    int top = 10;
    int refine_top = 20; // best analytic candidates re-ranked with the event simulator (0 = off)
    SearchObjective objective = SearchObjective::throughput;
    SearchFix fix;
    std::optional<double> min_memory_headroom_fraction;
    // Power; unset = the scenario's search.limits. A plan whose cluster draws more on average
    // (GPUs + node overhead) than the budget is out; when no plan of the whole cluster fits, fewer
    // whole nodes are searched ("max throughput under a power budget").
    std::optional<double> power_budget_kW;
    // Energy objective: only plans within this fraction of the fastest plan's step time compete
    // ("min energy per token within X% of the best time").
    std::optional<double> max_slowdown;
    // Throughput objectives: rank by goodput tokens/s (goodput.hpp) when the scenario has a
    // reliability section. `parallax-cli search` sets it.
    bool rank_by_goodput = false;
    bool prune = true; // off only for tests comparing against brute force
    // false: only plans training.framework can run (spec/framework_support.hpp); true: every framework's
    // plans, each labelled with the frameworks that run it (SearchResult::frameworks).
    bool any_framework = false;
    CancelToken cancel; // polled between strategies; a cancelled search returns what it has
    // Called from worker threads with the fraction done (0..1), throttled to >= 0.1% steps.
    std::function<void(double)> progress;
};

struct RunnerUp {
    Strategy strategy;
    std::string dimension; // the one dimension that differs
    double slower_fraction = 0; // how much lower the objective is (0.06 = 6% slower)
    std::string because; // the breakdown components that moved most
};

struct SearchResult {
    Strategy strategy;
    AnalyticResult analytic;
    Prediction prediction; // simulated when refined, analytic otherwise
    double objective = 0; // larger is better (tokens/s, or -J/token for energy)
    std::string limiter; // compute-bound, bubble-bound, network-bound (TP), memory-capacity (< 5% headroom), ...
    std::optional<RunnerUp> runner_up;
    // The best result's error band and this one's overlap (throughput objectives only): the
    // model cannot tell the two apart with the accuracy it has measured for this workload.
    bool indistinguishable_from_best = false;
    std::vector<Framework> frameworks; // the frameworks whose capability table accepts the plan
    double goodput_tokens_per_s = 0; // when the scenario has a reliability section (goodput.hpp)
    // The published run whose plan is nearest this one, and how far the model was from its measurement.
    std::optional<MeasuredRunMatch> nearest_run;
};

// Candidates a search removed for one reason: a validity rule, the framework, memory or a limit. An empty
// search lists what removed what, so the user knows which rule or limit to relax.
struct SearchRemoval {
    std::string key; // the setting to relax: "strategy.tp", "training.framework", "search.limits.power_budget_kW"
    std::string reason; // with one removed candidate as the example: "tensor parallel degree 6 must divide ..."
    long long count = 0; // candidates (strategies; degree combinations for search.fix)
};

struct SearchOutcome {
    long long evaluated = 0; // strategies costed or proven infeasible
    long long feasible = 0;
    long long pruned = 0; // dominated variants never costed (counted in evaluated too)
    double seconds = 0;
    bool cancelled = false;
    long long gpus = 0;
    double power_budget_kW = 0; // the budget applied (0 = none)
    double fastest_step_s = 0; // the fastest plan's step time when max_slowdown applied
    double max_slowdown = 0;
    std::vector<SearchResult> results; // best first
    std::vector<SearchResult> pareto; // throughput vs memory headroom vs power
    bool any_framework = false; // plans of every framework (else only `framework`'s)
    Framework framework = Framework::megatron;
    // What the framework cannot run of the scenario's own settings, and why a search found nothing.
    std::vector<std::string> notes;
    std::vector<SearchRemoval> removed; // most first
    // The scenario has a reliability section and the objective is throughput: plans ranked by their
    // goodput (tokens/s after interruptions, checkpoints and recovery), not by raw tokens/s.
    bool ranked_by_goodput = false;
};

SearchOutcome search_strategies(const Scenario& scenario, const SearchOptions& options);

// Canonical total order of strategies (for deterministic ties across thread counts).
bool strategy_less(const Strategy& a, const Strategy& b);

} // namespace parallax

#pragma once
// The composite search (search.composite, docs/composite-strategies.md): around the best plain plans
// a plain search found, tries what the plain menu cannot say — a heavier recompute on the first layers
// only (the stage that holds the most micro-batches in flight needs it), lighter first and last
// pipeline stages, expert TP apart from the attention's, a lower TP on the longest span of layers that
// still fits (its DP regrouped) — ranks them with the analytic model on all
// cores, and explains the winner against the plain plans it was built from.
#include "jobs/cancel_token.hpp"
#include "search/search.hpp"
#include "spec/scenario.hpp"

#include <string>
#include <vector>

namespace parallax {

struct CompositeSearchOptions {
    CompositeSearchSpec spec;
    const Calibration* calibration = nullptr; // nullptr = the built-in calibration
    int threads = 0; // 0 = all hardware threads
    int top = 5;
    std::optional<double> min_memory_headroom_fraction; // as the plain search's limit
    SearchFix fix; // a pinned recompute keeps recompute ranges out, a pinned expert_tp the expert TP options
    CancelToken cancel; // polled between candidates; a cancelled search returns what it has
};

struct CompositeResult {
    Strategy strategy; // with its layer ranges (interned)
    Prediction prediction; // analytic
    Strategy base; // the plain plan it was built around
    Prediction base_prediction;
    std::string change; // "full recompute on layers 0-24 only (none elsewhere), first stage 17 layers"
};

struct CompositeOutcome {
    long long candidates = 0; // built (valid)
    long long evaluated = 0; // costed
    long long feasible = 0;
    long long memory_checks = 0; // memory-only evaluations the per-range TP bisections made
    bool truncated = false; // the grid held more than max_candidates
    bool cancelled = false;
    double seconds = 0;
    std::vector<CompositeResult> results; // best first (tokens/s), feasible only
    // The best plain plan among the bases (analytic) and what the winner gains over it.
    Strategy best_plain;
    Prediction best_plain_prediction;
    std::string explanation; // the winner in words, or why no composite beats the plain plans
};

// Composites around `plain` (a plain search's results, best first; their own degrees and knobs are
// kept). The scenario's own strategy is not read.
CompositeOutcome search_composites(
    const Scenario& scenario, const std::vector<SearchResult>& plain, const CompositeSearchOptions& options);

// What `s` changes against the plain plan `base`, in words ("full recompute on layers 0-24 only
// (none elsewhere), first stage 17 layers").
std::string describe_composite(const Strategy& s, const Strategy& base);

} // namespace parallax

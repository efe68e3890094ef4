#pragma once
// Per-range TP for the composite search (docs/composite-strategies.md "The composite search"): around a
// plain plan at TP t, the longest suffix and prefix of the layers that may run at TP t/2 (or t/4), their
// data parallelism doubled, and still fit — found by bisection on the span length, each a few memory-only
// evaluations rather than one per span.
#include "model/analytic_model.hpp"
#include "spec/scenario.hpp"

#include <vector>

namespace parallax {

struct RangeTpLimits {
    double usable_bytes = 0; // the memory a plan may use per GPU (capacity less the user's headroom)
};

// The composites of `base` with one range [first, last] at a lower TP: for each lower TP the reader
// accepts (scenario's model and cluster, base as the plan), the longest suffix and prefix that fit.
// Every one passes the reader's rules for strategy.layers; `memory_checks` counts the evaluations made.
std::vector<Strategy> range_tp_composites(const Scenario& scenario, const AnalyticModel& model, EvaluationCache& cache,
    const Strategy& base, const RangeTpLimits& limits, long long& memory_checks);

} // namespace parallax

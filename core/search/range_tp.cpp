#include "search/range_tp.hpp"

#include "io/layer_ranges_io.hpp"
#include "spec/input_error.hpp"
#include "spec/layer_ranges.hpp"

#include <nlohmann/json.hpp>

namespace parallax {

namespace {

// TP halved and quartered: a power of two below the plan's keeps the TP group inside the plan's node
// and divides tp * dp; lower still, the weights per GPU rarely fit where the plan's barely did.
constexpr int kRangeTpDivisors[] = { 2, 4 };

enum class Span : unsigned char { suffix, prefix };

// One range of `length` layers at TP `tp`: the last layers (suffix) or the first (prefix); interned.
const LayerRanges* span_ranges(Span span, int length, int tp, int layers)
{
    LayerRange r;
    r.first = span == Span::suffix ? layers - length : 0;
    r.last = span == Span::suffix ? layers - 1 : length - 1;
    r.tp = tp;
    LayerRanges out;
    out.ranges.push_back(r);
    return intern_layer_ranges(std::move(out));
}

// Whether the reader takes a range at TP `tp` on `base` (every rule of strategy.layers[i].tp is the same
// for any span, so a one-layer range stands for all).
bool reader_accepts(const Scenario& scenario, const Strategy& base, int tp)
{
    Scenario s = scenario;
    s.strategy = base;
    s.strategy.layers = nullptr;
    const nlohmann::json layers = nlohmann::json::array({ { { "range", { 0, 0 } }, { "tp", tp } } });
    try {
        read_layer_ranges(layers, "composite search", s);
    } catch (const InputError&) {
        return false;
    }
    return true;
}

bool fits(const AnalyticModel& model, EvaluationCache& cache, const Strategy& s, const RangeTpLimits& limits)
{
    AnalyticResult r;
    model.evaluate_memory(s, r, cache);
    return r.feasible && r.peak_memory_bytes <= limits.usable_bytes;
}

// The longest span (1..layers-1 layers) at TP `tp` that fits, or 0. Memory grows with the span: each
// layer it takes holds tp/tp' times the weights per GPU at the same activation share, so bisection holds.
int longest_fitting_span(const AnalyticModel& model, EvaluationCache& cache, const Strategy& base, Span span, int tp,
    int layers, const RangeTpLimits& limits, long long& checks)
{
    Strategy s = base;
    int lo = 0, hi = layers; // lo fits (no range is the base itself), hi does not or is the whole model
    while (hi - lo > 1) {
        const int mid = lo + (hi - lo) / 2;
        s.layers = span_ranges(span, mid, tp, layers);
        ++checks;
        (fits(model, cache, s, limits) ? lo : hi) = mid;
    }
    return lo;
}

} // namespace

std::vector<Strategy> range_tp_composites(const Scenario& scenario, const AnalyticModel& model, EvaluationCache& cache,
    const Strategy& base, const RangeTpLimits& limits, long long& memory_checks)
{
    std::vector<Strategy> out;
    const int layers = scenario.model.layers;
    for (int divisor : kRangeTpDivisors) {
        if (base.tp % divisor != 0 || !reader_accepts(scenario, base, base.tp / divisor))
            continue;
        const int tp = base.tp / divisor;
        for (Span span : { Span::suffix, Span::prefix }) {
            const int length = longest_fitting_span(model, cache, base, span, tp, layers, limits, memory_checks);
            if (length == 0)
                continue;
            Strategy s = base;
            s.layers = span_ranges(span, length, tp, layers);
            out.push_back(s);
        }
    }
    return out;
}

} // namespace parallax

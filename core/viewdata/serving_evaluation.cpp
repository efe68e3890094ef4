#include "viewdata/serving_evaluation.hpp"

#include "serving/serving_rules.hpp"
#include "spec/input_error.hpp"

#include <algorithm>

namespace parallax {

namespace {

// The curve stops at this concurrency even when memory would allow more (beyond it the plateau is flat
// for every shipped model: a decode step is then compute-bound).
constexpr long long kMaxCurveConcurrency = 8192;
// The curve goes this far beyond the largest batch memory allows, so the plateau shows.
constexpr long long kCurveBeyondMemoryFactor = 2;

ServingCurvePoint curve_point(const ServingScenario& s, long long concurrency)
{
    ServingScenario at = s;
    at.serving.workload.load = LoadKind::concurrency;
    at.serving.workload.concurrency = concurrency;
    at.serving.workload.rounds = 0;
    const ServingPrediction p = predict_serving(at);
    ServingCurvePoint pt;
    pt.concurrency = concurrency;
    pt.feasible = p.feasible;
    pt.slo_met = p.feasible && p.slo_met;
    pt.ttft_ms = p.ttft_ms;
    pt.tpot_ms = p.tpot_ms;
    pt.tokens_per_s_per_gpu = p.output_tokens_per_s_per_gpu;
    pt.tokens_per_s_per_user = p.output_tokens_per_s_per_user;
    pt.tokens_per_s_per_gpu_low = p.interval.tokens_per_s_per_gpu_low;
    pt.tokens_per_s_per_gpu_high = p.interval.tokens_per_s_per_gpu_high;
    return pt;
}

} // namespace

std::vector<long long> serving_curve_concurrencies(const ServingScenario& s, const ServingPrediction& p)
{
    const long long instances
        = s.deployment.disaggregated ? s.deployment.disaggregated->decode.workers : std::max(1, p.replicas);
    const long long by_memory = std::max<long long>(1, p.max_batch_by_memory) * instances;
    const long long last = std::min(kMaxCurveConcurrency, by_memory * kCurveBeyondMemoryFactor);
    std::vector<long long> out;
    for (long long c = 1; c <= last; c *= 2)
        out.push_back(c);
    if (out.empty() || out.back() < last)
        out.push_back(last);
    if (s.serving.workload.load == LoadKind::concurrency)
        out.push_back(s.serving.workload.concurrency);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

ServingEvaluation evaluate_serving(const ServingScenario& s, const CancelToken& token)
{
    ServingEvaluation e;
    e.scenario = s;
    try {
        check_serving_scenario(s, std::string());
    } catch (const InputError& err) {
        e.error_key = err.key();
        e.error = err.rule();
        return e;
    }
    e.valid = true;
    e.prediction = predict_serving(s);
    for (long long c : serving_curve_concurrencies(s, e.prediction)) {
        if (token.cancelled()) {
            e.cancelled = true;
            return e;
        }
        e.curve.push_back(curve_point(s, c));
    }
    return e;
}

} // namespace parallax

#include "viewdata/goodput_curves.hpp"

#include "model/goodput_plan.hpp"

#include <algorithm>
#include <cmath>

namespace parallax {

namespace {

// The intervals drawn: a decade either side of the best interval, and the one in use if it lies outside.
std::vector<double> intervals_around(double best_s, double used_s)
{
    const double lo = std::min(best_s / 10, used_s / 2);
    const double hi = std::max(best_s * 10, used_s * 2);
    std::vector<double> out(kGoodputCurvePoints);
    for (int i = 0; i < kGoodputCurvePoints; ++i)
        out[i] = lo * std::pow(hi / lo, static_cast<double>(i) / (kGoodputCurvePoints - 1));
    return out;
}

GoodputPlan scaled(GoodputPlan plan, double factor)
{
    plan.preemptions_per_s *= factor;
    return plan;
}

} // namespace

GoodputCurves goodput_curves(const Scenario& s, const Prediction& p, const Calibration& cal)
{
    GoodputCurves out;
    if (!s.reliability || s.heterogeneous() || !p.feasible || p.tokens_per_s <= 0)
        return out;
    const GoodputPlan plan = scenario_goodput_plan(s, p, cal);
    const GoodputReport used = predict_goodput(*s.reliability, plan);
    out.present = true;
    out.interval_used_s = used.checkpoint_interval_s;
    out.fraction_used = used.fraction_of_throughput;
    out.checkpoint_write_s = used.checkpoint_write_s;
    out.interval_s = intervals_around(used.best_checkpoint_interval_s, used.checkpoint_interval_s);
    for (std::size_t c = 0; c < kGoodputRateFactors.size(); ++c) {
        ReliabilitySpec spec = *s.reliability;
        spec.failure_rate_per_gpu_hour *= kGoodputRateFactors[c];
        const GoodputPlan rated = scaled(plan, kGoodputRateFactors[c]);
        GoodputCurve& curve = out.curves[c];
        curve.rate_factor = kGoodputRateFactors[c];
        for (double interval : out.interval_s) {
            spec.checkpoint_interval_s = interval;
            curve.fraction.push_back(predict_goodput(spec, rated).fraction_of_throughput);
        }
        spec.checkpoint_interval_s.reset();
        const GoodputReport best = predict_goodput(spec, rated);
        curve.interruptions_per_day = best.interruptions_per_day;
        curve.best_interval_s = best.best_checkpoint_interval_s;
        curve.best_fraction = best.best_tokens_per_s / best.throughput_tokens_per_s;
    }
    return out;
}

} // namespace parallax

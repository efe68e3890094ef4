#pragma once
// What the planner's serving mode shows for one serving scenario: the rules it breaks (if any), the
// prediction, and the latency-throughput curve of the same deployment over closed-loop concurrency
// (tokens/s per GPU against tokens/s per user, the picture serving benchmarks publish), so a user sees
// where the deployment saturates and where the SLO stops being met. One immutable value per request.
#include "jobs/cancel_token.hpp"
#include "serving/serving_model.hpp"

#include <string>
#include <vector>

namespace parallax {

struct ServingCurvePoint {
    long long concurrency = 0; // requests in flight over the whole deployment
    bool feasible = false;
    bool slo_met = false;
    double ttft_ms = 0;
    double tpot_ms = 0;
    double tokens_per_s_per_gpu = 0;
    double tokens_per_s_per_user = 0;
    // The prediction's error band on tokens/s per GPU (both 0 when it has none).
    double tokens_per_s_per_gpu_low = 0;
    double tokens_per_s_per_gpu_high = 0;
};

struct ServingEvaluation {
    ServingScenario scenario;
    bool valid = false; // the scenario passes the serving rules
    bool cancelled = false; // a newer request superseded this one; nothing else is set
    std::string error_key; // the key of the broken rule, when not valid
    std::string error; // the rule, when not valid
    ServingPrediction prediction;
    std::vector<ServingCurvePoint> curve; // increasing concurrency
};

// The concurrencies the curve is drawn at: powers of two from 1 to beyond what memory lets the
// deployment run at once (so the curve shows its plateau), plus the scenario's own concurrency.
std::vector<long long> serving_curve_concurrencies(const ServingScenario& s, const ServingPrediction& p);

// Checks the rules, predicts, then draws the curve; polls `token` between points.
ServingEvaluation evaluate_serving(const ServingScenario& s, const CancelToken& token = {});

} // namespace parallax

#pragma once
// The measured run nearest to a plan. Of the validation runs behind the error bands, the one whose
// model size, sequence, scale, parallel degrees and workload class are closest, with how far the model
// was from what that run measured (out of sample): a recommendation then points at a published
// measurement of a similar plan, and the user sees how well the model did there.
#include "calibration/error_band.hpp"
#include "spec/cluster_spec.hpp"
#include "spec/model_spec.hpp"
#include "spec/strategy.hpp"
#include "spec/training_spec.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace parallax {

struct MeasuredRunMatch {
    std::string id;
    RunPlan plan;
    long long gpus = 0;
    // What the model predicted for that run over what it measured, minus one (+0.088: 8.8% too fast).
    double predicted_vs_measured = 0;
    double distance = 0; // 0 for the same model, sequence, scale and degrees
};

// None when no residual of the table keeps its plan.
std::optional<MeasuredRunMatch> nearest_measured_run(const ErrorBandTable& table, const ModelSpec& model,
    const TrainingSpec& training, const ClusterSpec& cluster, const Strategy& strategy);

// "megatronlm_example_llama3.1_405b_1024gpu (Llama 3.1 405B, TP 8 × PP 8 × CP 2 × DP 8, VPP 8, ... on 1024 x
// H100-SXM5-80GB): predicted 8.8% above its measurement"
std::string measured_run_match_text(const MeasuredRunMatch& m);
nlohmann::json measured_run_match_json(const MeasuredRunMatch& m);

} // namespace parallax

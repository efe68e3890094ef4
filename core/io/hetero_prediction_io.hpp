#pragma once
// predict's output for a heterogeneous plan: the contract's JSON with a "heterogeneous" section (the
// stages, their replicas with group, GPU and TP), and the text report with one row per replica.
#include "model/hetero_model.hpp"
#include "spec/scenario.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace parallax {

nlohmann::json hetero_prediction_to_json(const HeteroPrediction& h);
std::string hetero_prediction_to_text(const Scenario& s, const HeteroPrediction& h);

} // namespace parallax

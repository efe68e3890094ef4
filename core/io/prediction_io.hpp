#pragma once
// The prediction as the CLI contract's JSON (docs/cli.md, `predict --json`) and as a readable table.
#include "spec/prediction.hpp"
#include "spec/scenario.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace parallax {

nlohmann::json prediction_to_json(const Prediction& p);
std::string prediction_to_text(const Scenario& s, const Prediction& p);
std::string format_si(double value, const char* unit, int precision = 3);

} // namespace parallax

#pragma once
// predict's goodput section (docs/goodput.md): the "goodput" object of `predict --json` and a few
// lines of its text report.
#include "model/goodput.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace parallax {

nlohmann::json goodput_to_json(const GoodputReport& g);
std::string goodput_to_text(const GoodputReport& g);

} // namespace parallax

#pragma once
// The improvement waterfall (search/improvements.hpp) as the contract's JSON list and as text.
#include "search/improvements.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace parallax {

// [ {"name", "step_time_s_saved", "energy_J_saved", "change", "step_time_s", "energy_J", "note"} ... ]
nlohmann::json improvements_to_json(const ImprovementWaterfall& w);
// A table from the plan as given to the plan with every choice applied; empty when nothing applies.
std::string improvements_to_text(const ImprovementWaterfall& w);

} // namespace parallax

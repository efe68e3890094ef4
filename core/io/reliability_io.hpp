#pragma once
// The scenario's "reliability" section (docs/scenario-format.md, docs/goodput.md): read strictly
// (errors name the file, the key path and the rule) and written back.
#include "spec/reliability_spec.hpp"
#include "spec/scenario.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace parallax {

ReliabilitySpec read_reliability(const nlohmann::json& j, const std::string& file);
nlohmann::json reliability_to_json(const ReliabilitySpec& r);
// replica_memory recovery needs a second data-parallel copy of every stage. Throws InputError.
void check_reliability_plan(const Scenario& s, const std::string& file);

} // namespace parallax

#pragma once
// Serving scenario files (docs/serving.md, docs/scenario-format.md "Serving scenarios"): the same model
// and cluster as a training scenario (presets by name or inline), with "serving" and "deployment" in
// place of "training" and "strategy". Strict: unknown keys, out-of-range values and deployments the
// model or cluster cannot hold are InputErrors naming the file, the key and the rule.
#include "io/preset_catalog.hpp"
#include "serving/serving_spec.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace parallax {

// A scenario object that describes serving (it has a "serving" key).
bool is_serving_scenario(const nlohmann::json& j);
// A file that parses as JSON and describes serving (false when it cannot be read or parsed: the
// training reader then names what is wrong with it).
bool is_serving_scenario_file(const std::string& path);

ServingScenario parse_serving_scenario(const nlohmann::json& j, const std::string& file, const PresetCatalog& catalog);
// The "serving" object alone (precision, engine, workload, slo); errors name keys from "serving".
ServingSpec parse_serving_spec(const nlohmann::json& serving, const std::string& file);
ServingScenario load_serving_scenario_file(const std::string& path, const PresetCatalog& catalog);

// The scenario as a file says it: presets stay names, inline objects are written out; reading it back
// gives the same scenario (the planner's Save).
nlohmann::json serving_scenario_to_json(const ServingScenario& s);

} // namespace parallax

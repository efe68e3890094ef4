#pragma once
// Co-location scenario files (docs/serving.md "Co-location", docs/scenario-format.md): a cluster
// (plain or cluster.groups of mixed GPUs) and "colocation": the models with their own serving settings,
// the host links and the preemption settings. Strict: unknown keys, out-of-range values and placements a
// model or the pool cannot hold are InputErrors naming the file, the key and the rule.
#include "io/preset_catalog.hpp"
#include "serving/colocation.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace parallax {

// A scenario object that describes co-located serving (it has a "colocation" key).
bool is_colocation_scenario(const nlohmann::json& j);

ColocationScenario parse_colocation_scenario(
    const nlohmann::json& j, const std::string& file, const PresetCatalog& catalog);
ColocationScenario load_colocation_scenario_file(const std::string& path, const PresetCatalog& catalog);

// predict --json of a co-location scenario, and its table.
nlohmann::json colocation_result_to_json(const ColocationResult& r);
std::string colocation_result_to_text(const ColocationScenario& s, const ColocationResult& r);

} // namespace parallax

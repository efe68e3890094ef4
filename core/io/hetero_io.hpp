#pragma once
// The heterogeneous parts of a scenario file (docs/heterogeneous.md): cluster.groups and
// strategy.stages, read strictly (errors name the file, the key path and the rule) and written back.
#include "io/preset_catalog.hpp"
#include "spec/scenario.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace parallax {

// cluster.groups into c.groups; fills c.gpu, gpus_per_node and intra_node from the first group and
// c.nodes with all groups' nodes. `path` is the key path of the groups array.
void read_node_groups(const nlohmann::json& groups, const std::string& file, const std::string& path,
    const PresetCatalog& catalog, ClusterSpec& c);
std::vector<PipelineStageSpec> read_pipeline_stages(
    const nlohmann::json& stages, const std::string& file, const std::string& path);

// strategy.batch_split of an explicit pipeline: "by_speed" (default) or "even".
BatchSplit read_batch_split(const nlohmann::json& strategy, const std::string& file);
const char* to_string(BatchSplit b);
nlohmann::json node_groups_to_json(const ClusterSpec& c);
nlohmann::json pipeline_stages_to_json(const std::vector<PipelineStageSpec>& stages);

} // namespace parallax

#pragma once
// Edits of a mixed cluster's node groups (cluster.groups, docs/heterogeneous.md) as new scenarios, for
// the planner's group editor, and the first rule an edited plan breaks with the group it concerns, so the
// editor shows it in place. The cluster's summary (gpu, gpus_per_node and intra_node repeat the first
// group's, nodes counts all groups') follows every edit, as the reader sets it.
#include "spec/scenario.hpp"

#include <optional>
#include <string>

namespace parallax {

struct GroupEditError {
    int group = -1; // the group it concerns, -1: the plan as a whole
    std::string key; // "cluster.groups[1].name", "strategy.stages"
    std::string message;
};

// Names (non-empty, distinct) first, then the hetero rules (spec/hetero_rules.hpp).
std::optional<GroupEditError> group_edit_error(const Scenario& s);

// Renames group `g`, and the replicas that name it.
Scenario with_group_name(const Scenario& s, int g, const std::string& name);
// A GPU or fabric preset by name; throws InputError for an unknown one.
Scenario with_group_gpu(const Scenario& s, int g, const std::string& preset);
Scenario with_group_fabric(const Scenario& s, int g, const std::string& preset);
// The group's own NICs by preset name; an empty name leaves its nodes on the cluster's inter_node alone.
Scenario with_group_nic(const Scenario& s, int g, const std::string& preset);
Scenario with_group_nodes(const Scenario& s, int g, int nodes);
Scenario with_group_gpus_per_node(const Scenario& s, int g, int gpus_per_node);
// A copy of the last group under a new name ("group3"); no replica uses it yet.
Scenario with_added_group(const Scenario& s);
// Without group `g`; nothing when a replica uses it or it is the only one.
std::optional<Scenario> without_group(const Scenario& s, int g);

} // namespace parallax

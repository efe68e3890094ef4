#pragma once
// The validity rules of a heterogeneous plan (cluster.groups with strategy.stages): the stages'
// layers add up to the model's, every replica names a group and fits it, the groups are not
// over-subscribed, and each replica's tensor parallelism obeys the plain rules on its own GPU.
#include "spec/scenario.hpp"

#include <optional>
#include <string>

namespace parallax {

struct HeteroViolation {
    std::string key; // e.g. "strategy.stages[1].replicas[0].tp"
    std::string rule; // a sentence with the numbers
};

// The first rule the plan breaks, or nothing. Plain scenarios (no groups, no stages) pass.
std::optional<HeteroViolation> check_hetero_plan(const Scenario& s);

// The plain strategy one replica runs: the scenario's strategy with the replica's tp, the stage
// count as pp and the stage's replica count as dp (what the per-stage rules and costs see).
Strategy replica_strategy(const Scenario& s, int stage, int replica);

} // namespace parallax

#pragma once
// The Stages panel's structural edits of a heterogeneous plan (strategy.stages), as new scenarios or the
// rule that refuses them: a stage boundary dragged to another layer, a stage added on a group with a TP
// (its layers taken from the fullest stages) or removed (its layers to its neighbours), a replica added
// to a stage or removed. strategy.pp, tp and dp follow the stages as spec/scenario.hpp says they repeat them.
#include "spec/scenario.hpp"

#include <optional>
#include <string>

namespace parallax {

struct StageEdit {
    std::optional<Scenario> scenario; // the edited plan, or nothing when refused
    std::string refusal; // why not, in words, when refused
};

// Stage `boundary` + 1 starting at layer `first_layer` (the boundary between stages `boundary` and
// `boundary` + 1 moved there); nothing when it would leave either stage without a layer or not move.
std::optional<Scenario> with_stage_boundary(const Scenario& s, int boundary, int first_layer);
// A new last stage with one replica on `group` of `tp` GPUs, taking layers from the fullest stages until
// the stages are as even as the layer count allows.
StageEdit add_stage(const Scenario& s, const std::string& group, int tp);
// Stage `stage` removed, its layers split between its neighbours (all to the one it has at an end).
StageEdit remove_stage(const Scenario& s, int stage);
StageEdit add_replica(const Scenario& s, int stage, const std::string& group, int tp);
StageEdit remove_replica(const Scenario& s, int stage, int replica);

// GPUs of `group` the plan's replicas hold.
long long group_gpus_used(const Scenario& s, const std::string& group);

} // namespace parallax

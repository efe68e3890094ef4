#pragma once
// Layer ranges checked against a plan that may have moved since they were read: the planner's sliders
// change the degrees under strategy.layers, and its range table edits the ranges themselves. Both go
// through the scenario reader's own rules (layer_ranges_io), so a range is valid in the planner exactly
// when it would be valid in a file.
#include "spec/input_error.hpp"
#include "spec/layer_ranges.hpp"
#include "spec/scenario.hpp"

#include <nlohmann/json.hpp>

#include <optional>

namespace parallax {

// The reader's error for the scenario's own ranges under its current strategy; nullopt when they hold (or
// it has none).
std::optional<InputError> layer_ranges_problem(const Scenario& s);

// `layers` (strategy.layers as JSON, in a table's order) checked for `s`: the interned ranges, null for
// an empty list. Throws the reader's InputError naming strategy.layers[i].<key>.
const LayerRanges* checked_layer_ranges(const nlohmann::json& layers, const Scenario& s);

} // namespace parallax

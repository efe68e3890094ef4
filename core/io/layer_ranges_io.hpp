#pragma once
// strategy.layers: settings of layer ranges (docs/composite-strategies.md). Reading checks each range
// against the model (bounds, order, overlaps) and each override with the plain key's rules.
#include "spec/layer_ranges.hpp"
#include "spec/scenario.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace parallax {

// Reads `layers` (the value of strategy.layers) for scenario `s` (model, training, cluster and strategy
// already read); sets s.strategy.layers. Throws InputError naming strategy.layers[i].<key>.
void read_layer_ranges(const nlohmann::json& layers, const std::string& file, Scenario& s);
nlohmann::json layer_ranges_to_json(const LayerRanges& r);

} // namespace parallax

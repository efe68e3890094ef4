#include "io/layer_ranges_check.hpp"

#include "io/layer_ranges_io.hpp"

namespace parallax {

const LayerRanges* checked_layer_ranges(const nlohmann::json& layers, const Scenario& s)
{
    if (layers.is_array() && layers.empty())
        return nullptr;
    Scenario plain = s;
    plain.strategy.layers = nullptr;
    read_layer_ranges(layers, std::string(), plain);
    return plain.strategy.layers;
}

std::optional<InputError> layer_ranges_problem(const Scenario& s)
{
    if (!s.strategy.layers)
        return std::nullopt;
    try {
        checked_layer_ranges(layer_ranges_to_json(*s.strategy.layers), s);
    } catch (const InputError& e) {
        return e;
    }
    return std::nullopt;
}

} // namespace parallax

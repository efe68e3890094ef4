#pragma once
// A composite strategy: settings that hold for a range of layers only (strategy.layers), on top of the
// plan's strategy. Strategy::layers points at the interned ranges (null for a plain plan, the search's
// case), so a Strategy stays plain data.
#include "spec/precision.hpp"
#include "spec/strategy.hpp"

#include <array>
#include <optional>
#include <vector>

namespace parallax {

// One entry of strategy.layers: layers first..last (0-based, inclusive) and what they override.
struct LayerRange {
    int first = 0;
    int last = 0;
    std::optional<int> tp;
    std::optional<int> expert_tp;
    std::optional<int> cp;
    std::optional<Recompute> recompute;
    std::optional<bool> offload_activations;
    std::optional<Precision> precision;
    bool operator==(const LayerRange&) const = default;
};

// What one layer runs under: the plan's own values with its range's overrides applied. A composite
// plan costs each distinct setting its layers use once.
struct LayerSetting {
    Recompute recompute = Recompute::none;
    Precision precision = Precision::bf16;
    int expert_tp = 1;
    // The tensor and context parallel degrees the layer's ranks are regrouped into (the stage's
    // tp * cp * dp GPUs as tp * cp * dp', docs/composite-strategies.md).
    int tp = 1;
    int cp = 1;
    bool operator==(const LayerSetting&) const = default;
    // Whether two settings lay out a layer's activations alike (the same TP and CP groups).
    bool same_layout(const LayerSetting& o) const noexcept { return tp == o.tp && cp == o.cp; }
};

struct LayerRanges {
    std::vector<LayerRange> ranges; // in the order read (a scenario saves them back so)

    // The range that names `layer`, or null.
    const LayerRange* range_of(int layer) const noexcept;
    // The recompute setting layer `layer` runs under, given the strategy's own.
    Recompute recompute_of(int layer, Recompute plain) const noexcept;
    // Whether layer `layer` offloads its activations, given the strategy's own setting.
    bool offloads_activations(int layer, bool plain) const noexcept;
    // Everything layer `layer` runs under, given the plan's own values.
    LayerSetting setting_of(int layer, const LayerSetting& plain) const noexcept;
};

// The distinct settings a composite plan's layers run under: at most one per range plus the plan's own.
inline constexpr int kMaxLayerSettings = 16;

// The distinct settings of a composite plan, in order of first use from layer 0, and which one each
// layer runs under (a lookup over the ranges: the composite path only).
struct LayerVariants {
    const LayerRanges* ranges = nullptr;
    LayerSetting plain;
    int count = 0;
    std::array<LayerSetting, kMaxLayerSettings> setting {};

    static LayerVariants of(const LayerRanges& r, const LayerSetting& plain, int model_layers) noexcept;
    int of_layer(int layer) const noexcept;
    const LayerSetting& setting_of_layer(int layer) const noexcept { return setting[of_layer(layer)]; }
};

// Whether any range regroups its layers' ranks (a tp or cp other than the plan's).
bool regroups_any_layers(const Strategy& s) noexcept;

// Whether any layer of the plan offloads its activations (the plan's flag or a range's).
bool offloads_any_activations(const Strategy& s) noexcept;

// A copy that lives for the process (scenarios and strategies are copied freely; the ranges are not).
const LayerRanges* intern_layer_ranges(LayerRanges r);

// One range over the first `count` layers with `settings`' overrides (its first and last are set here),
// interned; null when count is 0 or less.
const LayerRanges* first_layers_range(int count, LayerRange settings);

} // namespace parallax

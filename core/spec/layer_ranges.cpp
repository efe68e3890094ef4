#include "spec/layer_ranges.hpp"

#include <deque>
#include <mutex>

namespace parallax {

const LayerRange* LayerRanges::range_of(int layer) const noexcept
{
    for (const LayerRange& r : ranges)
        if (layer >= r.first && layer <= r.last)
            return &r;
    return nullptr;
}

Recompute LayerRanges::recompute_of(int layer, Recompute plain) const noexcept
{
    const LayerRange* r = range_of(layer);
    return r && r->recompute ? *r->recompute : plain;
}

LayerSetting LayerRanges::setting_of(int layer, const LayerSetting& plain) const noexcept
{
    const LayerRange* r = range_of(layer);
    if (!r)
        return plain;
    return { r->recompute.value_or(plain.recompute), r->precision.value_or(plain.precision),
        r->expert_tp.value_or(plain.expert_tp), r->tp.value_or(plain.tp), r->cp.value_or(plain.cp) };
}

LayerVariants LayerVariants::of(const LayerRanges& r, const LayerSetting& plain, int model_layers) noexcept
{
    LayerVariants v;
    v.ranges = &r;
    v.plain = plain;
    for (int l = 0; l < model_layers; ++l) {
        const LayerSetting s = r.setting_of(l, plain);
        bool known = false;
        for (int i = 0; i < v.count && !known; ++i)
            known = v.setting[i] == s;
        // The reader bounds the distinct settings (kMaxLayerSettings); past it layers share the last.
        if (!known && v.count < kMaxLayerSettings)
            v.setting[v.count++] = s;
    }
    return v;
}

int LayerVariants::of_layer(int layer) const noexcept
{
    const LayerSetting s = ranges->setting_of(layer, plain);
    for (int i = 0; i < count; ++i)
        if (setting[i] == s)
            return i;
    return count - 1;
}

bool LayerRanges::offloads_activations(int layer, bool plain) const noexcept
{
    const LayerRange* r = range_of(layer);
    return r && r->offload_activations ? *r->offload_activations : plain;
}

bool offloads_any_activations(const Strategy& s) noexcept
{
    if (s.offload_activations)
        return true;
    if (s.layers)
        for (const LayerRange& r : s.layers->ranges)
            if (r.offload_activations.value_or(false))
                return true;
    return false;
}

bool regroups_any_layers(const Strategy& s) noexcept
{
    if (s.layers)
        for (const LayerRange& r : s.layers->ranges)
            if (r.tp.value_or(s.tp) != s.tp || r.cp.value_or(s.cp) != s.cp)
                return true;
    return false;
}

const LayerRanges* intern_layer_ranges(LayerRanges r)
{
    // A deque never moves its elements: the pointers handed out stay valid.
    static std::mutex mutex;
    static std::deque<LayerRanges> interned;
    const std::lock_guard<std::mutex> lock(mutex);
    for (const LayerRanges& x : interned)
        if (x.ranges == r.ranges)
            return &x;
    interned.push_back(std::move(r));
    return &interned.back();
}

const LayerRanges* first_layers_range(int count, LayerRange settings)
{
    if (count <= 0)
        return nullptr;
    settings.first = 0;
    settings.last = count - 1;
    LayerRanges r;
    r.ranges.push_back(settings);
    return intern_layer_ranges(std::move(r));
}

} // namespace parallax

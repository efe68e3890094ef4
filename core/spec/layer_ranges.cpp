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

} // namespace parallax

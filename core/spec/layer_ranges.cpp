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

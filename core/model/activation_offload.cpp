#include "model/activation_offload.hpp"

#include "model/host_link.hpp"

#include <algorithm>

namespace parallax {

HostCopyTime layer_host_copy(double bytes, double link_Bps, const LayerTotals& t) noexcept
{
    HostCopyTime h;
    const double copy_s = bytes / link_Bps;
    // Layers of a kind cost alike: the next layer's forward (backward) is this layer's.
    h.forward_s = std::max(0.0, copy_s - t.fwd_time());
    h.backward_s = std::max(0.0, copy_s - t.bwd_time());
    h.bytes = bytes;
    return h;
}

namespace {

void add(HostCopyTime& sum, const HostCopyTime& h, double times)
{
    sum.forward_s += times * h.forward_s;
    sum.backward_s += times * h.backward_s;
    sum.bytes += times * h.bytes;
}

} // namespace

HostCopyTime chunk_activation_offload(
    const PlanContext& ctx, const Strategy& s, const StrategyCosts& c, const ChunkInfo& chunk) noexcept
{
    HostCopyTime sum;
    const double link = host_link_Bps(ctx.cluster);
    if (!c.ranges) {
        if (!s.offload_activations)
            return sum;
        const LayerCosts& l = c.layer;
        add(sum, layer_host_copy(l.activations.dense, link, l.dense), chunk.layers - chunk.moe_layers);
        if (chunk.moe_layers > 0)
            add(sum, layer_host_copy(l.activations.moe, link, l.moe), chunk.moe_layers);
        return sum;
    }
    for (int layer = chunk.first_layer; layer < chunk.first_layer + chunk.layers; ++layer) {
        if (!c.ranges->offloads_activations(layer, s.offload_activations))
            continue;
        const LayerCosts& l = c.entry_of_layer(layer).costs;
        const bool moe = ctx.model.is_moe_layer(layer);
        add(sum, layer_host_copy(moe ? l.activations.moe : l.activations.dense, link, moe ? l.moe : l.dense), 1);
    }
    return sum;
}

} // namespace parallax

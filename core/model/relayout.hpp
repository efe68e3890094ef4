#pragma once
// Relayout at a layer-range boundary: a range of its own TP or CP regroups the stage's tp * cp * dp GPUs
// (docs/composite-strategies.md), so the activation leaving the last layer of one layout is moved, over
// the GPUs both layouts span, into the split the next layer expects; its gradient moves back in the
// backward.
#include "model/strategy_costs.hpp"

namespace parallax {

// One micro-batch's activation moved from layout `from` into layout `to` (the setting's TP and CP).
struct Relayout {
    double time_s = 0;
    double bytes = 0; // what each GPU sends (all-to-all) or gathers (all-gather)
    Collective collective = Collective::all_to_all;
    GroupPlacement group; // the GPUs the two layouts share: the wider layout's TP x CP block
    int stream = kTpStream; // TP's when the TP changes, CP's when only the CP does
};
Relayout relayout(const PlanContext& ctx, const Strategy& s, const LayerSetting& from, const LayerSetting& to) noexcept;

// The relayouts of one micro-batch through a chunk: one at each layer l of the chunk (l > 0) whose layout
// differs from layer l - 1's, the forward into l's layout, the backward back into l - 1's.
struct ChunkRelayout {
    double forward_s = 0;
    double backward_s = 0;
    int boundaries = 0;
    int stream = kTpStream;
    int first_boundary = -1; // the first layer of the chunk that starts a new layout (-1: none)
    bool across_nodes = false; // a relayout's group spans nodes (its traffic takes the network)
};
ChunkRelayout chunk_relayout(
    const PlanContext& ctx, const Strategy& s, const StrategyCosts& c, const ChunkInfo& chunk) noexcept;

} // namespace parallax

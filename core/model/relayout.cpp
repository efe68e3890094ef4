#include "model/relayout.hpp"

#include "model/collective_model.hpp"
#include "model/layer_ops.hpp"

#include <algorithm>

namespace parallax {

namespace {

// Whether a layout keeps each GPU's share of the activation split along the sequence between layers:
// sequence parallelism (Korthikanti et al. 2022, Sec. 4.2.2) or no TP at all; otherwise the TP group
// holds it replicated.
bool sequence_sharded(const Strategy& t) noexcept
{
    return t.tp == 1 || t.sequence_parallel;
}

// Bytes of one micro-batch's layer-boundary activation each GPU of layout `t` holds.
double held_bytes(const PlanContext& ctx, const Strategy& t) noexcept
{
    const double tokens = static_cast<double>(t.micro_batch) * ctx.training.seq_len / t.cp;
    const double bytes = tokens * ctx.model.hidden * activation_element_bytes(ctx.training.precision);
    return sequence_sharded(t) ? bytes / t.tp : bytes;
}

} // namespace

Relayout relayout(const PlanContext& ctx, const Strategy& s, const LayerSetting& from, const LayerSetting& to) noexcept
{
    Relayout r;
    if (from.same_layout(to))
        return r;
    LayerSetting a = plain_layer_setting(ctx, s), b = a;
    a.tp = from.tp;
    a.cp = from.cp;
    b.tp = to.tp;
    b.cp = to.cp;
    const Strategy src = strategy_of_setting(s, a);
    const Strategy dst = strategy_of_setting(s, b);
    // Both layouts cover the same GPUs; the tokens of one micro-batch of the wider TP x CP block mix
    // only inside that block (the narrower layout's replicas sit within it under a TP/CP-inner order).
    const Strategy& wide
        = static_cast<long long>(src.tp) * src.cp > static_cast<long long>(dst.tp) * dst.cp ? src : dst;
    r.group = place_group(
        s.rank_order, LayoutSizes::dense(wide), { ParallelDim::tp, ParallelDim::cp }, ctx.cluster.gpus_per_node);
    r.stream = from.tp != to.tp ? kTpStream : kCpStream;
    // Sequence-split on both sides: each GPU keeps as many tokens and exchanges them all-to-all (as
    // Ulysses moves between sequence and head splits, Jacobs et al. 2023). A replicated destination
    // gathers its whole share.
    if (sequence_sharded(src) && sequence_sharded(dst)) {
        r.collective = Collective::all_to_all;
        r.bytes = held_bytes(ctx, src);
    } else {
        r.collective = Collective::all_gather;
        r.bytes = held_bytes(ctx, dst);
    }
    r.time_s = collective_time_s(ctx.network, r.collective, r.bytes, r.group);
    return r;
}

ChunkRelayout chunk_relayout(
    const PlanContext& ctx, const Strategy& s, const StrategyCosts& c, const ChunkInfo& chunk) noexcept
{
    ChunkRelayout out;
    if (!c.ranges)
        return out;
    for (int l = std::max(1, chunk.first_layer); l < chunk.first_layer + chunk.layers; ++l) {
        const LayerSetting& before = c.variants.setting_of_layer(l - 1);
        const LayerSetting& after = c.variants.setting_of_layer(l);
        if (before.same_layout(after))
            continue;
        const Relayout fwd = relayout(ctx, s, before, after);
        out.forward_s += fwd.time_s;
        out.backward_s += relayout(ctx, s, after, before).time_s;
        out.stream = fwd.stream;
        out.across_nodes = out.across_nodes || fwd.group.nodes > 1;
        if (out.boundaries++ == 0)
            out.first_boundary = l;
    }
    return out;
}

} // namespace parallax

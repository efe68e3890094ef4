#include "model/strategy_costs.hpp"

#include "ir/schedule_program.hpp"
#include "model/activation_offload.hpp"
#include "model/host_link.hpp"
#include "model/moe_load.hpp"

#include "spec/strategy_rules.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace parallax {

namespace {

// HBM bytes per locally-updated parameter in the optimizer step (fused multi-tensor kernels):
// Adam reads grad, master, m, v (4 x 4 B) and writes master, m, v (3 x 4 B) and the bf16 copy (2 B).
constexpr double kAdamStepBytesPerParam = 30;
// 8-bit Adam: fp32 grad in, 8-bit states and master extension in/out, bf16 copy out.
constexpr double kAdam8bitStepBytesPerParam = 13;
// SGD with momentum / Lion: grad, master, momentum in; master, momentum, bf16 copy out.
constexpr double kOneMomentStepBytesPerParam = 22;
// Gradient-norm for clipping reads every local gradient once (fp32).
constexpr double kGradNormBytesPerParam = 4;
// Megatron's default gradient bucket: max(40M, 1M * dp) parameters (--ddp-bucket-size).
constexpr double kBucketParams = 40e6;
// Gradient accumulation outside the GEMM, bytes per parameter per micro-batch (see chunk_timing).
constexpr double kBf16IntoFp32AccumulateBytes = 10;
constexpr double kHalfAutogradAccumulateBytes = 6;
// fp32 training: autograd adds each micro-batch's fp32 gradient into .grad, r4+r4+w4.
constexpr double kFp32AutogradAccumulateBytes = 12;
// The 16-bit working copy the optimizer step writes besides the fp32 master (absent in fp32 training).
constexpr double kHalfWorkingCopyBytes = 2;

} // namespace

Groups place_groups(const PlanContext& ctx, const Strategy& s) noexcept
{
    const long long gpn = ctx.cluster.gpus_per_node;
    const LayoutSizes dense = LayoutSizes::dense(s);
    const LayoutSizes expert = LayoutSizes::expert(s);
    Groups g;
    g.tp = place_group(s.rank_order, dense, { ParallelDim::tp }, gpn);
    g.cp = place_group(s.rank_order, dense, { ParallelDim::cp }, gpn);
    g.dp_dense = place_group(s.rank_order, dense, { ParallelDim::dp, ParallelDim::cp }, gpn);
    g.ep = place_group(s.rank_order, expert, { ParallelDim::ep }, gpn);
    g.etp = place_group(s.rank_order, expert, { ParallelDim::tp }, gpn);
    g.dp_expert = place_group(s.rank_order, expert, { ParallelDim::dp }, gpn);
    g.pp_pair.size = s.pp > 1 ? 2 : 1;
    const bool same_node = pp_neighbours_share_node(s.rank_order, dense, gpn);
    g.pp_pair.per_node = same_node ? 2 : 1;
    g.pp_pair.nodes = same_node ? 1 : 2;
    g.pp_pair.same_rail = !same_node;
    return g;
}

namespace {

double mixed_optimizer_bytes_per_param(Optimizer o)
{
    switch (o) {
    case Optimizer::adam:
        return kAdamStepBytesPerParam;
    case Optimizer::adam8bit:
        return kAdam8bitStepBytesPerParam;
    case Optimizer::sgd:
    case Optimizer::lion:
        return kOneMomentStepBytesPerParam;
    }
    return kAdamStepBytesPerParam;
}

// Pure fp32 training updates the fp32 weights in place: no 16-bit copy to write.
double optimizer_bytes_per_param(Optimizer o, Precision p)
{
    return mixed_optimizer_bytes_per_param(o) - (is_full_precision(p) ? kHalfWorkingCopyBytes : 0.0);
}

} // namespace

int moe_layers_in(const ModelSpec& m, int first, int count)
{
    int n = 0;
    if (!m.is_moe())
        return 0;
    for (int l = first; l < first + count; ++l)
        n += m.is_moe_layer(l) ? 1 : 0;
    return n;
}

namespace {

void layer_context_of(const PlanContext& ctx, const Strategy& s, const Groups& g, LayerContext& lc)
{
    lc.model = &ctx.model;
    lc.training = &ctx.training;
    lc.strategy = &s;
    lc.device = ctx.device;
    lc.network = ctx.network;
    lc.tp_group = g.tp;
    lc.cp_group = g.cp;
    lc.ep_group = g.ep;
    lc.expert_tp_group = g.etp;
    lc.traits = software_traits(ctx.training.framework, ctx.training.software);
    lc.moe_straggler = moe_load(ctx.model, ctx.training, s.ep).straggler_ratio;
}

// Every layer kind the model has (dense, MoE, embedding, output): the builder of its kernel list and
// where its op totals and its power curves go.
template <class F> void for_each_layer_kind(const ModelSpec& m, F f)
{
    f([](const LayerContext& c, LayerOps& o) { build_layer_ops(c, false, o); }, &LayerCosts::dense,
        &LayerCurves::dense);
    if (m.is_moe())
        f([](const LayerContext& c, LayerOps& o) { build_layer_ops(c, true, o); }, &LayerCosts::moe, &LayerCurves::moe);
    f([](const LayerContext& c, LayerOps& o) { build_embedding_ops(c, o); }, &LayerCosts::embedding,
        &LayerCurves::embedding);
    f([](const LayerContext& c, LayerOps& o) { build_output_ops(c, o); }, &LayerCosts::output, &LayerCurves::output);
}

// The per-layer op totals (no pipeline exchange, no activations).
void layer_totals(const PlanContext& ctx, const Strategy& s, const Groups& g, LayerCosts& c)
{
    LayerContext lc;
    layer_context_of(ctx, s, g, lc);
    LayerOps ops;
    for_each_layer_kind(ctx.model, [&](auto build, LayerTotals LayerCosts::*totals, auto) {
        build(lc, ops);
        c.*totals = summarize(ops);
    });
}

} // namespace

LayerActivationBytes compute_layer_activations(const PlanContext& ctx, const Strategy& s) noexcept
{
    LayerActivationBytes a;
    LayerContext lc;
    layer_context_of(ctx, s, Groups {}, lc); // activation sizes do not depend on where groups sit
    a.dense = layer_activation_bytes(lc, false);
    if (ctx.model.is_moe())
        a.moe = layer_activation_bytes(lc, true);
    if (s.recompute == Recompute::full) {
        Strategy keep = s;
        keep.recompute = Recompute::selective;
        lc.strategy = &keep;
        a.working
            = std::max(layer_activation_bytes(lc, false), ctx.model.is_moe() ? layer_activation_bytes(lc, true) : 0.0);
    }
    return a;
}

void add_pipeline_p2p(const PlanContext& ctx, const Strategy& s, const Groups& g, LayerCosts& c) noexcept
{
    const SoftwareTraits traits = software_traits(ctx.training.framework, ctx.training.software);
    // Megatron sends the stage output split across TP ranks (sequence parallel, or the
    // scatter-gather optimisation of Narayanan et al. 2021 Sec. 4.1 without it).
    const bool sp = s.sequence_parallel && s.tp > 1;
    const bool split = traits.p2p_scatter_gather || sp;
    const double activation = static_cast<double>(s.micro_batch) * ctx.training.seq_len / s.cp * ctx.model.hidden
        * activation_element_bytes(ctx.training.precision);
    c.p2p_transfers = traits.p2p_blocking_transfers_per_microbatch;
    c.p2p_s = collective_time_s(ctx.network, Collective::send_recv, activation / (split ? s.tp : 1), g.pp_pair);
    // Without sequence parallelism the receiver all-gathers the split activation over the TP group
    // (Narayanan et al. 2021 Sec. 4.1); with it the shard is what the next stage consumes.
    if (split && !sp)
        c.p2p_s += collective_time_s(ctx.network, Collective::all_gather, activation, g.tp);
}

LayerCosts compute_layer_costs(const PlanContext& ctx, const Strategy& s, const Groups& g) noexcept
{
    LayerCosts c;
    layer_totals(ctx, s, g, c);
    c.activations = compute_layer_activations(ctx, s);
    add_pipeline_p2p(ctx, s, g, c);
    return c;
}

namespace {

// The curves of every layer kind; with `totals` also their per-layer op totals, summarised from the
// same calibrated kernel lists at the nominal clock (one build of each list serves both).
void build_layer_curves(const PlanContext& ctx, const Strategy& s, const Groups& g, ClockLevels levels,
    LayerCurves& out, LayerCosts* totals)
{
    out = LayerCurves {};
    out.levels = levels;
    LayerContext lc;
    layer_context_of(ctx, s, g, lc);
    // The reference clock the kernel lists are rebuilt at to split each kernel's time into its
    // clock-bound and fixed parts: the bottom of the clock ladder, so the split holds over the whole
    // range the curves cover.
    LayerContext lr = lc;
    const double ref = ctx.clocks.lo;
    lr.device.clock_scale = ref;
    LayerContext pc = lc, pr = lc;
    pc.device = ctx.power_device;
    pr.device = ctx.power_device;
    pr.device.clock_scale = ref;
    LayerOps nominal, at_ref, physical, physical_at_ref;
    auto group = [&](auto build, OpGroupCurves& dst, LayerTotals* sum) {
        build(lc, nominal);
        if (sum)
            *sum = summarize(nominal);
        build(pc, physical);
        build(pr, physical_at_ref);
        // At the nominal clock alone the calibrated list at the reference clock is needed only when a
        // kernel is throttled there: tried without it first.
        const bool ladder = levels == ClockLevels::ladder;
        if (ladder)
            build(lr, at_ref);
        KernelLists lists { &nominal, ladder ? &at_ref : nullptr, &physical, &physical_at_ref };
        auto curves = [&] {
            return build_group_curves(
                ctx.power, ctx.clocks, ctx.device, ctx.power_device, ctx.training.precision, lists, ref, levels, dst);
        };
        if (!curves()) {
            build(lr, at_ref);
            lists.at_ref = &at_ref;
            curves();
        }
    };
    for_each_layer_kind(ctx.model, [&](auto build, LayerTotals LayerCosts::*sum, OpGroupCurves LayerCurves::*curves) {
        group(build, out.*curves, totals ? &(totals->*sum) : nullptr);
    });
    for (const OpGroupCurves* grp : { &out.dense, &out.moe, &out.embedding, &out.output })
        for (const PassCurve& p : grp->pass)
            out.throttled_at_nominal = out.throttled_at_nominal || p.throttled_at_nominal;
}

} // namespace

LayerCurves compute_layer_curves(
    const PlanContext& ctx, const Strategy& s, const Groups& g, ClockLevels levels) noexcept
{
    LayerCurves out;
    build_layer_curves(ctx, s, g, levels, out, nullptr);
    return out;
}

const LayerCurves& LayerEntry::ladder(const PlanContext& ctx)
{
    if (curves.levels != ClockLevels::ladder)
        curves = compute_layer_curves(ctx, strategy, groups, ClockLevels::ladder);
    return curves;
}

const LayerCurves& StrategyCosts::curves_at(const PlanContext& ctx, double clock) const
{
    if (clock == 1.0 || !entry)
        return *curves;
    return entry->ladder(ctx);
}

namespace {

// The strategy fields the layer-level costs depend on.
template <std::size_t N> void put_layer_fields(const Strategy& s, ExactKey<N>& k)
{
    const long long fields[] = { s.tp, s.cp, s.ep, s.effective_expert_tp(), s.micro_batch, s.sequence_parallel,
        static_cast<long long>(s.recompute), static_cast<long long>(s.cp_kind), s.tp_comm_overlap, s.ep_tile_overlap };
    static_assert(std::size(fields) <= N);
    std::copy(std::begin(fields), std::end(fields), k.v.begin());
}

} // namespace

EvaluationCache::EvaluationCache(const PlanContext& ctx)
    : m_ctx(ctx)
{
}

const PlanLayout& EvaluationCache::layout(const Strategy& s)
{
    // A composite plan's stages differ by their ranges' settings, not only by their layer counts.
    const LayoutKey key { { s.pp, s.vpp, s.first_stage_layers, s.last_stage_layers, runs_dualpipe(s),
        static_cast<long long>(reinterpret_cast<std::uintptr_t>(s.layers)) } };
    auto it = m_layouts.find(key);
    if (it == m_layouts.end())
        it = m_layouts.emplace(key, std::make_unique<PlanLayout>(PlanLayout::make(m_ctx.model, s))).first;
    return *it->second;
}

const LayerActivationBytes& EvaluationCache::activations(const Strategy& s)
{
    ActivationKey key;
    put_layer_fields(s, key);
    auto it = m_activations.find(key);
    if (it == m_activations.end()) {
        if (m_activations.size() >= kMaxLayerEntries)
            m_activations.clear();
        it = m_activations.emplace(key, compute_layer_activations(m_ctx, s)).first;
    }
    return it->second;
}

LayerEntry& EvaluationCache::layer_entry(const Strategy& s, const Groups& g)
{
    // Pipeline neighbours' placement is not part of the key: the exchange is costed per evaluation.
    LayerKey key;
    put_layer_fields(s, key);
    std::size_t i = kLayerFields;
    for (const GroupPlacement* gp : { &g.tp, &g.cp, &g.ep, &g.etp }) {
        key.v[i++] = gp->size;
        key.v[i++] = gp->per_node;
        key.v[i++] = gp->nodes;
        key.v[i++] = gp->same_rail;
    }
    auto it = m_layers.find(key);
    if (it == m_layers.end()) {
        // Bounded: a search over a large MoE space meets hundreds of thousands of distinct layer
        // shapes (~5 KiB each with their clock curves); past the bound the cache starts afresh
        // rather than growing without limit. Entries are only referenced within one evaluation.
        if (m_layers.size() >= kMaxLayerEntries)
            m_layers.clear();
        auto entry = std::make_unique<LayerEntry>();
        entry->strategy = s;
        entry->groups = g;
        build_layer_curves(m_ctx, s, g, ClockLevels::nominal, entry->curves, &entry->costs);
        entry->costs.activations = activations(s);
        it = m_layers.emplace(key, std::move(entry)).first;
    }
    return *it->second;
}

namespace {

// The layer entries of a composite plan: one per recompute setting some layer uses, and the plain one.
// A cache that starts afresh on the way (kMaxLayerEntries) would drop entries already fetched: then
// they are all fetched again (the fresh cache has room for them).
LayerEntry& composite_entries(const PlanContext& ctx, const Strategy& s, EvaluationCache& cache, StrategyCosts& c)
{
    std::array<bool, kRecomputeCount> used {};
    for (int l = 0; l < ctx.model.layers; ++l)
        used[static_cast<int>(s.layers->recompute_of(l, s.recompute))] = true;
    for (;;) {
        bool dropped = false;
        std::size_t n = cache.layer_entries();
        auto fetch = [&](const Strategy& t) {
            LayerEntry& e = cache.layer_entry(t, c.groups);
            dropped = dropped || cache.layer_entries() < n;
            n = cache.layer_entries();
            return &e;
        };
        for (int r = 0; r < kRecomputeCount; ++r) {
            Strategy t = s;
            t.recompute = static_cast<Recompute>(r);
            c.by_recompute[r] = used[r] ? fetch(t) : nullptr;
        }
        LayerEntry* plain = fetch(s);
        if (!dropped)
            return *plain;
    }
}

} // namespace

LayerEntry& StrategyCosts::entry_of_layer(int layer) const
{
    return *by_recompute[static_cast<int>(ranges->recompute_of(layer, recompute))];
}

LayerMix layer_mix(const ModelSpec& m, const StrategyCosts& c, int first, int count) noexcept
{
    LayerMix mix;
    for (int l = first; l < first + count; ++l) {
        const int r = static_cast<int>(c.ranges->recompute_of(l, c.recompute));
        ++(m.is_moe_layer(l) ? mix.moe[r] : mix.dense[r]);
    }
    return mix;
}

bool throttled_at_nominal(const StrategyCosts& c) noexcept
{
    bool any = c.curves && c.curves->throttled_at_nominal;
    for (const LayerEntry* e : c.by_recompute)
        any = any || (e && e->curves.throttled_at_nominal);
    return any;
}

std::array<LayerActivationBytes, kRecomputeCount> activations_by_recompute(const StrategyCosts& c) noexcept
{
    std::array<LayerActivationBytes, kRecomputeCount> a {};
    for (int r = 0; r < kRecomputeCount; ++r)
        if (c.by_recompute[r])
            a[r] = c.by_recompute[r]->costs.activations;
    return a;
}

void compute_costs(const PlanContext& ctx, const Strategy& s, EvaluationCache& cache, StrategyCosts& c)
{
    c.groups = place_groups(ctx, s);
    c.ranges = s.layers;
    c.recompute = s.recompute;
    c.by_recompute = {};
    LayerEntry& e = s.layers ? composite_entries(ctx, s, cache, c) : cache.layer_entry(s, c.groups);
    c.layer = e.costs;
    add_pipeline_p2p(ctx, s, c.groups, c.layer);
    c.curves = &e.curves;
    c.entry = &e;
    c.layout = &cache.layout(s);
}

StageParams stage_params(const PlanContext& ctx, const Strategy& s, const StrategyCosts& c, int stage) noexcept
{
    return stage_params(ctx, s, *c.layout, stage);
}

ChunkTiming chunk_timing(const PlanContext& ctx, const Strategy& s, const StrategyCosts& c, int chunk) noexcept
{
    const ChunkInfo& info = c.layout->chunk[chunk];
    ChunkTiming ct;
    ct.first_layer = info.first_layer;
    ct.layers = info.layers;
    ct.moe_layers = info.moe_layers;
    ct.has_embedding = chunk == 0;
    ct.has_output = chunk == c.layout->chunks() - 1;
    LayerTotals t;
    if (!c.ranges) {
        t.add(c.layer.dense, ct.layers - ct.moe_layers);
        if (ct.moe_layers > 0)
            t.add(c.layer.moe, ct.moe_layers);
    } else {
        // A composite plan: each layer with the costs of its range's settings.
        const LayerMix mix = layer_mix(ctx.model, c, ct.first_layer, ct.layers);
        for (int r = 0; r < kRecomputeCount; ++r) {
            if (mix.dense[r] > 0)
                t.add(c.by_recompute[r]->costs.dense, mix.dense[r]);
            if (mix.moe[r] > 0)
                t.add(c.by_recompute[r]->costs.moe, mix.moe[r]);
        }
    }
    // The embedding runs with the first layer's settings, the loss with the last layer's.
    if (ct.has_embedding)
        t.add(c.ranges ? c.entry_of_layer(0).costs.embedding : c.layer.embedding, 1);
    if (ct.has_output)
        t.add(c.ranges ? c.entry_of_layer(ctx.model.layers - 1).costs.output : c.layer.output, 1);
    ct.forward_s = t.fwd_time();
    ct.weight_s = t.backward_weight_s;
    ct.recompute_s = t.recompute_s;
    ct.backward_input_s = t.backward_input_s + t.exposed_bwd();
    ct.compute_s = t.forward_s + t.backward_input_s + t.backward_weight_s;
    if (software_traits(ctx.training.framework, ctx.training.software).separate_grad_accumulation) {
        // Each micro-batch's weight gradients are added into the step's accumulators in a pass of their
        // own: bf16 into DeepSpeed's fp32 copies (BF16_Optimizer.update_hp_grads after every
        // micro-batch's backward, pipe/engine.py) r2+r4+w4, fp16 by autograd into .grad r2+r2+w2.
        // Megatron fuses it into the weight-gradient GEMM (gradient_accumulation_fusion).
        const int stage = chunk % s.pp;
        const double stage_layers = std::max(1, c.layout->stage[stage].layers);
        const double params = stage_params(ctx, s, c, stage).total() * ct.layers / stage_layers;
        const double bytes = is_full_precision(ctx.training.precision) ? kFp32AutogradAccumulateBytes
            : ctx.training.precision == Precision::bf16                ? kBf16IntoFp32AccumulateBytes
                                                                       : kHalfAutogradAccumulateBytes;
        const double accumulate = memory_bound_time_s(ctx.device, params * bytes);
        ct.weight_s += accumulate;
        ct.compute_s += accumulate;
    }
    ct.flops = t.flops;
    for (int i = 0; i < kOpStreamCount; ++i) {
        ct.exposed_s[i] = t.comm_exposed_fwd_s[i] + t.comm_exposed_bwd_s[i];
        ct.comm_busy_s[i] = t.comm_busy_s[i];
    }
    if (runs_dualpipe(s) || s.ep_overlap) {
        // DualPipe overlaps one micro-batch's all-to-all (and PP sends) with another's compute inside
        // each forward-backward pair (DeepSeek-V3 report Sec. 3.2.1); Megatron's batch-level overlap
        // (--overlap-moe-expert-parallel-comm) pairs micro-batches the same way.
        const double hidden_bwd = std::min(t.comm_exposed_bwd_s[kEpStream], ct.compute_s);
        const double hidden_fwd = std::min(t.comm_exposed_fwd_s[kEpStream], ct.compute_s - hidden_bwd);
        ct.exposed_s[kEpStream] -= hidden_bwd + hidden_fwd;
        ct.backward_input_s -= hidden_bwd;
        ct.forward_s -= hidden_fwd;
    }
    if (s.offload_activations || c.ranges) {
        const HostCopyTime h = chunk_activation_offload(ctx, s, c, info);
        ct.forward_s += h.forward_s;
        ct.backward_input_s += h.backward_s;
        ct.host_copy_s += h.forward_s + h.backward_s;
    }
    return ct;
}

double p2p_per_direction_s(const Strategy& s, const StrategyCosts& c) noexcept
{
    // Each chunk exchanges activations with its neighbours once per micro-batch in each direction:
    // Megatron pairs the send and the receive in one batched exchange (2 blocking transfers per
    // micro-batch), DeepSpeed's engine issues them separately (4). DualPipe overlaps its sends with the
    // paired chunk's compute.
    if (s.pp <= 1 || runs_dualpipe(s))
        return 0;
    return c.layer.p2p_s * c.layer.p2p_transfers / 2.0;
}

StageTiming stage_timing_of(const PlanContext& ctx, const Strategy& s, const StrategyCosts& c, int stage) noexcept
{
    StageTiming st;
    for (int v = 0; v < s.vpp; ++v) {
        const ChunkTiming ct = chunk_timing(ctx, s, c, v * s.pp + stage);
        st.forward_s += ct.forward_s;
        st.backward_s += ct.backward_input_s + ct.weight_s + ct.recompute_s;
        st.weight_grad_s += ct.weight_s;
        st.compute_s += ct.compute_s;
        st.recompute_s += ct.recompute_s;
        st.host_copy_s += ct.host_copy_s;
        for (int i = 0; i < kOpStreamCount; ++i)
            st.exposed_s[i] += ct.exposed_s[i];
    }
    const double p2p = p2p_per_direction_s(s, c) * s.vpp;
    st.forward_s += p2p;
    st.backward_s += p2p;
    st.exposed_s[kPpStream] += 2 * p2p;
    return st;
}

StageTail stage_tail(const PlanContext& ctx, const Strategy& s, const StrategyCosts& c, int stage) noexcept
{
    StageTail tail;
    const StageParams sp = stage_params(ctx, s, c, stage);
    const StateBytes state = state_bytes(ctx.training, s);
    const double dense_shard = static_cast<double>(s.dp) * s.cp;
    const double expert_shard = std::max(
        1.0, static_cast<double>(s.tp) * s.cp * s.dp / (static_cast<double>(s.effective_expert_tp()) * s.ep));
    tail.params = std::max(1.0, sp.total());
    if (s.zero <= 2) {
        const Collective coll = s.zero == 0 ? Collective::all_reduce : Collective::reduce_scatter;
        tail.grad_reduce_s = collective_time_s(ctx.network, coll, sp.dense * state.gradients, c.groups.dp_dense)
            + collective_time_s(ctx.network, coll, sp.expert * state.gradients, c.groups.dp_expert);
        if (s.zero >= 1)
            tail.param_gather_s = collective_time_s(ctx.network, Collective::all_gather,
                                      sp.dense * gather_bytes_per_param(ctx.training.precision), c.groups.dp_dense)
                + collective_time_s(ctx.network, Collective::all_gather,
                    sp.expert * gather_bytes_per_param(ctx.training.precision), c.groups.dp_expert);
    }
    tail.last_bucket_fraction = std::min(1.0, kBucketParams / tail.params);
    const double local = s.zero >= 1 ? sp.dense / dense_shard + sp.expert / expert_shard : sp.total();
    const double grads_local = s.zero >= 2 ? local : sp.total();
    if (s.offload_params) {
        // ZeRO-Infinity: the gradients went to the host during the backward; CPU Adam updates the parameters
        // where they live.
        tail.offload_s = local * gpus_per_socket(ctx.cluster) * kCpuAdamSecondsPerParamPerSocket;
    } else if (s.offload_optimizer) {
        // ZeRO-Offload: gradients go down, updated bf16 weights come back over PCIe; the host updates every
        // local shard of the GPUs that share its socket (a lone GPU has both sockets to itself).
        const double copy = local * (state.gradients + state.weights) / pcie_copy_Bps(ctx.cluster);
        tail.offload_s = copy + local * gpus_per_socket(ctx.cluster) * kCpuAdamSecondsPerParamPerSocket;
    } else {
        const double bytes = local * optimizer_bytes_per_param(s.optimizer, ctx.training.precision)
            + grads_local * kGradNormBytesPerParam;
        tail.optimizer_s = memory_bound_time_s(ctx.device, bytes);
    }
    return tail;
}

Zero3Traffic zero3_traffic(const PlanContext& ctx, const Strategy& s, const StrategyCosts& c, int stage) noexcept
{
    Zero3Traffic z;
    const StageParams sp = stage_params(ctx, s, c, stage);
    const StateBytes state = state_bytes(ctx.training, s);
    z.units = std::max(1, c.layout->stage[stage].layers);
    auto per_unit = [&](Collective coll, double bytes_per_param) {
        return z.units
            * (collective_time_s(ctx.network, coll, sp.dense / z.units * bytes_per_param, c.groups.dp_dense)
                + collective_time_s(ctx.network, coll, sp.expert / z.units * bytes_per_param, c.groups.dp_expert));
    };
    z.gather_s = per_unit(Collective::all_gather, gather_bytes_per_param(ctx.training.precision));
    z.reduce_scatter_s = per_unit(Collective::reduce_scatter, state.gradients);
    return z;
}

} // namespace parallax

#include "model/strategy_costs.hpp"

#include "ir/schedule_program.hpp"
#include "model/activation_offload.hpp"
#include "model/host_link.hpp"
#include "model/moe_load.hpp"
#include "model/relayout.hpp"

#include "spec/strategy_rules.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>

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
// Megatron-Core's default gradient bucket: max(40M, 1M x the data-parallel size) parameters, so that
// each ring chunk stays bandwidth-bound (megatron/core/distributed/distributed_data_parallel.py:
// max(40000000, 1000000 * parallel_state.get_data_parallel_world_size()), CP not counted; the
// --ddp-bucket-size flag overrides it).
constexpr double kBucketParams = 40e6;
constexpr double kBucketParamsPerDpRank = 1e6;
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

// The training settings of a layer whose matmuls run at `p`: the context's own, or a copy with the
// precision replaced (a composite plan's range of its own precision; kept in `copy`).
const TrainingSpec& training_at(const PlanContext& ctx, Precision p, std::optional<TrainingSpec>& copy)
{
    if (p == ctx.training.precision)
        return ctx.training;
    copy = ctx.training;
    copy->precision = p;
    return *copy;
}

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
    return compute_layer_activations(ctx, s, ctx.training.precision);
}

LayerActivationBytes compute_layer_activations(const PlanContext& ctx, const Strategy& s, Precision p) noexcept
{
    LayerActivationBytes a;
    LayerContext lc;
    std::optional<TrainingSpec> copy;
    layer_context_of(ctx, s, Groups {}, lc); // activation sizes do not depend on where groups sit
    lc.training = &training_at(ctx, p, copy);
    const LayerSavedBytes dense = layer_saved_bytes(lc, false);
    a.dense = dense.device;
    a.dense_host = dense.pinned_host;
    if (ctx.model.is_moe()) {
        const LayerSavedBytes moe = layer_saved_bytes(lc, true);
        a.moe = moe.device;
        a.moe_host = moe.pinned_host;
    }
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
    c.p2p_s = collective_time_s(ctx.network, Collective::send_recv,
        p2p_transfer_bytes(traits, activation, ctx.training.seq_len, s.tp, split, sp), g.pp_pair);
    // Without sequence parallelism the receiver all-gathers the split activation over the TP group
    // (Narayanan et al. 2021 Sec. 4.1); with it the shard is what the next stage consumes.
    if (split && !sp)
        c.p2p_s += collective_time_s(ctx.network, Collective::all_gather, activation, g.tp);
}

double p2p_transfer_bytes(const SoftwareTraits& traits, double activation_bytes, double seq_len, int tp, bool split,
    bool sequence_parallel) noexcept
{
    const double forward
        = activation_bytes / (split ? tp : 1) + traits.p2p_mask_bytes_per_position_pair * seq_len * seq_len;
    const bool split_grad = sequence_parallel || (split && traits.p2p_grad_scatter_gather);
    const double backward = activation_bytes / (split_grad ? tp : 1);
    return (forward + backward) / 2;
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
    LayerCurves& out, LayerCosts* totals, Precision precision)
{
    out = LayerCurves {};
    out.levels = levels;
    LayerContext lc;
    std::optional<TrainingSpec> copy;
    layer_context_of(ctx, s, g, lc);
    lc.training = &training_at(ctx, precision, copy);
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
                ctx.power, ctx.clocks, ctx.device, ctx.power_device, precision, lists, ref, levels, dst);
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
    return compute_layer_curves(ctx, s, g, levels, ctx.training.precision);
}

LayerCurves compute_layer_curves(
    const PlanContext& ctx, const Strategy& s, const Groups& g, ClockLevels levels, Precision p) noexcept
{
    LayerCurves out;
    build_layer_curves(ctx, s, g, levels, out, nullptr, p);
    return out;
}

const LayerCurves& LayerEntry::ladder(const PlanContext& ctx)
{
    if (curves.levels != ClockLevels::ladder)
        curves = compute_layer_curves(ctx, strategy, groups, ClockLevels::ladder, precision);
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
template <std::size_t N> void put_layer_fields(const Strategy& s, Precision p, ExactKey<N>& k)
{
    const long long fields[] = { s.tp, s.cp, s.ep, s.effective_expert_tp(), s.micro_batch, s.sequence_parallel,
        // The recomputed modules ride in the recompute field's upper bits (they matter with selective only).
        static_cast<long long>(s.recompute) | static_cast<long long>(s.recompute_modules) << 8,
        static_cast<long long>(s.cp_kind), s.tp_comm_overlap, s.ep_tile_overlap, static_cast<long long>(p) };
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
    return activations(s, m_ctx.training.precision);
}

const LayerActivationBytes& EvaluationCache::activations(const Strategy& s, Precision p)
{
    ActivationKey key;
    put_layer_fields(s, p, key);
    auto it = m_activations.find(key);
    if (it == m_activations.end()) {
        if (m_activations.size() >= kMaxLayerEntries)
            m_activations.clear();
        it = m_activations.emplace(key, compute_layer_activations(m_ctx, s, p)).first;
    }
    return it->second;
}

LayerEntry& EvaluationCache::layer_entry(const Strategy& s, const Groups& g)
{
    return layer_entry(s, g, m_ctx.training.precision);
}

LayerEntry& EvaluationCache::layer_entry(const Strategy& s, const Groups& g, Precision p)
{
    // Pipeline neighbours' placement is not part of the key: the exchange is costed per evaluation.
    LayerKey key;
    put_layer_fields(s, p, key);
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
        entry->precision = p;
        build_layer_curves(m_ctx, s, g, ClockLevels::nominal, entry->curves, &entry->costs, p);
        entry->costs.activations = activations(s, p);
        it = m_layers.emplace(key, std::move(entry)).first;
    }
    return *it->second;
}

namespace {

// The layer entries of a composite plan: one per distinct setting its layers use, and the plain one.
// A cache that starts afresh on the way (kMaxLayerEntries) would drop entries already fetched: then
// they are all fetched again (the fresh cache has room for them).
LayerEntry& composite_entries(const PlanContext& ctx, const Strategy& s, EvaluationCache& cache, StrategyCosts& c)
{
    c.variants = LayerVariants::of(*s.layers, plain_layer_setting(ctx, s), ctx.model.layers);
    for (;;) {
        bool dropped = false;
        std::size_t n = cache.layer_entries();
        auto fetch = [&](const Strategy& t, Precision p) {
            LayerEntry& e = cache.layer_entry(t, place_groups(ctx, t), p);
            dropped = dropped || cache.layer_entries() < n;
            n = cache.layer_entries();
            return &e;
        };
        for (int v = 0; v < c.variants.count; ++v) {
            const LayerSetting& set = c.variants.setting[v];
            c.by_variant[v] = fetch(strategy_of_setting(s, set), set.precision);
        }
        LayerEntry* plain = fetch(s, ctx.training.precision);
        if (!dropped)
            return *plain;
    }
}

} // namespace

LayerSetting plain_layer_setting(const PlanContext& ctx, const Strategy& s) noexcept
{
    return { s.recompute, ctx.training.precision, s.effective_expert_tp(), s.tp, s.cp };
}

Strategy strategy_of_setting(const Strategy& s, const LayerSetting& v) noexcept
{
    Strategy t = s;
    t.recompute = v.recompute;
    if (!v.same_layout(plain_layout_of(s))) {
        // The stage's tp * cp * dp GPUs regrouped as v.tp * v.cp * dp'; each regrouped replica takes its
        // share of the replicas' micro-batches, so every GPU keeps its tokens (the reader checks both divide).
        const long long block = static_cast<long long>(s.tp) * s.cp;
        const long long range_block = static_cast<long long>(v.tp) * v.cp;
        t.tp = v.tp;
        t.cp = v.cp;
        t.dp = static_cast<int>(block * s.dp / range_block);
        t.micro_batch = static_cast<int>(static_cast<long long>(s.micro_batch) * range_block / block);
    }
    t.expert_tp = v.expert_tp == t.tp ? 0 : v.expert_tp;
    return t;
}

LayerSetting plain_layout_of(const Strategy& s) noexcept
{
    LayerSetting v;
    v.tp = s.tp;
    v.cp = s.cp;
    return v;
}

LayerEntry& StrategyCosts::entry_of_layer(int layer) const
{
    return *by_variant[variants.of_layer(layer)];
}

LayerMix layer_mix(const ModelSpec& m, const StrategyCosts& c, int first, int count) noexcept
{
    LayerMix mix;
    for (int l = first; l < first + count; ++l) {
        const int v = c.variants.of_layer(l);
        ++(m.is_moe_layer(l) ? mix.moe[v] : mix.dense[v]);
    }
    return mix;
}

bool throttled_at_nominal(const StrategyCosts& c) noexcept
{
    bool any = c.curves && c.curves->throttled_at_nominal;
    for (int v = 0; c.ranges && v < c.variants.count; ++v)
        any = any || c.by_variant[v]->curves.throttled_at_nominal;
    return any;
}

std::array<LayerActivationBytes, kMaxLayerSettings> activations_by_variant(const StrategyCosts& c) noexcept
{
    std::array<LayerActivationBytes, kMaxLayerSettings> a {};
    for (int v = 0; c.ranges && v < c.variants.count; ++v)
        a[v] = c.by_variant[v]->costs.activations;
    return a;
}

double plan_peak_flops(const PlanContext& ctx, const StrategyCosts& c) noexcept
{
    const double plain = ctx.cluster.gpu.peak(ctx.training.precision);
    if (!c.ranges)
        return plain;
    const LayerMix mix = layer_mix(ctx.model, c, 0, ctx.model.layers);
    double flops = 0, ideal_s = 0;
    auto add = [&](double f, Precision p) {
        const double peak = ctx.cluster.gpu.peak(p);
        flops += f;
        ideal_s += peak > 0 ? f / peak : 0;
    };
    for (int v = 0; v < c.variants.count; ++v) {
        const LayerCosts& e = c.by_variant[v]->costs;
        add(e.dense.flops * mix.dense[v] + e.moe.flops * mix.moe[v], c.variants.setting[v].precision);
    }
    // The embedding with the first layer's settings, the loss with the last layer's (as chunk_timing).
    add(c.entry_of_layer(0).costs.embedding.flops, c.variants.setting_of_layer(0).precision);
    const int last = ctx.model.layers - 1;
    add(c.entry_of_layer(last).costs.output.flops, c.variants.setting_of_layer(last).precision);
    return ideal_s > 0 ? flops / ideal_s : plain;
}

void compute_costs(const PlanContext& ctx, const Strategy& s, EvaluationCache& cache, StrategyCosts& c)
{
    c.groups = place_groups(ctx, s);
    c.ranges = s.layers;
    c.variants = LayerVariants {};
    c.by_variant = {};
    LayerEntry& e = s.layers ? composite_entries(ctx, s, cache, c) : cache.layer_entry(s, c.groups);
    c.layer = e.costs;
    add_pipeline_p2p(ctx, s, c.groups, c.layer);
    c.curves = &e.curves;
    c.entry = &e;
    c.layout = &cache.layout(s);
}

StageParams stage_params(const PlanContext& ctx, const Strategy& s, const StrategyCosts& c, int stage) noexcept
{
    if (c.ranges)
        return composite_stage_params(ctx, s, *c.layout, stage, c.variants).total();
    return stage_params(ctx, s, *c.layout, stage);
}

namespace {

double accumulate_bytes_per_param(Precision p)
{
    return is_full_precision(p) ? kFp32AutogradAccumulateBytes
        : p == Precision::bf16  ? kBf16IntoFp32AccumulateBytes
                                : kHalfAutogradAccumulateBytes;
}

// Bytes per parameter of the separate gradient accumulation pass over a chunk: a composite plan's
// layers each at their own precision (the mean over the chunk's layers, as the parameters are spread).
double accumulate_bytes_per_param(const PlanContext& ctx, const StrategyCosts& c, const ChunkTiming& ct)
{
    if (!c.ranges || ct.layers <= 0)
        return accumulate_bytes_per_param(ctx.training.precision);
    double sum = 0;
    for (int l = ct.first_layer; l < ct.first_layer + ct.layers; ++l)
        sum += accumulate_bytes_per_param(c.variants.setting_of_layer(l).precision);
    return sum / ct.layers;
}

} // namespace

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
        for (int v = 0; v < c.variants.count; ++v) {
            if (mix.dense[v] > 0)
                t.add(c.by_variant[v]->costs.dense, mix.dense[v]);
            if (mix.moe[v] > 0)
                t.add(c.by_variant[v]->costs.moe, mix.moe[v]);
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
        const double bytes = accumulate_bytes_per_param(ctx, c, ct);
        const double accumulate = memory_bound_time_s(ctx.device, params * bytes);
        ct.weight_s += accumulate;
        ct.compute_s += accumulate;
    }
    ct.flops = t.flops;
    for (int i = 0; i < kOpStreamCount; ++i) {
        ct.exposed_s[i] = t.comm_exposed_fwd_s[i] + t.comm_exposed_bwd_s[i];
        ct.comm_busy_s[i] = t.comm_busy_s[i];
    }
    if (c.ranges) {
        // Layers of another TP or CP than the layer before them: the activation relaid out between the
        // two layouts, forward and backward, before the next layer can start (model/relayout.hpp).
        const ChunkRelayout r = chunk_relayout(ctx, s, c, info);
        ct.forward_s += r.forward_s;
        ct.backward_input_s += r.backward_s;
        ct.exposed_s[r.stream] += r.forward_s + r.backward_s;
        ct.comm_busy_s[r.stream] += r.forward_s + r.backward_s;
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

double p2p_per_direction_s(const Strategy& s, const StrategyCosts& c, int stage) noexcept
{
    // Each chunk exchanges activations with its neighbours once per micro-batch in each direction:
    // Megatron pairs the send and the receive in one batched exchange (2 blocking transfers per
    // micro-batch), DeepSpeed's engine issues them separately (4), except on the first and last
    // stage, which have one neighbour: its TrainSchedule gives the first stage no RecvActivation or
    // SendGrad and the last no SendActivation or RecvGrad (deepspeed/runtime/pipe/schedule.py,
    // _valid_stage), so they block on one transfer each way. DualPipe overlaps its sends with the
    // paired chunk's compute.
    if (s.pp <= 1 || runs_dualpipe(s))
        return 0;
    const bool one_neighbour = s.vpp == 1 && (stage == 0 || stage == s.pp - 1);
    const int transfers = one_neighbour ? std::min(c.layer.p2p_transfers, 2) : c.layer.p2p_transfers;
    return c.layer.p2p_s * transfers / 2.0;
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
    const double p2p = p2p_per_direction_s(s, c, stage) * s.vpp;
    st.forward_s += p2p;
    st.backward_s += p2p;
    st.exposed_s[kPpStream] += 2 * p2p;
    return st;
}

namespace {

// A stage's expert parameters by the expert-data-parallel group they are reduced over: one group for a
// plain plan, one per layer variant for a composite one (ranges may set their own expert TP).
struct ExpertSplit {
    int count = 0;
    std::array<double, kMaxLayerSettings> params {};
    std::array<double, kMaxLayerSettings> shard {};
    std::array<const GroupPlacement*, kMaxLayerSettings> group {};
};

ExpertSplit expert_split(
    const PlanContext& ctx, const Strategy& s, const StrategyCosts& c, int stage, const StageParams& sp) noexcept
{
    ExpertSplit e;
    if (!c.ranges) {
        e.count = 1;
        e.params[0] = sp.expert;
        e.shard[0] = expert_shard_ranks(s, s.effective_expert_tp());
        e.group[0] = &c.groups.dp_expert;
        return e;
    }
    const CompositeParams p = composite_stage_params(ctx, s, *c.layout, stage, c.variants);
    e.count = c.variants.count;
    for (int k = 0; k < e.count; ++k) {
        e.params[k] = p.expert[k];
        e.shard[k] = expert_shard_ranks(s, c.variants.setting[k].expert_tp);
        e.group[k] = &c.by_variant[k]->groups.dp_expert;
    }
    return e;
}

// A stage's dense parameters by the data-parallel group their gradients are reduced over: one group
// for a plain plan; for a composite one, one per layout its ranges regroup the stage into (variants of
// the same TP and CP share the group, so ranges that keep the plan's degrees reduce as the plain plan).
struct DenseSplit {
    int count = 0;
    std::array<double, kMaxLayerSettings> params {};
    std::array<double, kMaxLayerSettings> shard {}; // the group's ranks (dp' x cp')
    std::array<GroupPlacement, kMaxLayerSettings> group {};
};

DenseSplit dense_split(
    const PlanContext& ctx, const Strategy& s, const StrategyCosts& c, int stage, const StageParams& sp) noexcept
{
    DenseSplit d;
    if (!c.ranges || !regroups_any_layers(s)) {
        d.count = 1;
        d.params[0] = sp.dense;
        d.shard[0] = static_cast<double>(s.dp) * s.cp;
        d.group[0] = c.groups.dp_dense;
        return d;
    }
    const CompositeParams p = composite_stage_params(ctx, s, *c.layout, stage, c.variants);
    std::array<int, kMaxLayerSettings> first_of {}; // the variant that opened each group
    for (int k = 0; k < c.variants.count; ++k) {
        int at = 0;
        while (at < d.count && !c.variants.setting[first_of[at]].same_layout(c.variants.setting[k]))
            ++at;
        if (at == d.count) {
            // Placed for this plan (a cached layer entry may have been built for another plan's dp).
            first_of[d.count++] = k;
            const Strategy t = strategy_of_setting(s, c.variants.setting[k]);
            d.shard[at] = static_cast<double>(t.dp) * t.cp;
            d.group[at] = place_groups(ctx, t).dp_dense;
        }
        d.params[at] += p.dense[k];
    }
    return d;
}

} // namespace

double ddp_bucket_params(const TrainingSpec& t, const Strategy& s) noexcept
{
    // Other engines keep a fixed bucket (PyTorch DDP's 25 MB, DeepSpeed's reduce_bucket_size): the 40M
    // parameters Parallax has always used for them.
    if (t.framework != Framework::megatron)
        return kBucketParams;
    return std::max(kBucketParams, kBucketParamsPerDpRank * s.dp);
}

StageTail stage_tail(const PlanContext& ctx, const Strategy& s, const StrategyCosts& c, int stage) noexcept
{
    StageTail tail;
    const StageParams sp = stage_params(ctx, s, c, stage);
    const StateBytes state = state_bytes(ctx.training, s);
    const double reduce_bytes = grad_reduce_bytes_per_param(ctx.training, state);
    tail.params = std::max(1.0, sp.total());
    // A composite plan's ranges of their own expert TP reduce their experts over their own expert-data-
    // parallel groups, ranges of their own TP or CP their dense weights over their own data-parallel
    // groups; a plain plan has one of each (index 0 below).
    const ExpertSplit experts = expert_split(ctx, s, c, stage, sp);
    const DenseSplit dense = dense_split(ctx, s, c, stage, sp);
    if (s.zero <= 2) {
        const Collective coll = s.zero == 0 ? Collective::all_reduce : Collective::reduce_scatter;
        const double gather_bytes = gather_bytes_per_param(ctx.training.precision);
        for (int k = 0; k < dense.count; ++k) {
            tail.grad_reduce_s += collective_time_s(ctx.network, coll, dense.params[k] * reduce_bytes, dense.group[k]);
            if (s.zero >= 1)
                tail.param_gather_s += collective_time_s(
                    ctx.network, Collective::all_gather, dense.params[k] * gather_bytes, dense.group[k]);
        }
        for (int k = 0; k < experts.count; ++k) {
            tail.grad_reduce_s
                += collective_time_s(ctx.network, coll, experts.params[k] * reduce_bytes, *experts.group[k]);
            if (s.zero >= 1)
                tail.param_gather_s += collective_time_s(
                    ctx.network, Collective::all_gather, experts.params[k] * gather_bytes, *experts.group[k]);
        }
    }
    tail.last_bucket_fraction = std::min(1.0, ddp_bucket_params(ctx.training, s) / tail.params);
    double local_expert = 0;
    for (int k = 0; k < experts.count; ++k)
        local_expert += experts.params[k] / experts.shard[k];
    double local_dense = 0;
    for (int k = 0; k < dense.count; ++k)
        local_dense += dense.params[k] / dense.shard[k];
    const double local = s.zero >= 1 ? local_dense + local_expert : sp.total();
    const double grads_local = s.zero >= 2 ? local : sp.total();
    if (s.offload_params) {
        // ZeRO-Infinity: the gradients went to the host during the backward; CPU Adam updates the parameters
        // where they live.
        tail.offload_s = local * gpus_per_socket(ctx.cluster) * kCpuAdamSecondsPerParamPerSocket;
    } else if (s.offload_optimizer) {
        // ZeRO-Offload: gradients go down in fp32, updated 16-bit weights come back over PCIe; the host updates
        // every local shard of the GPUs that share its socket (a lone GPU has both sockets to itself).
        const double copy = local * (kOffloadedGradientBytesPerParam + state.weights) / pcie_copy_Bps(ctx.cluster);
        tail.offload_s = copy + local * gpus_per_socket(ctx.cluster) * kCpuAdamSecondsPerParamPerSocket;
    } else {
        const double bytes = local * optimizer_bytes_per_param(s.optimizer, ctx.training.precision)
            + grads_local * kGradNormBytesPerParam;
        tail.optimizer_s = memory_bound_time_s(ctx.device, bytes);
    }
    if (s.offload_optimizer || s.offload_params)
        tail.accumulate_copy_s = local * state.gradients / pcie_copy_Bps(ctx.cluster);
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
    z.reduce_scatter_s = per_unit(Collective::reduce_scatter, grad_reduce_bytes_per_param(ctx.training, state));
    return z;
}

} // namespace parallax

#include "model/memory_model.hpp"

#include "ir/schedule_program.hpp"
#include "model/model_math.hpp"
#include "spec/layer_ranges.hpp"
#include "spec/units.hpp"

#include <algorithm>

namespace parallax {

namespace {

// CUDA context, cuBLAS/cuDNN workspaces and the framework's own buffers: ~0.5 GiB of context on
// A100/H100 (nvidia-smi of an idle PyTorch process) plus workspaces.
constexpr double kRuntimeReserveBytes = 1.0 * units::kGiB;
// NCCL communicator buffers: NCCL_BUFFSIZE 4 MiB x channels x peers, ~0.2 GiB per communicator
// and ~3-4 communicators (TP, DP, PP, CP) in a hybrid job (NCCL environment docs; estimate).
constexpr double kNcclBuffersBytes = 0.75 * units::kGiB;
// PyTorch's caching allocator leaves fragments between activation blocks: reserved exceeds allocated
// by ~5-15% in Megatron memory reports (estimate, to be calibrated by measured runs).
constexpr double kFragmentationFraction = 0.10;
// Megatron's distributed optimizer keeps gradient buckets of ~40M parameters (--ddp-bucket-size
// default max(40M, 1M*dp)) in flight for reduce-scatter / all-gather.
constexpr double kBucketParams = 40e6;

// Optimizer state of pure fp32 training, per parameter: Adam's exp_avg and exp_avg_sq in fp32 (torch.optim.Adam),
// 8-bit Adam's two 1-byte moments (Dettmers et al. 2022), SGD momentum or Lion's one fp32 moment.
constexpr double kFp32AdamMomentBytes = 8;
constexpr double kEightBitAdamMomentBytes = 2;
constexpr double kFp32MomentumBytes = 4;
// The bf16/fp16 working copy of mixed-precision training.
constexpr double kHalfWeightBytes = 2;

} // namespace

double weight_bytes_per_param(Precision p) noexcept
{
    if (p == Precision::fp8 || p == Precision::fp4)
        return kHalfWeightBytes + element_bytes(p); // bf16 weights + the cached low-precision copy (TE)
    return is_full_precision(p) ? element_bytes(p) : kHalfWeightBytes;
}

StateBytes state_bytes(const TrainingSpec& t, const Strategy& s) noexcept
{
    StateBytes b;
    // Megatron and torchtitan keep fp32 main gradients (theoretical_memory_usage.py: 18 B/param with
    // Adam); DeepSpeed's fp16/bf16 engines keep 16-bit gradients (ZeRO paper Sec. 3.1: 16 B/param).
    b.gradients = t.framework == Framework::megatron_deepspeed ? 2.0 : 4.0;
    // Megatron's buffers in the parameter dtype (param_and_grad_buffer.py: grad_dtype = torch.float if
    // grad_reduce_in_fp32 else param.dtype). The distributed optimizer's fp32 copy of its shard exists
    // only during the step, when the activations are gone, so it sets no peak.
    if (t.grad_reduce_in_bf16 && t.framework == Framework::megatron)
        b.gradients = kHalfWeightBytes;
    switch (s.optimizer) {
    case Optimizer::adam:
        b.optimizer = 12; // fp32 master + exp_avg + exp_avg_sq (ZeRO paper Sec. 3.1, k = 12)
        break;
    case Optimizer::adam8bit:
        // FlashOptim (Gonzalez Ortiz et al. 2025): companded 8-bit m and v, and the master weights split
        // into the bf16 working copy plus an 8-bit correction; with 16-bit gradients 7 B/param in all.
        b.optimizer = 3;
        b.gradients = 2;
        break;
    case Optimizer::sgd:
    case Optimizer::lion:
        b.optimizer = 8; // fp32 master + one fp32 momentum
        break;
    }
    b.weights = weight_bytes_per_param(t.precision);
    if (is_full_precision(t.precision)) {
        // Pure fp32 training: the fp32 weights are the master copy, the gradients fp32, the optimizer keeps
        // its moments only (ZeRO paper Sec. 3.1 counts 2 + 2 + 12 B for mixed precision; fp32 Adam is
        // 4 + 4 + 8, as Sailor's planner counts it: model_copy = 4 in runtime_simulator.py).
        b.gradients = element_bytes(t.precision);
        switch (s.optimizer) {
        case Optimizer::adam:
            b.optimizer = kFp32AdamMomentBytes;
            break;
        case Optimizer::adam8bit:
            b.optimizer = kEightBitAdamMomentBytes;
            break;
        case Optimizer::sgd:
        case Optimizer::lion:
            b.optimizer = kFp32MomentumBytes;
            break;
        }
    }
    if (s.gradient_release)
        b.gradients = 0; // each gradient is applied and freed as the backward produces it
    return b;
}

double grad_reduce_bytes_per_param(const TrainingSpec& t, const StateBytes& state) noexcept
{
    return t.grad_reduce_in_fp32 ? std::max(state.gradients, element_bytes(Precision::fp32)) : state.gradients;
}

double checkpoint_weight_bytes(const TrainingSpec& t) noexcept
{
    return is_full_precision(t.precision) ? element_bytes(t.precision) : kHalfWeightBytes;
}

StageParams stage_params(const PlanContext& ctx, const Strategy& s, const PlanLayout& layout, int stage) noexcept
{
    const ModelSpec& m = ctx.model;
    const StageInfo& info = layout.stage[stage];
    const double tp = s.tp;
    const double expert_div = static_cast<double>(s.effective_expert_tp()) * s.ep;
    StageParams p;
    const LayerParams& d = ctx.dense_layer_params;
    const int moe = info.param_moe_layers;
    p.dense += (info.param_layers - moe) * ((d.attention + d.mlp) / tp + d.norms);
    if (moe > 0) {
        const LayerParams& e = ctx.moe_layer_params;
        p.dense += moe * ((e.attention + e.shared_experts) / tp + e.norms + e.router);
        p.expert += moe * e.experts / expert_div;
    }
    if (info.has_embedding)
        p.dense += embedding_params(m) / tp;
    // The output layer: its own weights, or with tied embeddings a copy on the last stage when pp > 1.
    if (info.has_output && (!m.tied_embeddings || s.pp > 1))
        p.dense += embedding_params(m) / tp;
    if (info.has_output)
        p.dense += static_cast<double>(m.hidden); // final norm
    return p;
}

double in_flight_microbatches(const Strategy& s, int stage, long long microbatches) noexcept
{
    const double m = static_cast<double>(microbatches);
    const double p = s.pp;
    switch (s.schedule) {
    case Schedule::gpipe:
        return m; // all forwards before any backward
    case Schedule::one_f_one_b:
    case Schedule::zb_h1:
        return std::min(m, p - stage); // warm-up depth (Narayanan et al. 2021, Sec. 2.2.1)
    case Schedule::interleaved: {
        // Megatron's interleaved warm-up: (p - stage - 1) * 2 + (v - 1) * p forward chunks, plus the one
        // in progress, each a 1/v slice of the stage's layers (Korthikanti's factor 1 + (p-1)/(p v) at stage 0).
        const double v = s.vpp;
        const double chunks = std::min(m * v, (p - stage - 1) * 2 + (v - 1) * p + 1);
        return chunks / v;
    }
    case Schedule::dualpipe:
        return std::min(m, p + 1) / 2; // PP+1 micro-batches of one (half-size) stage (DualPipe README)
    case Schedule::custom: {
        // The program's own peak, measured by its checker in chunk micro-batches; a chunk is 1/chunks
        // of the stage's layers (DualPipe's layout: half, as above).
        if (!s.program || stage >= static_cast<int>(s.program->peak_in_flight.size()))
            return 1;
        const double per_chunk = s.program->layout == ChunkLayout::dualpipe ? 2.0 : s.program->chunks;
        return static_cast<double>(s.program->peak_in_flight[static_cast<std::size_t>(stage)]) / per_chunk;
    }
    }
    return 1;
}

// DeepSpeed's reduce_bucket_size default (5e8 elements) of fp16 gradients kept on the GPU under
// ZeRO-Offload (DeepSpeed config docs, zero_optimization.reduce_bucket_size).
constexpr double kOffloadGradientBucketParams = 5e8;
constexpr double kOffloadGradientBytesPerParam = 2;

namespace {

// A composite plan's activations of one micro-batch through the stage, each layer under its range's
// setting; `working` gets the recomputed layer's full activations when some layer is fully recomputed,
// `offload_buffer` the largest layer whose activations go to host memory (none stay).
double composite_stage_activations(const ModelSpec& m, const Strategy& s, const PlanLayout& layout, int stage,
    const CompositeLayers& c, double& working, double& offload_buffer, double& offloaded)
{
    double bytes = 0;
    working = 0;
    offload_buffer = 0;
    offloaded = 0;
    for (int v = 0; v < layout.vpp; ++v) {
        const ChunkInfo& ci = layout.chunk[v * layout.pp + stage];
        for (int l = ci.first_layer; l < ci.first_layer + ci.layers; ++l) {
            const int k = c.variants->of_layer(l);
            const LayerActivationBytes& a = c.activations[k];
            const double layer = m.is_moe_layer(l) ? a.moe : a.dense;
            if (s.layers->offloads_activations(l, s.offload_activations)) {
                offload_buffer = std::max(offload_buffer, layer);
                offloaded += m.is_moe_layer(l) ? a.moe_host : a.dense_host;
            } else
                bytes += layer;
            if (c.variants->setting[k].recompute == Recompute::full)
                working = std::max(working, a.working);
        }
    }
    return bytes;
}

} // namespace

StageParams CompositeParams::total() const noexcept
{
    StageParams p;
    for (int v = 0; v < kMaxLayerSettings; ++v) {
        p.dense += dense[v];
        p.expert += expert[v];
    }
    return p;
}

double expert_shard_ranks(const Strategy& s, int expert_tp) noexcept
{
    return std::max(1.0, static_cast<double>(s.tp) * s.cp * s.dp / (static_cast<double>(expert_tp) * s.ep));
}

CompositeParams composite_stage_params(
    const PlanContext& ctx, const Strategy& s, const PlanLayout& layout, int stage, const LayerVariants& v) noexcept
{
    const ModelSpec& m = ctx.model;
    const LayerParams& d = ctx.dense_layer_params;
    const LayerParams& e = ctx.moe_layer_params;
    CompositeParams p;
    // A range of its own TP splits its layers' weights its own way (the embedding goes with layer 0's
    // range, the output layer with the last layer's).
    auto tp_of = [&](int k) { return static_cast<double>(v.setting[k].tp); };
    for_each_param_layer(layout, stage, [&](int layer) {
        const int k = v.of_layer(layer);
        const double tp = tp_of(k);
        if (m.is_moe_layer(layer)) {
            p.dense[k] += (e.attention + e.shared_experts) / tp + e.norms + e.router;
            p.expert[k] += e.experts / (static_cast<double>(v.setting[k].expert_tp) * s.ep);
        } else {
            p.dense[k] += (d.attention + d.mlp) / tp + d.norms;
        }
    });
    const StageInfo& info = layout.stage[stage];
    const int first = v.of_layer(0), last = v.of_layer(m.layers - 1);
    if (info.has_embedding)
        p.dense[first] += embedding_params(m) / tp_of(first);
    if (info.has_output && (!m.tied_embeddings || s.pp > 1))
        p.dense[last] += embedding_params(m) / tp_of(last);
    if (info.has_output)
        p.dense[last] += static_cast<double>(m.hidden); // final norm
    return p;
}

namespace {

// A composite plan's model states on one GPU of the stage: each variant's parameters at its precision's
// weight bytes, its experts sharded over its own expert-data-parallel group. Returns the weight bytes
// before ZeRO-3 sharding.
double composite_model_states(const PlanContext& ctx, const Strategy& s, const PlanLayout& layout, int stage,
    const LayerVariants& v, const StateBytes& b, MemoryBreakdown& mem)
{
    double unsharded_weights = 0;
    const CompositeParams p = composite_stage_params(ctx, s, layout, stage, v);
    // Dense weights shard over their layout's data-parallel x CP ranks: the stage's tp * cp * dp GPUs
    // over the range's TP (so a range of its own TP keeps the plan's optimizer states per GPU).
    const double block = static_cast<double>(s.tp) * s.cp * s.dp;
    auto sharded = [&](int k, bool shard) {
        const double dense_shard = block / v.setting[k].tp;
        const double es = expert_shard_ranks(s, v.setting[k].expert_tp);
        return p.dense[k] / (shard ? dense_shard : 1.0) + p.expert[k] / (shard ? es : 1.0);
    };
    for (int k = 0; k < v.count; ++k) {
        mem.weights += weight_bytes_per_param(v.setting[k].precision) * sharded(k, s.zero >= 3);
        mem.gradients += b.gradients * sharded(k, s.zero >= 2);
        mem.optimizer += b.optimizer * sharded(k, s.zero >= 1);
        unsharded_weights += weight_bytes_per_param(v.setting[k].precision) * sharded(k, false);
    }
    return unsharded_weights;
}

// The fewest ranks any of a composite plan's layouts shards its dense gradients over (dp' x cp').
double smallest_dense_shard(const Strategy& s, const LayerVariants& v) noexcept
{
    const double block = static_cast<double>(s.tp) * s.cp * s.dp;
    double shard = block / (v.count > 0 ? v.setting[0].tp : s.tp);
    for (int k = 1; k < v.count; ++k)
        shard = std::min(shard, block / v.setting[k].tp);
    return shard;
}

// DeepSpeed's engine without ZeRO reduces the gradients after the pipeline flush by flattening each bucket of
// up to 5e8 elements into one new buffer (deepspeed/runtime/engine.py: buffered_allreduce_fallback ->
// allreduce_bucket, self.flatten), every step whatever the DP size.
constexpr double kDeepSpeedAllreduceBucketParams = 5e8;

// The flat gradient buffer, where it adds to the reserved peak: the caching allocator serves it from a freed
// activation block when one is large enough (the largest a layer keeps: the unfused attention's score matrix
// or the MLP's intermediate), and otherwise reserves a new segment.
double flat_gradient_buffer_bytes(const PlanContext& ctx, const Strategy& s, const StateBytes& b, double gradients)
{
    if (ctx.training.framework != Framework::megatron_deepspeed || s.zero > 0 || b.gradients <= 0)
        return 0;
    const double bucket_params = std::min(gradients / b.gradients, kDeepSpeedAllreduceBucketParams);
    const double buffer = bucket_params * b.gradients;
    // With fp32_allreduce the bucket is reduced from an fp32 copy of that buffer (engine.py allreduce_bucket:
    // tensor.float()), alive together with it.
    const double fp32_copy = ctx.training.grad_reduce_in_fp32 ? bucket_params * element_bytes(Precision::fp32) : 0;
    const ModelSpec& m = ctx.model;
    const double act = activation_element_bytes(ctx.training.precision);
    const double seq = static_cast<double>(ctx.training.seq_len);
    // FlashAttention takes fp16/bf16 only: fp32 training runs the unfused attention (layer_ops.cpp).
    const bool unfused = !ctx.training.flash_attention || is_full_precision(ctx.training.precision);
    const double scores
        = unfused ? s.micro_batch * (static_cast<double>(m.heads) / s.tp) * (seq / s.cp) * seq * act : 0;
    const double mlp = s.micro_batch * (seq / s.cp) * (static_cast<double>(m.ffn_hidden) / s.tp) * act;
    const double largest_freed_block = std::max(scores, mlp);
    return (buffer > largest_freed_block ? buffer : 0) + (fp32_copy > largest_freed_block ? fp32_copy : 0);
}

// DeepSpeed's fp16 optimizer step, run after the backward has freed the activations, casts every gradient to
// fp32 and flattens the copies into one buffer (runtime/fp16/fused_optimizer.py, FP16_Optimizer.step:
// p.grad.to(fp32) per parameter, then _flatten_dense_tensors), so 8 bytes per parameter live at once; ZeRO 1
// and 2 flatten the rank's fp16 partition and cast that to fp32 (runtime/zero/stage_1_and_2.py, step:
// flatten_dense_tensors_aligned(...).to(fp32)), 6 bytes per parameter of the partition. Offloaded states are
// updated on the host and ZeRO 3 steps per sub-group, so neither has this peak.
constexpr double kDeepSpeedFp16StepBytesPerParam = 4.0 + 4.0;
constexpr double kDeepSpeedZeroFp16StepBytesPerParam = 2.0 + 4.0;

double deepspeed_fp16_step_bytes(const PlanContext& ctx, const Strategy& s, double params, double partition_params)
{
    if (ctx.training.framework != Framework::megatron_deepspeed || ctx.training.precision != Precision::fp16)
        return 0;
    if (s.offload_optimizer || s.offload_params || s.zero >= 3)
        return 0;
    return s.zero == 0 ? kDeepSpeedFp16StepBytesPerParam * params
                       : kDeepSpeedZeroFp16StepBytesPerParam * partition_params;
}

// The ranks a dense and an expert parameter's ZeRO shards are spread over: the data- and context-parallel
// ranks, and for the experts those that hold the same expert (the rest of the EP x expert-TP group).
struct ZeroShards {
    double dense = 1;
    double expert = 1;
};

ZeroShards zero_shards(const Strategy& s) noexcept
{
    return { static_cast<double>(s.dp) * s.cp, expert_shard_ranks(s, s.effective_expert_tp()) };
}

// What a stage's GPU holds for the model states: weights, gradients and optimizer states, each sharded as its ZeRO
// stage says, those offloaded counted on the host instead. Returns the stage's weight bytes before ZeRO-3 sharding
// (the units FSDP gathers).
double stage_model_states(const PlanContext& ctx, const Strategy& s, const PlanLayout& layout, int stage,
    const CompositeLayers* composite, const StageParams& p, const StateBytes& b, const ZeroShards& shards,
    MemoryBreakdown& mem) noexcept
{
    const auto [dense_shard, expert_shard] = shards;
    double weight_bytes = b.weights * (p.dense + p.expert);
    if (s.layers && composite) {
        weight_bytes = composite_model_states(ctx, s, layout, stage, *composite->variants, b, mem);
    } else {
        const double w_div_d = s.zero >= 3 ? dense_shard : 1;
        const double w_div_e = s.zero >= 3 ? expert_shard : 1;
        mem.weights = b.weights * (p.dense / w_div_d + p.expert / w_div_e);
        const double g_div_d = s.zero >= 2 ? dense_shard : 1;
        const double g_div_e = s.zero >= 2 ? expert_shard : 1;
        mem.gradients = b.gradients * (p.dense / g_div_d + p.expert / g_div_e);
        const double o_div_d = s.zero >= 1 ? dense_shard : 1;
        const double o_div_e = s.zero >= 1 ? expert_shard : 1;
        mem.optimizer = b.optimizer * (p.dense / o_div_d + p.expert / o_div_e);
    }
    // Host memory (Ren et al. 2021, Sec. 4.1): the offloaded fp32 states and the fp16 gradients they are
    // updated from; ZeRO-Infinity adds the 16-bit parameter shards.
    if (s.offload_optimizer || s.offload_params)
        mem.host = mem.optimizer + kOffloadGradientBytesPerParam * mem.gradients / std::max(1.0, b.gradients);
    if (s.offload_params)
        mem.host += mem.weights;
    // ZeRO-Offload with partitioned gradients (Ren et al. 2021, Sec. 4.1): each bucket of 16-bit gradients
    // is reduced and copied to host memory as the backward produces it; only the bucket stays.
    if ((s.offload_optimizer || s.offload_params) && s.zero >= 2)
        mem.gradients = std::min(mem.gradients, kOffloadGradientBucketParams * kOffloadGradientBytesPerParam);
    // Parameter offload (ZeRO-Infinity): the shards live in host memory; the gathered layers are the transient.
    if (s.offload_params)
        mem.weights = 0;
    if (s.offload_optimizer || s.offload_params)
        mem.optimizer = 0;
    return weight_bytes;
}

// Activations: the layers of this stage times the micro-batches in flight, the embedding output on the first
// stage, the layer being recomputed and the offload copy buffers; the offloaded layers' bytes go to the host.
void stage_activations(const PlanContext& ctx, const Strategy& s, const PlanLayout& layout, int stage,
    long long microbatches, const LayerActivationBytes& act, const CompositeLayers* composite,
    MemoryBreakdown& mem) noexcept
{
    const ModelSpec& m = ctx.model;
    const int moe_layers = layout.stage[stage].moe_layers;
    const int dense_layers = layout.stage[stage].layers - moe_layers;
    double working = s.recompute == Recompute::full ? act.working : 0.0;
    double offload_buffer = 0; // the largest offloaded layer: its copy buffers stay (model/activation_offload.hpp)
    double per_microbatch = 0;
    double offloaded = 0; // host bytes per micro-batch of the activations that go there (pinned blocks)
    if (s.layers && composite) {
        per_microbatch
            = composite_stage_activations(m, s, layout, stage, *composite, working, offload_buffer, offloaded);
    } else if (s.offload_activations) {
        offload_buffer = std::max(dense_layers > 0 ? act.dense : 0.0, moe_layers > 0 ? act.moe : 0.0);
        offloaded = dense_layers * act.dense_host + moe_layers * act.moe_host;
    } else
        per_microbatch = dense_layers * act.dense + moe_layers * act.moe;
    const double tokens = static_cast<double>(s.micro_batch) * ctx.training.seq_len / s.cp;
    const bool sp = s.sequence_parallel && s.tp > 1;
    if (stage == 0)
        per_microbatch += activation_element_bytes(ctx.training.precision) * tokens * m.hidden
            / (sp ? s.tp : 1); // embedding output
    const double in_flight = in_flight_microbatches(s, stage, microbatches);
    mem.activations = per_microbatch * in_flight;
    mem.host += offloaded * in_flight; // every micro-batch in flight keeps its offloaded layers on the host
    mem.activations += working; // one layer's full activations while it is recomputed
    // Offloaded layers: the layer going out to host memory and the one copied back ahead of its backward.
    mem.activations += kOffloadBufferLayers * offload_buffer;
}

// What comes and goes on top of the states and activations: the loss's logits on the last stage, ZeRO-3's
// gathered units, the distributed optimizer's buckets, DeepSpeed's flat gradient buffer, and the optimizer
// step's own transient where it exceeds the backward's.
double stage_transient_bytes(const PlanContext& ctx, const Strategy& s, const PlanLayout& layout, int stage,
    const CompositeLayers* composite, const StageParams& p, const StateBytes& b, const ZeroShards& shards,
    double weight_bytes, const MemoryBreakdown& mem) noexcept
{
    const ModelSpec& m = ctx.model;
    const bool mixed = s.layers && composite;
    const auto [dense_shard, expert_shard] = shards;
    const double tokens = static_cast<double>(s.micro_batch) * ctx.training.seq_len / s.cp;
    double transient = 0;
    if (stage == s.pp - 1) {
        // The cross-entropy's logits and fp32 buffers at its peak, one micro-batch (software_stack.hpp).
        transient += tokens * static_cast<double>(m.vocab) / s.tp
            * software_traits(ctx.training.framework, ctx.training.software).loss_peak_bytes_per_logit;
    }
    if (s.zero >= 3) {
        // FSDP/ZeRO-3 materialises the full parameters of the current and the prefetched unit.
        const double layers = std::max(1, layout.stage[stage].layers);
        transient += mixed ? 2 * weight_bytes / layers : 2 * b.weights * ((p.dense + p.expert) / layers);
    }
    if (s.zero >= 1) {
        // Gradient reduce-scatter / parameter all-gather buckets of the distributed optimizer; ranges of
        // their own TP or CP reduce over their own groups, the smallest of which holds the largest shard.
        const double shard = mixed ? smallest_dense_shard(s, *composite->variants) : dense_shard;
        transient += 2 * kBucketParams * b.gradients / std::max(1.0, shard) * std::min(1.0, shard);
    }
    transient += flat_gradient_buffer_bytes(ctx, s, b, mem.gradients);
    // The optimizer step's own transient comes after the activations are freed: the larger of the two sets
    // the peak.
    const double step_transient
        = deepspeed_fp16_step_bytes(ctx, s, p.dense + p.expert, p.dense / dense_shard + p.expert / expert_shard);
    const double backward_transient = transient + (1 + kFragmentationFraction) * mem.activations;
    return transient + std::max(0.0, step_transient - backward_transient);
}

} // namespace

MemoryBreakdown stage_memory(const PlanContext& ctx, const Strategy& s, const PlanLayout& layout, int stage,
    long long microbatches, const LayerActivationBytes& act, const CompositeLayers* composite) noexcept
{
    // What the parts share, worked out once: the stage's parameters, the bytes per parameter of each state and
    // the ranks each ZeRO shard spreads over.
    const StageParams p = stage_params(ctx, s, layout, stage);
    const StateBytes b = state_bytes(ctx.training, s);
    const ZeroShards shards = zero_shards(s);
    MemoryBreakdown mem;
    const double weight_bytes = stage_model_states(ctx, s, layout, stage, composite, p, b, shards, mem);
    stage_activations(ctx, s, layout, stage, microbatches, act, composite, mem);
    const double transient = stage_transient_bytes(ctx, s, layout, stage, composite, p, b, shards, weight_bytes, mem);
    mem.other = kRuntimeReserveBytes + kNcclBuffersBytes + transient + kFragmentationFraction * mem.activations;
    return mem;
}

} // namespace parallax

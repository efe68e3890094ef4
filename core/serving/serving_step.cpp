#include "serving/serving_step.hpp"

#include "model/compute_model.hpp"
#include "model/model_math.hpp"
#include "serving/engine_kernels.hpp"
#include "serving/kv_cache.hpp"
#include "serving/speculative_decoding.hpp"

#include <algorithm>
#include <cmath>

namespace parallax {

namespace {

constexpr double kActivationBytes = 2.0; // bf16 activations between the GEMMs
// Elementwise kernels per layer (2 norms, rotary embedding + cache write, activation, residual
// adds) each read and write the token's hidden vector about once.
constexpr int kElementwiseKernelsPerLayer = 5;
// MLA's projections at decode (DeepSeek-V2 Sec. 2.1): query down and up, the joint KV down projection,
// the absorbed key and value up projections (batched GEMMs) and the output projection.
constexpr int kMlaProjectionKernels = 6;
constexpr int kMoeRoutingKernels = 3;
// The engines' fused MoE modules (routing, both grouped GEMMs, the combine) reach far less of the tensor
// peak at prefill sizes than a dense GEMM of the same FLOPs (60-70%): under AIConfigurator's default skewed
// expert load (power law 1.2) its collector times vLLM 0.20.1 on B300 at 22% of the bf16 peak (4,096 tokens,
// 2,048 -> 512, top 8 of 256) and 25-29% of the fp8 peak (mxfp4 weights, fp8 activations, 8,192-16,384
// tokens); SGLang 0.5.6 with DeepEP/DeepGEMM on H200 at 27% (DeepSeek's experts, fp8 blocks, 131,072 tokens
// over EP 8); TensorRT-LLM 1.3 wide-EP on GB200 at 13% of the nvfp4 peak (16,384 tokens, EP 8).
// ai-dynamo/aiconfigurator@fd9489d collector/layerwise/wip/moe_perf.txt and @095f58a
// aic-core/rust/aiconfigurator-core/src/perf_database/testdata/moe_expert_compute_oracle.json.
constexpr double kFusedMoeMaxEfficiency = 0.25;
// Those kernels take 16-row tiles of an expert's tokens at small batches and 64-row tiles above (vLLM's and
// SGLang's Triton fused_moe, get_default_config: BLOCK_SIZE_M 16 while the tokens number at most the experts).
// Each expert's weight tile is streamed once per tile of its rows, and within a tile the loads cannot run
// ahead of the math (a short K loop per expert): with up to one 64-row tile per expert the weight reads and
// the MMAs add up, with more they overlap. The collector's timings agree: vLLM on B300, bf16, 32 rows per
// expert: 317 us against 327 summed (235 for the slower alone); mxfp4/fp8 at 24-48 rows: 222-288 us against
// 231-290 summed (163-164); at 192 rows and more the roofline's 549 us against 555.
constexpr double kFusedMoeSmallTileRows = 16;
constexpr double kFusedMoeTileRows = 64;

// What each kernel of a step costs beyond its roofline: a CUDA graph removes the CPU's launch, but each
// kernel still waits for its predecessor, ramps up and drains its last wave; the training model's
// per-kernel launch and tail of the GPU generation (4 us on Ampere to Blackwell).
double kernel_s(const ServingContext& ctx)
{
    return ctx.device.gen->kernel_overhead_s;
}

// The fused MoE kernels' ceiling as a share of the precision's peak; an engine whose NVFP4 experts run at the
// FP8 rate reaches that share of the FP8 peak.
double fused_moe_max_efficiency(const ServingContext& ctx, Precision p)
{
    if (p == Precision::fp4 && ctx.engine.nvfp4_moe_at_fp8_rate)
        return kFusedMoeMaxEfficiency * ctx.device.peak(Precision::fp8) / ctx.device.peak(Precision::fp4);
    return kFusedMoeMaxEfficiency;
}

double hbm_Bps(const ServingContext& ctx)
{
    return ctx.cluster->gpu.memory_bw_Bps * ctx.device.gen->hbm_efficiency;
}

// Adds one kernel's roofline: the slower of its FLOPs at the achievable rate and its bytes at the
// achievable bandwidth, plus the gap to the next kernel.
void add_kernel(const ServingContext& ctx, StepCost& c, double flops, double peak_Fps, double efficiency, double bytes,
    double weight_bytes, double stream_efficiency = 0)
{
    const double compute = flops > 0 ? flops / (peak_Fps * std::max(1e-3, efficiency)) : 0;
    const double memory
        = stream_efficiency > 0 ? bytes / (ctx.cluster->gpu.memory_bw_Bps * stream_efficiency) : bytes / hbm_Bps(ctx);
    if (compute >= memory)
        c.compute_bound_s += compute;
    else
        c.memory_bound_s += memory;
    c.overhead_s += kernel_s(ctx);
    c.kernels += 1;
    c.flops += flops;
    c.hbm_bytes += bytes;
    c.weight_bytes += weight_bytes;
}

// Efficiency of a GEMM at the few rows of a decode step. Too few output tiles to fill the SMs would
// leave most of them idle, so the libraries split the K loop over several of them (cuBLASLt split-K,
// CUTLASS stream-K): the work units are tiles x splits, each split keeping at least 256 of K.
double skinny_gemm_efficiency(const ServingContext& ctx, double m, double n, double k, Precision p)
{
    constexpr double kTile = 128;
    constexpr double kMinSplitK = 256;
    const double tiles = std::ceil(m / kTile) * std::ceil(n / kTile);
    const double split = std::clamp(std::floor(ctx.device.sm_count / tiles), 1.0, std::max(1.0, k / kMinSplitK));
    return gemm_efficiency(ctx.device, m, n * split, k, p);
}

// A GEMM of `rows` tokens against a weight of `params` (k x params/k) held by this GPU.
// `kernels` GEMMs share the weight (QKV and output projections; gate-up and down): the roofline is
// the whole weight's, each GEMM costs its launch and tail.
void add_linear(const ServingContext& ctx, StepCost& c, double rows, double params, double k, double bytes_per_param,
    int kernels = 1)
{
    if (rows <= 0 || params <= 0)
        return;
    c.overhead_s += (kernels - 1) * kernel_s(ctx);
    c.kernels += kernels - 1;
    const Precision p = ctx.matmul_precision;
    const double n = params / k;
    const double flops = 2.0 * rows * params;
    const double weights = params * bytes_per_param;
    const double bytes = weights + kActivationBytes * rows * (k + n);
    // The engines' Linear layers run at their own measured rates where known (engine_kernels.hpp): the
    // shape's wave and split-K efficiency relative to the generation's large-GEMM constant, rescaled.
    double eff = skinny_gemm_efficiency(ctx, rows, n, k, p);
    double stream = 0;
    const Precision stored = bytes_per_param >= 2.0 ? Precision::bf16 : p; // logits and router stay bf16
    if (const auto r = serving_linear_rates(ctx.cluster->gpu.architecture, stored)) {
        if (r->gemm > 0)
            eff *= r->gemm / tuned_gemm_efficiency(*ctx.device.gen, p);
        stream = r->weight_stream;
    }
    add_kernel(ctx, c, flops, ctx.device.peak(p), eff, bytes, weights, stream);
    c.tensor_s += flops / ctx.device.peak(p);
}

double layer_head_dims(const ModelSpec& m, double* v_dim)
{
    if (m.mla) {
        *v_dim = m.mla->v_head_dim;
        return m.mla->qk_nope_head_dim + m.mla->qk_rope_head_dim;
    }
    *v_dim = static_cast<double>(m.head_dim());
    return static_cast<double>(m.head_dim());
}

// Decode attention of `requests` on one GPU against `context` cached tokens: reads the whole cache
// share (memory-bound), with the FLOPs of one query per head. MLA decodes in the absorbed form
// (DeepSeek-V2 Sec. 2.1.2): every head scores the latent of width kv_lora + rope and reads it back.
void add_decode_attention(
    const ServingContext& ctx, StepCost& c, int layer, double requests, double context, double queries)
{
    if (requests <= 0)
        return;
    const ModelSpec& m = *ctx.model;
    const double span = m.is_windowed_layer(layer) ? std::min<double>(context, m.sliding_window) : context;
    const double heads = static_cast<double>(m.heads) / ctx.layout.tp;
    double v_dim = 0;
    const double qk_dim = layer_head_dims(m, &v_dim);
    // Each of a request's `queries` tokens (one, or the draft tokens being verified) scores the same cache.
    double flops = 0;
    if (m.mla)
        flops = 2.0 * requests * queries * heads * span * (2.0 * m.mla->kv_lora_rank + m.mla->qk_rope_head_dim);
    else
        flops = 2.0 * requests * queries * heads * span * (qk_dim + v_dim);
    const double kv
        = requests * span * kv_bytes_per_token_layer(m, ctx.precision.kv_cache) * kv_tp_share(m, ctx.layout.tp);
    const double eff = ctx.device.gen->attention_fwd_efficiency;
    add_kernel(ctx, c, flops, ctx.device.half_peak(), eff, kv, 0);
    c.kv_bytes += kv;
    c.tensor_s += flops / ctx.device.half_peak();
}

// Prefill attention: `prompts` requests' worth of causal attention over `prompt_tokens` (the flash
// kernel of the training model; windowed layers use the banded kernel).
void add_prefill_attention(const ServingContext& ctx, StepCost& c, int layer, double prompts, double prompt_tokens)
{
    if (prompts <= 0)
        return;
    const ModelSpec& m = *ctx.model;
    const double batch_heads = prompts * static_cast<double>(m.heads) / ctx.layout.tp;
    double v_dim = 0;
    const double qk_dim = layer_head_dims(m, &v_dim);
    double flops = 0;
    double t = 0;
    if (m.is_windowed_layer(layer))
        t = flash_attention_windowed_fwd_s(
            ctx.device, batch_heads, prompt_tokens, m.sliding_window, qk_dim, v_dim, &flops);
    else
        t = flash_attention_fwd_s(ctx.device, batch_heads, prompt_tokens, prompt_tokens, qk_dim, v_dim, true, &flops);
    c.compute_bound_s += std::max(0.0, t - ctx.device.gen->kernel_overhead_s);
    c.overhead_s += kernel_s(ctx);
    c.kernels += 1;
    c.flops += flops;
    c.tensor_s += flops / ctx.device.half_peak();
}

// The routed experts of one MoE layer on one GPU. All of the instance's `tokens` are routed; the GPU
// holds experts/ep experts, each split expert_tp ways, and reads only the experts some token picked.
void add_routed_experts(const ServingContext& ctx, StepCost& c, int layer, double tokens)
{
    const ModelSpec& m = *ctx.model;
    const MoeSpec& moe = *m.moe;
    const LayerParams p = layer_params(m, layer);
    const double per_expert = p.experts / moe.experts / ctx.layout.expert_tp();
    const double touched = expected_distinct_experts(moe.experts, moe.top_k, tokens);
    const double local_touched = touched / ctx.layout.ep;
    const double rows_per_expert = touched > 0 ? tokens * moe.top_k / touched : 0;
    const double hidden = static_cast<double>(m.hidden);
    const Precision prec = ctx.matmul_precision;
    const double flops = 2.0 * rows_per_expert * per_expert * local_touched;
    const double weights = local_touched * per_expert * ctx.weight_bytes_per_param;
    const double bytes = weights + kActivationBytes * rows_per_expert * local_touched * 2.0 * hidden;
    const double eff = routed_expert_gemm_efficiency(
        ctx, rows_per_expert, per_expert / hidden * std::max(1.0, local_touched), hidden, prec);
    add_kernel(ctx, c, flops, ctx.device.peak(prec), eff, bytes, weights);
    c.memory_bound_s += fused_moe_serial_s(ctx, rows_per_expert, flops, bytes, prec);
    // The layer's kernels run one after another, so its routed rows' activation traffic adds to the GEMMs.
    const double inter = static_cast<double>(moe.expert_ffn_hidden) / ctx.layout.expert_tp();
    const double traffic
        = rows_per_expert * local_touched * fused_moe_row_traffic_bytes(hidden, inter, stored_bytes_per_element(prec));
    c.memory_bound_s += traffic / hbm_Bps(ctx);
    c.hbm_bytes += traffic;
    // The down GEMM, and the routing kernels around the pair (top-k of the router's scores, sorting
    // the tokens by expert, the weighted combine: vLLM fused_moe, TensorRT-LLM's MoE plugin).
    c.overhead_s += (1 + kMoeRoutingKernels) * kernel_s(ctx);
    c.kernels += 1 + kMoeRoutingKernels;
    c.tensor_s += flops / ctx.device.peak(prec);
}

// Inside one NVLink domain the engines reduce with their own kernels rather than NCCL's ring (vLLM
// custom_all_reduce.cuh, TensorRT-LLM AllReduceStrategy ONESHOT/TWOSHOT): one-shot reads every peer's
// buffer in one step, two-shot reduce-scatters then all-gathers in two; the faster one is chosen.
double nvlink_all_reduce_s(const ServingContext& ctx, double bytes, const GroupPlacement& g)
{
    const double n = static_cast<double>(g.size);
    const double bw = ctx.network.intra_bw_Bps;
    const double alpha = ctx.network.intra_latency_s;
    const double one_shot = alpha + (n - 1) * bytes / bw;
    const double two_shot = 2 * alpha + 2 * (n - 1) / n * bytes / bw;
    return std::min(one_shot, two_shot);
}

void add_comm(const ServingContext& ctx, StepCost& c, Collective k, double bytes, const GroupPlacement& g)
{
    if (g.size <= 1 || bytes <= 0)
        return;
    double t = collective_time_s(ctx.network, k, bytes, g);
    if (k == Collective::all_reduce && g.nodes <= 1) {
        const auto measured
            = measured_nvlink_all_reduce_s(ctx.cluster->gpu.architecture, static_cast<int>(g.size), bytes);
        t = measured ? *measured : std::min(t, nvlink_all_reduce_s(ctx, bytes, g));
    }
    c.comm_s += t;
    c.kernels += 1;
}

// The MoE layer's token exchange. Without attention DP every rank already holds the step's tokens (the
// attention's TP all-reduce left them there), so each picks its experts' rows locally and the outputs are
// summed by an all-reduce over TP, experts split or not (TensorRT-LLM's MoE without attention DP, vLLM's and
// SGLang's EP MoE at one data-parallel rank). Across attention-DP ranks the tokens differ: with EP and an
// all-to-all backend each token's routed rows go to their experts' ranks and come back; otherwise every rank
// gathers all the ranks' tokens and the outputs are reduce-scattered.
void add_moe_comm(const ServingContext& ctx, StepCost& c, double instance_tokens)
{
    const InstanceLayout& l = ctx.layout;
    const ModelSpec& m = *ctx.model;
    const double hidden = static_cast<double>(m.hidden);
    if (l.attention_dp <= 1) {
        add_comm(ctx, c, Collective::all_reduce, instance_tokens * hidden * kActivationBytes, ctx.tp_group);
        return;
    }
    if (moe_all_to_all(ctx.engine, l, *m.moe)) {
        const double per_gpu = instance_tokens / (l.tp * l.attention_dp) * m.moe->top_k * hidden * kActivationBytes;
        add_comm(ctx, c, Collective::all_to_all, per_gpu, ctx.moe_group);
        add_comm(ctx, c, Collective::all_to_all, per_gpu, ctx.moe_group);
        return;
    }
    const double gathered_bytes = ctx.engine.gathers_nvfp4_inputs && ctx.matmul_precision == Precision::fp4
        ? stored_bytes_per_element(Precision::fp4)
        : kActivationBytes;
    add_comm(ctx, c, Collective::all_gather, instance_tokens * hidden * gathered_bytes, ctx.moe_group);
    add_comm(ctx, c, Collective::reduce_scatter, instance_tokens * hidden * kActivationBytes, ctx.moe_group);
}

void add_layer(const ServingContext& ctx, StepCost& c, int layer, const StepLoad& mb)
{
    const ModelSpec& m = *ctx.model;
    const InstanceLayout& l = ctx.layout;
    const double hidden = static_cast<double>(m.hidden);
    const double instance_tokens = mb.decode_requests * mb.decode_queries + mb.prefill_tokens;
    // The MoE layers hold the attention-DP ranks in step, so the step lasts as long as its busiest rank.
    const double rank_prefill = busiest_rank_prefill_tokens(ctx, mb.prefill_tokens, mb.prompt_tokens);
    const double rank_tokens = mb.decode_requests * mb.decode_queries / l.attention_dp + rank_prefill;
    const LayerParams p = layer_params(m, layer);
    const double wb = ctx.weight_bytes_per_param;
    add_linear(ctx, c, rank_tokens, p.attention / l.tp, hidden, wb, m.mla ? kMlaProjectionKernels : 2);
    add_decode_attention(ctx, c, layer, mb.decode_requests / l.attention_dp, mb.decode_context, mb.decode_queries);
    add_prefill_attention(ctx, c, layer, rank_prefill / mb.prompt_tokens, mb.prompt_tokens);
    add_comm(ctx, c, Collective::all_reduce, rank_tokens * hidden * kActivationBytes, ctx.tp_group);
    if (m.is_moe_layer(layer)) {
        add_linear(ctx, c, rank_tokens, p.shared_experts / l.tp, hidden, wb, 2);
        add_linear(ctx, c, rank_tokens, p.router, hidden, 2.0);
        add_routed_experts(ctx, c, layer, instance_tokens);
        add_moe_comm(ctx, c, instance_tokens);
    } else {
        add_linear(ctx, c, rank_tokens, p.mlp / l.tp, hidden, wb, 2);
        add_comm(ctx, c, Collective::all_reduce, rank_tokens * hidden * kActivationBytes, ctx.tp_group);
    }
    const double elementwise = kElementwiseKernelsPerLayer * 2.0 * rank_tokens * hidden * kActivationBytes;
    c.memory_bound_s += elementwise / hbm_Bps(ctx);
    c.hbm_bytes += elementwise;
    c.overhead_s += kElementwiseKernelsPerLayer * kernel_s(ctx);
    c.kernels += kElementwiseKernelsPerLayer;
}

// Adds `times` copies of a layer's cost (every field is a sum over the step's kernels).
void add_times(StepCost& c, const StepCost& one, double times)
{
    c.compute_bound_s += times * one.compute_bound_s;
    c.memory_bound_s += times * one.memory_bound_s;
    c.comm_s += times * one.comm_s;
    c.overhead_s += times * one.overhead_s;
    c.host_wait_s += times * one.host_wait_s;
    c.kernels += times * one.kernels;
    c.flops += times * one.flops;
    c.tensor_s += times * one.tensor_s;
    c.hbm_bytes += times * one.hbm_bytes;
    c.weight_bytes += times * one.weight_bytes;
    c.kv_bytes += times * one.kv_bytes;
}

// The output projection for `rows` tokens on one GPU (split over the vocabulary by TP).
void add_logits(const ServingContext& ctx, StepCost& c, double rows)
{
    const ModelSpec& m = *ctx.model;
    add_linear(ctx, c, rows / ctx.layout.attention_dp,
        output_params(m) > 0 ? output_params(m) / ctx.layout.tp : embedding_params(m) / ctx.layout.tp,
        static_cast<double>(m.hidden), 2.0);
}

// The draft's share of a step: its layer over the prompt tokens being prefilled (it keeps a KV cache of its
// own), then one pass per draft token over the decoding requests, each through the fusion projection, the
// draft layer and the shared output head. Its first pass also reads the tokens accepted in the step before
// (one to draft_tokens + 1 per request); it is costed at one, like the rest.
void add_draft(const ServingContext& ctx, StepCost& c, const StepLoad& mb)
{
    const ServingContext& d = *ctx.draft;
    const double hidden = static_cast<double>(ctx.model->hidden);
    const double fusion = draft_fusion_params(*ctx.model) / ctx.layout.tp;
    if (mb.prefill_tokens > 0) {
        StepLoad prompts = mb;
        prompts.decode_requests = 0;
        add_layer(d, c, 0, prompts);
        add_linear(ctx, c, busiest_rank_prefill_tokens(ctx, mb.prefill_tokens, mb.prompt_tokens), fusion, 2.0 * hidden,
            ctx.weight_bytes_per_param);
    }
    if (mb.decode_requests <= 0)
        return;
    StepLoad pass = mb;
    pass.prefill_tokens = 0;
    pass.decode_queries = 1;
    StepCost one;
    add_linear(
        ctx, one, mb.decode_requests / ctx.layout.attention_dp, fusion, 2.0 * hidden, ctx.weight_bytes_per_param);
    add_layer(d, one, 0, pass);
    add_logits(ctx, one, mb.decode_requests);
    add_times(c, one, static_cast<double>(ctx.speculative->draft_tokens));
}

} // namespace

bool moe_all_to_all(const EngineTraits& engine, const InstanceLayout& l, const MoeSpec& moe)
{
    return l.exchanges_moe_tokens() && l.moe_exchange == MoeExchange::all_to_all
        && (!engine.all_to_all_needs_ep_above_top_k || l.ep > moe.top_k);
}

// An attention-DP rank prefills the prompts it was given, whole: a step's prompt chunks spread over the
// ranks one prompt to a rank, so the busiest rank holds the step's share of them, but never less than one
// prompt's chunk (the prompt, or as much of it as a rank's token budget takes) while there is one.
double busiest_rank_prefill_tokens(const ServingContext& ctx, double prefill_tokens, double prompt_tokens)
{
    const double ranks = ctx.layout.attention_dp;
    if (ranks <= 1 || prefill_tokens <= 0)
        return prefill_tokens;
    const double chunk = std::min(prompt_tokens, static_cast<double>(ctx.engine.max_batched_tokens));
    return std::max(prefill_tokens / ranks, std::min(prefill_tokens, chunk));
}

// Grouped GEMMs: up (gate+up) and down, one kernel each whose tiles cover every local expert, so the
// waves fill the GPU across experts even when each expert sees a few rows; at prefill sizes the fused
// MoE kernels' own ceiling binds.
double routed_expert_gemm_efficiency(const ServingContext& ctx, double rows_per_expert, double n, double k, Precision p)
{
    return std::min(fused_moe_max_efficiency(ctx, p), skinny_gemm_efficiency(ctx, rows_per_expert, n, k, p));
}

double fused_moe_serial_s(const ServingContext& ctx, double rows_per_expert, double flops, double bytes, Precision p)
{
    if (rows_per_expert <= 0 || flops <= 0)
        return 0;
    const double padded = kFusedMoeSmallTileRows * std::ceil(rows_per_expert / kFusedMoeSmallTileRows);
    const double eff = std::min(
        fused_moe_max_efficiency(ctx, p), tuned_gemm_efficiency(*ctx.device.gen, p) * rows_per_expert / padded);
    const double math_s = flops / (ctx.device.peak(p) * eff);
    const double weights_s = bytes / hbm_Bps(ctx);
    const double unshared = std::min(1.0, kFusedMoeTileRows / rows_per_expert);
    return unshared * std::min(math_s, weights_s);
}

double fused_moe_row_traffic_bytes(double hidden, double inter, double act_bytes)
{
    // vLLM's and SGLang's fused_moe keep these as intermediate caches (gate/up output, activated output,
    // down output before the combine); TensorRT-LLM's CUTLASS MoE expands the input rows per expert and
    // finalises the routing from fp32 partials (expandInputRowsKernel, finalizeMoeRoutingKernel).
    constexpr double kFp32Bytes = 4.0;
    const double gather = hidden * (kActivationBytes + act_bytes);
    const double gate_up = 2.0 * inter * kActivationBytes * 2.0; // written by the first GEMM, read by the activation
    const double activated = inter * act_bytes;
    const double combine = 2.0 * hidden * kFp32Bytes; // written by the down GEMM, read by the combine
    return gather + gate_up + activated + combine;
}

double expected_distinct_experts(double experts, double top_k, double tokens)
{
    if (experts <= 0 || tokens <= 0)
        return 0;
    const double miss = std::pow(std::max(0.0, 1.0 - top_k / experts), tokens);
    return experts * (1.0 - miss);
}

namespace {

// The step so far: its kernels, collectives and overheads, one after another.
double summed_s(const StepCost& c)
{
    return c.compute_bound_s + c.memory_bound_s + c.comm_s + c.overhead_s;
}

// How long an eager step waits for the CPU beyond the GPU's own time: the host launches the step's kernels
// ahead of the GPU, so the step lasts the longer of the two.
double eager_host_wait_s(const ServingContext& ctx, const StepCost& c, const StepLoad& mb)
{
    const double rank_tokens = (mb.decode_requests * mb.decode_queries + mb.prefill_tokens) / ctx.layout.attention_dp;
    if (mb.prefill_tokens <= 0 || rank_tokens <= ctx.engine.graph_max_tokens)
        return 0;
    return std::max(0.0, c.kernels * ctx.engine.eager_kernel_host_s - summed_s(c));
}

// How long a step waits for the engine's per-request host work beyond the GPU's own time: with an overlap
// scheduler the host prepares the next step while the GPU runs this one, so the step lasts the longer of the
// two; without one the host's work comes on top. With pipeline stages each stage's host handles every
// micro-batch of the step (`mb` is one of pp), so its work is the whole batch's.
double request_host_wait_s(const ServingContext& ctx, const StepCost& c, const StepLoad& mb)
{
    const double prompts = mb.prefill_tokens > 0 ? std::max(1.0, mb.prefill_tokens / mb.prompt_tokens) : 0.0;
    const double requests = (mb.decode_requests + prompts) * ctx.layout.pp / ctx.layout.attention_dp;
    const double host_s = ctx.engine.request_host_s * requests;
    if (!ctx.engine.request_host_overlaps_gpu)
        return host_s;
    return std::max(0.0, host_s - summed_s(c));
}

} // namespace

StepCost step_cost(const ServingContext& ctx, const StepLoad& load)
{
    const ModelSpec& m = *ctx.model;
    const int pp = ctx.layout.pp;
    StepLoad mb = load;
    mb.decode_requests /= pp;
    mb.prefill_tokens /= pp;
    mb.sampled_requests /= pp;
    mb.prompt_tokens = std::max(1.0, load.prompt_tokens);
    // Verifying k draft tokens runs k + 1 tokens of each decoding request through the model, all sampled.
    mb.decode_queries = ctx.decode_queries;
    mb.sampled_requests += mb.decode_requests * (mb.decode_queries - 1.0);
    StepCost c;
    for (const ServingContext::LayerKind& kind : ctx.layer_kinds) {
        StepCost one;
        add_layer(ctx, one, kind.first_layer, mb);
        add_times(c, one, static_cast<double>(kind.count));
    }
    // Logits of the sampled requests on the last stage (the output projection, split over the vocabulary).
    add_logits(ctx, c, mb.sampled_requests);
    if (ctx.draft)
        add_draft(ctx, c, mb);
    const double hop_bytes = (mb.decode_requests * mb.decode_queries + mb.prefill_tokens) / ctx.layout.attention_dp
        * static_cast<double>(m.hidden) * kActivationBytes;
    for (int s = 1; s < pp; ++s)
        add_comm(ctx, c, Collective::send_recv, hop_bytes, ctx.pp_hop);
    const double eager_wait_s = eager_host_wait_s(ctx, c, mb);
    c.overhead_s += eager_wait_s + ctx.engine.step_host_s;
    const double request_wait_s = request_host_wait_s(ctx, c, mb);
    c.overhead_s += request_wait_s;
    c.host_wait_s = eager_wait_s + request_wait_s;
    c.time_s = summed_s(c);
    return c;
}

double step_energy_J(const ServingContext& ctx, const StepCost& c)
{
    KernelWork k;
    k.clock_s = c.compute_bound_s;
    k.fixed_s = c.memory_bound_s + c.comm_s + c.overhead_s;
    k.tensor_s = c.tensor_s;
    k.bytes = c.hbm_bytes;
    return ctx.power.energy_J(k, 1.0) + ctx.power.comm_W * c.comm_s;
}

} // namespace parallax

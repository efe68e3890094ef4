#include "serving/serving_memory.hpp"

#include "model/model_math.hpp"
#include "serving/kv_cache.hpp"
#include "serving/speculative_decoding.hpp"
#include "spec/units.hpp"

#include <algorithm>
#include <cmath>

namespace parallax {

namespace {

// Embedding and output projection stay in bf16 in quantised checkpoints (vLLM and ModelOpt leave
// the embedding and lm_head unquantised); both are split over the vocabulary by TP.
constexpr double kEmbeddingBytesPerParam = 2.0;

double layer_bytes(const ServingContext& ctx, int layer)
{
    const LayerParams p = layer_params(*ctx.model, layer);
    const InstanceLayout& l = ctx.layout;
    const double sharded = (p.attention + p.mlp + p.shared_experts) / l.tp + p.experts / (l.tp * l.attention_dp);
    return sharded * ctx.weight_bytes_per_param + (p.router + p.norms) * 2.0;
}

// Peak activation memory of one step of `tokens` tokens on one GPU: the residual stream and the
// widest intermediate (fused QKV or the MLP's gate and up projections, or an MoE layer's routed
// copies) in bf16, plus the fp32 logits of the sampled requests, which the engines size at startup.
double activation_bytes(const ServingContext& ctx)
{
    const ModelSpec& m = *ctx.model;
    const InstanceLayout& l = ctx.layout;
    const double tokens = static_cast<double>(ctx.engine.max_batched_tokens);
    const double qkv = (query_dim(m) + 2 * kv_dim(m)) / l.tp;
    double mlp = 2.0 * static_cast<double>(m.ffn_hidden) / l.tp;
    if (m.is_moe())
        mlp = std::max(mlp, 2.0 * m.moe->top_k * static_cast<double>(m.moe->expert_ffn_hidden) / l.expert_tp());
    const double per_token = 2.0 * (2.0 * static_cast<double>(m.hidden) + std::max(qkv, mlp));
    const double logits
        = ctx.engine.max_running_requests * ctx.decode_queries * static_cast<double>(m.vocab) / l.tp * 4.0;
    return tokens * per_token + logits;
}

// The draft's layer and fusion projection live with the output head they share, on the last stage.
double draft_weight_bytes(const ServingContext& ctx)
{
    if (!ctx.draft)
        return 0;
    return layer_bytes(*ctx.draft, 0) + draft_fusion_params(*ctx.model) / ctx.layout.tp * ctx.weight_bytes_per_param;
}

// KV cache of one request of `tokens` tokens on one GPU: the model's layers and the draft's.
double kv_bytes_of(const ServingContext& ctx, double tokens)
{
    double b = kv_bytes_per_sequence_per_gpu(*ctx.model, ctx.precision.kv_cache, tokens, ctx.layout);
    if (ctx.draft)
        b += kv_bytes_per_sequence(*ctx.draft->model, ctx.precision.kv_cache, tokens)
            * kv_tp_share(*ctx.draft->model, ctx.layout.tp); // on the last stage only
    return b;
}

} // namespace

double weights_bytes_per_gpu(const ServingContext& ctx)
{
    const ModelSpec& m = *ctx.model;
    const int pp = ctx.layout.pp;
    const double embed = embedding_params(m) * kEmbeddingBytesPerParam / ctx.layout.tp;
    const double out = output_params(m) * kEmbeddingBytesPerParam / ctx.layout.tp;
    // Stages hold consecutive layers, the first ones one more when the count does not divide.
    double peak = 0;
    int first = 0;
    for (int s = 0; s < pp; ++s) {
        const int n = m.layers / pp + (s < m.layers % pp ? 1 : 0);
        double b = 0;
        for (int i = first; i < first + n; ++i)
            b += layer_bytes(ctx, i);
        if (s == 0)
            b += embed;
        if (s == pp - 1)
            b += out + draft_weight_bytes(ctx);
        peak = std::max(peak, b);
        first += n;
    }
    return peak;
}

ServingMemory serving_memory(const ServingContext& ctx, const ServingWorkload& w)
{
    ServingMemory mem;
    const EngineTraits& e = ctx.engine;
    mem.capacity_B = ctx.cluster->gpu.memory_bytes;
    mem.weights_B = weights_bytes_per_gpu(ctx);
    mem.activations_B = activation_bytes(ctx);
    mem.other_B = e.other_GiB * units::kGiB;
    const double fixed = mem.weights_B + mem.activations_B + mem.other_B;
    switch (e.memory_rule) {
    case MemoryRule::total_fraction:
        mem.kv_pool_B = e.memory_fraction * mem.capacity_B - fixed;
        break;
    case MemoryRule::static_fraction:
        mem.kv_pool_B = e.memory_fraction * mem.capacity_B - mem.weights_B;
        break;
    case MemoryRule::free_fraction:
        mem.kv_pool_B = e.memory_fraction * (mem.capacity_B - fixed);
        break;
    }
    const double tokens = paged_tokens(static_cast<double>(w.isl + w.osl), e.kv_block_tokens);
    mem.kv_bytes_per_request = kv_bytes_of(ctx, tokens);
    if (mem.kv_pool_B > 0 && mem.kv_bytes_per_request > 0) {
        // Each attention-DP rank holds the cache of its own requests.
        const double per_rank = std::floor(mem.kv_pool_B / mem.kv_bytes_per_request);
        mem.max_requests = static_cast<long long>(std::min(per_rank, 1e12)) * ctx.layout.attention_dp;
        const double held = paged_tokens(
            static_cast<double>(w.isl) + e.admission_output_share * static_cast<double>(w.osl), e.kv_block_tokens);
        const double held_B = kv_bytes_of(ctx, held);
        const double running_per_rank = std::max(per_rank, std::floor(mem.kv_pool_B / held_B));
        mem.max_running = static_cast<long long>(std::min(running_per_rank, 1e12)) * ctx.layout.attention_dp;
    }
    return mem;
}

} // namespace parallax

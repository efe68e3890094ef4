#include "serving/serving_context.hpp"

#include "serving/speculative_decoding.hpp"
#include "spec/training_spec.hpp"

#include <algorithm>
#include <array>

namespace parallax {

namespace {

// The tensor cores run `p` where the GPU has it; otherwise the weights are dequantised on the fly
// (weight-only kernels such as Marlin) and the matmul runs at the best precision the GPU offers above it.
Precision matmul_precision_on(const GpuSpec& g, Precision p)
{
    if (g.supports(p))
        return p;
    for (Precision q : { Precision::fp8, Precision::bf16, Precision::fp16 })
        if (element_bytes(q) >= element_bytes(p) && g.supports(q))
            return q;
    return Precision::bf16;
}

} // namespace

std::vector<ServingContext::LayerKind> serving_layer_kinds(const ModelSpec& m)
{
    // Index: 2 * moe + windowed.
    std::array<ServingContext::LayerKind, 4> kinds {};
    for (int layer = 0; layer < m.layers; ++layer) {
        auto& k = kinds[static_cast<std::size_t>(
            2 * (m.is_moe_layer(layer) ? 1 : 0) + (m.is_windowed_layer(layer) ? 1 : 0))];
        if (k.count++ == 0)
            k.first_layer = layer;
    }
    std::vector<ServingContext::LayerKind> out;
    for (const auto& k : kinds)
        if (k.count > 0)
            out.push_back(k);
    return out;
}

GroupPlacement contiguous_group(long long size, long long stride, long long gpus_per_node)
{
    GroupPlacement g;
    g.size = std::max(1LL, size);
    const long long span = g.size * std::max(1LL, stride);
    if (span <= gpus_per_node) {
        g.per_node = g.size;
        g.nodes = 1;
    } else {
        g.per_node = std::max(1LL, gpus_per_node / std::max(1LL, stride));
        g.nodes = (g.size + g.per_node - 1) / g.per_node;
    }
    g.same_rail = g.per_node == 1;
    return g;
}

ServingContext::ServingContext(const ModelSpec& m, const ClusterSpec& c, const ServingSpec& s, const InstanceLayout& l)
    : model(&m)
    , cluster(&c)
    , precision(s.precision)
    , layout(l)
    , engine(engine_traits(s.engine, l, c.gpu, s.speculative.has_value()))
    , device(ComputeDevice::of(c.gpu))
    , network(NetworkModel::of(c))
    , power(PowerModel::of(device, TrainingSpec {}))
    , matmul_precision(matmul_precision_on(c.gpu, s.precision.weights))
    , weight_bytes_per_param(stored_bytes_per_element(s.precision.weights))
{
    // Ranks in order tp (innermost), attention_dp, pp: an instance's TP group shares a node.
    const long long gpn = c.gpus_per_node;
    tp_group = contiguous_group(l.tp, 1, gpn);
    moe_group = contiguous_group(static_cast<long long>(l.tp) * l.attention_dp, 1, gpn);
    ep_group = contiguous_group(l.ep, l.expert_tp(), gpn);
    pp_hop = contiguous_group(2, static_cast<long long>(l.tp) * l.attention_dp, gpn);
    layer_kinds = serving_layer_kinds(m);
    if (s.mixed_chunk && s.engine == ServingEngine::sglang)
        engine.mixes_prompts_with_decodes = *s.mixed_chunk;
    if (s.speculative) {
        speculative = s.speculative;
        tokens_per_decode_step = s.speculative->tokens_per_step();
        decode_queries = 1.0 + s.speculative->draft_tokens;
        draft_model = std::make_unique<const ModelSpec>(draft_model_of(m, s.speculative->draft));
        ServingSpec plain = s;
        plain.speculative.reset();
        draft = std::make_unique<const ServingContext>(*draft_model, c, plain, l);
    }
}

ServingContext::~ServingContext() = default;

// NVFP4 keeps one fp8 scale per 16 elements (NVIDIA "Introducing NVFP4", 2025); fp8 checkpoints scale per
// tensor or per channel (negligible).
double stored_bytes_per_element(Precision p)
{
    return p == Precision::fp4 ? element_bytes(p) + 1.0 / 16.0 : element_bytes(p);
}

double instance_token_budget(const ServingContext& ctx)
{
    return static_cast<double>(ctx.engine.max_batched_tokens) * ctx.layout.attention_dp;
}

double decode_steps_of(const ServingContext& ctx, const ServingWorkload& w)
{
    return static_cast<double>(w.osl - 1) / ctx.tokens_per_decode_step;
}

} // namespace parallax

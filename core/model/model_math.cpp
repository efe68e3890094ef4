#include "model/model_math.hpp"

namespace parallax {

double query_dim(const ModelSpec& m)
{
    if (m.mla)
        return static_cast<double>(m.heads) * (m.mla->qk_nope_head_dim + m.mla->qk_rope_head_dim);
    return static_cast<double>(m.heads) * static_cast<double>(m.head_dim());
}

double kv_dim(const ModelSpec& m)
{
    if (m.mla)
        return static_cast<double>(m.heads) * (m.mla->qk_nope_head_dim + m.mla->qk_rope_head_dim);
    return static_cast<double>(m.kv_heads) * static_cast<double>(m.head_dim());
}

double attention_value_dim(const ModelSpec& m)
{
    if (m.mla)
        return static_cast<double>(m.heads) * m.mla->v_head_dim;
    return query_dim(m);
}

namespace {

double mlp_params(const ModelSpec& m, double ffn)
{
    const double h = static_cast<double>(m.hidden);
    return (m.ffn_act == FfnActivation::swiglu ? 3.0 : 2.0) * h * ffn;
}

double attention_params(const ModelSpec& m)
{
    const double h = static_cast<double>(m.hidden);
    if (m.mla) {
        // DeepSeek-V2 Sec. 2.1: W_DQ, W_UQ (+rope), W_DKV (+shared rope key), W_UK/W_UV, W_O.
        const MlaSpec& a = *m.mla;
        const double heads = m.heads;
        const double qk = a.qk_nope_head_dim + a.qk_rope_head_dim;
        const double q = a.q_lora_rank > 0 ? h * a.q_lora_rank + a.q_lora_rank * heads * qk : h * heads * qk;
        const double kv
            = h * (a.kv_lora_rank + a.qk_rope_head_dim) + a.kv_lora_rank * heads * (a.qk_nope_head_dim + a.v_head_dim);
        const double o = heads * a.v_head_dim * h;
        return q + kv + o;
    }
    const double q = query_dim(m);
    return h * q + 2 * h * kv_dim(m) + q * h;
}

} // namespace

LayerParams layer_params(const ModelSpec& m, int layer)
{
    LayerParams p;
    const double h = static_cast<double>(m.hidden);
    p.attention = attention_params(m);
    p.norms = 2 * h;
    if (m.is_moe_layer(layer)) {
        const MoeSpec& e = *m.moe;
        p.experts = e.experts * mlp_params(m, static_cast<double>(e.expert_ffn_hidden));
        p.shared_experts = e.shared_experts * mlp_params(m, static_cast<double>(e.expert_ffn_hidden));
        p.router = h * e.experts;
    } else {
        p.mlp = mlp_params(m, static_cast<double>(m.ffn_hidden));
    }
    return p;
}

double embedding_params(const ModelSpec& m)
{
    return static_cast<double>(m.vocab) * static_cast<double>(m.hidden);
}

double output_params(const ModelSpec& m)
{
    return m.tied_embeddings ? 0.0 : embedding_params(m);
}

double total_params(const ModelSpec& m)
{
    double total = embedding_params(m) + output_params(m) + static_cast<double>(m.hidden); // + final norm
    for (int l = 0; l < m.layers; ++l)
        total += layer_params(m, l).total();
    return total;
}

double active_params(const ModelSpec& m)
{
    double total = embedding_params(m) + output_params(m) + static_cast<double>(m.hidden);
    for (int l = 0; l < m.layers; ++l) {
        LayerParams p = layer_params(m, l);
        if (m.is_moe_layer(l))
            p.experts *= static_cast<double>(m.moe->top_k) / m.moe->experts;
        total += p.total();
    }
    return total;
}

double megatron_flops_per_token(const ModelSpec& m, double seq_len)
{
    // Each weight is used in 3 GEMMs (forward, dgrad, wgrad) of 2 FLOPs per multiply-add: 6 per
    // parameter per token; core attention 2 GEMMs of 2*s*d per token each, x3.
    const double h = static_cast<double>(m.hidden);
    double per_token = 0;
    for (int l = 0; l < m.layers; ++l) {
        LayerParams p = layer_params(m, l);
        double gemm_params = p.attention + p.mlp + p.shared_experts + p.router;
        if (m.is_moe_layer(l))
            gemm_params += p.experts * static_cast<double>(m.moe->top_k) / m.moe->experts;
        per_token += 6 * gemm_params;
        per_token += 3 * 2 * seq_len * (query_dim(m) + attention_value_dim(m)); // QK^T + PV, non-causal
    }
    per_token += 6 * h * static_cast<double>(m.vocab); // logits
    return per_token;
}

double narayanan_flops_per_token(const ModelSpec& m, double seq_len, bool full_recompute)
{
    // Narayanan et al. 2021, eq. 3: F = 72 B s l h^2 (1 + s/(6h) + V/(12 l h)); 96 and V/(16 l h) with
    // full recomputation (one more forward pass).
    const double h = static_cast<double>(m.hidden);
    const double L = m.layers;
    const double V = static_cast<double>(m.vocab);
    if (full_recompute)
        return 96 * L * h * h * (1 + seq_len / (6 * h) + V / (16 * L * h));
    return 72 * L * h * h * (1 + seq_len / (6 * h) + V / (12 * L * h));
}

} // namespace parallax

#include "serving/kv_cache.hpp"

#include <algorithm>
#include <cmath>

namespace parallax {

double kv_bytes_per_token_layer(const ModelSpec& m, Precision kv)
{
    const double e = element_bytes(kv);
    if (m.mla)
        return (m.mla->kv_lora_rank + m.mla->qk_rope_head_dim) * e;
    return 2.0 * m.kv_heads * static_cast<double>(m.head_dim()) * e;
}

double kv_bytes_per_token(const ModelSpec& m, Precision kv)
{
    return kv_bytes_per_token_layer(m, kv) * m.layers;
}

double kv_bytes_per_sequence(const ModelSpec& m, Precision kv, double tokens)
{
    double held = 0; // token-layers kept
    for (int l = 0; l < m.layers; ++l)
        held += m.is_windowed_layer(l) ? std::min<double>(tokens, m.sliding_window) : tokens;
    return held * kv_bytes_per_token_layer(m, kv);
}

double kv_tp_share(const ModelSpec& m, int tp)
{
    if (m.mla || m.kv_heads <= 0)
        return 1.0;
    const double heads_per_rank = std::max(1.0, static_cast<double>(m.kv_heads) / tp);
    return heads_per_rank / m.kv_heads;
}

double kv_bytes_per_sequence_per_gpu(const ModelSpec& m, Precision kv, double tokens, const InstanceLayout& l)
{
    // Windowed and full layers alternate, so every stage holds about the average.
    return kv_bytes_per_sequence(m, kv, tokens) * kv_tp_share(m, l.tp) / l.pp;
}

double paged_tokens(double tokens, int block_tokens)
{
    if (block_tokens <= 1)
        return std::ceil(tokens);
    return std::ceil(tokens / block_tokens) * block_tokens;
}

} // namespace parallax

#pragma once
// Bytes of the KV cache: what one token costs in each layer (GQA keys and values, or MLA's compressed
// latent), what a whole sequence costs when some layers only keep a sliding window of it, and the
// share one GPU holds under tensor and pipeline parallelism.
#include "serving/serving_spec.hpp"

namespace parallax {

// Bytes one token adds to one layer's cache for the whole model (no sharding):
// GQA/MHA 2 x kv_heads x head_dim (keys and values), MLA kv_lora_rank + qk_rope_head_dim (the
// latent and the shared rotary key, DeepSeek-V2 Sec. 2.1.3), times the element size.
double kv_bytes_per_token_layer(const ModelSpec& m, Precision kv);
// Over all layers, a windowed layer counted as if it kept every token: the per-token figure engines
// print, and the cost of a sequence no longer than the window.
double kv_bytes_per_token(const ModelSpec& m, Precision kv);
// The whole model's cache for one sequence of `tokens`: a windowed layer keeps min(tokens, window).
double kv_bytes_per_sequence(const ModelSpec& m, Precision kv, double tokens);

// The fraction of a layer's cache one tensor-parallel rank holds: kv_heads/tp heads, at least one
// (ranks beyond the KV heads hold replicas, as vLLM and TensorRT-LLM do); MLA's latent is not split
// by heads, so every rank holds all of it.
double kv_tp_share(const ModelSpec& m, int tp);
// One GPU's share of a sequence's cache: its TP share of the layers of one pipeline stage.
double kv_bytes_per_sequence_per_gpu(const ModelSpec& m, Precision kv, double tokens, const InstanceLayout& l);

// Paged allocation: a sequence occupies whole blocks of `block_tokens`.
double paged_tokens(double tokens, int block_tokens);

} // namespace parallax

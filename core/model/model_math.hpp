#pragma once
// Parameter counts and model FLOPs of a decoder-only transformer.
#include "spec/model_spec.hpp"

namespace parallax {

struct LayerParams {
    double attention = 0; // projections (Q, K, V, O or the MLA projections)
    double mlp = 0; // dense MLP (0 in an MoE layer)
    double experts = 0; // all routed experts of an MoE layer
    double shared_experts = 0;
    double router = 0;
    double norms = 0;
    double total() const { return attention + mlp + experts + shared_experts + router + norms; }
};

double query_dim(const ModelSpec& m); // heads * head dim
double kv_dim(const ModelSpec& m); // kv_heads * head dim (per K or V)
double attention_value_dim(const ModelSpec& m); // heads * v head dim (MLA) or query_dim
LayerParams layer_params(const ModelSpec& m, int layer);
double embedding_params(const ModelSpec& m); // input embedding
double output_params(const ModelSpec& m); // output projection (0 when tied)
double total_params(const ModelSpec& m);
// Parameters touched per token (routed experts counted top_k times).
double active_params(const ModelSpec& m);

// Model FLOPs per token for one training step (forward + backward), counted as Megatron-LM reports
// them (training.py num_floating_point_operations): 3 GEMM passes, causal attention counted in full,
// SwiGLU as 3 GEMMs, logits included, no recompute.
double megatron_flops_per_token(const ModelSpec& m, double seq_len);

// Narayanan et al. 2021 eq. 3 (GPT, MHA, f = 4h) per token; with full recompute 96 instead of 72.
double narayanan_flops_per_token(const ModelSpec& m, double seq_len, bool full_recompute);

} // namespace parallax

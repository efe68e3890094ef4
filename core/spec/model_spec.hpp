#pragma once
#include <optional>
#include <string>

namespace parallax {

enum class FfnActivation : unsigned char { gelu, swiglu };

struct MoeSpec {
    int experts = 0;
    int top_k = 1;
    long long expert_ffn_hidden = 0;
    int shared_experts = 0;
    int moe_layer_freq = 1; // every k-th layer (after the dense-first ones) is an MoE layer
    int first_dense_layers = 0;
    std::optional<double> capacity_factor; // unset = dropless
};

// Multi-head latent attention (DeepSeek-V2/V3).
struct MlaSpec {
    int q_lora_rank = 0; // 0 = no query compression
    int kv_lora_rank = 0;
    int qk_nope_head_dim = 0;
    int qk_rope_head_dim = 0;
    int v_head_dim = 0;
};

// A decoder-only transformer.
struct ModelSpec {
    std::string name;
    int layers = 0;
    long long hidden = 0;
    int heads = 0;
    int kv_heads = 0;
    long long ffn_hidden = 0;
    long long vocab = 0;
    FfnActivation ffn_act = FfnActivation::gelu;
    bool tied_embeddings = false;
    // Dropout in attention and after each block (GPT-style training); absent in Llama-style models.
    // Unset: on for "gelu" models, off for "swiglu" ones.
    std::optional<bool> dropout;
    std::optional<int> head_dim_override;
    // Sliding-window attention: a windowed layer's query attends to the last `sliding_window` tokens
    // (0 = every layer attends causally to the whole sequence). With a window, every
    // `full_attention_every`-th layer (1-based, as Megatron-core's window_attn_skip_freq counts) still
    // attends fully; GPT-OSS alternates windowed (128) and full layers (HF config layer_types).
    int sliding_window = 0;
    int full_attention_every = 0; // 0 = no full layers: every layer windowed
    // Learned per-head sink logits added to the softmax denominator (GPT-OSS; Xiao et al. 2023,
    // "Efficient Streaming Language Models with Attention Sinks"; TE softmax_type="learnable").
    bool attention_sinks = false;
    // YaRN-scaled rotary position embeddings (GPT-OSS: HF rope_scaling type "yarn", factor 32; Megatron
    // position_embedding_type "yarn"), which the frameworks may not run through their fused RoPE kernel.
    bool yarn_rope = false;
    // The experts' linear layers carry biases (GPT-OSS: HF gate_up_proj_bias / down_proj_bias; Megatron
    // add_bias_linear), which the frameworks may add outside the grouped GEMM.
    bool expert_bias = false;
    std::optional<MlaSpec> mla;
    std::optional<MoeSpec> moe;
    std::optional<double> params_B; // published count, for checks only
    std::string source;

    long long head_dim() const { return head_dim_override ? *head_dim_override : hidden / heads; }
    bool is_windowed_layer(int layer) const
    {
        if (sliding_window <= 0)
            return false;
        return full_attention_every <= 0 || (layer + 1) % full_attention_every != 0;
    }
    // Share of the layers whose attention is windowed.
    double windowed_layer_fraction() const
    {
        if (sliding_window <= 0 || layers <= 0)
            return 0.0;
        int n = 0;
        for (int l = 0; l < layers; ++l)
            n += is_windowed_layer(l) ? 1 : 0;
        return static_cast<double>(n) / layers;
    }
    bool has_dropout() const { return dropout ? *dropout : ffn_act == FfnActivation::gelu; }
    bool is_moe() const { return moe.has_value() && moe->experts > 0; }
    // Layer index 0-based. Megatron's --moe-layer-freq with --first-k-dense-replace semantics.
    bool is_moe_layer(int layer) const
    {
        if (!is_moe() || layer < moe->first_dense_layers)
            return false;
        return (layer - moe->first_dense_layers) % moe->moe_layer_freq == 0;
    }
    int moe_layer_count() const
    {
        int n = 0;
        for (int l = 0; l < layers; ++l)
            n += is_moe_layer(l) ? 1 : 0;
        return n;
    }
};

} // namespace parallax

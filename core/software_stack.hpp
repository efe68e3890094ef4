#pragma once
// What the training framework does to the same maths: which attention kernels it calls, how much
// of the elementwise work it fuses, and what "selective" recomputation means in it. Named traits
// with sources, selected by training.framework.
#include <string_view>

namespace parallax {

enum class Framework : unsigned char {
    megatron, // Megatron-LM / Megatron-core / NeMo with Transformer Engine (fused kernels)
    torchtitan, // PyTorch eager (FSDP2/DTensor), SDPA attention
    torchtitan_compile, // torchtitan with torch.compile on the transformer blocks
    megatron_deepspeed, // Megatron-DeepSpeed: Megatron layers driven by DeepSpeed's pipeline engine
};

std::string_view to_string(Framework f);
bool framework_from_string(std::string_view s, Framework& out);

enum class AttentionKernel : unsigned char {
    best, // the generation's best fused kernel (cuDNN / FlashAttention-3 on Hopper, FA2 on Ampere)
    flash2, // FlashAttention-2 (what PyTorch SDPA dispatches to)
};

enum class SelectivePolicy : unsigned char {
    attention_core, // Megatron: recompute the core attention only (Korthikanti et al. 2022)
    every_other_matmul, // torchtitan op-level SAC: keep matmul outputs except every second mm, recompute pointwise
};

struct SoftwareTraits {
    AttentionKernel attention = AttentionKernel::best;
    // HBM traffic of the elementwise ops (norms, activations, residuals, RoPE) relative to the
    // fused kernels of Megatron/TE.
    double elementwise_traffic_factor = 1.0;
    SelectivePolicy selective = SelectivePolicy::attention_core;
    // Pipeline sends: Megatron splits the activation across TP ranks (scatter-gather, Narayanan et al.
    // 2021 Sec. 4.1) and pairs send/recv in one batched exchange; DeepSpeed's engine sends the full
    // activation with separate blocking send and receive steps.
    bool p2p_scatter_gather = true;
    // Megatron runs the input-gradient all-reduce / reduce-scatter of a column-parallel GEMM
    // asynchronously under its weight-gradient GEMM; PyTorch DTensor TP (torchtitan without async TP)
    // issues every collective in line.
    bool tp_backward_overlap = true;
    int p2p_blocking_transfers_per_microbatch = 2;
    // Host time to issue one local expert's GEMM (Transformer Engine's GroupedLinear issues one cuBLAS
    // GEMM per local expert, plus its fp8 casts): 0 where one grouped kernel runs all experts.
    double expert_gemm_host_s = 0;
};

SoftwareTraits software_traits(Framework f);

} // namespace parallax

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
    // Learned softmax sinks inside the fused attention kernel: Transformer Engine >= 2.8 runs them in
    // cuDNN's fused attention (BSHD/SBHD, cuDNN >= 9.13.1; TransformerEngine PR #2148); below that
    // Megatron-Bridge's GPTOSSProvider falls back to Megatron-core's local (unfused) attention, which
    // materialises the score matrix. All stacks modelled here are assumed to have the fused kernel.
    bool fused_attention_sinks = true;
    // The fp8 quantisation kernels around the grouped expert GEMMs are issued from Transformer Engine's C++
    // (one split-quantise call over the experts; NVIDIA/TransformerEngine PR #2360, issues #2453/#2456 on
    // grouped GEMMs without per-expert host work): each costs a bare kernel launch, not a module call.
    // The per-expert GEMM launches and the host sync before them stay.
    bool expert_quantise_in_cpp = false;
    // YaRN rotary embeddings run as eager PyTorch ops instead of the fused RoPE kernel: Megatron-Bridge
    // turns apply_rope_fusion off unless position_embedding_type is "rope"
    // (megatron/bridge/utils/fusions.py, validate_rope_fusion_compatibility; GPTOSSProvider uses "yarn"),
    // and Megatron-core then applies _apply_rotary_pos_emb_bshd op by op.
    bool unfused_yarn_rope = false;
    // The experts' FC2 bias is added outside the grouped GEMM, expert by expert in eager PyTorch, with the
    // fp32 routing probabilities (Megatron-core TEGroupedMLP._apply_bias, megatron/core/transformer/moe/
    // experts.py, "Enable bias in expert mlp [gpt-oss 5/5]"; FC1's bias is the GEMM's epilogue).
    bool eager_expert_bias = false;
    // Pipeline sends: Megatron splits the activation across TP ranks and all-gathers it over NVLink
    // on arrival (scatter-gather, Narayanan et al. 2021 Sec. 4.1) and pairs send/recv in one batched
    // exchange; DeepSpeed's engine partitions the same way but sends and receives in separate blocking
    // steps.
    bool p2p_scatter_gather = true;
    // The backward's activation gradient split the same way (DeepSpeed >= 0.5.4, is_grad_partitioned);
    // DeepSpeed before it sends every TP rank the whole gradient.
    bool p2p_grad_scatter_gather = true;
    // Bytes of the attention mask sent with each stage output by every TP rank, per sequence position
    // squared (DeepSpeed before 0.5.4 passes GPT2ModelPipe's [1, 1, s, s] mask down the pipeline as
    // fp16: 2); 0 where the stages build their own mask.
    double p2p_mask_bytes_per_position_pair = 0;
    // Megatron runs the input-gradient all-reduce / reduce-scatter of a column-parallel GEMM
    // asynchronously under its weight-gradient GEMM; PyTorch DTensor TP (torchtitan without async TP)
    // issues every collective in line.
    bool tp_backward_overlap = true;
    int p2p_blocking_transfers_per_microbatch = 2;
    // Host time to issue one local expert's GEMM (Transformer Engine's GroupedLinear issues one cuBLAS
    // GEMM per local expert, plus its fp8 casts): 0 where one grouped kernel runs all experts.
    double expert_gemm_host_s = 0;
    // Host time to issue one compute kernel in eager PyTorch (Python module code, autograd and the
    // dispatcher): a kernel that runs shorter leaves the GPU waiting on the host. 0 where the stack's
    // kernels are long enough or fused enough that the host always runs ahead (not modelled there).
    double kernel_host_s = 0;
    // Host operations an eager layer issues per micro-batch (each a PyTorch op, autograd Function or
    // collective called from Python, or an autograd node), forward and backward, and the host time of
    // each: the GPU cannot run a layer faster than the host issues it. 0 where the host runs ahead.
    double layer_host_ops_fwd = 0;
    double layer_host_ops_bwd = 0;
    double layer_host_op_s = 0;
    // Weight gradients accumulated across micro-batches by a separate pass (DeepSpeed) rather than
    // inside the weight-gradient GEMM (Megatron's gradient_accumulation_fusion).
    bool separate_grad_accumulation = false;
    // With TP communication overlap on (strategy.tp_comm_overlap): Transformer Engine's userbuffers
    // overlap every TP collective of the forward and the backward with its GEMM; PyTorch's async TP
    // (micro-pipeline TP, an Inductor pass) fuses an all-gather with the matmuls that consume it and a
    // matmul with the reduce-scatter of its output, which in practice only matches the forward
    // (PyTorch async-TP post: ~29% forward speed-up but ~8% end to end on Llama 3 8B/70B).
    bool tp_overlap_backward = true;
    // DTensor sequence parallelism shards [batch, seq, hidden] activations on dim 1: the functional
    // collectives gather/scatter on dim 0 and re-lay the buffer out with chunk + cat
    // (torch/distributed/_functional_collectives.py, gather_dim/scatter_dim != 0): one extra read and
    // write of the whole activation per TP collective that is not fused into a matmul.
    bool tp_relayout_copies = false;
    // HBM bytes per logit of the cross-entropy, forward and backward (the logits GEMM aside).
    // Megatron computes it on an fp32 copy of the logits (vocab_parallel_cross_entropy(output.float()),
    // fp16_lm_cross_entropy off): cast r2+w4, max r4, subtract r4+w4, exp r4+w4, sum r4, divide r4+w4
    // = 38; backward: scale the saved softmax in place r4+w4, cast back r4+w2 = 14
    // (megatron/core/tensor_parallel/cross_entropy.py).
    double loss_fwd_bytes_per_logit = 38;
    // Bytes per logit live at the loss's peak: Megatron keeps the bf16 logits and the fp32 softmax for
    // the backward of its fused vocab-parallel cross-entropy (2 + 4); eager PyTorch F.cross_entropy on
    // pred.float() holds the fp32 copy and the saved fp32 log-softmax, and the backward the fp32
    // incoming and outgoing gradients of log_softmax next to the saved output (4 + 4 + 4).
    double loss_peak_bytes_per_logit = 6;
    double loss_bwd_bytes_per_logit = 14;
    // Ring context parallelism. K/V all-gathered once per pass (PyTorch's default rotate method) instead
    // of passed on step by step; K/V exchanged at the query head count (repeated before the kernel).
    bool cp_kv_all_gather = false;
    bool cp_kv_at_query_heads = false;
    // Ring CP traced into a torch.compile graph: a functional collective traced there is waited on where
    // it is issued (torch/distributed/_functional_collectives.py, _maybe_wrap_tensor returns
    // wait_tensor(...) while tracing) and Inductor leaves the wait there unless
    // reorder_for_compute_comm_overlap is set (torch/_inductor/config.py, off by default), so the K/V
    // all-gathers and the K/V-gradient passes hide behind no attention step.
    bool cp_comm_waited_at_issue = false;
    // HBM bytes of the per-step merge, for each of the cp-1 steps after the first: per query element in
    // the forward (rescale the running output by the new log-sum-exp), per query and per K/V element in
    // the backward (accumulate the gradients). Transformer Engine fuses it on an fp32 accumulator: read
    // the step's bf16 output, read and write fp32 = 10 B (AttnFuncWithCPAndKVP2P, out correction).
    double cp_merge_fwd_bytes_per_query = 10;
    double cp_merge_bwd_bytes_per_query = 10;
    double cp_merge_bwd_bytes_per_kv = 10;
};

SoftwareTraits software_traits(Framework f);

} // namespace parallax

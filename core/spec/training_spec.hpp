#pragma once
#include "spec/data_pipeline.hpp"
#include "spec/precision.hpp"
#include "spec/software_release.hpp"

#include <optional>
#include <vector>

namespace parallax {

// How MoE tokens reach their experts: NCCL all-to-all of every token-expert pair, or a DeepEP-style
// dispatcher (DeepEP, Megatron's flex dispatcher with HybridEP) that sends a token once per destination
// node over RDMA and fans it out over NVLink.
enum class MoeDispatcher : unsigned char { all_to_all, deepep };
// CUDA graph capture: none (eager), per-layer graphs of the static parts (Transformer Engine
// make_graphed_callables on attention / router / preprocessing), or the whole iteration (needs a
// sync-free MoE: no host round trip for the token counts).
enum class CudaGraphs : unsigned char { none, layers, full_iteration };

struct TrainingSpec {
    long long global_batch = 1; // sequences per optimizer step
    long long seq_len = 2048;
    Precision precision = Precision::bf16; // of the matmuls
    // Keys beyond the public scenario contract (docs/scenario-format.md lists every key):
    bool flash_attention = true; // fused attention: no s^2 score matrices stored, recomputed in backward
    // The data-parallel gradient reduction moves fp32 values whatever the gradients are kept in
    // (DeepSpeed's "fp32_allreduce", Megatron's --accumulate-allreduce-grads-in-fp32).
    bool grad_reduce_in_fp32 = false;
    // Megatron keeps its gradient buffers, and reduces them, in the 16-bit parameter dtype instead of fp32
    // main gradients (Megatron-LM --grad-reduce-in-bf16; Megatron-Bridge ddp.grad_reduce_in_fp32 = False,
    // which its performance recipes set): 2 bytes per gradient in memory and on the wire.
    bool grad_reduce_in_bf16 = false;
    Framework framework = Framework::megatron;
    // The framework's release (software_release.hpp); nullptr: its newest catalogued release.
    const SoftwareRelease* software = nullptr;
    // How fp8 GEMM inputs are scaled (precision.hpp): training.fp8_scaling.
    Fp8Scaling fp8_scaling = Fp8Scaling::tensorwise;
    // The fused-attention kernel when it is not the framework's usual one (software_traits); unset:
    // the framework's. Scenario key training.attention_kernel: "framework" (default), "best" (the
    // generation's best: cuDNN / FlashAttention-3 on Hopper) or "flash2" (FlashAttention-2, what
    // PyTorch SDPA dispatches to); it overrides the release's choice.
    std::optional<AttentionKernel> attention_kernel;
    // MoE router imbalance (moe_load.hpp): the busiest EP rank's tokens over the mean (1 = balanced),
    // or a measured per-expert load histogram (one entry per expert, any scale).
    double moe_imbalance = 1.0;
    std::vector<double> moe_expert_load;
    MoeDispatcher moe_dispatcher = MoeDispatcher::all_to_all;
    CudaGraphs cuda_graphs = CudaGraphs::none;
    std::optional<double> tokens_to_train; // for time-to-train objectives
    // Power and DVFS (power_model.hpp). Clocks in MHz; 0 = the GPU's nominal clock (gpu.clock_MHz).
    double clock_MHz = 0; // application clock of every stage (nvidia-smi -lgc)
    std::vector<double> stage_clock_MHz; // one per pipeline stage; overrides clock_MHz when it has pp entries
    double power_cap_W = 0; // per-GPU power cap (nvidia-smi -pl); 0 = the GPU's limit or TDP
    std::optional<double> inlet_temp_C; // cooling inlet temperature; unset = power_model's default
    DataPipelineSpec data; // training.data: the dataset's storage and the loader (data_path.hpp)
};

} // namespace parallax

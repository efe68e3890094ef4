#pragma once
// What distinguishes the serving engines in the cost model: how much GPU memory they take for weights
// and the KV cache, their batching limits, their paged-cache block size and their per-step host
// overhead. The defaults of the versions named in engine_traits.cpp; docs/serving.md lists them.
#include "serving/serving_spec.hpp"
#include "spec/gpu_spec.hpp"

namespace parallax {

// How the engine sizes its KV cache pool.
enum class MemoryRule : unsigned char {
    // KV = fraction x capacity - weights - activations - other (vLLM gpu_memory_utilization)
    total_fraction,
    // KV = fraction x capacity - weights; activations and the rest live outside it (SGLang mem_fraction_static)
    static_fraction,
    // KV = fraction x (capacity - weights - activations - other) (TensorRT-LLM free_gpu_memory_fraction)
    free_fraction,
};

struct EngineTraits {
    MemoryRule memory_rule = MemoryRule::total_fraction;
    double memory_fraction = 0.9;
    int max_running_requests = 1024; // per instance (per attention-DP rank with attention_dp > 1)
    // Tokens one step of one attention-DP rank processes (the chunked-prefill budget); each rank schedules
    // its own batch (instance_token_budget).
    long long max_batched_tokens = 8192;
    int kv_block_tokens = 16;
    // The share of a request's output tokens whose cache a running request holds or the engine keeps
    // reserved for it, averaged over the requests in flight: 1 when the whole cache is reserved at
    // admission, about 0.5 when pages are allocated as tokens arrive (half the output on average).
    double admission_output_share = 1.0;
    double other_GiB = 1.5; // CUDA context, NCCL buffers, CUDA graphs: outside the model's tensors
    double step_host_s = 0; // scheduling, sampling and output handling per step, not hidden by the GPU
    // Host work per request in a step (building its inputs, appending its token, handling its response),
    // which the overlap scheduler runs while the GPU computes the step before: a step lasts at least this
    // times the requests of one rank, so one rank never streams more than 1 / request_host_s tokens per second.
    double request_host_s = 0;
    // Whether that per-request work runs while the GPU computes (an overlap scheduler) or adds to the step.
    bool request_host_overlaps_gpu = false;
    // A step that carries prompt tokens and more tokens than the engine's largest CUDA graph runs eagerly: the
    // CPU launches each kernel, and when that takes longer than the GPU's work the step waits for the host.
    double graph_max_tokens = 0; // the largest step (tokens of one rank) replayed as a CUDA graph
    double eager_kernel_host_s = 0; // host time per kernel of an eager step; 0: not priced
    // Steps by which an overlap scheduler delays each token: it launches step n+1 before handling step
    // n's outputs on the CPU, so a request's first token reaches the client a step later.
    int output_delay_steps = 0;
    // Whether a step carries prompt chunks and decodes together (vLLM's and TensorRT-LLM's in-flight batching,
    // SGLang with --enable-mixed-chunk), or a prompt is prefilled in steps of its own while the decodes wait
    // (SGLang's default: its scheduler runs a waiting prefill batch before the next decode step).
    bool mixes_prompts_with_decodes = true;
    // Whether the MoE layer's all-gather under attention DP moves NVFP4 GEMMs' quantised inputs (TensorRT-LLM
    // quantises before it communicates) rather than bf16 activations (vLLM, SGLang, and fp8 block-scaled
    // experts, which quantise inside the kernel).
    bool gathers_nvfp4_inputs = false;
    // Whether the engine runs its all-to-all only when the experts are split more ways than a token picks,
    // and gathers otherwise (TensorRT-LLM: moe_ep_size <= top_k leaves the all-to-all off).
    bool all_to_all_needs_ep_above_top_k = false;
    // Whether the fused MoE layer's NVFP4 experts run no faster than FP8 ones (TensorRT-LLM's default CUTLASS
    // MoE backend on Blackwell, as measured): its GEMM ceiling is then a share of the FP8 peak.
    bool nvfp4_moe_at_fp8_rate = false;
};

// The engine's defaults for one instance of layout `l` on `gpu` (SGLang sizes its prefill chunks and its
// memory reservation by the GPU's memory), with or without a speculative draft.
EngineTraits engine_traits(ServingEngine e, const InstanceLayout& l, const GpuSpec& gpu, bool speculative = false);

} // namespace parallax

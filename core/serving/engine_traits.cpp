#include "serving/engine_traits.hpp"

#include <algorithm>
#include <array>

namespace parallax {

namespace {

constexpr std::array<std::string_view, 3> kEngineNames = { "vllm", "sglang", "trtllm" };

// SGLang 0.5 server_args.py (_handle_gpu_memory_settings): the prefill chunk and the largest CUDA-graph
// batch by the GPU's memory (MiB) and TP size, and what mem_fraction_static leaves outside the weights and
// the KV pool: 512 MiB of metadata, 1.5 MiB per token of the prefill chunk (at least 2,048), 2 MiB per
// captured batch slot, 1 GiB per 8 ranks of the instance, more with DP attention, 2 GiB for a draft's
// graphs, and at least 10 GiB on GPUs of more than 60 GiB.
struct SglangMemory {
    long long chunked_prefill_tokens = 8192;
    double cuda_graph_max_bs = 512;
    double mem_fraction_static = 0.88;
};

SglangMemory sglang_memory(const InstanceLayout& l, const GpuSpec& gpu, bool speculative)
{
    constexpr double kMiB = 1024.0 * 1024.0;
    const double gpu_mib = gpu.memory_bytes / kMiB;
    const int tp = l.tp * l.attention_dp; // SGLang's --tp-size counts every GPU of the instance
    SglangMemory m;
    if (gpu_mib < 35 * 1024.0) {
        m.chunked_prefill_tokens = 2048;
        m.cuda_graph_max_bs = tp < 4 ? 24 : 80;
    } else if (gpu_mib < 60 * 1024.0) {
        m.chunked_prefill_tokens = 4096;
        m.cuda_graph_max_bs = tp < 4 ? 32 : 160;
    } else if (gpu_mib < 160 * 1024.0) {
        m.chunked_prefill_tokens = 8192;
        m.cuda_graph_max_bs = tp < 4 ? 256 : 512;
    } else {
        m.chunked_prefill_tokens = 16384;
        m.cuda_graph_max_bs = 512;
    }
    double reserved_mib = 512.0 + 1.5 * static_cast<double>(std::max(2048LL, m.chunked_prefill_tokens))
        + 2.0 * m.cuda_graph_max_bs + tp * l.pp / 8.0 * 1024.0;
    if (l.attention_dp > 1) {
        reserved_mib += 3.0 * m.cuda_graph_max_bs * l.attention_dp;
        if (m.cuda_graph_max_bs > 300)
            reserved_mib += 1.5 * m.cuda_graph_max_bs * l.attention_dp;
    }
    if (gpu_mib > 60 * 1024.0)
        reserved_mib = std::max(reserved_mib, 10 * 1024.0);
    if (speculative)
        reserved_mib += 2 * 1024.0;
    m.mem_fraction_static = std::clamp((gpu_mib - reserved_mib) / gpu_mib, 0.0, 1.0);
    return m;
}

// Host time per modelled kernel of a vLLM step run without a CUDA graph (Python dispatch, the custom ops'
// wrappers and metadata, the launches; the model counts ~12 kernels per dense layer): picked on the measured
// serving rows (validation/measured-serving.json) leaving each GPU type, and each model, out in turn; every
// held-out choice among 0-110 us was 60 us. It gives ~0.7 ms per dense layer, near the 0.8 ms per layer of vLLM
// prefill dispatch that AIConfigurator calibrates on the same corpus (ai-dynamo/aiconfigurator@095f58a
// vllm_backend.py _prefill_dispatch_overhead_ms): a corroboration, not an independent source.
constexpr double kVllmEagerKernelHostS = 60e-6;

// Host time per request per step of TensorRT-LLM's PyExecutor (the per-request input preparation, token
// bookkeeping and responses in Python; TensorRT-LLM PR #16313 finds this preparation on the critical path of
// decode at concurrency 256 for a 35B-A3B MoE). It caps a rank's output: the perf-overview tables
// (docs/source/performance/perf-overview.md @00f3768) measure Llama 3.1 8B FP8 at 128/128 at 28.3k tokens/s
// on H100 and 27.9k on H200, whose HBM differs by 1.4x: a ceiling of 36 us per request and step, where
// Qwen3-30B-A3B NVFP4 on B200 reaches 39.8k (25 us) and on GB200, with a Grace host, 31.3k at most. Picked on
// those tables leaving each model, and each GPU, out in turn: every held-out choice among 0-50 us was 35-45 us.
constexpr double kTrtllmRequestHostS = 40e-6;

} // namespace

std::string_view to_string(ServingEngine e)
{
    return kEngineNames[static_cast<int>(e)];
}

std::string_view to_string(MoeExchange e)
{
    return e == MoeExchange::gather ? "gather" : "all_to_all";
}

std::optional<MoeExchange> moe_exchange_from_string(std::string_view s)
{
    if (s == "all_to_all")
        return MoeExchange::all_to_all;
    if (s == "gather")
        return MoeExchange::gather;
    return std::nullopt;
}

std::optional<ServingEngine> serving_engine_from_string(std::string_view s)
{
    for (std::size_t i = 0; i < kEngineNames.size(); ++i)
        if (kEngineNames[i] == s)
            return static_cast<ServingEngine>(i);
    return std::nullopt;
}

EngineTraits engine_traits(ServingEngine e, const InstanceLayout& l, const GpuSpec& gpu, bool speculative)
{
    EngineTraits t;
    switch (e) {
    case ServingEngine::vllm:
        // vLLM EngineArgs: gpu_memory_utilization 0.9 of the whole GPU for everything the engine
        // allocates; V1 on GPUs of 70 GiB and more: max_num_seqs 1024, max_num_batched_tokens 8192 for
        // the OpenAI server (arg_utils.py _set_default_args); block_size 16.
        t.memory_rule = MemoryRule::total_fraction;
        t.memory_fraction = 0.9;
        t.max_running_requests = 1024;
        t.max_batched_tokens = 8192;
        t.kv_block_tokens = 16;
        // V1 scheduler: a request is admitted when its prompt's pages are free; decode pages are
        // allocated as tokens arrive, and when none is left the newest request is preempted and
        // recomputed later (KVCacheManager.allocate_slots), so the running requests hold, on average
        // over their phases, their prompt and half their output.
        t.admission_output_share = 0.5;
        t.step_host_s = 1.0e-3;
        // CompilationConfig: CUDA graphs are captured for steps of up to max_cudagraph_capture_size tokens,
        // min(2 x max_num_seqs, 512) (piecewise for mixed steps, full for pure decode); a larger step, which
        // every step carrying a prompt chunk of more than a few hundred tokens is, runs the compiled model
        // without a graph, and its kernels are launched from Python one by one.
        t.graph_max_tokens = 512;
        t.eager_kernel_host_s = kVllmEagerKernelHostS;
        break;
    case ServingEngine::sglang: {
        // SGLang: mem_fraction_static (weights + KV pool) and chunked_prefill_size from the GPU's memory
        // (sglang_memory above); page_size 1; running requests limited by the pool.
        const SglangMemory m = sglang_memory(l, gpu, speculative);
        t.memory_rule = MemoryRule::static_fraction;
        t.memory_fraction = m.mem_fraction_static;
        t.max_running_requests = 4096;
        // With DP attention the chunk is the instance's and each rank takes its share (server_args.py
        // _handle_data_parallelism: chunked_prefill_size // dp_size).
        t.max_batched_tokens = std::max(1LL, m.chunked_prefill_tokens / l.attention_dp);
        t.kv_block_tokens = 1;
        // Admission keeps new_token_ratio x the remaining output of every running request free; the
        // ratio starts at 0.7 and decays to 0.7 x 0.14 (global_config default_init_new_token_ratio,
        // default_min_new_token_ratio_factor), and a decode that runs out retracts requests. In steady
        // state: the prompt, half the output held and about a tenth of the other half reserved.
        t.admission_output_share = 0.5 + 0.5 * 0.7 * 0.14;
        t.step_host_s = 0.7e-3;
        // The overlap ("zero-overhead") scheduler, on unless disable_overlap_schedule: the CPU prepares
        // the next batch and handles the last one's results while the GPU runs (SGLang v0.4 release).
        t.output_delay_steps = 1;
        t.request_host_overlaps_gpu = true;
        // enable_mixed_chunk off by default (server_args.py): Scheduler.get_next_batch_to_run runs a prefill
        // batch of the waiting requests whenever there is one, and decodes only when there is none.
        t.mixes_prompts_with_decodes = false;
        break;
    }
    case ServingEngine::trtllm:
        // TensorRT-LLM LLM API: KvCacheConfig.free_gpu_memory_fraction 0.9 of what is free after the
        // weights and the activation buffers; max_batch_size 2048, max_num_tokens 8192; tokens_per_block 32;
        // the C++ executor keeps host overhead per step small.
        t.memory_rule = MemoryRule::free_fraction;
        t.memory_fraction = 0.9;
        t.max_running_requests = 2048;
        t.max_batched_tokens = 8192;
        t.kv_block_tokens = 32;
        // CapacitySchedulerPolicy GUARANTEED_NO_EVICT (the default): a request starts only when the
        // blocks for its prompt and its maximum output are free, so a started request never pauses.
        t.admission_output_share = 1.0;
        t.step_host_s = 0.3e-3;
        t.request_host_s = kTrtllmRequestHostS;
        // PyExecutor's overlap scheduler, on unless disable_overlap_scheduler: step n+1 is launched
        // before step n's stop criteria and responses are handled, "one extra decoding step"
        // (TensorRT-LLM docs, features/overlap-scheduler).
        t.output_delay_steps = 1;
        // With pipeline stages PyExecutor runs _executor_loop_pp instead of the overlap loop (py_executor.py:
        // `if self.dist.pp_size > 1: self.event_loop = self._executor_loop_pp`): each rank receives a
        // micro-batch's sampled tokens from the rank before it as a blocking host message, then updates its
        // requests, so the per-request work waits for the pipeline and is not hidden behind it.
        t.request_host_overlaps_gpu = l.pp == 1;
        // CutlassFusedMoE quantises an NVFP4 layer's input before the attention-DP all-gather (quantize_input with
        // post_quant_comm).
        t.gathers_nvfp4_inputs = true;
        // CutlassFusedMoE.select_alltoall_method_type: no all-to-all while moe_ep_size <= top_k.
        t.all_to_all_needs_ep_above_top_k = true;
        // moe_config.backend CUTLASS (the default) on B200, AIConfigurator's collection of TensorRT-LLM 1.2.0rc5
        // (systems/data/b200_sxm/trtllm/1.2.0rc5/moe_perf.parquet @095f58a, balanced routing, 4K-16K tokens): per
        // routed row the NVFP4 layer takes 13.4 ns at Qwen3-30B-A3B's experts (FP8 13.1), 21 ns at Qwen3-235B's
        // (FP8 21) and 46 ns at DeepSeek-V3's (FP8 30).
        t.nvfp4_moe_at_fp8_rate = true;
        break;
    }
    return t;
}

} // namespace parallax

#include "search/plan_explain.hpp"

#include "spec/units.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

namespace parallax {

namespace {

// Sources, named once.
constexpr const char* kNarayanan21 = "Narayanan et al. 2021, \"Efficient Large-Scale Language Model Training on GPU "
                                     "Clusters Using Megatron-LM\" (SC21)";
constexpr const char* kShoeybi19 = "Shoeybi et al. 2019, \"Megatron-LM\", Sec. 3";
constexpr const char* kKorthikanti22 = "Korthikanti et al. 2022, \"Reducing Activation Recomputation in Large "
                                       "Transformer Models\", Table 2";
constexpr const char* kZero = "Rajbhandari et al. 2020, \"ZeRO: Memory Optimizations Toward Training Trillion "
                              "Parameter Models\", Sec. 5";
constexpr const char* kNccl = "nccl-tests doc/PERFORMANCE.md (bus bandwidth factors)";

const std::array<Explanation, kDegreeCount> kDegrees = { {
    { "Tensor parallelism (tp)",
        "Splits every weight matrix of a layer across tp GPUs; each GPU computes a slice and the slices are "
        "combined with all-reduces (or all-gather + reduce-scatter with sequence parallelism) twice per layer "
        "in forward and twice in backward. Cuts weights and activations per GPU by tp but communicates on the "
        "critical path, so it belongs inside a node (NVLink).",
        "per layer: 4 collectives of b*s*h bytes over tp ranks; t_ring = 2(t-1)/t * S/B + 2(t-1)*alpha",
        std::string(kShoeybi19) + "; " + kNccl },
    { "Pipeline parallelism (pp)",
        "Cuts the layers into pp stages on different GPUs; micro-batches flow through them. Only activations "
        "at stage boundaries are sent (point-to-point), but stages wait for each other at the start and end of "
        "every step: the pipeline bubble.",
        "bubble fraction = (p-1)/(m+p-1) for 1F1B/GPipe; (p-1)/(v*m) relative for interleaved",
        std::string(kNarayanan21) + ", Sec. 2.2" },
    { "Data parallelism (dp)",
        "Replicates the (model-parallel) model dp times; each replica processes a slice of the global batch and "
        "the gradients are averaged with an all-reduce (or reduce-scatter + all-gather with ZeRO) that mostly "
        "overlaps the backward pass. Absorbs GPU-count changes by default.",
        "gradient all-reduce per step: 2(d-1)/d * 2*Psi/(t*p) bytes per GPU",
        std::string(kNarayanan21) + "; " + kNccl },
    { "Context parallelism (cp)",
        "Splits the sequence of every sample across cp GPUs; attention needs the keys and values of the whole "
        "sequence, exchanged in a ring (overlapping compute) or with all-to-all (Ulysses). Used for long "
        "sequences whose activations do not fit.",
        "ring: cp-1 steps sending K,V chunks of 2*b*s/cp*h_kv bytes; causal load balancing splits s into 2*cp chunks",
        "Liu et al. 2023 \"Ring Attention\"; Jacobs et al. 2023 \"DeepSpeed-Ulysses\"; Megatron-core CP" },
    { "Expert parallelism (ep)",
        "Spreads the experts of MoE layers over ep GPUs taken from the DP x CP ranks; tokens travel to their "
        "experts and back with two all-to-alls per MoE layer in forward and two in backward.",
        "per MoE layer: 2 all-to-alls of tokens*top_k*h bytes over ep ranks",
        "Lepikhin et al. 2021 \"GShard\"; Megatron-core MoE" },
    { "Virtual pipeline stages (vpp)",
        "Gives every pipeline rank vpp non-adjacent chunks of layers (interleaved 1F1B). The bubble shrinks by "
        "vpp, at the cost of vpp times more pipeline sends and more activations in flight.",
        "bubble = (p-1)*(t_f+t_b)/v; activations x (1 + (p-1)/(p*v))", std::string(kNarayanan21) + ", Sec. 2.2.2" },
    { "Micro-batch size",
        "Sequences processed together in one forward/backward pass. Larger micro-batches make GEMMs more "
        "efficient but hold more activations, and leave fewer micro-batches per step to hide the bubble.",
        "micro-batches per step m = global_batch / (micro_batch * dp)", std::string(kNarayanan21) + ", Sec. 3.2" },
} };

struct NamedExplanation {
    const char* key;
    Explanation e;
};

const std::vector<NamedExplanation>& toggles()
{
    static const std::vector<NamedExplanation> t = {
        { "sequence_parallel",
            { "Sequence parallelism",
                "With tensor parallelism, also splits the layer norms and dropout along the sequence, replacing each "
                "all-reduce by a reduce-scatter + all-gather of the same volume: activations outside the GEMMs are "
                "no longer replicated tp times.",
                "activations per layer: s*b*h*(10 + 24/t) -> s*b*h*34/t (with selective recompute)", kKorthikanti22 } },
        { "recompute",
            { "Activation recomputation",
                "Drops activations after the forward pass and recomputes them in backward. Selective recomputes only "
                "the attention core (cheap, large); full keeps only each layer's input and reruns the whole forward.",
                "full: 2*s*b*h bytes per layer kept, +1 forward of compute; HFU counts it, MFU does not",
                kKorthikanti22 } },
        { "zero",
            { "ZeRO stage / distributed optimizer",
                "Shards model state across the data-parallel ranks: 1 the optimizer states (Megatron's distributed "
                "optimizer), 2 also the gradients, 3 also the parameters (FSDP), which are gathered before use.",
                "bytes/param: ZeRO-0 2+2+12, ZeRO-1 2+2+12/d, ZeRO-2 2+14/d, ZeRO-3 16/d; ZeRO-3 moves 1.5x DP traffic",
                kZero } },
        { "schedule",
            { "Pipeline schedule",
                "The order of forward (F) and backward (B, W) passes on each stage: GPipe (all F then all B), 1F1B "
                "(caps in-flight activations at p), interleaved (virtual stages), ZB-H1 (defers weight gradients into "
                "the bubble), DualPipe (two pipelines in opposite directions).",
                "bubble: 1F1B (p-1)(F+B); ZB-H1 (p-1)(F+B-2W); DualPipe (p/2-1)(F&B+B-3W)",
                "Huang et al. 2019 GPipe; Narayanan et al. 2021; Qi et al. 2024 Zero Bubble; DeepSeek-V3 2024 "
                "DualPipe" } },
        { "offload_optimizer",
            { "Optimizer offload",
                "Keeps the fp32 optimizer states in CPU memory and runs the optimizer step there; frees GPU memory at "
                "the cost of PCIe transfers of gradients and updated weights every step, and of the CPU Adam step on "
                "sockets the node's GPUs share.",
                "offload time = (4 B fp32 grad + param bytes) / PCIe x16 rate + params x GPUs per socket x CPU-Adam "
                "s/param (+ per-micro-batch gradient round trips under accumulation)",
                "Ren et al. 2021 \"ZeRO-Offload\"" } },
        { "gradient_release",
            { "Gradient release",
                "Applies the optimizer to each parameter as soon as its gradient is complete in the backward and frees "
                "the gradient at once: no gradient buffer, but no accumulation over micro-batches (one micro-batch per "
                "step, no pipeline).",
                "gradient bytes per parameter: 0 instead of 2-4",
                "FlashOptim (Gonzalez Ortiz et al. 2025): 8-bit AdamW 7 -> 5 bytes per parameter" } },
        { "ep_overlap",
            { "EP communication overlap",
                "Runs one micro-batch's expert all-to-all (dispatch and combine) while another micro-batch computes, "
                "as DualPipe does inside its forward-backward pairs and Megatron's batch-level overlap does with "
                "interleaved 1F1B.",
                "exposed EP = max(0, all-to-all time - compute of the paired micro-batch)",
                "DeepSeek-V3 report Sec. 3.2.1; Megatron-core --overlap-moe-expert-parallel-comm" } },
        { "ep_tile_overlap",
            { "Fused EP overlap",
                "Splits each expert all-to-all into pieces by source rank and runs them inside the grouped GEMM that "
                "consumes (dispatch) or produces (combine) the tokens, the rank's own rows first, as Transformer "
                "Engine does for TP.",
                "exposed EP per all-to-all = max(0, all-to-all - (ep-1)/ep x grouped GEMM)",
                "Zhang et al. 2025 \"Comet\" (MLSys); ByteDance Flux moe_ag_scatter / moe_gather_rs" } },
        { "offload_activations",
            { "Activation offload",
                "Copies each layer's saved activations to host memory while the next layer computes, and back one "
                "layer ahead of its backward; the GPU keeps two layers' buffers instead of the activations of every "
                "micro-batch in flight.",
                "exposed per layer = max(0, bytes / host link - layer forward) + max(0, bytes / host link - layer "
                "backward)",
                "Megatron-Core --cpu-offloading; Transformer Engine get_cpu_offload_context" } },
        { "offload_params",
            { "Parameter offload",
                "Keeps the parameter shards, gradients and optimizer states in host memory (ZeRO 3): each layer's "
                "shard is fetched over the host link and all-gathered before its forward and its backward, one layer "
                "ahead; gradients go back to the host; CPU Adam runs the step.",
                "fetch per pass = local params x 2 B / host link; exposed = max(first layer, fetch - compute)",
                "Rajbhandari et al. 2021 \"ZeRO-Infinity\" (SC21)" } },
        { "precision",
            { "Matmul precision",
                "The number format of the GEMMs. fp8/fp4 double/quadruple the tensor-core peak but keep bf16 master "
                "weights and higher-precision accumulations, so memory per parameter changes less than the speed.",
                "peak FLOP/s from the GPU datasheet for the precision; MFU uses that dense peak",
                "Micikevicius et al. 2018 mixed precision; Micikevicius et al. 2022 FP8 formats; GPU datasheets" } },
        { "framework",
            { "Training framework",
                "Which kernels and pipeline engine run the maths: Megatron-LM/Transformer Engine (fused kernels), "
                "torchtitan eager or compiled, Megatron-DeepSpeed. Changes attention kernels, elementwise fusion and "
                "what selective recompute means.",
                "elementwise HBM traffic x framework factor; attention kernel efficiency per framework",
                "software_stack.hpp (measured torchtitan/Megatron runs in validation/)" } },
        { "optimizer",
            { "Optimizer",
                "Adam keeps two fp32 moments and an fp32 master copy per parameter (12 bytes); 8-bit Adam keeps "
                "8-bit moments; SGD with momentum and Lion keep one fp32 moment.",
                "optimizer bytes/param: Adam 12, Adam 8-bit 3, SGD 8, Lion 8",
                "memory_model.cpp; ZeRO paper Sec. 3.1 (k = 12)" } },
        { "cp_kind",
            { "Context-parallel exchange",
                "Ring attention passes K/V chunks around the CP ring, overlapping with attention compute; all-to-all "
                "(Ulysses) re-partitions heads instead of the sequence and needs cp to divide the heads per TP rank.",
                "ring: (cp-1) K,V transfers; all-to-all: 4 all-to-alls of b*s*h/cp per layer",
                "Liu et al. 2023; Jacobs et al. 2023" } },
        { "tp_comm_overlap",
            { "TP communication overlap",
                "Splits the TP collectives into chunks that overlap with the neighbouring GEMMs (Transformer Engine "
                "userbuffers, PyTorch async TP); hides most TP communication on NVLink.",
                "exposed TP time = max(0, comm - overlappable GEMM time)",
                "Wang et al. 2023 \"Overlap communication with dependent computation\"; TE userbuffers" } },
        { "overlap_grad_reduce",
            { "Overlap gradient reduction",
                "Starts the data-parallel reduction of each gradient bucket as soon as its backward is done, hiding "
                "it under the rest of the backward pass.",
                "exposed DP time = the last bucket's reduction (+ what does not fit under backward)",
                "Megatron-LM --overlap-grad-reduce; PyTorch DDP buckets (Li et al. 2020)" } },
        { "overlap_param_gather",
            { "Overlap parameter gather",
                "With the distributed optimizer or FSDP, prefetches the next layer's parameters while the current "
                "one computes.",
                "exposed gather = first unit's gather + max(0, gather - compute)",
                "Megatron-LM --overlap-param-gather; Zhao et al. 2023 \"PyTorch FSDP\"" } },
        { "flash_attention",
            { "Fused (flash) attention",
                "Computes attention in tiles without storing the s x s score matrices; they are recomputed in "
                "backward. Removes the 5*a*s/h term from the activations.",
                "activations per layer: s*b*h*(34 + 5*a*s/h) -> s*b*h*34", "Dao et al. 2022 \"FlashAttention\"" } },
    };
    return t;
}

const std::array<Explanation, kMetricCount> kMetrics = { {
    { "Step time",
        "Wall time of one optimizer step: all micro-batches through the pipeline, the exposed "
        "communication and the optimizer.",
        "step = m*(t_f+t_b) of the slowest stage + bubble + exposed DP/optimizer tail", kNarayanan21 },
    { "Tokens per second", "Training throughput of the whole cluster.", "tokens/s = global_batch * seq_len / step time",
        "definition" },
    { "TFLOP/s per GPU", "Model FLOPs per second per GPU as Megatron-LM reports them (no recompute counted).",
        "72*B*s*L*h^2*(1 + s/(6h) + V/(12*L*h)) / (step * GPUs)", std::string(kNarayanan21) + ", eq. 3" },
    { "MFU", "Model FLOPs utilisation: achieved model FLOP/s over the GPU's dense peak for the precision.",
        "MFU = TFLOP/s per GPU / peak TFLOP/s", "Chowdhery et al. 2022 \"PaLM\", Appendix B" },
    { "Pipeline bubble", "Share of the step the pipeline stages sit idle waiting for each other.",
        "(p-1)/(m+p-1) for 1F1B; divided by v when interleaved", std::string(kNarayanan21) + ", Sec. 2.2" },
    { "Power per GPU",
        "Average board power over a step: idle power plus the dynamic range weighted by how busy the "
        "GPU is (tensor cores ~90%, communication ~35%, bubbles near idle), capped at the power limit.",
        "P = P_idle + (TDP - P_idle)*(0.9*busy + 0.35*comm)",
        "Zeus (You et al. 2023) / Perseus measurements, estimate" },
    { "Energy per token", "GPU energy spent per trained token (board power only, no cooling or CPUs).",
        "E = P_avg * GPUs / (tokens/s)", "definition" },
    { "Peak memory per GPU",
        "Memory of the rank that fills up first (usually the first pipeline stage): weights, "
        "gradients, optimizer states, activations of the micro-batches in flight and buffers.",
        "weights + gradients + optimizer + in-flight activations + other", std::string(kKorthikanti22) + "; " + kZero },
    { "Weights", "Parameters held by this GPU, in the training precision (bf16 master copy splits with ZeRO-3).",
        "2 bytes * params / (t * p [* d with ZeRO-3])", kZero },
    { "Gradients", "Gradient buffers (fp32 main grads in Megatron), sharded over DP from ZeRO-2 on.",
        "4 bytes (fp32 main grads; 2 in Megatron-DeepSpeed) * params / (t*p) [/ d with ZeRO-2/3]",
        "Megatron-LM theoretical_memory_usage.py; ZeRO" },
    { "Optimizer states",
        "fp32 master weights and Adam moments, sharded over DP from ZeRO-1 on (distributed "
        "optimizer), or on the CPU with offload.",
        "12 bytes * params / (t*p) [/ d with ZeRO >= 1]", kZero },
    { "Activations",
        "Saved forward tensors of the micro-batches in flight on this stage (p for 1F1B on the first "
        "stage, more when interleaved).",
        "per layer s*b*h*(34 + 5*a*s/h) with SP/TP/recompute reductions x layers x in-flight", kKorthikanti22 },
    { "Other memory", "Communication buffers, workspaces, CUDA context and an allocator fragmentation reserve.",
        "fixed context + buffers + fragmentation share", "memory_model.cpp (named constants with sources)" },
    { "Compute", "Forward and backward GEMMs and elementwise work on the critical path, without recompute.",
        "per op: max(FLOPs / (peak*eff), bytes / HBM bw) (roofline)", "Williams et al. 2009 roofline" },
    { "Recompute", "Extra forward work recomputed in backward (selective: attention core; full: whole layer).",
        "selective: attention core forward; full: one more forward", kKorthikanti22 },
    { "Bubble", "Idle time of the critical stage while the pipeline fills and drains.",
        "(p-1)*(t_f+t_b) [/v interleaved]", kNarayanan21 },
    { "Exposed TP communication", "Tensor-parallel collectives that do not hide under compute.",
        "4 collectives per layer of b*s*h bytes", std::string(kShoeybi19) + "; " + kNccl },
    { "Exposed PP communication", "Pipeline sends and receives on the critical path.",
        "b*s*h/t bytes per boundary per micro-batch (scatter-gather)", kNarayanan21 },
    { "Exposed DP communication", "Gradient reduction / parameter gathers that do not overlap the backward pass.",
        "2(d-1)/d * gradient bytes / bw, minus overlap", kNccl },
    { "Exposed CP communication", "Context-parallel K/V exchange not hidden under attention.",
        "(cp-1) K,V chunk transfers per layer", "Liu et al. 2023 Ring Attention" },
    { "Exposed EP communication", "MoE dispatch/combine all-to-alls on the critical path.",
        "2 all-to-alls of tokens*top_k*h per MoE layer, forward and backward", "Lepikhin et al. 2021 GShard" },
    { "Optimizer step", "The optimizer update after the gradients are reduced.",
        "optimizer-state bytes read and written / HBM bandwidth", "roofline of the Adam update" },
    { "Offload",
        "PCIe transfers of gradients and parameters for a CPU-offloaded optimizer, and CPU Adam; under gradient "
        "accumulation also the per-micro-batch gradient round trips the backward does not hide.",
        "(4 B fp32 grad + param bytes) / PCIe bw + CPU Adam + (m-1) x max(0, 2 B grad / PCIe bw - backward)",
        "Ren et al. 2021 ZeRO-Offload; DeepSpeed stage_1_and_2.py" },
    { "Data stall",
        "Time the GPUs wait for the next batch: the loader (storage reads, tokenisation on its CPU workers, "
        "the copy to the GPU) could not prepare it while the previous step ran.",
        "stall = max(0, max(storage, tokenise, copy) - step); tokenise = tokens per loader / (rate x cores)",
        "PyTorch DataLoader (num_workers, prefetch_factor); Megatron-LM get_batch" },
    { "Host copies",
        "Offloaded activations (and ZeRO-Infinity's parameters) copied to host memory after a layer's forward and "
        "back ahead of its backward: what the host link moves beyond the next layer's compute.",
        "per offloaded layer: max(0, bytes / host link - next layer's forward) + max(0, bytes / host link - its "
        "backward)",
        "Megatron-Core --cpu-offloading (Transformer Engine get_cpu_offload_context); Rajbhandari et al. 2021 "
        "ZeRO-Infinity" },
} };

std::string fixed(double v, int digits)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

std::string signed_fixed(double v, int digits)
{
    return (v >= 0 ? "+" : "") + fixed(v, digits);
}

enum class Unit { seconds, bytes, watts, joules, fraction, rate, tflops };

Unit unit_of(Metric m)
{
    switch (m) {
    case Metric::tokens_per_s:
        return Unit::rate;
    case Metric::tflops_per_gpu:
        return Unit::tflops;
    case Metric::mfu:
    case Metric::bubble:
        return Unit::fraction;
    case Metric::power:
        return Unit::watts;
    case Metric::energy_per_token:
        return Unit::joules;
    case Metric::peak_memory:
    case Metric::memory_weights:
    case Metric::memory_gradients:
    case Metric::memory_optimizer:
    case Metric::memory_activations:
    case Metric::memory_other:
        return Unit::bytes;
    default:
        return Unit::seconds;
    }
}

std::string format_value(Unit u, double v)
{
    switch (u) {
    case Unit::seconds:
        return std::abs(v) < 1 ? fixed(v * 1e3, 1) + " ms" : fixed(v, 2) + " s";
    case Unit::bytes:
        return fixed(v / units::kGiB, 1) + " GiB";
    case Unit::watts:
        return fixed(v, 0) + " W";
    case Unit::joules:
        return fixed(v, 3) + " J";
    case Unit::fraction:
        return fixed(v * 100, 1) + "%";
    case Unit::rate:
        return fixed(v, 0);
    case Unit::tflops:
        return fixed(v, 1);
    }
    return fixed(v, 3);
}

std::string format_delta(Unit u, double d)
{
    switch (u) {
    case Unit::seconds:
        return std::abs(d) < 1 ? signed_fixed(d * 1e3, 1) + " ms" : signed_fixed(d, 2) + " s";
    case Unit::bytes:
        return signed_fixed(d / units::kGiB, 1) + " GiB";
    default:
        return signed_fixed(d, 2);
    }
}

struct Part {
    const char* name;
    double before;
    double after;
};

// The parts that changed most, largest first, each at least `floor` in size.
std::string top_parts(std::vector<Part> parts, Unit u, double floor)
{
    std::sort(parts.begin(), parts.end(),
        [](const Part& a, const Part& b) { return std::abs(a.after - a.before) > std::abs(b.after - b.before); });
    std::string out;
    int shown = 0;
    for (const Part& p : parts) {
        const double d = p.after - p.before;
        if (std::abs(d) < floor || shown == 3)
            break;
        out += (shown ? ", " : "") + std::string(p.name) + " " + format_delta(u, d);
        ++shown;
    }
    return out;
}

std::vector<Part> time_parts(const Prediction& a, const Prediction& b)
{
    std::vector<Part> parts;
    parts.reserve(kTimeBreakdownParts.size());
    for (const TimePartField& f : kTimeBreakdownParts)
        parts.push_back({ f.name, a.time.*f.seconds, b.time.*f.seconds });
    return parts;
}

std::vector<Part> memory_parts(const Prediction& a, const Prediction& b)
{
    return {
        { "weights", a.memory.weights, b.memory.weights },
        { "gradients", a.memory.gradients, b.memory.gradients },
        { "optimizer states", a.memory.optimizer, b.memory.optimizer },
        { "activations", a.memory.activations, b.memory.activations },
        { "other", a.memory.other, b.memory.other },
    };
}

} // namespace

const Explanation& explain_degree(Degree d)
{
    return kDegrees[static_cast<int>(d)];
}

const Explanation* explain_toggle(std::string_view key)
{
    for (const NamedExplanation& t : toggles())
        if (key == t.key)
            return &t.e;
    return nullptr;
}

std::vector<std::string> toggle_keys()
{
    std::vector<std::string> keys;
    for (const NamedExplanation& t : toggles())
        keys.emplace_back(t.key);
    return keys;
}

const Explanation& explain_metric(Metric m)
{
    return kMetrics[static_cast<int>(m)];
}

std::optional<std::pair<double, double>> metric_interval(const Prediction& p, Metric m)
{
    const PredictionInterval& i = p.interval;
    if (m == Metric::peak_memory) {
        if (i.memory_level <= 0)
            return std::nullopt;
        return std::pair { i.peak_memory_bytes_low, i.peak_memory_bytes_high };
    }
    if (i.level <= 0 || !(p.tokens_per_s > 0))
        return std::nullopt;
    // TFLOP/s and MFU are model FLOPs per token times the throughput: the same factors.
    const double low = i.tokens_per_s_low / p.tokens_per_s;
    const double high = i.tokens_per_s_high / p.tokens_per_s;
    switch (m) {
    case Metric::step_time:
        return std::pair { i.step_time_s_low, i.step_time_s_high };
    case Metric::tokens_per_s:
        return std::pair { i.tokens_per_s_low, i.tokens_per_s_high };
    case Metric::tflops_per_gpu:
    case Metric::mfu:
        return std::pair { metric_value(p, m) * low, metric_value(p, m) * high };
    default:
        return std::nullopt;
    }
}

double metric_value(const Prediction& p, Metric m)
{
    switch (m) {
    case Metric::step_time:
        return p.step_time_s;
    case Metric::tokens_per_s:
        return p.tokens_per_s;
    case Metric::tflops_per_gpu:
        return p.tflops_per_gpu;
    case Metric::mfu:
        return p.mfu;
    case Metric::bubble:
        return p.bubble_fraction;
    case Metric::power:
        return p.power.avg_W_per_gpu;
    case Metric::energy_per_token:
        return p.power.energy_J_per_token;
    case Metric::peak_memory:
        return p.peak_memory_bytes;
    case Metric::memory_weights:
        return p.memory.weights;
    case Metric::memory_gradients:
        return p.memory.gradients;
    case Metric::memory_optimizer:
        return p.memory.optimizer;
    case Metric::memory_activations:
        return p.memory.activations;
    case Metric::memory_other:
        return p.memory.other;
    case Metric::time_compute:
        return p.time.compute_s;
    case Metric::time_recompute:
        return p.time.recompute_s;
    case Metric::time_bubble:
        return p.time.bubble_s;
    case Metric::time_tp:
        return p.time.exposed_tp_s;
    case Metric::time_pp:
        return p.time.exposed_pp_s;
    case Metric::time_dp:
        return p.time.exposed_dp_s;
    case Metric::time_cp:
        return p.time.exposed_cp_s;
    case Metric::time_ep:
        return p.time.exposed_ep_s;
    case Metric::time_optimizer:
        return p.time.optimizer_s;
    case Metric::time_offload:
        return p.time.offload_s;
    case Metric::time_data_stall:
        return p.time.data_stall_s;
    case Metric::time_host_copy:
        return p.time.host_copy_s;
    }
    return 0;
}

bool metric_higher_is_better(Metric m)
{
    return m == Metric::tokens_per_s || m == Metric::tflops_per_gpu || m == Metric::mfu;
}

std::string describe_strategy_change(const Strategy& a, const Strategy& b)
{
    std::string out;
    auto add = [&out](std::string_view name, const std::string& from, const std::string& to) {
        if (from == to)
            return;
        out += (out.empty() ? "" : ", ") + std::string(name) + " " + from + " -> " + to;
    };
    for (Degree d : kAllDegrees)
        add(to_string(d), std::to_string(degree_value(a, d)), std::to_string(degree_value(b, d)));
    add("sequence_parallel", a.sequence_parallel ? "on" : "off", b.sequence_parallel ? "on" : "off");
    add("recompute", std::string(to_string(a.recompute)), std::string(to_string(b.recompute)));
    add("zero", std::to_string(a.zero), std::to_string(b.zero));
    add("schedule", std::string(to_string(a.schedule)), std::string(to_string(b.schedule)));
    add("optimizer", std::string(to_string(a.optimizer)), std::string(to_string(b.optimizer)));
    add("offload_optimizer", a.offload_optimizer ? "on" : "off", b.offload_optimizer ? "on" : "off");
    add("offload_activations", a.offload_activations ? "on" : "off", b.offload_activations ? "on" : "off");
    add("offload_params", a.offload_params ? "on" : "off", b.offload_params ? "on" : "off");
    add("ep_tile_overlap", a.ep_tile_overlap ? "on" : "off", b.ep_tile_overlap ? "on" : "off");
    add("cp_kind", std::string(to_string(a.cp_kind)), std::string(to_string(b.cp_kind)));
    add("tp_comm_overlap", a.tp_comm_overlap ? "on" : "off", b.tp_comm_overlap ? "on" : "off");
    add("rank_order", to_string(a.rank_order), to_string(b.rank_order));
    return out;
}

std::string why_moved(Metric m, const Prediction& before, const Prediction& after)
{
    const double a = metric_value(before, m);
    const double b = metric_value(after, m);
    const double scale = std::max(std::abs(a), std::abs(b));
    if (scale <= 0 || std::abs(b - a) <= 1e-3 * scale)
        return {};
    const Unit u = unit_of(m);
    std::string out = explain_metric(m).title + " " + format_value(u, a) + " -> " + format_value(u, b);
    if (a != 0)
        out += " (" + signed_fixed((b - a) / std::abs(a) * 100, 1) + "%)";
    std::string parts;
    switch (m) {
    case Metric::peak_memory:
    case Metric::memory_weights:
    case Metric::memory_gradients:
    case Metric::memory_optimizer:
    case Metric::memory_activations:
    case Metric::memory_other:
        if (before.peak_memory_stage != after.peak_memory_stage)
            parts = "the fullest rank is now on stage " + std::to_string(after.peak_memory_stage) + "; ";
        parts += top_parts(memory_parts(before, after), Unit::bytes, 0.01 * units::kGiB);
        break;
    case Metric::power:
    case Metric::energy_per_token: {
        // Busy share drives the power; time per token drives energy.
        const double busy_a
            = before.step_time_s > 0 ? (before.time.compute_s + before.time.recompute_s) / before.step_time_s : 0;
        const double busy_b
            = after.step_time_s > 0 ? (after.time.compute_s + after.time.recompute_s) / after.step_time_s : 0;
        parts = "busy share " + fixed(busy_a * 100, 0) + "% -> " + fixed(busy_b * 100, 0) + "%";
        if (m == Metric::energy_per_token)
            parts += ", tokens/s "
                + signed_fixed(
                    (after.tokens_per_s - before.tokens_per_s) / std::max(1e-12, before.tokens_per_s) * 100, 1)
                + "%";
        break;
    }
    default:
        parts = top_parts(
            time_parts(before, after), Unit::seconds, 0.005 * std::max(before.step_time_s, after.step_time_s));
        break;
    }
    if (!parts.empty())
        out += ": " + parts;
    return out + ".";
}

} // namespace parallax

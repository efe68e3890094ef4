#include "spec/software_release.hpp"

#include <array>

namespace parallax {

namespace {

constexpr double kFp16MaskBytes = 2; // one fp16 element per (query, key) position pair
// Host time per eager op of DeepSpeed 0.3's stack (PyTorch 1.x): AMP's own per-layer profile of GPT-2 under
// it (DachengLi1/AMP known_cost/gpt2_{P3,G4}_{1,2,4}.npy, forward + backward at micro-batch 1) takes 4.5 ms
// per layer at TP 4 on p3.8xlarge and 5.6 ms on g4dn.12xlarge, where the GPU work is ~1 ms and TP 2 is no
// faster than TP 4: the host's floor over the layer's ~85 ops, 53-66 us each.
constexpr double kDeepSpeed03HostOpSeconds = 60e-6;

// NeMo containers (Megatron-core + Transformer Engine), the releases NVIDIA's performance tables
// were measured on, then DeepSpeed's releases. Oldest first within a framework.
constexpr std::array kReleases = {
    SoftwareRelease { "nemo-24.03", Framework::megatron, 2024, 3, AttentionKernel::flash2, false,
        "Transformer Engine runs fused attention through Tri Dao's FlashAttention-2 by default (NeMo docs, "
        "memory_optimizations.rst, before NVIDIA/NeMo PR #9188 of May 2024)" },
    SoftwareRelease { "nemo-24.07", Framework::megatron, 2024, 7, AttentionKernel::best, false,
        "Transformer Engine prefers cuDNN's fused flash attention on Hopper and newer when both apply "
        "(NeMo docs, memory_optimizations.rst, after NVIDIA/NeMo PR #9188)" },
    SoftwareRelease { "nemo-25.04", Framework::megatron, 2025, 4, AttentionKernel::best, false,
        "no change to a kernel the model costs" },
    SoftwareRelease { "nemo-25.09", Framework::megatron, 2025, 9, AttentionKernel::best, false,
        "no change to a kernel the model costs" },
    // The first container with GPT-OSS in NVIDIA's tables: unfused attention's fp32 score matrices
    // (64 heads x 4096^2 per sequence) would not fit at the published micro-batch of 4.
    SoftwareRelease { "nemo-25.11", Framework::megatron, 2025, 11, AttentionKernel::best, true,
        "learned softmax sinks run inside cuDNN's fused attention (Transformer Engine 2.8, "
        "NVIDIA/TransformerEngine PR #2148); before, Megatron-core's unfused attention" },
    SoftwareRelease { "nemo-26.02", Framework::megatron, 2026, 2, AttentionKernel::best, true,
        "no change to a kernel the model costs" },
    // A patch container counts as the month after its base (read_release): 26.02.01 shipped with
    // Megatron-Bridge v0.3.1 (2026-03-20).
    SoftwareRelease { "nemo-26.02.01", Framework::megatron, 2026, 3, AttentionKernel::best, true,
        "the fp8 quantisation kernels of the grouped expert GEMMs issued from Transformer Engine's C++ "
        "rather than per expert from Python (NVIDIA/TransformerEngine PR #2360, issues #2453 and #2456); "
        "dated by the published MoE rows: from this container on they run at that host cost",
        true, 0, 0, true },
    // DeepSpeed's pipeline engine under Megatron-DeepSpeed. Before 0.5.4 it partitioned the stage output
    // across the TP ranks but sent every rank the whole activation gradient (is_grad_partitioned =
    // False), and GPT2ModelPipe passed its [1, 1, s, s] attention mask down the pipeline with every
    // output, cast to fp16 because NCCL would not send bool tensors (deepspeed/runtime/pipe/engine.py,
    // _exec_send_activations, v0.3.x).
    SoftwareRelease { "deepspeed-0.3", Framework::megatron_deepspeed, 2020, 9, AttentionKernel::best, true,
        "the first release with the pipeline engine", false, kFp16MaskBytes, kDeepSpeed03HostOpSeconds },
    SoftwareRelease { "deepspeed-0.5.4", Framework::megatron_deepspeed, 2021, 10, AttentionKernel::best, true,
        "activation gradients partitioned across TP ranks like the activations, and no mask sent between "
        "stages (microsoft/DeepSpeed PR #1407, the BigScience changes)" },
};

int months(int year, int month)
{
    return year * 12 + month;
}

} // namespace

std::span<const SoftwareRelease> software_releases()
{
    return kReleases;
}

const SoftwareRelease* find_software_release(std::string_view id)
{
    for (const SoftwareRelease& r : kReleases)
        if (r.id == id)
            return &r;
    return nullptr;
}

const SoftwareRelease* newest_software_release(Framework f)
{
    const SoftwareRelease* newest = nullptr;
    for (const SoftwareRelease& r : kReleases)
        if (r.framework == f)
            newest = &r;
    return newest;
}

const SoftwareRelease* software_release_at(Framework f, int year, int month)
{
    const SoftwareRelease* found = nullptr;
    for (const SoftwareRelease& r : kReleases) {
        if (r.framework != f)
            continue;
        if (found && months(r.year, r.month) > months(year, month))
            break;
        found = &r;
    }
    return found;
}

std::string software_release_ids(Framework f)
{
    std::string ids;
    for (const SoftwareRelease& r : kReleases)
        if (r.framework == f)
            ids += (ids.empty() ? "" : ", ") + std::string(r.id);
    return ids;
}

SoftwareTraits software_traits(Framework f, const SoftwareRelease* release)
{
    SoftwareTraits t = software_traits(f);
    if (!release)
        release = newest_software_release(f);
    if (release && release->framework == f) {
        t.attention = release->attention;
        t.fused_attention_sinks = release->fused_attention_sinks;
        t.p2p_grad_scatter_gather = release->p2p_grad_scatter_gather;
        t.p2p_mask_bytes_per_position_pair = release->p2p_mask_bytes_per_position_pair;
        if (release->layer_host_op_s > 0 && t.layer_host_op_s > 0)
            t.layer_host_op_s = release->layer_host_op_s;
        t.expert_quantise_in_cpp = release->expert_quantise_in_cpp;
    }
    return t;
}

} // namespace parallax

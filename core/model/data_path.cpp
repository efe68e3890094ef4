#include "model/data_path.hpp"

#include <algorithm>
#include <cmath>

namespace parallax {

namespace {

// Hugging Face tokenizers (README): "less than 20 seconds to tokenize a GB of text on a server's CPU",
// ~50 MB/s; over a ~48-core server at ~4 bytes of English text per BPE token, ~2.5e5 tokens/s per core
// (estimate; DataPipelineSpec's default).
constexpr double kTextBytesPerToken = 4.0;
// DGX H100: two 56-core Xeon Platinum 8480C for 8 GPUs (NVIDIA DGX H100 datasheet).
constexpr int kCpuCoresPerGpu = 14;
// Megatron's get_batch copies tokens, labels and position ids (int64) and the loss mask (fp32) per token.
constexpr double kDeviceBatchBytesPerToken = 8 + 8 + 8 + 4;
// Pinned host-to-device copies: PCIe gen 4 x16 (A100 and older) 32 GB/s, gen 5 (H100 on) 64 GB/s, ~80%
// achieved (PCI-SIG link rates; estimate).
constexpr double kPcieGen4Bps = 32e9;
constexpr double kPcieGen5Bps = 64e9;
constexpr double kPcieCopyEfficiency = 0.8;
// Megatron's indexed dataset stores ids as uint16 when the vocabulary fits (< 65,500 ids), else int32.
constexpr long long kUint16VocabLimit = 65500;

double host_link_Bps(GpuArchitecture arch) noexcept
{
    const bool gen4
        = arch == GpuArchitecture::volta || arch == GpuArchitecture::ampere || arch == GpuArchitecture::cdna2;
    return (gen4 ? kPcieGen4Bps : kPcieGen5Bps) * kPcieCopyEfficiency;
}

double storage_bytes_per_token(const PlanContext& ctx) noexcept
{
    const DataPipelineSpec& d = ctx.training.data;
    if (d.bytes_per_token)
        return *d.bytes_per_token;
    if (!d.pretokenized)
        return kTextBytesPerToken;
    return ctx.model.vocab < kUint16VocabLimit ? 2.0 : 4.0;
}

} // namespace

const char* to_string(DataPathLimit l)
{
    switch (l) {
    case DataPathLimit::none:
        return "none";
    case DataPathLimit::storage:
        return "storage";
    case DataPathLimit::tokenization:
        return "tokenization";
    case DataPathLimit::host_copy:
        return "host copy";
    }
    return "none";
}

DataPathCost data_path_cost(const PlanContext& ctx, const Strategy& s, double step_s, double offload_s) noexcept
{
    const DataPipelineSpec& d = ctx.training.data;
    DataPathCost c;
    // Megatron: TP rank 0 of the first and the last pipeline stage loads (tokens there, labels here) and
    // broadcasts to its TP group; every CP rank loads the whole sequences and keeps its slice.
    const int ends = s.pp > 1 ? 2 : 1;
    c.loading_ranks = s.dp * s.cp * ends;
    const double nodes = std::max(1, ctx.cluster.nodes);
    const double loaders_per_node = std::max(1.0, c.loading_ranks / nodes);
    c.tokens_per_loader
        = static_cast<double>(ctx.training.global_batch) / s.dp * static_cast<double>(ctx.training.seq_len);

    c.storage_s
        = loaders_per_node * c.tokens_per_loader * storage_bytes_per_token(ctx) / (d.storage_read_GBps_per_node * 1e9);
    c.host_copy_s = c.tokens_per_loader * kDeviceBatchBytesPerToken / host_link_Bps(ctx.cluster.gpu.architecture);

    // The ranks' own processes keep one core per GPU; CPU Adam (offloaded optimizer) holds the rest while
    // it runs.
    const int cores = d.cpu_cores_per_node.value_or(kCpuCoresPerGpu * ctx.cluster.gpus_per_node);
    const double free_cores = std::max(1.0, static_cast<double>(cores - ctx.cluster.gpus_per_node));
    const double free_fraction = step_s > 0 ? std::clamp(1.0 - offload_s / step_s, 0.05, 1.0) : 1.0;
    const double cores_per_loader
        = d.workers > 0 ? std::min<double>(d.workers, free_cores / loaders_per_node) * free_fraction : 1.0;
    const double rate = d.tokenize_tokens_per_s_per_core;
    c.tokenize_s = d.pretokenized ? 0.0 : c.tokens_per_loader / (rate * cores_per_loader);

    if (d.workers == 0) {
        // Loading in the training process: nothing overlaps the GPUs' work.
        c.loader_s = c.storage_s + c.tokenize_s + c.host_copy_s;
        c.stall_s = c.loader_s;
    } else {
        c.loader_s = std::max({ c.storage_s, c.tokenize_s, c.host_copy_s });
        c.stall_s = std::max(0.0, c.loader_s - step_s);
    }
    const double step_total = step_s + c.stall_s;
    c.cores_per_node_used = d.pretokenized || step_total <= 0
        ? 0.0
        : std::min(free_cores, loaders_per_node * c.tokens_per_loader / rate / step_total);
    if (c.stall_s > 0) {
        if (c.loader_s == c.storage_s && c.storage_s >= c.tokenize_s)
            c.limit = DataPathLimit::storage;
        else if (c.tokenize_s >= c.host_copy_s)
            c.limit = DataPathLimit::tokenization;
        else
            c.limit = DataPathLimit::host_copy;
    }
    // Workers per loader that tokenise a step's tokens within the step, if the node's cores allow it and
    // nothing else is slower.
    if (!d.pretokenized && step_s > 0 && c.storage_s <= step_s && c.host_copy_s <= step_s) {
        const int needed = static_cast<int>(std::ceil(c.tokens_per_loader / (rate * step_s * free_fraction)));
        if (needed <= free_cores / loaders_per_node)
            c.workers_to_hide = std::max(1, needed);
    }
    return c;
}

} // namespace parallax

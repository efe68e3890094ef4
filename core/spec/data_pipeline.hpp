#pragma once
// The input side of a training step (scenario key training.data): where tokens come from and the
// loader that prepares them on the host. The defaults describe the common pre-tokenised setup
// (Megatron's indexed datasets read through memory maps), which never stalls a step.
#include <optional>

namespace parallax {

struct DataPipelineSpec {
    // Token ids on disk (Megatron .bin/.idx, torchtitan's pre-tokenised shards): no CPU work per token
    // beyond a copy. false: raw text tokenised by the loader's workers as the step runs.
    bool pretokenized = true;
    // Bytes read from storage per token. Unset: the token-id width when pre-tokenised (2 bytes for
    // vocabularies up to 65,535, else 4: Megatron's indexed dataset dtype), 4 bytes of text otherwise.
    std::optional<double> bytes_per_token;
    // Read bandwidth of the dataset's storage per node (a parallel file system client or local NVMe).
    double storage_read_GBps_per_node = 2.0;
    // Tokeniser throughput per CPU core (data_path.cpp for the default's source).
    double tokenize_tokens_per_s_per_core = 2.5e5;
    // Loader worker processes per data-loading rank (PyTorch DataLoader num_workers; Megatron-LM's
    // --num-workers defaults to 2). 0: the training process loads in line, nothing overlaps.
    int workers = 2;
    // Batches each worker prepares ahead (PyTorch DataLoader prefetch_factor, default 2).
    int prefetch_batches = 2;
    // CPU cores per node. Unset: 14 per GPU (DGX H100: two 56-core Xeon 8480C for 8 GPUs).
    std::optional<int> cpu_cores_per_node;

    bool operator==(const DataPipelineSpec&) const = default;
};

} // namespace parallax

#pragma once
// The data path of a step: storage reads, tokenisation on the loader's CPU workers and the copy to
// the GPU, run by each data-loading rank while the GPUs compute the previous step. What it cannot
// finish in a step's time stalls the step. Plain arithmetic, no allocation (search hot path).
#include "model/plan_context.hpp"
#include "spec/strategy.hpp"

namespace parallax {

enum class DataPathLimit : unsigned char { none, storage, tokenization, host_copy };
const char* to_string(DataPathLimit l);

struct DataPathCost {
    int loading_ranks = 0; // ranks that run a loader (Megatron: TP rank 0 of the first and last stage)
    double tokens_per_loader = 0; // per step
    double storage_s = 0; // reading one step's tokens on a node (its loaders together)
    double tokenize_s = 0; // tokenising one loader's tokens on its workers' cores
    double host_copy_s = 0; // pinned host-to-device copy of one loader's batch (ids, labels, mask, positions)
    double loader_s = 0; // the busiest stage of the loader pipeline: its time per step
    double stall_s = 0; // added to the step
    double cores_per_node_used = 0; // the loaders' busy cores, averaged over the step
    int workers_to_hide = 0; // workers per loader that would leave no stall (0 when none does)
    DataPathLimit limit = DataPathLimit::none;
};

// `step_s`: the step without the data path (what the loader has to keep up with); `offload_s`: the
// part of it in which CPU Adam holds the host's cores (offloaded optimizer).
DataPathCost data_path_cost(const PlanContext& ctx, const Strategy& s, double step_s, double offload_s) noexcept;

} // namespace parallax

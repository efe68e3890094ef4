#pragma once
// The explicit pipeline of a heterogeneous plan (strategy.stages): stages in order, each with its
// consecutive layers and the data-parallel replicas that hold them, every replica on its own node
// group with its own tensor-parallel degree.
#include <string>
#include <vector>

namespace parallax {

struct StageReplica {
    std::string group; // a cluster.groups name
    int tp = 1; // GPUs of the group this replica uses
    bool operator==(const StageReplica&) const = default;
};

// How a stage's micro-batches are shared by its replicas (strategy.batch_split): in proportion to each
// replica's speed, as heterogeneity-aware planners do (Metis, Sailor), or the same count for every
// replica, as stock Megatron-LM and DeepSpeed do (every data-parallel rank gets batch / dp).
enum class BatchSplit : unsigned char { by_speed, even };

struct PipelineStageSpec {
    int layers = 0;
    std::vector<StageReplica> replicas;
    bool operator==(const PipelineStageSpec&) const = default;
};

} // namespace parallax

#pragma once
// Where a parallel group's ranks land on the cluster, given the rank order. Megatron lays the
// dimensions onto consecutive ranks innermost first (default tp-cp-ep-dp-pp), and a node holds
// gpus_per_node consecutive ranks.
#include "spec/strategy.hpp"

#include <initializer_list>

namespace parallax {

struct GroupPlacement {
    long long size = 1;
    long long per_node = 1; // ranks of the group inside one node
    long long nodes = 1; // nodes the group spans
    bool same_rail = true; // one rank per node, all with the same local index (rail-optimised fabrics)
};

// Sizes of the dimensions in layout terms. Dense layers: (tp, cp, 1, dp, pp). Expert layers reuse the
// data- and context-parallel ranks: (expert_tp, 1, ep, tp*cp*dp/(expert_tp*ep), pp) — Megatron-core's
// expert rank generator.
struct LayoutSizes {
    long long size[kParallelDimCount] = { 1, 1, 1, 1, 1 }; // indexed by ParallelDim
    static LayoutSizes dense(const Strategy& s);
    static LayoutSizes expert(const Strategy& s);
};

// The group spanned by `dims` (e.g. {dp, cp} for the gradient reduction) that contains rank 0.
// Allocation-free; cost bounded by gpus_per_node.
GroupPlacement place_group(const RankOrder& order, const LayoutSizes& sizes, std::initializer_list<ParallelDim> dims,
    long long gpus_per_node) noexcept;

// Whether the pipeline neighbours of a stage sit in the same node.
bool pp_neighbours_share_node(const RankOrder& order, const LayoutSizes& sizes, long long gpus_per_node) noexcept;

} // namespace parallax

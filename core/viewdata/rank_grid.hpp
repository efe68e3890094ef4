#pragma once
// Which parallel group every GPU of the cluster belongs to, for the planner's cluster grid, and the
// degree a dragged group boundary asks for. Ranks are laid out as Megatron does (rank_order,
// innermost first; see topology.hpp); a node holds gpus_per_node consecutive ranks.
//
// What the grid draws for a dimension D, with stride(D) = product of the sizes inside D:
// - D outermost in the rank order (pp by default): "bands" of consecutive ranks with the same D
//   coordinate (the pipeline stages), each stride(D) ranks long. Moving a band boundary to rank
//   position p (the k-th boundary) asks for degree = total / (p / k).
// - any other D: "tiles" of stride(D) * size(D) ranks, inside which the stride(D) groups of D
//   interleave; for the innermost dimension (tp) a tile is exactly one group. Moving the k-th tile
//   boundary to p asks for degree = (p / k) / stride(D).
#include "spec/strategy.hpp"

#include <array>

namespace parallax {

class RankGrid {
public:
    // `expert_layout`: the layout of the expert layers (for colouring by EP group).
    RankGrid(const Strategy& s, long long gpus_per_node, bool expert_layout = false);

    long long ranks() const { return m_ranks; }
    long long gpus_per_node() const { return m_gpus_per_node; }
    // Sizes in layout terms: expert layers lay (expert_tp, 1, ep, rest, pp) onto the same ranks.
    long long size(ParallelDim d) const { return m_size[static_cast<int>(d)]; }
    long long stride(ParallelDim d) const { return m_stride[static_cast<int>(d)]; }
    long long coordinate(long long rank, ParallelDim d) const;
    // Ranks that differ only in their D coordinate share a group id (0 .. ranks/size-1).
    long long group_id(long long rank, ParallelDim d) const;

    bool is_band(ParallelDim d) const; // D is the outermost dimension of the rank order
    // What is coloured: the D coordinate for bands, the group id for tiles.
    long long colour_index(long long rank, ParallelDim d) const;
    // Ranks between two drawn boundaries (band or tile length).
    long long segment(ParallelDim d) const;
    // The degree that a boundary dragged from its k-th position (k >= 1) to rank position p asks
    // for. Real-valued: the caller snaps it to a valid value.
    double degree_for_boundary(ParallelDim d, long long k, double p) const;

private:
    long long m_ranks = 1;
    long long m_gpus_per_node = 1;
    std::array<long long, kParallelDimCount> m_size {};
    std::array<long long, kParallelDimCount> m_stride {};
    std::array<int, kParallelDimCount> m_position {}; // index in the rank order, innermost = 0
};

} // namespace parallax

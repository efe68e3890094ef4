#include "model/topology.hpp"

#include <algorithm>
#include <utility>

namespace parallax {

LayoutSizes LayoutSizes::dense(const Strategy& s)
{
    LayoutSizes l;
    l.size[static_cast<int>(ParallelDim::tp)] = s.tp;
    l.size[static_cast<int>(ParallelDim::cp)] = s.cp;
    l.size[static_cast<int>(ParallelDim::ep)] = 1;
    l.size[static_cast<int>(ParallelDim::dp)] = s.dp;
    l.size[static_cast<int>(ParallelDim::pp)] = s.pp;
    return l;
}

LayoutSizes LayoutSizes::expert(const Strategy& s)
{
    LayoutSizes l;
    const long long etp = s.effective_expert_tp();
    const long long inner = static_cast<long long>(s.tp) * s.cp * s.dp;
    l.size[static_cast<int>(ParallelDim::tp)] = etp;
    l.size[static_cast<int>(ParallelDim::cp)] = 1;
    l.size[static_cast<int>(ParallelDim::ep)] = s.ep;
    l.size[static_cast<int>(ParallelDim::dp)] = std::max<long long>(1, inner / std::max<long long>(1, etp * s.ep));
    l.size[static_cast<int>(ParallelDim::pp)] = s.pp;
    return l;
}

namespace {

struct DimStride {
    long long size;
    long long stride;
};

// Counts the members of the group below `limit` (the first node), enumerating the mixed-radix
// offsets from the outermost dimension with pruning.
long long count_below(const DimStride* dims, int count, long long base, long long limit)
{
    if (base >= limit)
        return 0;
    if (count == 0)
        return 1;
    const DimStride& d = dims[0];
    long long total = 0;
    for (long long i = 0; i < d.size; ++i) {
        const long long offset = base + i * d.stride;
        if (offset >= limit)
            break;
        total += count_below(dims + 1, count - 1, offset, limit);
    }
    return total;
}

} // namespace

GroupPlacement place_group(const RankOrder& order, const LayoutSizes& sizes, std::initializer_list<ParallelDim> dims,
    long long gpus_per_node) noexcept
{
    long long stride_of[kParallelDimCount] = {};
    long long stride = 1;
    for (ParallelDim d : order.dims) {
        stride_of[static_cast<int>(d)] = stride;
        stride *= sizes.size[static_cast<int>(d)];
    }
    DimStride group[kParallelDimCount];
    int n = 0;
    long long size = 1;
    bool rail_aligned = true;
    for (ParallelDim d : dims) {
        const long long sz = sizes.size[static_cast<int>(d)];
        if (sz <= 1)
            continue;
        group[n++] = { sz, stride_of[static_cast<int>(d)] };
        size *= sz;
        rail_aligned = rail_aligned && stride_of[static_cast<int>(d)] % gpus_per_node == 0;
    }
    // Outermost (largest stride) first so pruning cuts early (insertion sort: at most 5 entries).
    for (int i = 1; i < n; ++i)
        for (int j = i; j > 0 && group[j - 1].stride < group[j].stride; --j)
            std::swap(group[j - 1], group[j]);
    GroupPlacement p;
    p.size = size;
    p.per_node = std::max<long long>(1, count_below(group, n, 0, gpus_per_node));
    p.nodes = (size + p.per_node - 1) / p.per_node;
    p.same_rail = p.per_node == 1 && rail_aligned;
    return p;
}

bool pp_neighbours_share_node(const RankOrder& order, const LayoutSizes& sizes, long long gpus_per_node) noexcept
{
    long long stride = 1;
    for (ParallelDim d : order.dims) {
        if (d == ParallelDim::pp)
            break;
        stride *= sizes.size[static_cast<int>(d)];
    }
    // Rank 0 and rank `stride` hold neighbouring stages; they share node 0 when stride < gpus_per_node.
    return stride < gpus_per_node;
}

} // namespace parallax

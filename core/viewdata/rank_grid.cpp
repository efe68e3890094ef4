#include "viewdata/rank_grid.hpp"

#include "model/topology.hpp"

#include <algorithm>

namespace parallax {

RankGrid::RankGrid(const Strategy& s, long long gpus_per_node, bool expert_layout)
    : m_gpus_per_node(std::max<long long>(1, gpus_per_node))
{
    const LayoutSizes sizes = expert_layout ? LayoutSizes::expert(s) : LayoutSizes::dense(s);
    long long stride = 1;
    for (int i = 0; i < kParallelDimCount; ++i) {
        const int d = static_cast<int>(s.rank_order.dims[i]);
        m_size[d] = std::max<long long>(1, sizes.size[d]);
        m_stride[d] = stride;
        m_position[d] = i;
        stride *= m_size[d];
    }
    m_ranks = stride;
}

long long RankGrid::coordinate(long long rank, ParallelDim d) const
{
    const int i = static_cast<int>(d);
    return (rank / m_stride[i]) % m_size[i];
}

long long RankGrid::group_id(long long rank, ParallelDim d) const
{
    const int i = static_cast<int>(d);
    const long long inner = rank % m_stride[i];
    const long long outer = rank / (m_stride[i] * m_size[i]);
    return outer * m_stride[i] + inner;
}

bool RankGrid::is_band(ParallelDim d) const
{
    return m_position[static_cast<int>(d)] == kParallelDimCount - 1;
}

long long RankGrid::colour_index(long long rank, ParallelDim d) const
{
    return is_band(d) ? coordinate(rank, d) : group_id(rank, d);
}

long long RankGrid::segment(ParallelDim d) const
{
    const int i = static_cast<int>(d);
    return is_band(d) ? m_stride[i] : m_stride[i] * m_size[i];
}

double RankGrid::degree_for_boundary(ParallelDim d, long long k, double p) const
{
    if (k < 1 || p <= 0)
        return static_cast<double>(size(d));
    const double length = p / static_cast<double>(k);
    if (is_band(d))
        return static_cast<double>(m_ranks) / length;
    return length / static_cast<double>(stride(d));
}

} // namespace parallax

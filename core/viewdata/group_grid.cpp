#include "viewdata/group_grid.hpp"

#include <algorithm>

namespace parallax {

namespace {

int type_index(GroupGrid& grid, const std::string& gpu)
{
    auto it = std::find_if(grid.types.begin(), grid.types.end(), [&](const GroupGridType& t) { return t.gpu == gpu; });
    if (it != grid.types.end())
        return static_cast<int>(it - grid.types.begin());
    grid.types.push_back({ gpu, 0, 0 });
    return static_cast<int>(grid.types.size()) - 1;
}

} // namespace

GroupGrid group_grid(const Scenario& s)
{
    GroupGrid grid;
    std::vector<long long> next_gpu; // per group: the first GPU no replica holds yet
    for (const NodeGroup& g : s.cluster.groups) {
        GroupGridGroup gg;
        gg.name = g.name;
        gg.gpu = g.gpu.name;
        gg.type = type_index(grid, g.gpu.name);
        gg.gpus_per_node = std::max(1, g.gpus_per_node);
        gg.nodes.assign(static_cast<std::size_t>(std::max(0, g.nodes)),
            std::vector<GroupGridGpu>(static_cast<std::size_t>(gg.gpus_per_node)));
        grid.types[static_cast<std::size_t>(gg.type)].gpus += g.total_gpus();
        grid.groups.push_back(std::move(gg));
        next_gpu.push_back(0);
    }
    for (std::size_t k = 0; k < s.stages.size(); ++k) {
        const auto& replicas = s.stages[k].replicas;
        for (std::size_t r = 0; r < replicas.size(); ++r) {
            const auto g = std::find_if(grid.groups.begin(), grid.groups.end(),
                [&](const GroupGridGroup& x) { return x.name == replicas[r].group; });
            if (g == grid.groups.end())
                continue; // the hetero rules report it
            const auto gi = static_cast<std::size_t>(g - grid.groups.begin());
            for (int i = 0; i < replicas[r].tp; ++i, ++next_gpu[gi]) {
                const long long node = next_gpu[gi] / g->gpus_per_node;
                if (node >= static_cast<long long>(g->nodes.size()))
                    break; // over-subscribed: the rules report it
                GroupGridGpu& gpu = g->nodes[static_cast<std::size_t>(node)]
                                            [static_cast<std::size_t>(next_gpu[gi] % g->gpus_per_node)];
                gpu.stage = static_cast<int>(k);
                gpu.replica = static_cast<int>(r);
                ++grid.types[static_cast<std::size_t>(g->type)].used;
            }
        }
    }
    return grid;
}

} // namespace parallax

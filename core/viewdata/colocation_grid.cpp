#include "viewdata/colocation_grid.hpp"

namespace parallax {

std::vector<ColocationGridGroup> colocation_grid(const ColocationScenario& s, const ColocationResult& r)
{
    std::vector<ColocationGridGroup> out;
    for (const NodeGroup& g : pool_groups(s.cluster)) {
        ColocationGridGroup row { g.name, g.gpu.name, g.nodes, g.gpus_per_node, {} };
        row.model_of_gpu.assign(static_cast<std::size_t>(g.nodes) * static_cast<std::size_t>(g.gpus_per_node), -1);
        std::size_t next = 0;
        for (std::size_t m = 0; m < r.models.size(); ++m) {
            const PlacedModel& pm = r.models[m];
            if (!pm.placed || pm.placement.group != g.name)
                continue;
            for (int k = 0; k < pm.placement.gpus() && next < row.model_of_gpu.size(); ++k)
                row.model_of_gpu[next++] = static_cast<int>(m);
        }
        out.push_back(std::move(row));
    }
    return out;
}

ColocationEvaluation evaluate_colocation(const ColocationScenario& s, const CancelToken& token)
{
    ColocationEvaluation e;
    e.scenario = s;
    if (token.cancelled()) {
        e.cancelled = true;
        return e;
    }
    e.result = plan_colocation(s);
    e.grid = colocation_grid(s, e.result);
    return e;
}

} // namespace parallax

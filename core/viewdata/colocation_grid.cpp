#include "viewdata/colocation_grid.hpp"

#include "viewdata/colocation_picture.hpp"

namespace parallax {

std::vector<ColocationGridGroup> colocation_grid(const ColocationScenario& s, const ColocationResult& r)
{
    // Which model holds which slot is colocation_picture's; this adds the groups' node shape.
    const ColocationPicture picture = colocation_picture(r);
    std::vector<ColocationGridGroup> out;
    for (const NodeGroup& g : pool_groups(s.cluster)) {
        ColocationGridGroup row { g.name, g.gpu.name, g.nodes, g.gpus_per_node, {} };
        row.model_of_gpu.assign(static_cast<std::size_t>(g.nodes) * static_cast<std::size_t>(g.gpus_per_node), -1);
        for (const ColocationPicture::Slot& slot : picture.gpus)
            if (slot.group == g.name && slot.index >= 0 && slot.index < static_cast<int>(row.model_of_gpu.size()))
                row.model_of_gpu[static_cast<std::size_t>(slot.index)] = slot.model;
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

#include "viewdata/colocation_picture.hpp"

#include <algorithm>

namespace parallax {

namespace {

// Each placed model takes the first free slots of its group, one instance after the other.
void assign_slots(const ColocationResult& r, ColocationPicture& pic)
{
    for (std::size_t m = 0; m < r.models.size(); ++m) {
        const PlacedModel& pm = r.models[m];
        if (!pm.placed)
            continue;
        int taken = 0;
        for (ColocationPicture::Slot& s : pic.gpus) {
            if (taken == pm.placement.gpus())
                break;
            if (s.group != pm.placement.group || s.model >= 0)
                continue;
            s.model = static_cast<int>(m);
            s.instance = taken / pm.placement.tp;
            s.residency = pm.placement.residency;
            ++taken;
        }
    }
}

} // namespace

ColocationPicture colocation_picture(const ColocationResult& r)
{
    ColocationPicture pic;
    for (const PlacedModel& m : r.models)
        pic.models.push_back(m.name);
    for (const PoolGroupUse& g : r.pool)
        for (long long i = 0; i < g.gpus; ++i)
            pic.gpus.push_back({ g.group, g.gpu, static_cast<int>(i), -1, -1, 1.0 });
    assign_slots(r, pic);
    for (const PlacedModel& m : r.models) {
        if (!m.placed)
            continue;
        ColocationPicture::Curve c;
        c.model = m.name;
        for (const ResidencyPoint& p : m.curve.points) {
            c.residency.push_back(p.residency);
            c.relative_throughput.push_back(p.relative_throughput);
        }
        c.knee_residency = m.curve.knee_residency;
        c.placed_residency = m.placement.residency;
        pic.curves.push_back(std::move(c));
        pic.costs.push_back({ m.name, m.preemption.weights_reload_s, m.preemption.kv_s, m.preemption.warm_up_s });
        pic.max_cost_s = std::max(pic.max_cost_s, m.preemption.total_s());
    }
    return pic;
}

} // namespace parallax

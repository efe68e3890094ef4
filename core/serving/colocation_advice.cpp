#include "serving/colocation.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

namespace parallax {

namespace {

std::string pct(double fraction)
{
    return std::to_string(std::lround(100.0 * fraction)) + "%";
}

std::string secs(double s)
{
    std::ostringstream o;
    o.setf(std::ios::fixed);
    o.precision(s < 10 ? 1 : 0);
    o << s << " s";
    return o.str();
}

std::vector<const PlacedModel*> placed(const std::vector<PlacedModel>& models)
{
    std::vector<const PlacedModel*> out;
    for (const PlacedModel& m : models)
        if (m.placed)
            out.push_back(&m);
    return out;
}

} // namespace

std::vector<std::string> colocation_suggestion(const std::vector<PlacedModel>& models)
{
    std::vector<std::string> out;
    std::vector<const PlacedModel*> by_loss = placed(models);
    if (by_loss.empty())
        return out;
    std::sort(by_loss.begin(), by_loss.end(), [](const PlacedModel* a, const PlacedModel* b) {
        return a->loss_at_half_residency < b->loss_at_half_residency;
    });
    std::string others;
    for (std::size_t i = 1; i < by_loss.size(); ++i)
        others += (i == 1 ? "" : ", ") + by_loss[i]->name + " " + pct(by_loss[i]->loss_at_half_residency);
    const PlacedModel* least = by_loss.front();
    if (least->loss_at_half_residency >= kTolerableResidencyLoss)
        out.push_back("Offloading costs every model much of its throughput at 50% residency (" + least->name + " "
            + pct(least->loss_at_half_residency) + (others.empty() ? "" : ", " + others)
            + "): the fetches do not hide under the steps, so free memory by preempting.");
    else
        out.push_back("To free GPU memory, offload " + least->name + " first: at 50% residency it loses "
            + pct(least->loss_at_half_residency) + (others.empty() ? "." : " (then " + others + ")."));
    std::vector<const PlacedModel*> by_cost = placed(models);
    std::sort(by_cost.begin(), by_cost.end(),
        [](const PlacedModel* a, const PlacedModel* b) { return a->preemption.total_s() < b->preemption.total_s(); });
    const PlacedModel* cheapest = by_cost.front();
    out.push_back("To free whole GPUs, preempt " + cheapest->name + " first: it is back in "
        + secs(cheapest->preemption.total_s()) + " (weights " + secs(cheapest->preemption.weights_reload_s) + ", KV "
        + secs(cheapest->preemption.kv_s) + ", warm-up " + secs(cheapest->preemption.warm_up_s) + ").");
    // Keep resident what would lose most from offloading, unless it is also the cheapest to bring back.
    for (auto it = by_loss.rbegin(); it != by_loss.rend(); ++it) {
        const PlacedModel* m = *it;
        if (m->loss_at_half_residency < kTolerableResidencyLoss)
            break;
        const bool swap_instead = m == cheapest && by_cost.size() > 1;
        out.push_back((swap_instead ? "Preempt rather than offload " : "Keep ") + m->name
            + (swap_instead ? "" : " resident") + ": it loses " + pct(m->loss_at_half_residency)
            + " at 50% residency, and bringing it back takes " + secs(m->preemption.total_s()) + ".");
        break;
    }
    return out;
}

} // namespace parallax

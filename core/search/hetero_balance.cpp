#include "search/hetero_balance.hpp"

#include "spec/hetero_rules.hpp"

#include <algorithm>

namespace parallax {

namespace {

double fullest_ratio(const HeteroPrediction& h)
{
    double ratio = 0;
    for (const HeteroStageReport& st : h.stages)
        for (const HeteroReplicaReport& r : st.replicas)
            if (r.capacity_bytes > 0)
                ratio = std::max(ratio, r.peak_memory_bytes / r.capacity_bytes);
    return ratio;
}

// The stage to take a layer from: the one that runs out of memory first, else the pacing one.
int stage_to_unload(const HeteroTrial& t)
{
    const HeteroPrediction& h = t.prediction;
    if (t.feasible())
        return h.critical_stage;
    int worst = 0;
    double ratio = -1;
    for (std::size_t k = 0; k < h.stages.size(); ++k)
        for (const HeteroReplicaReport& r : h.stages[k].replicas)
            if (r.capacity_bytes > 0 && r.peak_memory_bytes / r.capacity_bytes > ratio) {
                ratio = r.peak_memory_bytes / r.capacity_bytes;
                worst = static_cast<int>(k);
            }
    return worst;
}

// Each stage's speed in layers per second as the model costed it (its busy time per layer).
std::vector<double> measured_speeds(const HeteroTrial& t)
{
    std::vector<double> speed;
    for (std::size_t k = 0; k < t.layers.size(); ++k) {
        const double busy = t.prediction.stages[k].busy_s;
        speed.push_back(busy > 0 ? t.layers[k] / busy : 0.0);
    }
    return speed;
}

} // namespace

bool better_trial(const HeteroTrial& a, const HeteroTrial& b)
{
    if (a.feasible() != b.feasible())
        return a.feasible();
    if (!a.feasible())
        return a.memory_ratio < b.memory_ratio;
    return a.step_s() < b.step_s();
}

HeteroPlanCoster::HeteroPlanCoster(const Scenario& s, const Calibration& cal)
    : plan_(s)
    , evaluator_(s, cal)
{
}

std::optional<HeteroTrial> HeteroPlanCoster::cost(
    const HeteroLayout& layout, const Strategy& knobs, const std::vector<int>& layers)
{
    plan_.stages = layout_stages(layout, plan_.cluster, layers);
    plan_.strategy = knobs;
    plan_.strategy.pp = static_cast<int>(plan_.stages.size());
    plan_.strategy.tp = plan_.stages.front().replicas.front().tp;
    plan_.strategy.dp = static_cast<int>(plan_.stages.front().replicas.size());
    plan_.strategy.cp = plan_.strategy.ep = plan_.strategy.vpp = 1;
    if (check_hetero_plan(plan_))
        return std::nullopt;
    return evaluate(layers);
}

HeteroTrial HeteroPlanCoster::evaluate(const std::vector<int>& layers)
{
    for (std::size_t k = 0; k < layers.size(); ++k)
        plan_.stages[k].layers = layers[k];
    ++evaluated_;
    HeteroTrial t;
    t.layers = layers;
    t.prediction = evaluator_.predict(plan_);
    t.memory_ratio = fullest_ratio(t.prediction);
    return t;
}

std::optional<HeteroTrial> HeteroPlanCoster::balance(
    const HeteroLayout& layout, const Strategy& knobs, int max_moves, const std::vector<int>* start)
{
    const int total = plan_.model.layers;
    std::optional<HeteroTrial> best
        = cost(layout, knobs, start ? *start : proportional_layers(total, peak_stage_speeds(layout, plan_)));
    if (!best)
        return std::nullopt;
    if (layout.depth() == 1)
        return best;
    // The speeds the model measured set the second split (kernels' efficiency differs from the peaks').
    const std::vector<int> measured = proportional_layers(total, measured_speeds(*best));
    if (!start && measured != best->layers)
        if (HeteroTrial t = evaluate(measured); better_trial(t, *best))
            best = std::move(t);
    return refine(std::move(*best), max_moves);
}
HeteroTrial HeteroPlanCoster::refine(HeteroTrial best, int max_moves)
{
    const int stages = static_cast<int>(best.layers.size());
    for (int move = 0; move < max_moves; ++move) {
        const int from = stage_to_unload(best);
        if (best.layers[static_cast<std::size_t>(from)] <= 1)
            break;
        std::optional<HeteroTrial> step;
        for (int to : { from - 1, from + 1 }) {
            if (to < 0 || to >= stages)
                continue;
            std::vector<int> layers = best.layers;
            --layers[static_cast<std::size_t>(from)];
            ++layers[static_cast<std::size_t>(to)];
            HeteroTrial t = evaluate(layers);
            if (!step || better_trial(t, *step))
                step = std::move(t);
        }
        if (!step || !better_trial(*step, best))
            break;
        best = std::move(*step);
    }
    return best;
}

} // namespace parallax

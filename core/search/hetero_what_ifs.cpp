// The what-if neighbours of a heterogeneous plan (hetero_search.hpp): what moving layers between
// neighbouring stages, another TP on a group's replicas, leaving a group idle or adding an idle one
// would do to the step time.
#include "search/hetero_balance.hpp"
#include "search/hetero_search.hpp"

#include <algorithm>
#include <limits>

namespace parallax {

namespace {

// Layers moved at once between two neighbouring stages: one to a few (a layer of a 16-stage pipeline is
// a few per cent of a stage; more is a different split the search has already weighed).
constexpr int kMaxLayersMoved = 4;

struct WhatIfContext {
    const Scenario& s;
    const HeteroLayout& layout;
    const Strategy& knobs;
    HeteroPlanCoster coster;
    HeteroTrial base;
};

HeteroWhatIf what_if(const WhatIfContext& w, std::string change, const std::optional<HeteroTrial>& t)
{
    HeteroWhatIf out;
    out.change = std::move(change);
    out.feasible = t && t->feasible();
    out.step_time_change = out.feasible ? t->step_s() / w.base.step_s() - 1 : std::numeric_limits<double>::infinity();
    return out;
}

std::string stage_text(const WhatIfContext& w, int k)
{
    return "stage " + std::to_string(k) + " (" + stage_groups(w.layout, w.s.cluster, k) + ")";
}

// For each pair of neighbours and direction, the number of layers (1..4) whose move helps most.
void layer_moves(WhatIfContext& w, std::vector<HeteroWhatIf>& out)
{
    const int stages = static_cast<int>(w.base.layers.size());
    for (int k = 0; k + 1 < stages; ++k) {
        for (const auto& [from, to] : { std::pair { k, k + 1 }, std::pair { k + 1, k } }) {
            std::optional<HeteroWhatIf> best;
            for (int n = 1; n <= kMaxLayersMoved && n < w.base.layers[static_cast<std::size_t>(from)]; ++n) {
                std::vector<int> layers = w.base.layers;
                layers[static_cast<std::size_t>(from)] -= n;
                layers[static_cast<std::size_t>(to)] += n;
                const std::string change = "moving " + std::to_string(n) + (n == 1 ? " layer" : " layers") + " from "
                    + stage_text(w, from) + " to " + stage_text(w, to);
                HeteroWhatIf h = what_if(w, change, w.coster.cost(w.layout, w.knobs, layers));
                if (!best || h.step_time_change < best->step_time_change)
                    best = std::move(h);
            }
            if (best)
                out.push_back(std::move(*best));
        }
    }
}

std::string replicas_text(int replicas)
{
    return std::to_string(replicas) + (replicas == 1 ? " replica" : " replicas");
}

std::string group_name(const WhatIfContext& w, int group)
{
    return w.s.cluster.groups[static_cast<std::size_t>(group)].name;
}

// Another TP on one group's replicas (as many replicas as its GPUs then allow), the layers rebalanced.
void tp_changes(WhatIfContext& w, std::vector<HeteroWhatIf>& out)
{
    for (std::size_t i = 0; i < w.layout.shares.size(); ++i) {
        const GroupShare& g = w.layout.shares[i];
        for (int tp : group_tps(w.s, g.group, SearchFix {})) {
            if (tp == g.tp)
                continue;
            const std::optional<GroupShare> share
                = make_share(w.s, g.group, tp, g.pp, std::max<long long>(1, w.s.training.global_batch));
            if (!share)
                continue;
            HeteroLayout alt = w.layout;
            alt.shares[i] = *share;
            const std::string change = "TP " + std::to_string(tp) + " instead of " + std::to_string(g.tp) + " on group "
                + group_name(w, g.group) + " (" + replicas_text(share->replicas) + " per stage instead of "
                + std::to_string(g.replicas) + ")";
            out.push_back(what_if(w, change, w.coster.balance(alt, w.knobs, 2 * alt.depth() + 4)));
        }
    }
}

// Each used group left idle (its stages' layers go to the others).
void group_drops(WhatIfContext& w, std::vector<HeteroWhatIf>& out)
{
    if (w.layout.shares.size() < 2)
        return;
    for (std::size_t i = 0; i < w.layout.shares.size(); ++i) {
        HeteroLayout alt = w.layout;
        alt.shares.erase(alt.shares.begin() + static_cast<std::ptrdiff_t>(i));
        const std::string change = "leaving group " + group_name(w, w.layout.shares[i].group) + " idle";
        out.push_back(what_if(w, change, w.coster.balance(alt, w.knobs, 2 * alt.depth() + 4)));
    }
}

// Each idle group added at its best TP: as one more stage at either end of a pipeline of groups, or as
// replicas in every stage of a shared pipeline.
void group_adds(WhatIfContext& w, std::vector<HeteroWhatIf>& out)
{
    const auto limit = std::max<long long>(1, w.s.training.global_batch);
    for (int g = 0; g < static_cast<int>(w.s.cluster.groups.size()); ++g) {
        if (std::any_of(
                w.layout.shares.begin(), w.layout.shares.end(), [&](const GroupShare& x) { return x.group == g; }))
            continue;
        std::optional<HeteroWhatIf> best;
        for (int tp : group_tps(w.s, g, SearchFix {})) {
            const bool shared = w.layout.family == HeteroFamily::shared_stages;
            const std::optional<GroupShare> share = make_share(w.s, g, tp, shared ? w.layout.depth() : 1, limit);
            if (!share)
                continue;
            for (bool at_end : { true, false }) {
                if (shared && !at_end)
                    continue;
                HeteroLayout alt = w.layout;
                alt.shares.insert(at_end ? alt.shares.end() : alt.shares.begin(), *share);
                const std::string change = "adding group " + group_name(w, g) + " (TP " + std::to_string(tp) + ", "
                    + replicas_text(share->replicas)
                    + (shared ? std::string(" in every stage)")
                              : (at_end ? " as a last stage)" : " as a first stage)"));
                HeteroWhatIf h = what_if(w, change, w.coster.balance(alt, w.knobs, 2 * alt.depth() + 4));
                if (!best || h.step_time_change < best->step_time_change)
                    best = std::move(h);
            }
        }
        if (best)
            out.push_back(std::move(*best));
    }
}

} // namespace

std::vector<HeteroWhatIf> hetero_what_ifs(const Scenario& s, const HeteroLayout& layout, const Strategy& strategy,
    const std::vector<int>& layers, const Calibration& cal)
{
    WhatIfContext w { s, layout, strategy, HeteroPlanCoster(s, cal), {} };
    const std::optional<HeteroTrial> base = w.coster.cost(layout, strategy, layers);
    if (!base || !base->feasible())
        return {};
    w.base = *base;
    std::vector<HeteroWhatIf> out;
    layer_moves(w, out);
    tp_changes(w, out);
    group_drops(w, out);
    group_adds(w, out);
    std::stable_sort(out.begin(), out.end(),
        [](const HeteroWhatIf& a, const HeteroWhatIf& b) { return a.step_time_change < b.step_time_change; });
    return out;
}

} // namespace parallax

#include "viewdata/stage_edits.hpp"

#include <algorithm>
#include <numeric>

namespace parallax {

namespace {

std::size_t at(int i)
{
    return static_cast<std::size_t>(i);
}

// strategy.pp is the stage count; strategy.tp and dp repeat the first stage's first replica and its
// replica count (spec/scenario.hpp).
void sync_strategy(Scenario& s)
{
    s.strategy.pp = static_cast<int>(s.stages.size());
    s.strategy.tp = s.stages.front().replicas.front().tp;
    s.strategy.dp = static_cast<int>(s.stages.front().replicas.size());
}

StageEdit refused(std::string why)
{
    return { std::nullopt, std::move(why) };
}

// Why a new replica of `tp` GPUs on `group` cannot be, or "".
std::string replica_refusal(const Scenario& s, const std::string& group, int tp)
{
    const NodeGroup* g = s.cluster.group(group);
    if (!g)
        return "the cluster has no group named " + group;
    if (tp < 1 || tp > g->gpus_per_node)
        return "TP " + std::to_string(tp) + " does not fit group " + group + "'s nodes of "
            + std::to_string(g->gpus_per_node) + " GPUs";
    const long long used = group_gpus_used(s, group);
    if (used + tp > g->total_gpus())
        return "group " + group + " has " + std::to_string(g->total_gpus()) + " GPUs and the plan's replicas hold "
            + std::to_string(used) + ": a replica of TP " + std::to_string(tp) + " needs "
            + std::to_string(used + tp - g->total_gpus()) + " more (add nodes in the Cluster dock)";
    return {};
}

} // namespace

long long group_gpus_used(const Scenario& s, const std::string& group)
{
    long long used = 0;
    for (const PipelineStageSpec& st : s.stages)
        for (const StageReplica& r : st.replicas)
            used += r.group == group ? r.tp : 0;
    return used;
}

std::optional<Scenario> with_stage_boundary(const Scenario& s, int boundary, int first_layer)
{
    if (boundary < 0 || boundary + 1 >= static_cast<int>(s.stages.size()))
        return std::nullopt;
    int before = 0; // first layer of stage `boundary`
    for (int k = 0; k < boundary; ++k)
        before += s.stages[at(k)].layers;
    const int end = before + s.stages[at(boundary)].layers + s.stages[at(boundary + 1)].layers;
    const int clamped = std::clamp(first_layer, before + 1, end - 1); // each side keeps a layer
    if (clamped == before + s.stages[at(boundary)].layers)
        return std::nullopt;
    Scenario out = s;
    out.stages[at(boundary)].layers = clamped - before;
    out.stages[at(boundary + 1)].layers = end - clamped;
    return out;
}

StageEdit add_stage(const Scenario& s, const std::string& group, int tp)
{
    if (s.stages.empty())
        return refused("the plan has no stages to add to");
    const int total = std::accumulate(
        s.stages.begin(), s.stages.end(), 0, [](int n, const PipelineStageSpec& st) { return n + st.layers; });
    const int count = static_cast<int>(s.stages.size()) + 1;
    if (total < count)
        return refused("the model's " + std::to_string(total) + " layers cannot fill " + std::to_string(count)
            + " stages of at least one layer");
    if (std::string why = replica_refusal(s, group, tp); !why.empty())
        return refused(why);
    Scenario out = s;
    PipelineStageSpec added;
    added.replicas.push_back({ group, tp });
    // One layer at a time from the fullest stage (the last of equals, nearest the new one).
    for (int want = total / count; added.layers < want; ++added.layers) {
        auto fullest = std::max_element(out.stages.rbegin(), out.stages.rend(),
            [](const PipelineStageSpec& a, const PipelineStageSpec& b) { return a.layers < b.layers; });
        --fullest->layers;
    }
    out.stages.push_back(std::move(added));
    sync_strategy(out);
    return { std::move(out), {} };
}

StageEdit remove_stage(const Scenario& s, int stage)
{
    const int n = static_cast<int>(s.stages.size());
    if (stage < 0 || stage >= n)
        return refused("there is no stage " + std::to_string(stage));
    if (n == 1)
        return refused("a plan keeps at least one stage");
    Scenario out = s;
    const int layers = s.stages[at(stage)].layers;
    if (stage == 0)
        out.stages[1].layers += layers;
    else if (stage == n - 1)
        out.stages[at(n - 2)].layers += layers;
    else {
        out.stages[at(stage - 1)].layers += layers / 2;
        out.stages[at(stage + 1)].layers += layers - layers / 2;
    }
    out.stages.erase(out.stages.begin() + stage);
    sync_strategy(out);
    return { std::move(out), {} };
}

StageEdit add_replica(const Scenario& s, int stage, const std::string& group, int tp)
{
    if (stage < 0 || stage >= static_cast<int>(s.stages.size()))
        return refused("there is no stage " + std::to_string(stage));
    if (std::string why = replica_refusal(s, group, tp); !why.empty())
        return refused(why);
    Scenario out = s;
    out.stages[at(stage)].replicas.push_back({ group, tp });
    sync_strategy(out);
    return { std::move(out), {} };
}

StageEdit remove_replica(const Scenario& s, int stage, int replica)
{
    if (stage < 0 || stage >= static_cast<int>(s.stages.size()))
        return refused("there is no stage " + std::to_string(stage));
    const auto& replicas = s.stages[at(stage)].replicas;
    if (replica < 0 || replica >= static_cast<int>(replicas.size()))
        return refused("stage " + std::to_string(stage) + " has no replica " + std::to_string(replica));
    if (replicas.size() == 1)
        return refused("stage " + std::to_string(stage) + " keeps at least one replica: remove the stage instead");
    Scenario out = s;
    out.stages[at(stage)].replicas.erase(out.stages[at(stage)].replicas.begin() + replica);
    sync_strategy(out);
    return { std::move(out), {} };
}

} // namespace parallax

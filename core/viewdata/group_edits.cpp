#include "viewdata/group_edits.hpp"

#include "io/preset_catalog.hpp"
#include "io/scenario_io.hpp"
#include "spec/hetero_rules.hpp"

#include <nlohmann/json.hpp>

#include <set>

namespace parallax {

namespace {

std::string group_key(int g)
{
    return "cluster.groups[" + std::to_string(g) + "]";
}

// The reader's summary of a grouped cluster (io/hetero_io.cpp: read_node_groups).
void sync_summary(ClusterSpec& c)
{
    if (c.groups.empty())
        return;
    const NodeGroup& first = c.groups.front();
    c.gpu = first.gpu;
    c.gpus_per_node = first.gpus_per_node;
    c.intra_node = first.intra_node;
    long long nodes = 0;
    for (const NodeGroup& g : c.groups)
        nodes += g.nodes;
    c.nodes = static_cast<int>(nodes);
}

template <typename Edit> Scenario edited(const Scenario& s, int g, Edit&& edit)
{
    Scenario out = s;
    if (g >= 0 && g < static_cast<int>(out.cluster.groups.size()))
        edit(out.cluster.groups[static_cast<std::size_t>(g)]);
    out.refs.cluster.clear();
    sync_summary(out.cluster);
    return out;
}

// The group a rule's sentence names ("... of group \"a100\" ..."), or -1.
int group_named_in(const ClusterSpec& c, const std::string& message)
{
    for (std::size_t g = 0; g < c.groups.size(); ++g)
        if (message.find("\"" + c.groups[g].name + "\"") != std::string::npos)
            return static_cast<int>(g);
    return -1;
}

} // namespace

std::optional<GroupEditError> group_edit_error(const Scenario& s)
{
    std::set<std::string> names;
    for (std::size_t g = 0; g < s.cluster.groups.size(); ++g) {
        const std::string& name = s.cluster.groups[g].name;
        const int gi = static_cast<int>(g);
        if (name.empty())
            return GroupEditError { gi, group_key(gi) + ".name", "a group needs a name" };
        if (!names.insert(name).second)
            return GroupEditError { gi, group_key(gi) + ".name", "\"" + name + "\" names two groups" };
    }
    if (const std::optional<HeteroViolation> v = check_hetero_plan(s))
        return GroupEditError { group_named_in(s.cluster, v->rule), v->key, v->rule };
    return std::nullopt;
}

Scenario with_group_name(const Scenario& s, int g, const std::string& name)
{
    if (g < 0 || g >= static_cast<int>(s.cluster.groups.size()))
        return s;
    const std::string old = s.cluster.groups[static_cast<std::size_t>(g)].name;
    Scenario out = edited(s, g, [&](NodeGroup& group) { group.name = name; });
    for (PipelineStageSpec& st : out.stages)
        for (StageReplica& r : st.replicas)
            if (r.group == old)
                r.group = name;
    return out;
}

Scenario with_group_gpu(const Scenario& s, int g, const std::string& preset)
{
    return edited(s, g, [&](NodeGroup& group) {
        group.gpu
            = resolve_gpu(nlohmann::json(preset), "", group_key(g) + ".gpu", PresetCatalog::standard(), &group.gpu_ref);
    });
}

Scenario with_group_fabric(const Scenario& s, int g, const std::string& preset)
{
    return edited(s, g, [&](NodeGroup& group) {
        group.intra_node = resolve_fabric(
            nlohmann::json(preset), "", group_key(g) + ".intra_node", PresetCatalog::standard(), &group.intra_node_ref);
    });
}

Scenario with_group_nic(const Scenario& s, int g, const std::string& preset)
{
    return edited(s, g, [&](NodeGroup& group) {
        group.inter_node_ref.clear();
        group.inter_node.reset();
        if (!preset.empty())
            group.inter_node = resolve_fabric(nlohmann::json(preset), "", group_key(g) + ".inter_node",
                PresetCatalog::standard(), &group.inter_node_ref);
    });
}

Scenario with_group_nodes(const Scenario& s, int g, int nodes)
{
    return edited(s, g, [&](NodeGroup& group) { group.nodes = nodes; });
}

Scenario with_group_gpus_per_node(const Scenario& s, int g, int gpus_per_node)
{
    return edited(s, g, [&](NodeGroup& group) { group.gpus_per_node = gpus_per_node; });
}

Scenario with_added_group(const Scenario& s)
{
    Scenario out = s;
    if (out.cluster.groups.empty())
        return out;
    NodeGroup g = out.cluster.groups.back();
    for (int n = static_cast<int>(out.cluster.groups.size()) + 1;; ++n) {
        g.name = "group" + std::to_string(n);
        if (!out.cluster.group(g.name))
            break;
    }
    out.cluster.groups.push_back(std::move(g));
    out.refs.cluster.clear();
    sync_summary(out.cluster);
    return out;
}

std::optional<Scenario> without_group(const Scenario& s, int g)
{
    if (g < 0 || g >= static_cast<int>(s.cluster.groups.size()) || s.cluster.groups.size() < 2)
        return std::nullopt;
    const std::string& name = s.cluster.groups[static_cast<std::size_t>(g)].name;
    for (const PipelineStageSpec& st : s.stages)
        for (const StageReplica& r : st.replicas)
            if (r.group == name)
                return std::nullopt;
    Scenario out = s;
    out.cluster.groups.erase(out.cluster.groups.begin() + g);
    out.refs.cluster.clear();
    sync_summary(out.cluster);
    return out;
}

} // namespace parallax

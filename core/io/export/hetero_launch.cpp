#include "io/export/hetero_launch.hpp"

#include "io/export/launch_plan.hpp"
#include "io/export/launch_text.hpp"

#include "spec/input_error.hpp"

#include <algorithm>
#include <cctype>
#include <map>

namespace parallax {

namespace {

using launch_text::num;

std::string stage_key(std::size_t stage)
{
    return "strategy.stages[" + num(static_cast<long long>(stage)) + "]";
}

// The framework as its users name it, for the rule's sentence.
std::string framework_name(LaunchFormat f)
{
    switch (f) {
    case LaunchFormat::megatron:
        return "Megatron-LM";
    case LaunchFormat::torchtitan:
        return "torchtitan";
    case LaunchFormat::nemo:
        return "NeMo (Megatron-Bridge)";
    case LaunchFormat::deepspeed:
        return "Megatron-DeepSpeed";
    }
    return "the framework";
}

const std::string& gpu_of(const Scenario& s, const std::string& group)
{
    static const std::string none;
    const NodeGroup* g = s.cluster.group(group);
    return g ? g->gpu.name : none;
}

// Every stage on one TP and one replica count: what a stock framework's single --tensor-model-parallel-size
// and data-parallel degree can say.
std::optional<Unsupported> uniform_degrees_refusal(const std::string& fw, const Scenario& s)
{
    const StageReplica& first = s.stages.front().replicas.front();
    for (std::size_t k = 0; k < s.stages.size(); ++k) {
        const PipelineStageSpec& st = s.stages[k];
        for (std::size_t r = 0; r < st.replicas.size(); ++r)
            if (st.replicas[r].tp != first.tp)
                return Unsupported { stage_key(k) + ".replicas[" + num(static_cast<long long>(r)) + "].tp",
                    "another TP per stage or replica",
                    fw + " needs one TP for every stage; stage " + num(static_cast<long long>(k)) + " uses TP "
                        + num(st.replicas[r].tp) + " on " + st.replicas[r].group + " (stage 0: TP " + num(first.tp)
                        + " on " + first.group
                        + "). Per-replica TP is what AMP, Metis, HexiScale and AutoHet run (docs/heterogeneous.md)" };
        if (st.replicas.size() != s.stages.front().replicas.size())
            return Unsupported { stage_key(k) + ".replicas", "another replica count per stage",
                fw + " needs one data-parallel degree for every stage; stage " + num(static_cast<long long>(k))
                    + " has " + num(static_cast<long long>(st.replicas.size())) + " replicas, stage 0 has "
                    + num(static_cast<long long>(s.stages.front().replicas.size())) };
    }
    return std::nullopt;
}

// Batch shares by speed over replicas of different GPUs: stock frameworks give every data-parallel rank
// global_batch / dp (Megatron-LM's get_num_microbatches, torchtitan's local_batch_size).
std::optional<Unsupported> batch_split_refusal(const std::string& fw, const Scenario& s)
{
    if (s.batch_split != BatchSplit::by_speed)
        return std::nullopt;
    for (std::size_t k = 0; k < s.stages.size(); ++k) {
        const auto& reps = s.stages[k].replicas;
        for (const StageReplica& r : reps)
            if (gpu_of(s, r.group) != gpu_of(s, reps.front().group))
                return Unsupported { "strategy.batch_split", "batch shares by replica speed",
                    fw + " gives every data-parallel rank global_batch / dp; stage " + num(static_cast<long long>(k))
                        + " splits its batch by speed over " + gpu_of(s, reps.front().group) + " and "
                        + gpu_of(s, r.group)
                        + " replicas (set strategy.batch_split to \"even\" to export the plan it runs)" };
    }
    return std::nullopt;
}

// Where the ranks go: nodes in node-rank order, every node's ranks on one group. `plan` has tp, dp, pp.
std::optional<Unsupported> place_nodes(const std::string& fw, const Scenario& s, HeteroLaunchPlan& plan)
{
    const long long block = plan.tp;
    const long long world = block * plan.dp * plan.pp;
    std::vector<std::pair<std::string, int>> rank_owner; // per rank: group and stage
    for (int p = 0; p < plan.pp; ++p)
        for (const StageReplica& r : s.stages[static_cast<std::size_t>(p)].replicas)
            for (long long i = 0; i < block; ++i)
                rank_owner.emplace_back(r.group, p);
    int per_node = 0;
    for (const auto& [group, stage] : rank_owner) {
        const NodeGroup* g = s.cluster.group(group);
        if (!g)
            return Unsupported { "strategy.stages", "a replica on an unknown group",
                "stage " + num(stage) + " has a replica on group " + group + ", which cluster.groups does not have" };
        if (per_node != 0 && g->gpus_per_node != per_node)
            return Unsupported { "cluster.groups", "groups with another GPU count per node",
                fw + " is started by torchrun with one --nproc_per_node on every node; group " + group + " has "
                    + num(g->gpus_per_node) + " GPUs per node, " + rank_owner.front().first + " " + num(per_node) };
        per_node = g->gpus_per_node;
    }
    plan.gpus_per_node = static_cast<int>(std::min<long long>(per_node, world));
    if (world % plan.gpus_per_node != 0)
        return Unsupported { "strategy.stages", "a partly used node",
            "the plan's " + num(world) + " ranks do not fill whole nodes of " + num(plan.gpus_per_node) + " GPUs" };
    std::map<std::string, int> used;
    for (long long first = 0; first < world; first += plan.gpus_per_node) {
        HeteroLaunchNode node;
        node.group = rank_owner[static_cast<std::size_t>(first)].first;
        node.first_rank = first;
        for (long long r = first; r < first + plan.gpus_per_node; ++r) {
            const auto& [group, stage] = rank_owner[static_cast<std::size_t>(r)];
            if (group != node.group)
                return Unsupported { "strategy.stages", "two groups' replicas on one node",
                    "in " + fw + "'s rank order (tp, then dp, then pp) ranks " + num(first) + "-"
                        + num(first + plan.gpus_per_node - 1) + " share one node but belong to groups " + node.group
                        + " and " + group + ": give each node's worth of consecutive replicas one group" };
            if (node.stages.empty() || node.stages.back() != stage)
                node.stages.push_back(stage);
        }
        node.node_in_group = used[node.group]++;
        if (node.node_in_group >= s.cluster.group(node.group)->nodes)
            return Unsupported { "cluster.groups", "more nodes than a group has",
                "the plan needs " + num(used[node.group]) + " nodes of group " + node.group + ", which has "
                    + num(s.cluster.group(node.group)->nodes) };
        plan.nodes.push_back(std::move(node));
    }
    return std::nullopt;
}

// The degrees every stage shares (the first stage's, which the refusals hold the others to) and its layers.
HeteroLaunchPlan uniform_plan(const Scenario& s)
{
    HeteroLaunchPlan plan;
    plan.tp = s.stages.front().replicas.front().tp;
    plan.dp = static_cast<int>(s.stages.front().replicas.size());
    plan.pp = static_cast<int>(s.stages.size());
    for (const PipelineStageSpec& st : s.stages)
        plan.stage_layers.push_back(st.layers);
    return plan;
}

std::optional<Unsupported> setting_refusal(const std::string& fw, LaunchFormat f, const Scenario& s)
{
    if (f != LaunchFormat::megatron && f != LaunchFormat::torchtitan)
        return Unsupported { "strategy.stages", "a mixed-GPU pipeline in this format",
            "mixed plans are exported for Megatron-LM (--format megatron) and torchtitan (--format torchtitan); " + fw
                + "'s files are not written for them" };
    if (s.strategy.cp > 1 || s.strategy.ep > 1 || s.strategy.vpp > 1)
        return Unsupported { "strategy", "context, expert or virtual-pipeline parallelism in a mixed plan",
            "a mixed plan's replicas are exported as TP groups only (cp 1, ep 1, vpp 1)" };
    return std::nullopt;
}

} // namespace

// Megatron-LM's split flags for the plan's stage layers: none (even), the edge stages' counts when the
// middle stages are even (--decoder-first/last-pipeline-num-layers, megatron/training/arguments.py), else
// the full --pipeline-model-parallel-layout (megatron/core/transformer/pipeline_parallel_layer_layout.py).
std::vector<std::string> hetero_megatron_split_flags(const std::vector<int>& layers)
{
    if (layers.size() <= 1 || std::all_of(layers.begin(), layers.end(), [&](int l) { return l == layers.front(); }))
        return {};
    const launch_plan::MegatronSplit split = launch_plan::megatron_split_of_uneven(layers, 1);
    if (!split.layout.empty())
        return { "--pipeline-model-parallel-layout", split.layout };
    std::vector<std::string> out;
    if (split.first > 0)
        out.insert(out.end(), { "--decoder-first-pipeline-num-layers", num(split.first) });
    if (split.last > 0)
        out.insert(out.end(), { "--decoder-last-pipeline-num-layers", num(split.last) });
    return out;
}

std::string hetero_hosts_variable(const std::string& group)
{
    std::string out = "HOSTS_";
    for (char c : group)
        out += std::isalnum(static_cast<unsigned char>(c))
            ? static_cast<char>(std::toupper(static_cast<unsigned char>(c)))
            : '_';
    return out;
}

std::optional<Unsupported> hetero_launch_refusal(LaunchFormat f, const Scenario& s)
{
    const std::string fw = framework_name(f);
    if (s.stages.empty() || s.stages.front().replicas.empty())
        return Unsupported { "strategy.stages", "a plan without stages", "the mixed plan has no stage" };
    if (auto u = setting_refusal(fw, f, s))
        return u;
    if (auto u = uniform_degrees_refusal(fw, s))
        return u;
    if (auto u = batch_split_refusal(fw, s))
        return u;
    HeteroLaunchPlan plan = uniform_plan(s);
    if (auto u = place_nodes(fw, s, plan))
        return u;
    const std::vector<Unsupported> rest = launch_unsupported(f, hetero_launch_equivalent(s, plan));
    if (!rest.empty())
        return rest.front();
    return std::nullopt;
}

HeteroLaunchPlan hetero_launch_plan(const Scenario& s)
{
    HeteroLaunchPlan plan = uniform_plan(s);
    if (auto u = place_nodes("the framework", s, plan))
        throw InputError("", u->key, u->reason);
    return plan;
}

Scenario hetero_launch_equivalent(const Scenario& s, const HeteroLaunchPlan& p)
{
    Scenario out = s;
    out.stages.clear();
    out.strategy.tp = p.tp;
    out.strategy.dp = p.dp;
    out.strategy.pp = p.pp;
    out.strategy.vpp = 1;
    std::vector<int> layers = p.stage_layers;
    if (layers.empty())
        for (const PipelineStageSpec& st : s.stages)
            layers.push_back(st.layers);
    const bool even = std::all_of(layers.begin(), layers.end(), [&](int l) { return l == layers.front(); });
    out.strategy.first_stage_layers = even || layers.size() < 2 ? 0 : layers.front();
    out.strategy.last_stage_layers = even || layers.size() < 2 ? 0 : layers.back();
    // The stock scripts read one GPU type and node size: the first node's group (the hosts come per group).
    const NodeGroup* g = p.nodes.empty() ? &s.cluster.groups.front() : s.cluster.group(p.nodes.front().group);
    out.cluster.gpu = g->gpu;
    out.cluster.gpus_per_node = p.gpus_per_node;
    out.cluster.intra_node = g->intra_node;
    out.cluster.nodes = std::max(1, static_cast<int>(p.nodes.size()));
    out.cluster.groups.clear();
    out.refs.gpu = g->gpu_ref;
    out.refs.intra_node = g->intra_node_ref;
    out.refs.cluster.clear();
    return out;
}

} // namespace parallax

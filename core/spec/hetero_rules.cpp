#include "spec/hetero_rules.hpp"

#include "spec/strategy_rules.hpp"

#include <map>

namespace parallax {

namespace {

std::string stage_key(int k)
{
    return "strategy.stages[" + std::to_string(k) + "]";
}
std::string replica_key(int k, int r)
{
    return stage_key(k) + ".replicas[" + std::to_string(r) + "]";
}

std::string group_names(const ClusterSpec& c)
{
    std::string out;
    for (const NodeGroup& g : c.groups)
        out += (out.empty() ? "" : ", ") + g.name;
    return out;
}

// Settings an explicit pipeline replaces or does not model yet.
std::optional<HeteroViolation> check_strategy_fields(const Strategy& s)
{
    if (s.cp != 1 || s.ep != 1 || s.vpp != 1)
        return HeteroViolation { "strategy", "cp, ep and vpp must stay 1 with strategy.stages (not modelled yet)" };
    if (s.first_stage_layers > 0 || s.last_stage_layers > 0)
        return HeteroViolation { "strategy.first_stage_layers",
            "is not given with strategy.stages: each stage says its layers" };
    if (s.schedule == Schedule::interleaved || s.schedule == Schedule::dualpipe)
        return HeteroViolation { "strategy.schedule",
            "must be gpipe, 1f1b or zb-h1 with strategy.stages (interleaved and dualpipe need uniform stages)" };
    return std::nullopt;
}

std::optional<HeteroViolation> check_layers(const Scenario& s)
{
    long long sum = 0;
    for (std::size_t k = 0; k < s.stages.size(); ++k) {
        if (s.stages[k].layers < 1)
            return HeteroViolation { stage_key(static_cast<int>(k)) + ".layers", "must be at least 1" };
        sum += s.stages[k].layers;
    }
    if (sum != s.model.layers)
        return HeteroViolation { "strategy.stages",
            "the stages' layers add up to " + std::to_string(sum) + "; the model " + s.model.name + " has "
                + std::to_string(s.model.layers) };
    return std::nullopt;
}

// One replica against the plain per-layer rules (heads, FFN, precision) on its group's GPU.
std::optional<HeteroViolation> check_replica(const Scenario& s, int k, int r)
{
    const StageReplica& rep = s.stages[k].replicas[r];
    const NodeGroup* g = s.cluster.group(rep.group);
    if (!g)
        return HeteroViolation { replica_key(k, r) + ".group",
            "unknown group \"" + rep.group + "\"; the cluster's groups are " + group_names(s.cluster) };
    if (rep.tp < 1 || rep.tp > g->total_gpus())
        return HeteroViolation { replica_key(k, r) + ".tp",
            "must be between 1 and the " + std::to_string(g->total_gpus()) + " GPUs of group \"" + g->name + "\"" };
    Strategy plain = replica_strategy(s, k, r);
    plain.dp = 1;
    const PlanInputs in { s.model, s.training, g->gpu, plain.total_gpus() };
    for (Rule rule : { Rule::tp_heads, Rule::tp_kv_heads, Rule::tp_ffn, Rule::precision_unsupported,
             Rule::offload_needs_zero, Rule::offload_params_needs_zero3, Rule::gradient_release_accumulation,
             Rule::fp32_reduce_without_zero, Rule::bf16_gradients_megatron }) {
        if (!rule_holds(rule, in, plain)) {
            const std::string key = rule == Rule::tp_heads || rule == Rule::tp_kv_heads || rule == Rule::tp_ffn
                ? replica_key(k, r) + ".tp"
                : std::string(rule_key(rule, plain));
            return HeteroViolation { key, explain(rule, in, plain) + " (group \"" + g->name + "\")" };
        }
    }
    return std::nullopt;
}

std::optional<HeteroViolation> check_replicas(const Scenario& s)
{
    const long long microbatches = s.training.global_batch / s.strategy.micro_batch;
    if (s.training.global_batch % s.strategy.micro_batch != 0)
        return HeteroViolation { "strategy.micro_batch",
            "must divide training.global_batch (" + std::to_string(s.training.global_batch) + ")" };
    std::map<std::string, long long> used;
    for (int k = 0; k < static_cast<int>(s.stages.size()); ++k) {
        const auto& replicas = s.stages[k].replicas;
        if (replicas.empty())
            return HeteroViolation { stage_key(k) + ".replicas", "needs at least one replica" };
        if (static_cast<long long>(replicas.size()) > microbatches)
            return HeteroViolation { stage_key(k) + ".replicas",
                std::to_string(replicas.size()) + " replicas cannot share " + std::to_string(microbatches)
                    + " micro-batches (each needs at least one)" };
        for (int r = 0; r < static_cast<int>(replicas.size()); ++r) {
            if (auto v = check_replica(s, k, r))
                return v;
            used[replicas[r].group] += replicas[r].tp;
        }
    }
    for (const NodeGroup& g : s.cluster.groups)
        if (used[g.name] > g.total_gpus())
            return HeteroViolation { "strategy.stages",
                "the replicas use " + std::to_string(used[g.name]) + " GPUs of group \"" + g.name + "\", which has "
                    + std::to_string(g.total_gpus()) };
    return std::nullopt;
}

} // namespace

Strategy replica_strategy(const Scenario& s, int stage, int replica)
{
    Strategy plain = s.strategy;
    plain.tp = s.stages[stage].replicas[replica].tp;
    plain.pp = static_cast<int>(s.stages.size());
    plain.dp = static_cast<int>(s.stages[stage].replicas.size());
    return plain;
}

std::optional<HeteroViolation> check_hetero_plan(const Scenario& s)
{
    if (!s.cluster.heterogeneous() && s.stages.empty())
        return std::nullopt;
    if (s.stages.empty())
        return HeteroViolation { "strategy.stages",
            "a cluster with groups needs an explicit pipeline: strategy.stages, each with layers and replicas" };
    if (!s.cluster.heterogeneous())
        return HeteroViolation { "cluster.groups", "strategy.stages names node groups: the cluster must list them" };
    if (auto v = check_strategy_fields(s.strategy))
        return v;
    if (auto v = check_layers(s))
        return v;
    return check_replicas(s);
}

} // namespace parallax

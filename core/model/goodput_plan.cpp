#include "model/goodput_plan.hpp"

#include "model/analytic_model.hpp"
#include "model/memory_model.hpp"
#include "model/model_math.hpp"
#include "spec/strategy_rules.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace parallax {

namespace {

constexpr double kSecondsPerHour = 3600;

double nodes_for(double gpus, int gpus_per_node)
{
    return gpus_per_node > 0 ? std::ceil(gpus / gpus_per_node) : gpus;
}

double replacement_s(const NodeGroup& g, const ReliabilitySpec* spec)
{
    if (g.replacement_delay_s)
        return *g.replacement_delay_s;
    return spec ? spec->replacement_delay_s : 0.0;
}

// Spot nodes: each node of a group is preempted at the group's rate; `nodes_of` says how many of a
// group's nodes the plan uses.
template <typename NodesOf> void add_preemptions(const Scenario& s, NodesOf nodes_of, GoodputPlan& plan)
{
    double weighted_wait = 0;
    for (const NodeGroup& g : s.cluster.groups) {
        const double per_s = g.preemption_rate_per_hour * nodes_of(g) / kSecondsPerHour;
        plan.preemptions_per_s += per_s;
        weighted_wait += per_s * replacement_s(g, s.reliability ? &*s.reliability : nullptr);
    }
    plan.preemption_replacement_s = plan.preemptions_per_s > 0 ? weighted_wait / plan.preemptions_per_s : 0.0;
}

} // namespace

int data_parallel_copies(const Scenario& s)
{
    if (!s.heterogeneous())
        return s.strategy.dp;
    int copies = 0;
    for (const PipelineStageSpec& st : s.stages) {
        const int n = static_cast<int>(st.replicas.size());
        copies = copies == 0 ? n : std::min(copies, n);
    }
    return std::max(copies, 1);
}

double checkpoint_bytes(const Scenario& s, const Strategy& strategy)
{
    return total_params(s.model) * (checkpoint_weight_bytes(s.training) + state_bytes(s.training, strategy).optimizer);
}

GoodputPlan goodput_plan(const Scenario& s, const Strategy& strategy, double tokens_per_s, double step_time_s)
{
    GoodputPlan plan;
    plan.tokens_per_s = tokens_per_s;
    plan.step_time_s = step_time_s;
    plan.gpus = static_cast<double>(strategy.total_gpus());
    const int per_node = s.cluster.gpus_per_node;
    plan.nodes = nodes_for(plan.gpus, per_node);
    plan.data_parallel_copies = strategy.dp;
    plan.checkpoint_bytes = checkpoint_bytes(s, strategy);
    plan.parameters = total_params(s.model);
    // Every GPU of a node has its own NIC on the inter-node fabric (bw_Bps is per GPU).
    plan.inter_node_Bps_per_node = s.cluster.inter_node.bw_Bps * std::min<double>(per_node, plan.gpus);
    // Groups without stages: the plan spreads over every group's nodes.
    add_preemptions(
        s, [](const NodeGroup& g) { return static_cast<double>(g.nodes); }, plan);
    return plan;
}

GoodputPlan goodput_plan(const Scenario& s, const HeteroPrediction& h)
{
    GoodputPlan plan;
    plan.tokens_per_s = h.prediction.tokens_per_s;
    plan.step_time_s = h.prediction.step_time_s;
    std::map<std::string, double> gpus_of;
    for (const PipelineStageSpec& st : s.stages)
        for (const StageReplica& r : st.replicas)
            gpus_of[r.group] += r.tp;
    auto nodes_of = [&](const NodeGroup& g) {
        auto it = gpus_of.find(g.name);
        return it == gpus_of.end() ? 0.0 : nodes_for(it->second, g.gpus_per_node);
    };
    // A replacement node receives over its NICs: the slowest node of any group in use sets the rate.
    double slowest_node_Bps = 0;
    for (const NodeGroup& g : s.cluster.groups) {
        plan.nodes += nodes_of(g);
        const double node_Bps = s.cluster.nic_of(g).bw_Bps * g.gpus_per_node;
        if (nodes_of(g) > 0)
            slowest_node_Bps = slowest_node_Bps == 0 ? node_Bps : std::min(slowest_node_Bps, node_Bps);
    }
    for (const auto& [name, gpus] : gpus_of)
        plan.gpus += gpus;
    plan.data_parallel_copies = data_parallel_copies(s);
    plan.checkpoint_bytes = checkpoint_bytes(s, s.strategy);
    plan.parameters = total_params(s.model);
    plan.inter_node_Bps_per_node = slowest_node_Bps;
    add_preemptions(s, nodes_of, plan);
    return plan;
}

double survivor_throughput_fraction(const Scenario& s, const Prediction& p, const Calibration& cal)
{
    const Strategy& full = s.strategy;
    const long long replica_gpus = full.total_gpus() / std::max(1, full.dp);
    const int per_node = s.cluster.gpus_per_node;
    if (full.dp < 2 || s.cluster.heterogeneous() || per_node <= 0 || replica_gpus % per_node != 0
        || p.tokens_per_s <= 0)
        return -1;
    Strategy survivors = full;
    survivors.dp = full.dp - 1;
    ClusterSpec cluster = s.cluster;
    cluster.nodes = static_cast<int>((full.total_gpus() - replica_gpus) / per_node);
    const PlanInputs inputs { s.model, s.training, cluster.gpu, survivors.total_gpus() };
    if (cluster.nodes < 1 || check_strategy(inputs, survivors) != Rule::ok)
        return -1;
    const PlanContext ctx(s.model, s.training, cluster, cal);
    const Prediction q = AnalyticModel(ctx).predict(survivors);
    return q.feasible ? q.tokens_per_s / p.tokens_per_s : -1;
}

GoodputPlan scenario_goodput_plan(const Scenario& s, const Prediction& p, const Calibration& cal)
{
    GoodputPlan plan = goodput_plan(s, s.strategy, p.tokens_per_s, p.step_time_s);
    if (s.reliability->recovery == RecoveryStrategy::replan)
        plan.survivor_throughput_fraction = survivor_throughput_fraction(s, p, cal);
    return plan;
}

GoodputReport scenario_goodput(const Scenario& s, const Prediction& p, const Calibration& cal)
{
    return predict_goodput(*s.reliability, scenario_goodput_plan(s, p, cal));
}

GoodputReport scenario_goodput(const Scenario& s, const HeteroPrediction& h)
{
    return predict_goodput(*s.reliability, goodput_plan(s, h));
}

} // namespace parallax

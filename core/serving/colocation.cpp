#include "serving/colocation.hpp"

#include "serving/serving_context.hpp"
#include "serving/serving_memory.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <map>
#include <sstream>

namespace parallax {

namespace {

// Below this every replica count is tried (a pool of a few nodes); above it powers of two.
constexpr long long kEveryReplicaCountUpTo = 16;

struct Candidate {
    Placement placement;
    OffloadedPrediction offloaded;
    bool slo_met = false;
    double tokens_per_s = 0;
};

// SLO first, then throughput.
bool better(const Candidate& a, const Candidate& b)
{
    if (a.slo_met != b.slo_met)
        return a.slo_met;
    return a.tokens_per_s > b.tokens_per_s;
}

const NodeGroup* find_group(const std::vector<NodeGroup>& groups, const std::string& name)
{
    for (const NodeGroup& g : groups)
        if (g.name == name)
            return &g;
    return nullptr;
}

// TP degrees an instance may take inside one node: powers of two that split the heads and the KV heads
// (or are a multiple of them), as serving_rules.cpp requires.
std::vector<int> tp_degrees(const ModelSpec& m, const NodeGroup& g)
{
    std::vector<int> out;
    for (int tp = 1; tp <= g.gpus_per_node; tp *= 2) {
        const bool heads = m.heads % tp == 0;
        const bool kv = m.kv_heads <= 0 || m.kv_heads % tp == 0 || tp % m.kv_heads == 0;
        if (heads && kv)
            out.push_back(tp);
    }
    return out;
}

// Replica counts tried: every count up to kEveryReplicaCountUpTo, then powers of two and the most that
// fit, so a pool of thousands of GPUs costs a few dozen predictions per layout, not thousands.
std::vector<long long> replica_counts(long long most)
{
    std::vector<long long> out;
    for (long long n = 1; n <= most; n = n < kEveryReplicaCountUpTo ? n + 1 : 2 * n)
        out.push_back(n);
    if (most >= 1 && out.back() != most)
        out.push_back(most);
    return out;
}

Candidate evaluate(const ColocationScenario& s, const ColocatedModel& m, const NodeGroup& g, Placement p)
{
    Candidate c;
    const ServingScenario sc = placed_scenario(s, m, p);
    c.offloaded = predict_offloaded(sc, p.residency, group_host_link(s, g));
    p.residency = c.offloaded.residency;
    c.placement = p;
    c.slo_met = c.offloaded.prediction.feasible && c.offloaded.prediction.slo_met;
    c.tokens_per_s = c.offloaded.prediction.feasible ? c.offloaded.prediction.output_tokens_per_s : 0.0;
    return c;
}

// Fully resident when every weight fits; else the highest residency that fits and the two below it (more
// room for the KV cache, slower steps): the best of them. A fixed residency is taken as given.
std::optional<Candidate> best_residency(
    const ColocationScenario& s, const ColocatedModel& m, const NodeGroup& g, Placement p, long long& evaluated)
{
    if (m.residency) {
        p.residency = *m.residency;
        ++evaluated;
        Candidate c = evaluate(s, m, g, p);
        return c.offloaded.prediction.feasible ? std::optional<Candidate>(c) : std::nullopt;
    }
    std::optional<Candidate> best;
    int tried_below = 0;
    for (int i = 0; i < kResidencySteps && tried_below < 3; ++i) {
        p.residency = 1.0 - static_cast<double>(i) / kResidencySteps;
        ++evaluated;
        const Candidate c = evaluate(s, m, g, p);
        if (!c.offloaded.prediction.feasible)
            continue;
        if (i == 0) // every weight fits: offloading would only slow it down
            return c;
        ++tried_below;
        if (!best || better(c, *best))
            best = c;
    }
    return best;
}

// Every placement of one model, the best residency of each, then the best per (group, GPUs used).
std::vector<Candidate> candidates_for(const ColocationScenario& s, const ColocatedModel& m, long long& evaluated)
{
    std::map<std::pair<std::string, int>, Candidate> best;
    for (const NodeGroup& g : pool_groups(s.cluster)) {
        if (m.group && *m.group != g.name)
            continue;
        for (int tp : tp_degrees(m.model, g)) {
            if (m.tp && *m.tp != tp)
                continue;
            const long long most = g.total_gpus() / tp;
            std::vector<long long> counts = replica_counts(most);
            if (m.replicas)
                counts.assign(*m.replicas <= most ? 1 : 0, *m.replicas);
            for (long long n : counts) {
                const Placement p { g.name, tp, static_cast<int>(n), 1.0 };
                const std::optional<Candidate> c = best_residency(s, m, g, p, evaluated);
                if (!c)
                    continue;
                const auto key = std::make_pair(g.name, p.gpus());
                const auto it = best.find(key);
                if (it == best.end() || better(*c, it->second))
                    best[key] = *c;
            }
        }
    }
    std::vector<Candidate> out;
    for (auto& [key, c] : best)
        out.push_back(std::move(c));
    return out;
}

struct Choice {
    std::vector<int> pick; // candidate index per model, -1 = not placed
    int slo_met = -1;
    double objective = -1;
};

// Depth-first over the models, GPUs of each group counted down.
Choice search_combinations(const ColocationScenario& s, const std::vector<std::vector<Candidate>>& cands,
    const std::vector<double>& alone_tokens)
{
    std::map<std::string, long long> left;
    for (const NodeGroup& g : pool_groups(s.cluster))
        left[g.name] = g.total_gpus();
    Choice best;
    Choice cur;
    cur.pick.assign(cands.size(), -1);
    std::function<void(std::size_t, int, double)> visit = [&](std::size_t i, int slo, double objective) {
        if (i == cands.size()) {
            if (slo > best.slo_met || (slo == best.slo_met && objective > best.objective)) {
                best = cur;
                best.slo_met = slo;
                best.objective = objective;
            }
            return;
        }
        const double weight = s.models[i].priority / std::max(1e-12, alone_tokens[i]);
        for (std::size_t k = 0; k < cands[i].size(); ++k) {
            const Candidate& c = cands[i][k];
            long long& free_gpus = left[c.placement.group];
            if (c.placement.gpus() > free_gpus)
                continue;
            free_gpus -= c.placement.gpus();
            cur.pick[i] = static_cast<int>(k);
            visit(i + 1, slo + (c.slo_met ? 1 : 0), objective + weight * c.tokens_per_s);
            free_gpus += c.placement.gpus();
        }
        cur.pick[i] = -1;
        visit(i + 1, slo, objective);
    };
    visit(0, 0, 0.0);
    return best;
}

std::string percent(double fraction)
{
    std::ostringstream o;
    o << std::lround(100.0 * fraction) << "%";
    return o.str();
}

std::string seconds(double s)
{
    std::ostringstream o;
    o.setf(std::ios::fixed);
    o.precision(s < 10 ? 1 : 0);
    o << s << " s";
    return o.str();
}

double relative_at(const ResidencyCurve& c, double residency)
{
    for (const ResidencyPoint& p : c.points)
        if (std::abs(p.residency - residency) < 0.5 / kResidencySteps)
            return p.relative_throughput;
    return 1.0;
}

std::string explain(const PlacedModel& m)
{
    std::ostringstream o;
    const Placement& p = m.placement;
    o << m.name
      << (p.residency >= 1.0 ? " stays fully resident on " : " is offloaded to " + percent(p.residency) + " on ")
      << p.gpus() << " " << m.gpu << " (" << p.group << ", TP" << p.tp << " x " << p.replicas << "): ";
    if (p.residency >= 1.0)
        o << "at 50% residency it would lose " << percent(m.loss_at_half_residency);
    else
        o << "loses " << percent(1.0 - 1.0 / m.offloaded.decode_slowdown) << " against fully resident (knee at "
          << percent(m.curve.knee_residency) << ")";
    o << "; " << percent(m.normalised_throughput) << " of its throughput alone on the pool; preempting it costs "
      << seconds(m.preemption.total_s()) << " (weights " << seconds(m.preemption.weights_reload_s) << ", KV "
      << to_string(m.preemption.kv) << " " << seconds(m.preemption.kv_s) << ", warm-up "
      << seconds(m.preemption.warm_up_s) << ")";
    return o.str();
}

void fill_placed(const ColocationScenario& s, const ColocatedModel& m, const Candidate& c, PlacedModel& out)
{
    const std::vector<NodeGroup> groups = pool_groups(s.cluster);
    const NodeGroup* g = find_group(groups, c.placement.group);
    const HostLink link = group_host_link(s, *g);
    out.placed = true;
    out.placement = c.placement;
    out.gpu = g->gpu.name;
    out.offloaded = c.offloaded;
    const ServingScenario sc = placed_scenario(s, m, c.placement);
    out.curve = residency_curve(sc, link, kResidencySteps);
    out.loss_at_half_residency = 1.0 - relative_at(out.curve, 0.5);
    const ServingContext ctx(sc.model, sc.cluster, sc.serving, sc.deployment.instance);
    const double resident = weights_bytes_per_gpu(ctx) - c.offloaded.offloaded_bytes_per_gpu;
    out.preemption = preemption_cost(sc, c.offloaded.prediction, link, s.preemption, resident);
    // The recompute runs through the same offload pipeline, in steps of the engine's whole token budget.
    if (out.preemption.kv == KvRecovery::recompute && out.preemption.kv_steps > 0)
        out.preemption.kv_s *= offload_slowdown(out.preemption.kv_s / out.preemption.kv_steps, sc.model.layers,
            c.offloaded.offloaded_layers, c.offloaded.fetch_s_per_layer);
    for (const NodeGroup& other : groups) {
        if (c.placement.tp > other.gpus_per_node)
            continue;
        const ServingScenario there = placed_scenario(s, m, { other.name, c.placement.tp, 1, 1.0 });
        out.preemption_by_group.push_back({ other.name, other.gpu.name,
            preemption_cost(there, c.offloaded.prediction, group_host_link(s, other), s.preemption) });
    }
}

} // namespace

ColocationResult plan_colocation(const ColocationScenario& s)
{
    const auto start = std::chrono::steady_clock::now();
    ColocationResult r;
    std::vector<std::vector<Candidate>> cands;
    std::vector<double> alone_tokens;
    std::vector<Placement> alone;
    for (const ColocatedModel& m : s.models) {
        cands.push_back(candidates_for(s, m, r.evaluated));
        const auto best = std::min_element(cands.back().begin(), cands.back().end(), better);
        alone_tokens.push_back(best == cands.back().end() ? 0.0 : best->tokens_per_s);
        alone.push_back(best == cands.back().end() ? Placement {} : best->placement);
    }
    const Choice choice = search_combinations(s, cands, alone_tokens);
    for (std::size_t i = 0; i < s.models.size(); ++i) {
        PlacedModel pm;
        pm.name = s.models[i].name;
        pm.alone = alone[i];
        pm.alone_tokens_per_s = alone_tokens[i];
        if (choice.pick[i] >= 0) {
            const Candidate& c = cands[i][static_cast<std::size_t>(choice.pick[i])];
            fill_placed(s, s.models[i], c, pm);
            pm.normalised_throughput = alone_tokens[i] > 0 ? c.tokens_per_s / alone_tokens[i] : 0.0;
            pm.slowdown_vs_alone = c.tokens_per_s > 0 ? alone_tokens[i] / c.tokens_per_s : 0.0;
            pm.explanation = explain(pm);
        } else {
            r.warnings.push_back(pm.name + " is not placed: no GPUs are left that hold it"
                + (cands[i].empty() ? std::string(" (it fits no group at any residency)") : std::string()));
        }
        r.models.push_back(std::move(pm));
    }
    r.slo_met = std::max(0, choice.slo_met);
    r.objective = std::max(0.0, choice.objective);
    r.feasible = r.slo_met == static_cast<int>(s.models.size());
    for (const PlacedModel& m : r.models)
        if (m.placed && !m.offloaded.prediction.slo_met)
            r.warnings.push_back(m.name + " misses its SLO at the best placement left for it");
    for (const NodeGroup& g : pool_groups(s.cluster)) {
        PoolGroupUse u { g.name, g.gpu.name, g.total_gpus(), 0, group_host_link(s, g) };
        for (const PlacedModel& m : r.models)
            if (m.placed && m.placement.group == g.name)
                u.used += m.placement.gpus();
        r.pool.push_back(u);
    }
    r.suggestion = colocation_suggestion(r.models);
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return r;
}

ServingScenario placed_scenario(const ColocationScenario& s, const ColocatedModel& m, const Placement& p)
{
    const std::vector<NodeGroup> groups = pool_groups(s.cluster);
    const NodeGroup* g = find_group(groups, p.group);
    ServingScenario sc;
    sc.model = m.model;
    sc.cluster.name = p.group;
    sc.cluster.gpu = g ? g->gpu : s.cluster.gpu;
    sc.cluster.nodes = g ? g->nodes : s.cluster.nodes;
    sc.cluster.gpus_per_node = g ? g->gpus_per_node : s.cluster.gpus_per_node;
    sc.cluster.intra_node = g ? g->intra_node : s.cluster.intra_node;
    sc.cluster.inter_node = s.cluster.inter_node;
    sc.serving = m.serving;
    sc.deployment.instance.tp = p.tp;
    sc.deployment.replicas = p.replicas;
    return sc;
}

} // namespace parallax

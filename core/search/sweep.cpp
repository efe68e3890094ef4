#include "search/sweep.hpp"

#include "spec/input_error.hpp"

#include <cmath>

namespace parallax {

std::string strategy_family(const Strategy& s)
{
    std::string f;
    auto add = [&](const char* name, int v) {
        if (v > 1)
            f += (f.empty() ? "" : " × ") + std::string(name) + " " + std::to_string(v);
    };
    add("TP", s.tp);
    add("CP", s.cp);
    add("PP", s.pp);
    add("EP", s.ep);
    if (s.dp > 1)
        f += (f.empty() ? "" : " × ") + std::string(s.zero >= 3 ? "FSDP" : "DP");
    return f.empty() ? "single GPU" : f;
}

namespace {

void annotate(std::vector<SweepPoint>& points, const SweepOptions& o, bool per_gpu_scaling)
{
    for (std::size_t i = 0; i < points.size(); ++i) {
        SweepPoint& p = points[i];
        if (!p.has_best)
            continue;
        if (i == 0 || !points[i - 1].has_best) {
            continue;
        }
        const SweepPoint& prev = points[i - 1];
        if (p.family != prev.family)
            p.notes.push_back("winning family changes: " + prev.family + " -> " + p.family);
        if (!per_gpu_scaling)
            continue;
        const double added = static_cast<double>(p.gpus - prev.gpus);
        if (added > 0) {
            p.marginal_tokens_per_s_per_added_gpu = (p.tokens_per_s - prev.tokens_per_s) / added;
            p.marginal_efficiency
                = prev.tokens_per_s_per_gpu > 0 ? p.marginal_tokens_per_s_per_added_gpu / prev.tokens_per_s_per_gpu : 0;
            if (p.marginal_efficiency < o.stop_paying_below) {
                char buf[200];
                std::snprintf(buf, sizeof buf,
                    "adding GPUs stops paying: each added GPU brings %.0f%% of the previous per-GPU throughput",
                    100 * p.marginal_efficiency);
                p.notes.push_back(buf);
            }
        }
    }
    const SweepPoint* first = nullptr;
    for (auto& p : points)
        if (p.has_best) {
            if (!first)
                first = &p;
            p.scaling_efficiency
                = first->tokens_per_s_per_gpu > 0 ? p.tokens_per_s_per_gpu / first->tokens_per_s_per_gpu : 0;
        }
}

SweepPoint run_point(const Scenario& s, const std::string& label, const SweepOptions& o)
{
    SweepPoint p;
    p.label = label;
    p.search = search_strategies(s, o.search);
    p.gpus = p.search.gpus;
    if (!p.search.results.empty()) {
        p.has_best = true;
        p.tokens_per_s = p.search.results.front().prediction.tokens_per_s;
        p.tokens_per_s_per_gpu = p.tokens_per_s / static_cast<double>(p.gpus);
        p.family = strategy_family(p.search.results.front().strategy);
    } else {
        p.notes.push_back("no feasible plan");
    }
    return p;
}

} // namespace

std::vector<SweepPoint> sweep_gpus(const Scenario& s, const std::vector<long long>& gpus, const SweepOptions& o)
{
    std::vector<SweepPoint> points;
    for (long long g : gpus) {
        if (g <= 0 || g % s.cluster.gpus_per_node != 0)
            throw InputError("--gpus", std::to_string(g),
                "GPU counts must be positive multiples of the cluster's " + std::to_string(s.cluster.gpus_per_node)
                    + " GPUs per node");
        Scenario at = s;
        at.cluster.nodes = static_cast<int>(g / s.cluster.gpus_per_node);
        if (at.search)
            at.search->max_gpus.reset();
        if (o.search.cancel.cancelled())
            break;
        points.push_back(run_point(at, std::to_string(g) + " GPUs", o));
    }
    annotate(points, o, true);
    return points;
}

std::vector<SweepPoint> sweep_global_batch(
    const Scenario& s, const std::vector<long long>& batches, const SweepOptions& o)
{
    std::vector<SweepPoint> points;
    for (long long b : batches) {
        Scenario at = s;
        at.training.global_batch = b;
        points.push_back(run_point(at, "global batch " + std::to_string(b), o));
    }
    annotate(points, o, false);
    return points;
}

std::vector<SweepPoint> sweep_seq_len(const Scenario& s, const std::vector<long long>& lengths, const SweepOptions& o)
{
    std::vector<SweepPoint> points;
    for (long long l : lengths) {
        Scenario at = s;
        at.training.seq_len = l;
        points.push_back(run_point(at, "seq_len " + std::to_string(l), o));
    }
    annotate(points, o, false);
    return points;
}

std::vector<SweepPoint> sweep_clusters(
    const Scenario& s, const std::vector<ClusterSpec>& clusters, const SweepOptions& o)
{
    std::vector<SweepPoint> points;
    for (const ClusterSpec& c : clusters) {
        Scenario at = s;
        at.cluster = c;
        points.push_back(run_point(at, c.name, o));
    }
    annotate(points, o, false);
    return points;
}

} // namespace parallax

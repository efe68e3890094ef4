#pragma once
// Scaling sweeps: the best plan at each GPU count (or global batch, sequence length, cluster preset),
// the marginal throughput per added GPU, and the points where adding GPUs stops paying or where the
// winning strategy family changes.
#include "search/search.hpp"

#include <string>
#include <vector>

namespace parallax {

struct SweepPoint {
    std::string label; // "512 GPUs", "global batch 1024", ...
    long long gpus = 0;
    SearchOutcome search;
    bool has_best = false;
    double tokens_per_s = 0;
    double tokens_per_s_per_gpu = 0;
    double marginal_tokens_per_s_per_added_gpu = 0; // vs the previous point
    double marginal_efficiency = 1; // marginal gain per added GPU / previous per-GPU throughput
    double scaling_efficiency = 1; // per-GPU throughput vs the first point
    // Which parallel dimensions the winner uses, in strategy_label's notation: "TP 8 × PP 4 × DP".
    std::string family;
    std::vector<std::string> notes; // inflection points and family changes
};

struct SweepOptions {
    SearchOptions search;
    double stop_paying_below = 0.5; // marginal efficiency under which adding GPUs "stops paying"
};

// GPU counts must be multiples of the cluster's GPUs per node.
std::vector<SweepPoint> sweep_gpus(const Scenario& s, const std::vector<long long>& gpus, const SweepOptions& o);
std::vector<SweepPoint> sweep_global_batch(
    const Scenario& s, const std::vector<long long>& batches, const SweepOptions& o);
std::vector<SweepPoint> sweep_seq_len(const Scenario& s, const std::vector<long long>& lengths, const SweepOptions& o);
std::vector<SweepPoint> sweep_clusters(
    const Scenario& s, const std::vector<ClusterSpec>& clusters, const SweepOptions& o);

std::string strategy_family(const Strategy& s);

} // namespace parallax

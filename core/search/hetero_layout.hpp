#pragma once
// How a heterogeneous search arranges the node groups' GPUs into pipeline stages and replicas (the
// layouts it enumerates), and the explicit stages a layout and a layer split give.
#include "search/search.hpp"
#include "spec/hetero_stages.hpp"
#include "spec/scenario.hpp"

#include <string>
#include <vector>

namespace parallax {

// The two families of layouts the search enumerates.
enum class HeteroFamily : unsigned char {
    // Each used group holds its own consecutive stages, in the order of `shares`: a pipeline over the
    // GPU types, layers balanced by the stages' speeds (Metis, FlashFlex, HexiScale's inter-stage split).
    group_blocks,
    // Every stage has replicas on every used group: data parallelism across GPU types, the batch split
    // by speed (Sailor, Whale's intra-stage split); stages alike, so layers nearly even.
    shared_stages,
};

// One used group's part of a layout: `pp` stages (group_blocks) or one share of every stage
// (shared_stages), each with `replicas` replicas of `tp` GPUs of the group.
struct GroupShare {
    int group = 0; // index into cluster.groups
    int tp = 1;
    int pp = 1; // stages this group holds (group_blocks); the layout's depth (shared_stages)
    int replicas = 1; // per stage
    bool operator==(const GroupShare&) const = default;
};

struct HeteroLayout {
    HeteroFamily family = HeteroFamily::group_blocks;
    std::vector<GroupShare> shares; // group_blocks: in pipeline order
    int depth() const; // pipeline stages
    long long gpus() const;
    bool operator==(const HeteroLayout&) const = default;
};

// The stages of `layout` with `layers[k]` layers in stage k (layers.size() == depth()).
std::vector<PipelineStageSpec> layout_stages(
    const HeteroLayout& layout, const ClusterSpec& cluster, const std::vector<int>& layers);
// The groups of the cluster the layout leaves idle, by name.
std::vector<std::string> idle_groups(const HeteroLayout& layout, const ClusterSpec& cluster);
// "h100 TP8 x4 (2 stages) -> a100 TP8 x4 (2 stages)" or "every stage: h100 TP8 x2 + a100 TP4 x4 (4 stages)".
std::string layout_label(const HeteroLayout& layout, const ClusterSpec& cluster);
// The groups holding stage k, by name ("h100" or "h100 + a100").
std::string stage_groups(const HeteroLayout& layout, const ClusterSpec& cluster, int stage);
const char* to_string(HeteroFamily f);

// The tensor-parallel degrees a replica on group g may use: divisors of its GPUs per node that divide
// the heads, KV heads and FFN width, on a GPU that runs the precision (or the pinned one).
std::vector<int> group_tps(const Scenario& s, int group, const SearchFix& fix);

// A share of group g with tp and pp stages: as many replicas per stage as its GPUs allow (at most
// `max_replicas`, each needs a micro-batch); nullopt when not one replica fits.
std::optional<GroupShare> make_share(const Scenario& s, int group, int tp, int pp, long long max_replicas);

// The TPs each group is tried at, by group index.
using GroupTps = std::vector<std::vector<int>>;

// Each group alone: every valid TP at every depth up to `max_depth` (the pinned tp and pp honoured).
std::vector<HeteroLayout> single_group_layouts(const Scenario& s, const SearchFix& fix, int max_depth);
// Every subset of two or more groups (the others idle), both families, each group at the TPs in `tps`,
// at most `max_depth` stages (the pinned pp honoured); subsets of four groups or more at each group's
// first TP. `capped` is set when a cluster of many groups had more layouts than are costed.
std::vector<HeteroLayout> multi_group_layouts(
    const Scenario& s, const SearchFix& fix, int max_depth, const GroupTps& tps, bool* capped = nullptr);

// Layers per stage in proportion to `speed` (largest remainder), each stage at least one.
std::vector<int> proportional_layers(int total, const std::vector<double>& speed);
// A first guess of each stage's speed: its replicas' GPUs x their dense peak for the precision.
std::vector<double> peak_stage_speeds(const HeteroLayout& layout, const Scenario& s);

} // namespace parallax

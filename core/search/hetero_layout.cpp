#include "search/hetero_layout.hpp"

#include "spec/strategy_rules.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>

namespace parallax {

namespace {

// Stage counts a group alone (or a shared pipeline) is tried at: the depths recipes use plus the small
// divisors that keep every GPU of a group busy (3 stages of 7 nodes...). More would multiply the
// layouts without new kinds of plans.
constexpr int kDepths[] = { 1, 2, 3, 4, 6, 8, 12, 16 };
// A group's block in a pipeline of several groups holds a share of the layers, so fewer stages: the
// powers of two keep the combinations of three groups to a few hundred per order.
constexpr int kBlockDepths[] = { 1, 2, 4, 8 };
// Subsets of more groups than kWideSubset try each group at its best TP only and at most 4 stages: the
// combinations grow as (TPs x depths) to the power of the groups.
constexpr std::size_t kWideSubset = 3;
constexpr int kWideBlockDepths[] = { 1, 2, 4 };
// Layouts of several groups costed at most (clusters of many groups); subsets of more groups than
// kMaxSubsetGroups are not formed (1u << groups).
constexpr std::size_t kMaxLayouts = 20000;
constexpr int kMaxSubsetGroups = 16;

std::string share_text(const GroupShare& g, const ClusterSpec& c)
{
    return c.groups[static_cast<std::size_t>(g.group)].name + " TP" + std::to_string(g.tp) + " x"
        + std::to_string(g.replicas);
}

// The orders a subset of groups is tried in as a pipeline of blocks: both orders of two groups; beyond
// that the most memory first (the first stage holds the most activations in flight under 1F1B, the
// balancing evens out the speeds whatever the order) and its reverse.
std::vector<std::vector<int>> block_orders(const Scenario& s, std::vector<int> subset)
{
    std::vector<std::vector<int>> orders;
    if (subset.size() <= 2) {
        std::sort(subset.begin(), subset.end());
        do
            orders.push_back(subset);
        while (std::next_permutation(subset.begin(), subset.end()));
        return orders;
    }
    std::stable_sort(subset.begin(), subset.end(), [&](int a, int b) {
        return s.cluster.groups[static_cast<std::size_t>(a)].gpu.memory_bytes
            > s.cluster.groups[static_cast<std::size_t>(b)].gpu.memory_bytes;
    });
    orders.push_back(subset);
    std::reverse(subset.begin(), subset.end());
    orders.push_back(subset);
    return orders;
}

long long max_replicas(const Scenario& s)
{
    return std::max<long long>(1, s.training.global_batch); // each replica needs a micro-batch of 1 at least
}

// Every (tp, pp) share of one group, as a block of its own stages.
template <class Depths>
std::vector<GroupShare> block_shares(const Scenario& s, int group, const std::vector<int>& tps, const Depths& depths,
    const SearchFix& fix, int max_depth)
{
    std::vector<GroupShare> out;
    for (int tp : tps)
        for (int pp : depths)
            if (pp <= max_depth && (!fix.pp || pp <= *fix.pp))
                if (auto share = make_share(s, group, tp, pp, max_replicas(s)))
                    out.push_back(*share);
    return out;
}

// The blocks of one order: every combination of the groups' shares within the depth limit.
void add_block_layouts(const std::vector<std::vector<GroupShare>>& options, const SearchFix& fix, int max_depth,
    std::vector<HeteroLayout>& out)
{
    HeteroLayout l;
    l.family = HeteroFamily::group_blocks;
    l.shares.resize(options.size());
    auto recurse = [&](auto&& self, std::size_t i, int depth) -> void {
        if (i == options.size()) {
            if (!fix.pp || depth == *fix.pp)
                out.push_back(l);
            return;
        }
        for (const GroupShare& g : options[i]) {
            if (depth + g.pp > max_depth)
                continue;
            l.shares[i] = g;
            self(self, i + 1, depth + g.pp);
        }
    };
    recurse(recurse, 0, 0);
}

// Every stage on every group of the subset: one depth, a TP per group.
void add_shared_layouts(const Scenario& s, const std::vector<int>& subset, const GroupTps& tps, const SearchFix& fix,
    int max_depth, std::vector<HeteroLayout>& out)
{
    for (int depth : kDepths) {
        if (depth > max_depth || (fix.pp && depth != *fix.pp))
            continue;
        std::vector<std::vector<GroupShare>> options;
        for (int g : subset) {
            std::vector<GroupShare> shares;
            for (int tp : tps[static_cast<std::size_t>(g)])
                if (auto share = make_share(s, g, tp, depth, max_replicas(s)))
                    shares.push_back(*share);
            if (shares.empty())
                break;
            options.push_back(std::move(shares));
        }
        if (options.size() != subset.size())
            continue;
        HeteroLayout l;
        l.family = HeteroFamily::shared_stages;
        l.shares.resize(options.size());
        auto recurse = [&](auto&& self, std::size_t i) -> void {
            if (i == options.size()) {
                out.push_back(l);
                return;
            }
            for (const GroupShare& g : options[i]) {
                l.shares[i] = g;
                self(self, i + 1);
            }
        };
        recurse(recurse, 0);
    }
}

} // namespace

int HeteroLayout::depth() const
{
    if (family == HeteroFamily::shared_stages)
        return shares.empty() ? 0 : shares.front().pp;
    int d = 0;
    for (const GroupShare& g : shares)
        d += g.pp;
    return d;
}

long long HeteroLayout::gpus() const
{
    long long n = 0;
    for (const GroupShare& g : shares)
        n += static_cast<long long>(g.tp) * g.pp * g.replicas;
    return n;
}

const char* to_string(HeteroFamily f)
{
    return f == HeteroFamily::group_blocks ? "group_blocks" : "shared_stages";
}

std::vector<PipelineStageSpec> layout_stages(
    const HeteroLayout& layout, const ClusterSpec& cluster, const std::vector<int>& layers)
{
    std::vector<PipelineStageSpec> stages(static_cast<std::size_t>(layout.depth()));
    for (std::size_t k = 0; k < stages.size(); ++k)
        stages[k].layers = layers[k];
    auto replicas_of = [&](const GroupShare& g) {
        return std::vector<StageReplica>(static_cast<std::size_t>(g.replicas),
            StageReplica { cluster.groups[static_cast<std::size_t>(g.group)].name, g.tp });
    };
    if (layout.family == HeteroFamily::shared_stages) {
        for (PipelineStageSpec& st : stages)
            for (const GroupShare& g : layout.shares) {
                const std::vector<StageReplica> r = replicas_of(g);
                st.replicas.insert(st.replicas.end(), r.begin(), r.end());
            }
        return stages;
    }
    std::size_t k = 0;
    for (const GroupShare& g : layout.shares)
        for (int i = 0; i < g.pp; ++i)
            stages[k++].replicas = replicas_of(g);
    return stages;
}

std::vector<std::string> idle_groups(const HeteroLayout& layout, const ClusterSpec& cluster)
{
    std::vector<std::string> out;
    for (std::size_t i = 0; i < cluster.groups.size(); ++i)
        if (std::none_of(layout.shares.begin(), layout.shares.end(),
                [&](const GroupShare& g) { return g.group == static_cast<int>(i); }))
            out.push_back(cluster.groups[i].name);
    return out;
}

std::string layout_label(const HeteroLayout& layout, const ClusterSpec& cluster)
{
    std::string out;
    if (layout.family == HeteroFamily::shared_stages) {
        out = "every stage: ";
        for (std::size_t i = 0; i < layout.shares.size(); ++i)
            out += (i ? " + " : "") + share_text(layout.shares[i], cluster);
        return out + " (" + std::to_string(layout.depth()) + (layout.depth() == 1 ? " stage)" : " stages)");
    }
    for (std::size_t i = 0; i < layout.shares.size(); ++i) {
        const GroupShare& g = layout.shares[i];
        out += (i ? " -> " : "") + share_text(g, cluster) + " (" + std::to_string(g.pp)
            + (g.pp == 1 ? " stage)" : " stages)");
    }
    return out;
}

std::string stage_groups(const HeteroLayout& layout, const ClusterSpec& cluster, int stage)
{
    if (layout.family == HeteroFamily::shared_stages) {
        std::string out;
        for (std::size_t i = 0; i < layout.shares.size(); ++i)
            out += (i ? " + " : "") + cluster.groups[static_cast<std::size_t>(layout.shares[i].group)].name;
        return out;
    }
    int first = 0;
    for (const GroupShare& g : layout.shares) {
        if (stage < first + g.pp)
            return cluster.groups[static_cast<std::size_t>(g.group)].name;
        first += g.pp;
    }
    return {};
}

std::vector<int> group_tps(const Scenario& s, int group, const SearchFix& fix)
{
    const NodeGroup& g = s.cluster.groups[static_cast<std::size_t>(group)];
    std::vector<int> out;
    for (int tp = 1; tp <= g.gpus_per_node; ++tp) {
        if (g.gpus_per_node % tp != 0 || (fix.tp && tp != *fix.tp))
            continue;
        Strategy plain = s.strategy;
        plain.tp = tp;
        plain.pp = 1;
        plain.dp = 1;
        plain.cp = plain.ep = plain.vpp = 1;
        const PlanInputs in { s.model, s.training, g.gpu, tp };
        if (rule_holds(Rule::tp_heads, in, plain) && rule_holds(Rule::tp_kv_heads, in, plain)
            && rule_holds(Rule::tp_ffn, in, plain) && rule_holds(Rule::precision_unsupported, in, plain))
            out.push_back(tp);
    }
    return out;
}

std::optional<GroupShare> make_share(const Scenario& s, int group, int tp, int pp, long long max_replicas)
{
    const long long gpus = s.cluster.groups[static_cast<std::size_t>(group)].total_gpus();
    const long long replicas = std::min(max_replicas, gpus / (static_cast<long long>(tp) * pp));
    if (replicas < 1 || pp > s.model.layers)
        return std::nullopt;
    return GroupShare { group, tp, pp, static_cast<int>(replicas) };
}

std::vector<HeteroLayout> single_group_layouts(const Scenario& s, const SearchFix& fix, int max_depth)
{
    max_depth = std::min(max_depth, s.model.layers);
    std::vector<HeteroLayout> out;
    for (int g = 0; g < static_cast<int>(s.cluster.groups.size()); ++g)
        for (const GroupShare& share : block_shares(s, g, group_tps(s, g, fix), kDepths, fix, max_depth))
            if (!fix.pp || share.pp == *fix.pp)
                out.push_back(HeteroLayout { HeteroFamily::group_blocks, { share } });
    return out;
}

std::vector<HeteroLayout> multi_group_layouts(
    const Scenario& s, const SearchFix& fix, int max_depth, const GroupTps& tps, bool* capped)
{
    const int groups = std::min(static_cast<int>(s.cluster.groups.size()), kMaxSubsetGroups);
    max_depth = std::min(max_depth, s.model.layers);
    std::vector<std::vector<GroupShare>> blocks(static_cast<std::size_t>(groups));
    std::vector<std::vector<GroupShare>> wide_blocks(static_cast<std::size_t>(groups));
    for (int g = 0; g < groups; ++g) {
        const std::vector<int>& t = tps[static_cast<std::size_t>(g)];
        blocks[static_cast<std::size_t>(g)] = block_shares(s, g, t, kBlockDepths, fix, max_depth);
        const std::vector<int> best(t.begin(), t.begin() + std::min<std::ptrdiff_t>(1, std::ssize(t)));
        wide_blocks[static_cast<std::size_t>(g)] = block_shares(s, g, best, kWideBlockDepths, fix, max_depth);
    }
    std::vector<unsigned> masks; // smallest subsets first: a cap leaves out the widest
    for (unsigned mask = 1; mask < (1u << groups); ++mask)
        if (std::popcount(mask) >= 2)
            masks.push_back(mask);
    std::stable_sort(
        masks.begin(), masks.end(), [](unsigned a, unsigned b) { return std::popcount(a) < std::popcount(b); });
    std::vector<HeteroLayout> out;
    for (unsigned mask : masks) {
        if (out.size() >= kMaxLayouts) {
            if (capped)
                *capped = true;
            break;
        }
        std::vector<int> subset;
        for (int g = 0; g < groups; ++g)
            if (mask & (1u << g))
                subset.push_back(g);
        const bool wide = subset.size() > kWideSubset;
        for (const std::vector<int>& order : block_orders(s, subset)) {
            std::vector<std::vector<GroupShare>> options;
            for (int g : order)
                options.push_back((wide ? wide_blocks : blocks)[static_cast<std::size_t>(g)]);
            add_block_layouts(options, fix, max_depth, out);
        }
        add_shared_layouts(s, subset, tps, fix, max_depth, out);
    }
    return out;
}

std::vector<int> proportional_layers(int total, const std::vector<double>& speed)
{
    const std::size_t n = speed.size();
    std::vector<int> layers(n, 1);
    const double sum = std::accumulate(speed.begin(), speed.end(), 0.0);
    const int free_layers = total - static_cast<int>(n);
    if (n == 0 || free_layers < 0 || sum <= 0)
        return layers;
    // Each stage's one layer is given; the rest in proportion, the remainders to the largest fractions.
    std::vector<std::pair<double, std::size_t>> remainders;
    int given = 0;
    for (std::size_t k = 0; k < n; ++k) {
        const double want = std::max(0.0, total * speed[k] / sum - 1);
        const int whole = std::min(free_layers - given, static_cast<int>(std::floor(want)));
        layers[k] += whole;
        given += whole;
        remainders.push_back({ want - whole, k });
    }
    std::stable_sort(
        remainders.begin(), remainders.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    for (std::size_t i = 0; given < free_layers; i = (i + 1) % n, ++given)
        ++layers[remainders[i].second];
    return layers;
}

std::vector<double> peak_stage_speeds(const HeteroLayout& layout, const Scenario& s)
{
    std::vector<double> speed(static_cast<std::size_t>(layout.depth()), 0.0);
    auto share_speed = [&](const GroupShare& g) {
        return static_cast<double>(g.tp) * g.replicas
            * s.cluster.groups[static_cast<std::size_t>(g.group)].gpu.peak(s.training.precision);
    };
    if (layout.family == HeteroFamily::shared_stages) {
        double stage = 0;
        for (const GroupShare& g : layout.shares)
            stage += share_speed(g);
        std::fill(speed.begin(), speed.end(), stage);
        return speed;
    }
    std::size_t k = 0;
    for (const GroupShare& g : layout.shares)
        for (int i = 0; i < g.pp; ++i)
            speed[k++] = share_speed(g);
    return speed;
}

} // namespace parallax

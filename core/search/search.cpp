#include "search/search.hpp"

#include "calibration/error_band.hpp"
#include "calibration/nearest_run.hpp"
#include "io/scenario_io.hpp"
#include "model/goodput_plan.hpp"
#include "model/plan_context.hpp"
#include "model/strategy_costs.hpp"
#include "search/search_removals.hpp"
#include "sim/simulated_model.hpp"
#include "spec/framework_support.hpp"
#include "spec/strategy_rules.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <thread>
#include <tuple>

namespace parallax {

namespace {

constexpr int kMaxTp = 64;
constexpr int kMaxCp = 32;
constexpr int kMaxVpp = 16;
// Virtual stages whose layers do not divide evenly (Llama 3.1 405B's 126 layers over 16 x 4 chunks, as
// Meta ran it) are searched while the fullest chunk holds at most this much above the mean: beyond it the
// slowest stage costs more than the smaller bubble saves.
constexpr double kMaxChunkImbalance = 1.25;
constexpr int kMaxMicroBatch = 32;
constexpr std::size_t kMaxPareto = 64;
// A plan with less than this memory headroom is reported as limited by memory capacity ("memory-capacity",
// not "memory-bound", which names kernels limited by memory bandwidth).
constexpr double kMemoryCapacityHeadroom = 0.05;

std::vector<int> divisors_of(long long n, long long cap)
{
    std::vector<int> out;
    for (long long d = 1; d <= n && d <= cap; ++d)
        if (n % d == 0)
            out.push_back(static_cast<int>(d));
    return out;
}

template <typename T> std::vector<T> pinned_or(const std::optional<T>& pin, std::vector<T> all)
{
    if (pin)
        return { *pin };
    return all;
}

double objective_of(SearchObjective o, const AnalyticResult& r)
{
    switch (o) {
    case SearchObjective::throughput:
    case SearchObjective::time_to_train:
        return r.tokens_per_s;
    case SearchObjective::energy:
        return -r.power.energy_J_per_token;
    }
    return r.tokens_per_s;
}

auto strategy_tuple(const Strategy& s)
{
    return std::make_tuple(s.tp, s.pp, s.dp, s.cp, s.ep, s.vpp, s.micro_batch, static_cast<int>(s.schedule),
        static_cast<int>(s.recompute), s.zero, s.sequence_parallel, s.offload_optimizer, s.expert_tp,
        static_cast<int>(s.cp_kind), to_string(s.rank_order), s.offload_activations, s.offload_params);
}

struct Candidate {
    Strategy strategy;
    AnalyticResult result;
    double objective = 0;
    double headroom = 0; // of the GPU's memory (headroom())
};

bool better(const Candidate& a, const Candidate& b)
{
    if (a.objective != b.objective)
        return a.objective > b.objective;
    return strategy_less(a.strategy, b.strategy);
}

double headroom(const AnalyticResult& r, double capacity)
{
    return (capacity - r.peak_memory_bytes) / capacity;
}

// The Pareto front of (throughput up, memory headroom up, power down) kept so far, its objectives side
// by side: most candidates are rejected by the dominance scan, which then reads a few cache lines
// rather than whole results.
struct ParetoSet {
    struct Point {
        double tokens_per_s = 0, headroom = 0, watts = 0;
    };
    std::vector<Candidate> items;
    std::vector<Point> points; // points[i] is items[i]'s
};

ParetoSet::Point point_of(const Candidate& c)
{
    return { c.result.tokens_per_s, c.headroom, c.result.power.avg_W_per_gpu };
}

// a dominates b
bool dominates(const ParetoSet::Point& a, const ParetoSet::Point& b)
{
    return a.tokens_per_s >= b.tokens_per_s && a.headroom >= b.headroom && a.watts <= b.watts
        && (a.tokens_per_s > b.tokens_per_s || a.headroom > b.headroom || a.watts < b.watts);
}

struct WorkerState {
    std::vector<Candidate> top; // sorted best first, at most `keep`
    ParetoSet pareto;
    long long evaluated = 0, feasible = 0, pruned = 0;
    RemovalTally removed; // what removed the strategies that were neither costed nor pruned
};

void offer_top(WorkerState& w, const Candidate& c, std::size_t keep)
{
    if (w.top.size() >= keep && !better(c, w.top.back()))
        return;
    auto pos = std::upper_bound(
        w.top.begin(), w.top.end(), c, [](const Candidate& x, const Candidate& y) { return better(x, y); });
    w.top.insert(pos, c);
    if (w.top.size() > keep)
        w.top.pop_back();
}

void offer_pareto(ParetoSet& set, const Candidate& c)
{
    const ParetoSet::Point q = point_of(c);
    const std::size_t n = set.points.size();
    for (std::size_t i = 0; i < n; ++i) {
        const ParetoSet::Point& p = set.points[i];
        if (dominates(p, q) || (p.tokens_per_s == q.tokens_per_s && set.items[i].strategy == c.strategy))
            return;
    }
    std::size_t kept = 0;
    for (std::size_t i = 0; i < n; ++i)
        if (!dominates(q, set.points[i])) {
            if (kept != i) {
                set.items[kept] = std::move(set.items[i]);
                set.points[kept] = set.points[i];
            }
            ++kept;
        }
    set.items.resize(kept);
    set.points.resize(kept);
    set.items.push_back(c);
    set.points.push_back(q);
}

struct Outer {
    int tp, cp, pp, ep;
};

std::string limiter_of(const AnalyticResult& r, double capacity)
{
    if (!r.feasible)
        return "out of memory";
    if (headroom(r, capacity) < kMemoryCapacityHeadroom)
        return "memory-capacity";
    const TimeBreakdown& t = r.time;
    const std::pair<double, const char*> parts[] = {
        { t.bubble_s, "bubble-bound" },
        { t.exposed_tp_s, "network-bound (TP)" },
        { t.exposed_dp_s, "network-bound (DP)" },
        { t.exposed_pp_s, "network-bound (PP)" },
        { t.exposed_cp_s, "network-bound (CP)" },
        { t.exposed_ep_s, "network-bound (EP all-to-all)" },
        { t.recompute_s, "recompute-bound" },
        { t.optimizer_s + t.offload_s, "optimizer-bound" },
        { t.data_stall_s, "data-loader-bound" },
        { t.host_copy_s, "host-link-bound (offload)" },
    };
    double best = 0;
    const char* name = "compute-bound";
    for (const auto& [v, n] : parts)
        if (v > best) {
            best = v;
            name = n;
        }
    // Compute-bound unless the largest overhead is a sizeable part of the step.
    return best > 0.15 * r.step_time_s ? name : "compute-bound";
}

std::string describe_change(const AnalyticResult& from, const AnalyticResult& to)
{
    const TimeBreakdown& a = from.time;
    const TimeBreakdown& b = to.time;
    const std::pair<double, const char*> deltas[] = {
        { b.compute_s - a.compute_s, "compute" },
        { b.recompute_s - a.recompute_s, "recompute" },
        { b.bubble_s - a.bubble_s, "pipeline bubble" },
        { b.exposed_tp_s - a.exposed_tp_s, "exposed TP communication" },
        { b.exposed_cp_s - a.exposed_cp_s, "exposed CP communication" },
        { b.exposed_ep_s - a.exposed_ep_s, "exposed EP all-to-all" },
        { b.exposed_pp_s - a.exposed_pp_s, "pipeline sends" },
        { b.exposed_dp_s - a.exposed_dp_s, "exposed DP communication" },
        { (b.optimizer_s + b.offload_s) - (a.optimizer_s + a.offload_s), "optimizer step" },
        { b.data_stall_s - a.data_stall_s, "data loader stall" },
        { b.host_copy_s - a.host_copy_s, "host-link copies (offload)" },
    };
    std::vector<std::pair<double, const char*>> sorted(std::begin(deltas), std::end(deltas));
    std::sort(sorted.begin(), sorted.end(),
        [](const auto& x, const auto& y) { return std::fabs(x.first) > std::fabs(y.first); });
    std::string out;
    for (int i = 0; i < 2 && i < static_cast<int>(sorted.size()); ++i) {
        if (std::fabs(sorted[i].first) < 1e-4 * from.step_time_s)
            break;
        char buf[160];
        std::snprintf(buf, sizeof buf, "%s%s %+.3f s", out.empty() ? "" : ", ", sorted[i].second, sorted[i].first);
        out += buf;
    }
    return out.empty() ? "the same time breakdown" : out;
}

std::string degree_text(const char* name, long long a, long long b)
{
    return std::string(name) + " " + std::to_string(b) + " instead of " + std::to_string(a);
}

} // namespace

bool strategy_less(const Strategy& a, const Strategy& b)
{
    return strategy_tuple(a) < strategy_tuple(b);
}

SearchFix search_fix_from(const Scenario& sc)
{
    SearchFix f;
    if (!sc.search)
        return f;
    nlohmann::json fix = nlohmann::json::object();
    for (const auto& [k, v] : sc.search->fix) {
        try {
            fix[k] = nlohmann::json::parse(v);
        } catch (const nlohmann::json::exception&) {
            fix[k] = v;
        }
    }
    // Re-read with the strategy parser (one source of truth for values and ranges).
    const Strategy s = parse_strategy(fix, "search.fix", "search.fix", Strategy {});
    auto has = [&](const char* k) { return fix.contains(k); };
    if (has("tp"))
        f.tp = s.tp;
    if (has("pp"))
        f.pp = s.pp;
    if (has("dp"))
        f.dp = s.dp;
    if (has("cp"))
        f.cp = s.cp;
    if (has("ep"))
        f.ep = s.ep;
    if (has("vpp"))
        f.vpp = s.vpp;
    if (has("micro_batch"))
        f.micro_batch = s.micro_batch;
    if (has("zero"))
        f.zero = s.zero;
    if (has("expert_tp"))
        f.expert_tp = s.expert_tp;
    if (has("sequence_parallel"))
        f.sequence_parallel = s.sequence_parallel;
    if (has("offload_optimizer"))
        f.offload_optimizer = s.offload_optimizer;
    if (has("recompute"))
        f.recompute = s.recompute;
    if (has("schedule"))
        f.schedule = s.schedule;
    if (has("rank_order"))
        f.rank_order = s.rank_order;
    if (has("cp_kind"))
        f.cp_kind = s.cp_kind;
    if (has("ep_overlap"))
        f.ep_overlap = s.ep_overlap;
    if (has("optimizer"))
        f.optimizer = s.optimizer;
    return f;
}

namespace {

SearchOutcome search_cluster(const Scenario& scenario, const SearchOptions& opt, int nodes, double budget_kW,
    double window_s, bool host_offload = false);

// The whole nodes the search may use: the cluster's, or as many as search.max_gpus allows.
int searched_nodes(const Scenario& scenario)
{
    const long long gpus = scenario.cluster.total_gpus();
    if (scenario.search && scenario.search->max_gpus && *scenario.search->max_gpus < gpus)
        return static_cast<int>(std::max<long long>(1, *scenario.search->max_gpus / scenario.cluster.gpus_per_node));
    return scenario.cluster.nodes;
}

// Energy within X% of the best time: the fastest plan (analytic) sets the window. Returns the fastest step (0 when
// nothing fits) and sets the window's end.
double fastest_step_s(
    const Scenario& scenario, const SearchOptions& opt, int nodes, double budget_kW, double slowdown, double& window_s)
{
    SearchOptions fast = opt;
    fast.objective = SearchObjective::throughput;
    fast.rank_by_goodput = false; // the window is the fastest step's
    fast.top = 1;
    fast.refine_top = 0;
    fast.progress = nullptr;
    const SearchOutcome f = search_cluster(scenario, fast, nodes, budget_kW, 0);
    if (f.results.empty())
        return 0;
    const double fastest = f.results.front().analytic.step_time_s;
    window_s = fastest * (1 + slowdown);
    return fastest;
}

// Under a power budget fewer whole nodes running efficient plans can beat the whole cluster running plans that
// idle enough to fit: tries the node counts the unconstrained best plan's per-node power allows and keeps the
// best outcome in `out`.
void search_fewer_nodes(const Scenario& scenario, const SearchOptions& opt, int nodes, double budget_kW,
    double window_s, SearchOutcome& out)
{
    SearchOptions free = opt;
    free.top = 1;
    free.refine_top = 0;
    free.progress = nullptr;
    int size = nodes;
    for (int tries = 0; tries < 8 && size > 1; ++tries) {
        const SearchOutcome f = search_cluster(scenario, free, size, 0, window_s);
        if (f.results.empty())
            break;
        const double per_node_kW = f.results.front().analytic.power.cluster_avg_kW / std::max(1, size);
        const int fit
            = std::max(1, std::min(size - 1, static_cast<int>(std::floor(budget_kW / std::max(1e-9, per_node_kW)))));
        SearchOutcome o = search_cluster(scenario, opt, fit, budget_kW, window_s);
        const bool better_outcome = !o.results.empty()
            && (out.results.empty() || o.results.front().objective > out.results.front().objective);
        if (better_outcome)
            out = std::move(o);
        if (!out.results.empty())
            break;
        size = fit;
    }
}

// What the search left out because the scenario's framework cannot run it: its own settings, the pinned
// choices, and that only its plans were searched.
void add_framework_notes(const Scenario& scenario, const SearchOptions& opt, SearchOutcome& out)
{
    const std::string fw(to_string(scenario.training.framework));
    for (const Unsupported& u : unsupported_settings(scenario.training.framework, scenario.training, scenario.model))
        out.notes.push_back(fw + " cannot run " + u.feature + " (" + u.key + "): " + u.reason);
    const SearchFix& fix = opt.fix;
    const FrameworkRelease f = scenario.training.framework;
    auto pinned = [&](const std::string& what) {
        out.notes.push_back("search.fix pins " + what + ", which " + fw + " does not run");
    };
    if (fix.schedule && !framework_supports(f, *fix.schedule))
        pinned("schedule " + std::string(to_string(*fix.schedule)));
    if (fix.cp_kind && !framework_supports(f, *fix.cp_kind))
        pinned("cp_kind " + std::string(to_string(*fix.cp_kind)));
    if (fix.optimizer && !framework_supports(f, *fix.optimizer))
        pinned("optimizer " + std::string(to_string(*fix.optimizer)));
    if (fix.offload_optimizer && *fix.offload_optimizer && !framework_supports_optimizer_offload(f))
        pinned("offload_optimizer");
    if (fix.ep_overlap && *fix.ep_overlap && !framework_supports_ep_overlap(f))
        pinned("ep_overlap");
    if (out.results.empty() && !out.cancelled)
        out.notes.push_back("only plans " + fw
            + " can run were searched (training.framework); --any-framework searches every framework's plans");
}

} // namespace

SearchOutcome search_strategies(const Scenario& scenario, const SearchOptions& opt)
{
    const auto t0 = std::chrono::steady_clock::now();
    const int nodes = searched_nodes(scenario);
    const std::optional<double> budget = opt.power_budget_kW
        ? opt.power_budget_kW
        : (scenario.search ? scenario.search->power_budget_kW : std::nullopt);
    const std::optional<double> slowdown
        = opt.max_slowdown ? opt.max_slowdown : (scenario.search ? scenario.search->max_slowdown : std::nullopt);
    const double budget_kW = budget.value_or(0);
    const double slow = slowdown.value_or(-1);
    double window_s = 0;
    double fastest = 0;
    if (opt.objective == SearchObjective::energy && slow >= 0)
        fastest = fastest_step_s(scenario, opt, nodes, budget_kW, slow, window_s);
    SearchOutcome out = search_cluster(scenario, opt, nodes, budget_kW, window_s);
    if (budget_kW > 0 && !out.cancelled && nodes > 1)
        search_fewer_nodes(scenario, opt, nodes, budget_kW, window_s, out);
    out.any_framework = opt.any_framework;
    out.framework = scenario.training.framework;
    if (!opt.any_framework)
        add_framework_notes(scenario, opt, out);
    out.power_budget_kW = budget_kW;
    out.fastest_step_s = fastest;
    out.max_slowdown = std::max(0.0, slow);
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return out;
}

namespace {

// One search over one cluster size: what every worker reads and nothing writes.
struct ClusterSearch {
    ClusterSearch(
        const Scenario& scenario_in, const SearchOptions& opt_in, int nodes, double budget_kW_in, double window_s_in)
        : scenario(scenario_in)
        , opt(opt_in)
        , cluster(with_nodes(scenario_in.cluster, nodes))
        , n(cluster.total_gpus())
        , ctx(scenario_in.model, scenario_in.training, cluster,
              opt_in.calibration ? *opt_in.calibration : builtin_calibration())
        , model(ctx)
        , inputs { ctx.model, ctx.training, cluster.gpu, n }
        , capacity(cluster.gpu.memory_bytes)
        , min_headroom(opt_in.min_memory_headroom_fraction
                  ? opt_in.min_memory_headroom_fraction
                  : (scenario_in.search ? scenario_in.search->min_memory_headroom_fraction : std::nullopt))
        , keep(static_cast<std::size_t>(std::max(opt_in.top, opt_in.refine_top)))
        , budget_kW(budget_kW_in)
        , window_s(window_s_in)
        , threads(
              opt_in.threads > 0 ? opt_in.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency())))
        , framework(
              opt_in.any_framework ? std::nullopt : std::optional<FrameworkRelease>(scenario_in.training.framework))
    {
    }

    // Whether the plan is one the search may offer: any plan with --any-framework, else one the
    // scenario's framework runs.
    bool runnable(const Strategy& s) const noexcept { return !framework || framework_runs(*framework, s, ctx.model); }

    static ClusterSpec with_nodes(ClusterSpec c, int nodes)
    {
        c.nodes = nodes;
        return c;
    }

    // Plans ranked by goodput: the scenario has a reliability section, the objective is throughput.
    bool by_goodput() const noexcept
    {
        return opt.rank_by_goodput && scenario.reliability && opt.objective != SearchObjective::energy;
    }
    double goodput_of(const Strategy& s, double tokens_per_s, double step_time_s) const
    {
        return goodput_tokens_per_s(*scenario.reliability, goodput_plan(scenario, s, tokens_per_s, step_time_s));
    }
    // What the ranking maximises for one costed strategy.
    double objective(const Strategy& s, const AnalyticResult& r) const
    {
        return by_goodput() ? goodput_of(s, r.tokens_per_s, r.step_time_s) : objective_of(opt.objective, r);
    }

    const Scenario& scenario;
    const SearchOptions& opt;
    const ClusterSpec cluster;
    const long long n; // GPUs
    const PlanContext ctx;
    const AnalyticModel model;
    const PlanInputs inputs;
    const double capacity; // GPU memory, bytes
    const std::optional<double> min_headroom;
    const std::size_t keep; // candidates ranked per worker
    const double budget_kW;
    const double window_s;
    const int threads;
    const std::optional<FrameworkRelease> framework; // unset: every framework's plans
    bool host_offload = false; // also activation and parameter offload (when nothing fits without)
};

// Outer tuples (the degrees that fix dp); the inner knobs are enumerated per tuple. Sorted by
// (tp, cp, ep, pp): work is handed out by (tp, cp, ep), and strategies sharing those share their
// layer costs, which a thread's cache then builds once rather than every thread building them again.
std::vector<Outer> enumerate_outers(const ClusterSearch& search, RemovalTally& removed)
{
    const SearchFix& fix = search.opt.fix;
    const ModelSpec& m = search.ctx.model;
    const long long n = search.n;
    std::vector<Outer> outers;
    for (int tp : pinned_or(fix.tp, divisors_of(n, kMaxTp)))
        for (int cp : pinned_or(fix.cp, divisors_of(n / tp, kMaxCp)))
            for (int pp : pinned_or(fix.pp, divisors_of(n / (static_cast<long long>(tp) * cp), m.layers))) {
                const long long mp = static_cast<long long>(tp) * cp * pp;
                if (n % mp != 0) { // only pinned degrees can miss: the others are divisors
                    ++removed.unfit_pins;
                    continue;
                }
                const long long dp = n / mp;
                if (fix.dp && *fix.dp != dp) {
                    ++removed.dp_pin_mismatches;
                    continue;
                }
                std::vector<int> eps { 1 };
                if (m.is_moe()) // up to tp*cp*dp: an expert TP of 1 folds EP over the TP ranks too
                    eps = divisors_of(static_cast<long long>(tp) * dp * cp, m.moe->experts);
                for (int ep : pinned_or(fix.ep, eps))
                    outers.push_back({ tp, cp, pp, ep });
            }
    std::stable_sort(outers.begin(), outers.end(), [](const Outer& a, const Outer& b) {
        return std::tie(a.tp, a.cp, a.ep, a.pp) < std::tie(b.tp, b.cp, b.ep, b.pp);
    });
    return outers;
}

// The outer tuples of one (tp, cp, ep) work unit are outers[begin[u], begin[u + 1]).
std::vector<std::size_t> work_unit_begins(const std::vector<Outer>& outers)
{
    std::vector<std::size_t> unit_begin;
    for (std::size_t i = 0; i < outers.size(); ++i)
        if (i == 0 || outers[i].tp != outers[i - 1].tp || outers[i].cp != outers[i - 1].cp
            || outers[i].ep != outers[i - 1].ep)
            unit_begin.push_back(i);
    unit_begin.push_back(outers.size());
    return unit_begin;
}

// The inner knobs enumerated for one outer tuple.
// Offload to host memory beyond the optimizer's: activations, parameters (ZeRO-Infinity).
struct HostOffload {
    bool activations = false;
    bool params = false;
};

struct InnerKnobs {
    std::vector<int> expert_tps;
    Optimizer base_optimizer = Optimizer::adam;
    std::vector<Optimizer> optimizers;
    std::vector<CpKind> cp_kinds;
    std::vector<int> vpps;
    std::vector<Schedule> schedules; // without interleaving
    std::vector<int> micro_batches;
    std::vector<int> zeros;
    std::vector<bool> sequence_parallels;
    std::vector<Recompute> recomputes;
    std::vector<bool> offloads;
    // Activation and parameter offload to host memory: tried only when nothing fits without them.
    std::vector<HostOffload> host_offloads;
};

// The strategy of an outer tuple before its inner knobs: the degrees and the scenario's software.
Strategy outer_strategy(const ClusterSearch& search, const Outer& o)
{
    const SearchFix& fix = search.opt.fix;
    Strategy s;
    s.tp = o.tp;
    s.cp = o.cp;
    s.pp = o.pp;
    s.ep = o.ep;
    s.dp = static_cast<int>(search.n / (static_cast<long long>(o.tp) * o.cp * o.pp));
    if (fix.rank_order)
        s.rank_order = *fix.rank_order;
    // The software environment stays the scenario's: its optimizer and the overlaps its framework runs.
    const Strategy& env = search.scenario.strategy;
    // ... as far as the framework runs them (async TP needs torch.compile in torchtitan).
    s.tp_comm_overlap
        = env.tp_comm_overlap && (!search.framework || framework_supports_tp_comm_overlap(*search.framework));
    s.ep_tile_overlap
        = env.ep_tile_overlap && (!search.framework || framework_supports_ep_tile_overlap(*search.framework));
    s.overlap_grad_reduce = env.overlap_grad_reduce;
    s.overlap_param_gather = env.overlap_param_gather;
    return s;
}

// Keeps the values of one knob the scenario's framework runs (all of them with --any-framework).
template <class T, class Pred> void keep_runnable(const ClusterSearch& search, std::vector<T>& values, Pred supported)
{
    if (!search.framework)
        return;
    std::erase_if(values, [&](const T& v) { return !supported(*search.framework, v); });
}

// Uneven virtual stages are tried at the counts recipes use (2, 4, 8) and from 4 stages on: each adds a
// whole inner loop (a prime layer count, DeepSeek-V3's 61, would otherwise try every count up to
// kMaxVpp), and the bubble they shrink, (pp-1)/(vpp x micro-batches), is small below 4 stages.
bool is_uneven_vpp_candidate(int pp, int vpp)
{
    return pp >= 4 && (vpp == 2 || vpp == 4 || vpp == 8);
}

// The fullest chunk's layers over the mean when `layers` are spread over `chunks` (1 = even).
double chunk_imbalance(int layers, int chunks)
{
    const int fullest = (layers + chunks - 1) / chunks;
    return static_cast<double>(fullest) * chunks / layers;
}

InnerKnobs inner_knobs(const ClusterSearch& search, const Strategy& s)
{
    const SearchFix& fix = search.opt.fix;
    const ModelSpec& m = search.ctx.model;
    const Strategy& env = search.scenario.strategy;
    InnerKnobs k;
    // Expert tensor parallelism: the dense layers' TP (Megatron's default) or none for the experts.
    k.expert_tps = { 0 };
    if (fix.expert_tp)
        k.expert_tps = { *fix.expert_tp };
    else if (m.is_moe() && s.tp > 1)
        k.expert_tps.push_back(1);
    k.base_optimizer = fix.optimizer ? *fix.optimizer : env.optimizer;
    // 8-bit states change the numerics: offered only to plans whose full-precision Adam does not fit.
    k.optimizers = { k.base_optimizer };
    if (!fix.optimizer && k.base_optimizer == Optimizer::adam)
        k.optimizers.push_back(Optimizer::adam8bit);
    k.cp_kinds = { fix.cp_kind ? *fix.cp_kind : env.cp_kind };
    if (!fix.cp_kind && s.cp > 1)
        k.cp_kinds = { CpKind::ring, CpKind::all_to_all };
    const long long local_batch = search.ctx.training.global_batch / s.dp;
    k.vpps = { 1 };
    if (s.pp > 1)
        for (int v = 2; v <= kMaxVpp && static_cast<long long>(s.pp) * v <= m.layers; ++v)
            if (m.layers % (s.pp * v) == 0
                || (is_uneven_vpp_candidate(s.pp, v) && chunk_imbalance(m.layers, s.pp * v) <= kMaxChunkImbalance))
                k.vpps.push_back(v);
    k.vpps = pinned_or(fix.vpp, k.vpps);
    k.schedules = { Schedule::one_f_one_b };
    if (s.pp > 1) {
        k.schedules.push_back(Schedule::zb_h1);
        if (s.pp % 2 == 0)
            k.schedules.push_back(Schedule::dualpipe);
        // GPipe takes as long as 1F1B and holds more activations: only when asked for.
    }
    k.micro_batches = pinned_or(fix.micro_batch, divisors_of(std::max(1LL, local_batch), kMaxMicroBatch));
    k.zeros = pinned_or(fix.zero, std::vector<int> { 0, 1, 2, 3 });
    k.sequence_parallels = fix.sequence_parallel
        ? std::vector<bool> { *fix.sequence_parallel }
        : (s.tp > 1 ? std::vector<bool> { true, false } : std::vector<bool> { false });
    k.recomputes = fix.recompute ? std::vector<Recompute> { *fix.recompute }
                                 : std::vector<Recompute> { Recompute::none, Recompute::selective, Recompute::full };
    k.offloads
        = fix.offload_optimizer ? std::vector<bool> { *fix.offload_optimizer } : std::vector<bool> { false, true };
    // Only what the framework runs (framework_support.hpp); combinations are checked per plan (runnable()).
    const bool dp_only = s.tp == 1 && s.pp == 1 && s.cp == 1 && s.ep == 1;
    const bool sharded = static_cast<long long>(s.dp) * s.cp > 1;
    keep_runnable(search, k.schedules, [](FrameworkRelease f, Schedule x) { return framework_supports(f, x); });
    keep_runnable(search, k.vpps,
        [](FrameworkRelease f, int vpp) { return vpp == 1 || framework_supports(f, Schedule::interleaved); });
    keep_runnable(
        search, k.cp_kinds, [&](FrameworkRelease f, CpKind x) { return s.cp <= 1 || framework_supports(f, x); });
    keep_runnable(search, k.optimizers, [](FrameworkRelease f, Optimizer x) { return framework_supports(f, x); });
    keep_runnable(search, k.zeros,
        [&](FrameworkRelease f, int z) { return !sharded || framework_supports_zero(f, z, s.pp, dp_only); });
    keep_runnable(search, k.offloads,
        [](FrameworkRelease f, bool off) { return !off || framework_supports_optimizer_offload(f); });
    k.host_offloads = { HostOffload {} };
    if (search.host_offload)
        for (HostOffload h : { HostOffload { true, false }, HostOffload { false, true }, HostOffload { true, true } })
            k.host_offloads.push_back(h);
    keep_runnable(search, k.host_offloads, [&](FrameworkRelease f, HostOffload h) {
        return (!h.params || framework_supports_param_offload(f))
            && (!h.activations || framework_supports_activation_offload(f, s.pp, Recompute::none)
                || framework_supports_activation_offload(f, s.pp, Recompute::full));
    });
    keep_runnable(search, k.sequence_parallels,
        [&](FrameworkRelease f, bool sp) { return framework_supports_sequence_parallel(f, sp, s.tp); });
    keep_runnable(search, k.expert_tps, [&](FrameworkRelease f, int etp) {
        return !m.is_moe() || s.ep <= 1 || framework_supports_expert_tp(f, etp, s.tp);
    });
    return k;
}

// Cost one valid strategy and offer it to the worker's ranking and Pareto set; false when it does
// not fit in memory, the headroom asked for, the power budget or the time window.
bool offer_candidate(const ClusterSearch& search, const Strategy& s, EvaluationCache& cache, WorkerState& w)
{
    // Memory before time: a plan that does not fit is never costed (its memory is exact, not a bound).
    const double capacity = search.capacity;
    const double peak = search.model.peak_memory_bytes(s, cache);
    if (peak > capacity) {
        w.removed.count(Limit::memory, s);
        return false;
    }
    if (search.min_headroom && (capacity - peak) / capacity < *search.min_headroom) {
        w.removed.count(Limit::headroom, s);
        return false;
    }
    Candidate c;
    c.strategy = s;
    search.model.evaluate(s, c.result, cache);
    if (!c.result.feasible) { // the GPUs' offloads overflow their node's host memory
        w.removed.count(Limit::memory, s);
        return false;
    }
    if (search.budget_kW > 0 && c.result.power.cluster_avg_kW > search.budget_kW) {
        w.removed.count(Limit::power_budget, s);
        return false;
    }
    if (search.window_s > 0 && c.result.step_time_s > search.window_s) {
        w.removed.count(Limit::slowdown, s);
        return false;
    }
    ++w.feasible;
    c.objective = search.objective(s, c.result);
    c.headroom = headroom(c.result, capacity);
    offer_top(w, c, search.keep);
    offer_pareto(w.pareto, c);
    return true;
}

// One memory-saving variant: checked, then costed unless a lighter variant already fits. Returns whether
// it was costed and fits.
bool offer_variant(const ClusterSearch& search, const Strategy& s, EvaluationCache& cache, WorkerState& w, bool& fitted)
{
    if (const Rule rule = check_strategy(search.inputs, s); rule != Rule::ok) {
        w.removed.count(rule, s);
        return false;
    }
    if (!search.runnable(s)) {
        w.removed.count(Limit::framework, s);
        return false;
    }
    ++w.evaluated;
    if (search.opt.prune && fitted) {
        ++w.pruned;
        return false;
    }
    if (!offer_candidate(search, s, cache, w))
        return false;
    fitted = true;
    return true;
}

// Activation offload in place of recomputation: where the host link hides the copies under the compute
// (NVLink-C2C on Grace), keeping the activations on the host beats recomputing them. Tried once per
// plan whose lightest fitting variant recomputes, at that variant's other settings.
void offer_offload_for_recompute(
    const ClusterSearch& search, const Strategy& fit, EvaluationCache& cache, WorkerState& w)
{
    if (fit.recompute == Recompute::none || fit.offload_activations || search.opt.fix.recompute)
        return;
    Strategy s = fit;
    s.offload_activations = true;
    s.recompute = Recompute::none;
    // An alternative the search adds, not a knob it enumerates: one the rules or the framework refuse is
    // skipped, not tallied as a removal.
    if (check_strategy(search.inputs, s) != Rule::ok || !search.runnable(s))
        return;
    bool fitted = false; // never pruned by the heavier-variant rule
    offer_variant(search, s, cache, w, fitted);
}

// The memory-saving variants of one strategy: host offload (when asked), optimizer, offloading,
// recomputation, lightest first.
void search_memory_variants(
    const ClusterSearch& search, Strategy& s, const InnerKnobs& k, EvaluationCache& cache, WorkerState& w)
{
    const SearchFix& fix = search.opt.fix;
    // More recomputation and offloading only ever cost time (and energy): once a variant fits, the
    // heavier ones are dominated.
    bool fitted = false;
    std::optional<Strategy> first_fit; // the lightest variant that fits
    // Overlapping the expert all-to-all with the paired micro-batch is never slower and holds the
    // same memory: unless pinned, only that variant runs.
    {
        Strategy with = s;
        with.ep_overlap = true;
        s.ep_overlap = fix.ep_overlap
            ? *fix.ep_overlap
            : (s.schedule != Schedule::dualpipe && rule_holds(Rule::ep_overlap_needs_moe, search.inputs, with)
                && (!search.framework || framework_supports_ep_overlap(*search.framework)));
    }
    for (HostOffload host : k.host_offloads) {
        // Parameter offload needs ZeRO 3: the other stages are not tried with it (not removals either).
        if (host.params && s.zero < 3)
            continue;
        s.offload_activations = host.activations;
        s.offload_params = host.params;
        for (Optimizer opt_kind : k.optimizers) {
            if (opt_kind != k.base_optimizer && fitted)
                break;
            s.optimizer = opt_kind;
            for (bool offload : k.offloads) {
                // Parameter offload takes the optimizer states with it.
                if (host.params && offload)
                    continue;
                s.offload_optimizer = offload;
                for (Recompute rc : k.recomputes) {
                    s.recompute = rc;
                    if (offer_variant(search, s, cache, w, fitted) && !first_fit)
                        first_fit = s;
                }
            }
        }
    }
    if (first_fit)
        offer_offload_for_recompute(search, *first_fit, cache, w);
}

// Every strategy of one outer tuple.
void search_outer(const ClusterSearch& search, const Outer& o, EvaluationCache& cache, WorkerState& w)
{
    const SearchFix& fix = search.opt.fix;
    Strategy s = outer_strategy(search, o);
    const InnerKnobs k = inner_knobs(search, s);
    for (CpKind ck : k.cp_kinds)
        for (int etp : k.expert_tps)
            for (int vpp : k.vpps) {
                s.cp_kind = ck;
                s.expert_tp = etp;
                s.vpp = vpp;
                for (Schedule sch :
                    (fix.schedule ? std::vector<Schedule> { *fix.schedule }
                                  : (vpp > 1 ? std::vector<Schedule> { Schedule::interleaved } : k.schedules))) {
                    s.schedule = sch;
                    for (int mb : k.micro_batches) {
                        s.micro_batch = mb;
                        for (int zero : k.zeros) {
                            s.zero = zero;
                            for (bool sp : k.sequence_parallels) {
                                s.sequence_parallel = sp;
                                search_memory_variants(search, s, k, cache, w);
                            }
                        }
                    }
                }
            }
}

// The outer tuples, handed out to the workers by work unit, and the progress made.
struct WorkQueue {
    std::vector<Outer> outers;
    std::vector<std::size_t> unit_begin;
    std::atomic<std::size_t> next { 0 };
    std::atomic<long long> done { 0 };
    std::atomic<int> last_reported { -1 };
};

void report_progress(const ClusterSearch& search, WorkQueue& queue)
{
    const long long d = queue.done.fetch_add(1) + 1;
    if (!search.opt.progress)
        return;
    const int permille = static_cast<int>(1000.0 * d / queue.outers.size());
    int last = queue.last_reported.load();
    if (permille > last && queue.last_reported.compare_exchange_strong(last, permille))
        search.opt.progress(permille / 1000.0);
}

void merge_into(WorkerState& merged, const WorkerState& w, std::size_t keep)
{
    merged.evaluated += w.evaluated;
    merged.feasible += w.feasible;
    merged.pruned += w.pruned;
    merged.removed.merge(w.removed);
    for (const Candidate& c : w.top)
        offer_top(merged, c, keep);
    for (const Candidate& c : w.pareto.items)
        offer_pareto(merged.pareto, c);
}

// One worker thread: takes work units until none is left or the search is cancelled, then merges
// what it found.
void search_worker(const ClusterSearch& search, WorkQueue& queue, WorkerState& merged, std::mutex& merge_mutex)
{
    EvaluationCache cache(search.ctx);
    WorkerState w;
    const CancelToken& cancel = search.opt.cancel;
    for (;;) {
        if (cancel.cancelled())
            break;
        const std::size_t unit = queue.next.fetch_add(1);
        if (unit + 1 >= queue.unit_begin.size())
            break;
        for (std::size_t i = queue.unit_begin[unit]; i < queue.unit_begin[unit + 1]; ++i) {
            if (cancel.cancelled())
                break;
            search_outer(search, queue.outers[i], cache, w);
            report_progress(search, queue);
        }
    }
    std::lock_guard lock(merge_mutex);
    merge_into(merged, w, search.keep);
}

// The analytic pass over every strategy, on `search.threads` threads.
WorkerState enumerate_and_rank(const ClusterSearch& search)
{
    WorkQueue queue;
    RemovalTally outer_removals;
    queue.outers = enumerate_outers(search, outer_removals);
    queue.unit_begin = work_unit_begins(queue.outers);
    std::mutex merge_mutex;
    WorkerState merged;
    auto worker = [&]() { search_worker(search, queue, merged, merge_mutex); };
    std::vector<std::thread> pool;
    for (int i = 1; i < search.threads; ++i)
        pool.emplace_back(worker);
    worker();
    for (auto& th : pool)
        th.join();
    merged.removed.merge(outer_removals);
    return merged;
}

// Predictions for the ranked candidates: the first `refine` by the event simulator, the rest analytic.
std::vector<Prediction> refine_candidates(
    const ClusterSearch& search, const std::vector<Candidate>& ranked, std::size_t refine)
{
    std::vector<Prediction> predictions(ranked.size());
    std::atomic<std::size_t> k { 0 };
    auto refine_worker = [&]() {
        for (std::size_t i = k.fetch_add(1); i < ranked.size(); i = k.fetch_add(1)) {
            predictions[i] = i < refine ? predict_simulated(search.ctx, ranked[i].strategy)
                                        : search.model.predict(ranked[i].strategy);
        }
    };
    std::vector<std::thread> refiners;
    for (int i = 1; i < search.threads; ++i)
        refiners.emplace_back(refine_worker);
    refine_worker();
    for (auto& th : refiners)
        th.join();
    return predictions;
}

// Refine the best analytic candidates with the event simulator, re-rank, keep the top `opt.top`.
std::vector<SearchResult> refined_results(
    const ClusterSearch& search, const std::vector<Candidate>& ranked, bool cancelled)
{
    const SearchOptions& opt = search.opt;
    const std::size_t refine
        = cancelled ? 0 : std::min<std::size_t>(ranked.size(), static_cast<std::size_t>(std::max(0, opt.refine_top)));
    const std::vector<Prediction> predictions = refine_candidates(search, ranked, refine);
    std::vector<std::size_t> order(ranked.size());
    for (std::size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    auto refined_objective = [&](std::size_t i) {
        const Prediction& p = predictions[i];
        if (search.by_goodput())
            return search.goodput_of(ranked[i].strategy, p.tokens_per_s, p.step_time_s);
        return opt.objective == SearchObjective::energy ? -p.power.energy_J_per_token : p.tokens_per_s;
    };
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        const double oa = refined_objective(a), ob = refined_objective(b);
        if (oa != ob)
            return oa > ob;
        return strategy_less(ranked[a].strategy, ranked[b].strategy);
    });
    std::vector<SearchResult> results;
    for (std::size_t rank = 0; rank < order.size() && static_cast<int>(rank) < opt.top; ++rank) {
        const std::size_t i = order[rank];
        SearchResult r;
        r.strategy = ranked[i].strategy;
        r.analytic = ranked[i].result;
        r.prediction = predictions[i];
        r.objective = refined_objective(i);
        if (search.by_goodput())
            r.goodput_tokens_per_s = r.objective;
        r.limiter = limiter_of(r.analytic, search.capacity);
        r.frameworks = frameworks_running(r.strategy, search.ctx.model);
        r.nearest_run = nearest_measured_run(
            builtin_error_bands(), search.ctx.model, search.ctx.training, search.cluster, r.strategy);
        results.push_back(std::move(r));
    }
    if (opt.objective != SearchObjective::energy)
        for (std::size_t i = 1; i < results.size(); ++i)
            results[i].indistinguishable_from_best
                = intervals_overlap(results[i].prediction.interval, results.front().prediction.interval);
    return results;
}

// The closest runner-up of one result among the strategies offered to it.
class RunnerUpFinder {
public:
    RunnerUpFinder(const ClusterSearch& search, const SearchResult& result, EvaluationCache& cache)
        : search_(search)
        , result_(result)
        , cache_(cache)
    {
    }

    void consider(const Strategy& alt, const std::string& what)
    {
        if (alt == result_.strategy || check_strategy(search_.inputs, alt) != Rule::ok || !search_.runnable(alt))
            return;
        AnalyticResult a;
        search_.model.evaluate(alt, a, cache_);
        if (!a.feasible)
            return;
        const double obj = search_.objective(alt, a);
        const double base = search_.objective(result_.strategy, result_.analytic);
        const double slower = base != 0 ? (base - obj) / std::fabs(base) : 0;
        if (slower < 0)
            return; // not a runner-up: the search's ranking used simulated times
        if (!closest_ || slower < closest_->slower_fraction) {
            RunnerUp u;
            u.strategy = alt;
            u.dimension = what;
            u.slower_fraction = slower;
            u.because = describe_change(result_.analytic, a);
            closest_ = u;
        }
    }

    const std::optional<RunnerUp>& closest() const { return closest_; }

private:
    const ClusterSearch& search_;
    const SearchResult& result_;
    EvaluationCache& cache_;
    std::optional<RunnerUp> closest_;
};

// The same plan with another TP, PP or micro-batch size (DP takes up the GPUs).
void consider_degree_changes(const ClusterSearch& search, const Strategy& best, RunnerUpFinder& finder)
{
    const long long n = search.n;
    for (int tp : divisors_of(n, kMaxTp)) {
        Strategy alt = best;
        alt.tp = tp;
        const long long mp = static_cast<long long>(tp) * alt.cp * alt.pp;
        if (n % mp || tp == best.tp)
            continue;
        alt.dp = static_cast<int>(n / mp);
        alt.sequence_parallel = best.sequence_parallel && tp > 1;
        finder.consider(alt, degree_text("TP", best.tp, tp) + " (DP " + std::to_string(alt.dp) + ")");
    }
    for (int pp : divisors_of(n / (static_cast<long long>(best.tp) * best.cp), search.ctx.model.layers)) {
        Strategy alt = best;
        alt.pp = pp;
        alt.dp = static_cast<int>(n / (static_cast<long long>(best.tp) * best.cp * pp));
        if (pp == best.pp)
            continue;
        if (pp == 1) {
            alt.vpp = 1;
            alt.schedule = Schedule::one_f_one_b;
        }
        finder.consider(alt, degree_text("PP", best.pp, pp) + " (DP " + std::to_string(alt.dp) + ")");
    }
    for (int mb : divisors_of(std::max(1LL, search.ctx.training.global_batch / best.dp), kMaxMicroBatch)) {
        Strategy alt = best;
        alt.micro_batch = mb;
        finder.consider(alt, degree_text("micro-batch", best.micro_batch, mb));
    }
}

// The same plan with another ZeRO stage, recomputation, schedule or sequence parallelism.
void consider_knob_changes(const Strategy& best, RunnerUpFinder& finder)
{
    for (int z = 0; z <= 3; ++z) {
        Strategy alt = best;
        alt.zero = z;
        finder.consider(alt, degree_text("ZeRO", best.zero, z));
    }
    for (Recompute rc : { Recompute::none, Recompute::selective, Recompute::full }) {
        Strategy alt = best;
        alt.recompute = rc;
        finder.consider(alt,
            std::string("recompute ") + std::string(to_string(rc)) + " instead of "
                + std::string(to_string(best.recompute)));
    }
    if (best.pp > 1) {
        for (Schedule sch : { Schedule::one_f_one_b, Schedule::zb_h1, Schedule::dualpipe, Schedule::interleaved }) {
            Strategy alt = best;
            alt.schedule = sch;
            if (sch != Schedule::interleaved)
                alt.vpp = 1;
            else if (best.vpp == 1)
                alt.vpp = 2;
            finder.consider(alt,
                std::string("schedule ") + std::string(to_string(sch)) + " instead of "
                    + std::string(to_string(best.schedule)));
        }
    }
    if (best.tp > 1) {
        Strategy alt = best;
        alt.sequence_parallel = !best.sequence_parallel;
        finder.consider(alt, alt.sequence_parallel ? "sequence parallel on" : "sequence parallel off");
    }
}

// The closest runner-up of each result that differs in one dimension.
void add_runner_ups(const ClusterSearch& search, std::vector<SearchResult>& results)
{
    EvaluationCache cache(search.ctx);
    for (SearchResult& r : results) {
        RunnerUpFinder finder(search, r, cache);
        consider_degree_changes(search, r.strategy, finder);
        consider_knob_changes(r.strategy, finder);
        r.runner_up = finder.closest();
    }
}

std::vector<SearchResult> pareto_results(const ParetoSet& set, double capacity, const ModelSpec& model)
{
    // The whole front is kept while searching, so that it does not depend on the order the workers
    // found its points in; only the best kMaxPareto of it are reported.
    std::vector<Candidate> pareto = set.items;
    std::sort(pareto.begin(), pareto.end(), [](const Candidate& x, const Candidate& y) { return better(x, y); });
    if (pareto.size() > kMaxPareto)
        pareto.resize(kMaxPareto);
    std::vector<SearchResult> results;
    for (const Candidate& c : pareto) {
        SearchResult r;
        r.strategy = c.strategy;
        r.analytic = c.result;
        r.objective = c.objective;
        r.limiter = limiter_of(c.result, capacity);
        r.frameworks = frameworks_running(r.strategy, model);
        results.push_back(std::move(r));
    }
    return results;
}

// What a plan that fits only with activation or parameter offload pays for it: its step against the
// same plan's were the memory enough.
std::string host_offload_note(const ClusterSearch& search, const Strategy& s)
{
    Strategy without = s;
    without.offload_activations = false;
    without.offload_params = false;
    AnalyticResult with_r, without_r;
    search.model.evaluate(s, with_r);
    search.model.evaluate(without, without_r);
    std::string what;
    if (s.offload_activations)
        what = "activation offload of all " + std::to_string(search.ctx.model.layers) + " layers";
    if (s.offload_params)
        what += std::string(what.empty() ? "" : " and ") + "parameter offload (ZeRO-Infinity)";
    const double price = without_r.step_time_s > 0 ? with_r.step_time_s / without_r.step_time_s - 1 : 0;
    char pct[32];
    std::snprintf(pct, sizeof pct, "%+.1f%%", 100 * price);
    return "no plan fits in memory without offload to host memory; the best fits only with " + what + ": " + pct
        + " step time";
}

SearchOutcome search_cluster(
    const Scenario& scenario, const SearchOptions& opt, int nodes, double budget_kW, double window_s, bool host_offload)
{
    const auto t0 = std::chrono::steady_clock::now();
    ClusterSearch search(scenario, opt, nodes, budget_kW, window_s);
    search.host_offload = host_offload;
    SearchOutcome out;
    out.gpus = search.n;
    const WorkerState merged = enumerate_and_rank(search);
    out.evaluated = merged.evaluated;
    out.feasible = merged.feasible;
    out.pruned = merged.pruned;
    out.cancelled = opt.cancel.cancelled();
    out.results = refined_results(search, merged.top, out.cancelled);
    out.ranked_by_goodput = search.by_goodput();
    add_runner_ups(search, out.results);
    out.pareto = pareto_results(merged.pareto, search.capacity, search.ctx.model);
    out.removed = describe_removals(
        merged.removed, { search.inputs, search.framework, search.capacity, search.min_headroom, budget_kW, window_s });
    if (out.results.empty() && !out.cancelled && !host_offload) {
        // Nothing fits: the heavier offloads to host memory, each at its price.
        SearchOutcome heavy = search_cluster(scenario, opt, nodes, budget_kW, window_s, true);
        if (!heavy.results.empty()) {
            heavy.notes.push_back(host_offload_note(search, heavy.results.front().strategy));
            heavy.evaluated += out.evaluated;
            heavy.pruned += out.pruned;
            out = std::move(heavy);
        }
    }
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return out;
}

} // namespace

} // namespace parallax

#include "search/search.hpp"

#include "io/scenario_io.hpp"
#include "model/plan_context.hpp"
#include "model/strategy_costs.hpp"
#include "sim/simulated_model.hpp"
#include "spec/strategy_rules.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <mutex>
#include <thread>
#include <tuple>

namespace parallax {

namespace {

constexpr int kMaxTp = 64;
constexpr int kMaxCp = 32;
constexpr int kMaxVpp = 16;
constexpr int kMaxMicroBatch = 32;
constexpr std::size_t kMaxPareto = 64;
// A plan with less than this memory headroom is reported as memory-bound.
constexpr double kMemoryBoundHeadroom = 0.05;

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
        static_cast<int>(s.cp_kind), to_string(s.rank_order));
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
        double objective = 0; // the ranking's (better()), to find the worst kept point without reading items
    };
    std::vector<Candidate> items;
    std::vector<Point> points; // points[i] is items[i]'s
};

ParetoSet::Point point_of(const Candidate& c)
{
    return { c.result.tokens_per_s, c.headroom, c.result.power.avg_W_per_gpu, c.objective };
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
    if (kept < kMaxPareto) {
        set.items.push_back(c);
        set.points.push_back(q);
        return;
    }
    // Full: the candidate replaces the worst kept one if it ranks above it (one linear scan, no sort).
    std::size_t worst = 0;
    for (std::size_t i = 1; i < kept; ++i) {
        const double oi = set.points[i].objective, ow = set.points[worst].objective;
        if (oi < ow || (oi == ow && better(set.items[worst], set.items[i])))
            worst = i;
    }
    if (better(c, set.items[worst])) {
        set.points[worst] = q;
        set.items[worst] = c;
    }
}

struct Outer {
    int tp, cp, pp, ep;
};

std::string limiter_of(const AnalyticResult& r, double capacity)
{
    if (!r.feasible)
        return "out of memory";
    if (headroom(r, capacity) < kMemoryBoundHeadroom)
        return "memory-bound";
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

SearchOutcome search_cluster(
    const Scenario& scenario, const SearchOptions& opt, int nodes, double budget_kW, double window_s);

} // namespace

SearchOutcome search_strategies(const Scenario& scenario, const SearchOptions& opt)
{
    const auto t0 = std::chrono::steady_clock::now();
    int nodes = scenario.cluster.nodes;
    if (scenario.search && scenario.search->max_gpus && *scenario.search->max_gpus < scenario.cluster.total_gpus()) {
        // Use whole nodes up to the limit.
        nodes = static_cast<int>(std::max<long long>(1, *scenario.search->max_gpus / scenario.cluster.gpus_per_node));
    }
    const std::optional<double> budget = opt.power_budget_kW
        ? opt.power_budget_kW
        : (scenario.search ? scenario.search->power_budget_kW : std::nullopt);
    const std::optional<double> slowdown
        = opt.max_slowdown ? opt.max_slowdown : (scenario.search ? scenario.search->max_slowdown : std::nullopt);
    const double budget_kW = budget.value_or(0);
    // Energy within X% of the best time: the fastest plan (analytic) sets the window first.
    double window_s = 0;
    double fastest = 0;
    const double slow = slowdown.value_or(-1);
    if (opt.objective == SearchObjective::energy && slow >= 0) {
        SearchOptions fast = opt;
        fast.objective = SearchObjective::throughput;
        fast.top = 1;
        fast.refine_top = 0;
        fast.progress = nullptr;
        const SearchOutcome f = search_cluster(scenario, fast, nodes, budget_kW, 0);
        if (!f.results.empty()) {
            fastest = f.results.front().analytic.step_time_s;
            window_s = fastest * (1 + slow);
        }
    }
    SearchOutcome out = search_cluster(scenario, opt, nodes, budget_kW, window_s);
    if (budget_kW > 0 && !out.cancelled && nodes > 1) {
        // Under a power budget fewer whole nodes running efficient plans can beat the whole cluster
        // running plans that idle enough to fit: try the node counts the unconstrained best plan's
        // per-node power allows, keep the best outcome.
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
            const int fit = std::max(
                1, std::min(size - 1, static_cast<int>(std::floor(budget_kW / std::max(1e-9, per_node_kW)))));
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
    out.power_budget_kW = budget_kW;
    out.fastest_step_s = fastest;
    out.max_slowdown = std::max(0.0, slow);
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return out;
}

namespace {

SearchOutcome search_cluster(
    const Scenario& scenario, const SearchOptions& opt, int nodes, double budget_kW, double window_s)
{
    const auto t0 = std::chrono::steady_clock::now();
    SearchOutcome out;
    ClusterSpec cluster = scenario.cluster;
    cluster.nodes = nodes;
    const long long n = cluster.total_gpus();
    out.gpus = n;
    const PlanContext ctx(
        scenario.model, scenario.training, cluster, opt.calibration ? *opt.calibration : builtin_calibration());
    const AnalyticModel model(ctx);
    const ModelSpec& m = ctx.model;
    const TrainingSpec& t = ctx.training;
    const PlanInputs inputs { m, t, cluster.gpu, n };
    const double capacity = cluster.gpu.memory_bytes;
    const SearchFix& fix = opt.fix;
    const std::optional<double> min_headroom = opt.min_memory_headroom_fraction
        ? opt.min_memory_headroom_fraction
        : (scenario.search ? scenario.search->min_memory_headroom_fraction : std::nullopt);
    const std::size_t keep = static_cast<std::size_t>(std::max(opt.top, opt.refine_top));

    // Outer tuples (the degrees that fix dp); the inner knobs are enumerated per tuple.
    std::vector<Outer> outers;
    for (int tp : pinned_or(fix.tp, divisors_of(n, kMaxTp)))
        for (int cp : pinned_or(fix.cp, divisors_of(n / tp, kMaxCp)))
            for (int pp : pinned_or(fix.pp, divisors_of(n / (static_cast<long long>(tp) * cp), m.layers))) {
                const long long mp = static_cast<long long>(tp) * cp * pp;
                if (n % mp != 0)
                    continue;
                const long long dp = n / mp;
                if (fix.dp && *fix.dp != dp)
                    continue;
                std::vector<int> eps { 1 };
                if (m.is_moe()) // up to tp*cp*dp: an expert TP of 1 folds EP over the TP ranks too
                    eps = divisors_of(static_cast<long long>(tp) * dp * cp, m.moe->experts);
                for (int ep : pinned_or(fix.ep, eps))
                    outers.push_back({ tp, cp, pp, ep });
            }

    // Work is handed out by (tp, cp, ep): strategies sharing those share their layer costs, which a
    // thread's cache then builds once rather than every thread building them again.
    std::stable_sort(outers.begin(), outers.end(), [](const Outer& a, const Outer& b) {
        return std::tie(a.tp, a.cp, a.ep, a.pp) < std::tie(b.tp, b.cp, b.ep, b.pp);
    });
    std::vector<std::size_t> unit_begin;
    for (std::size_t i = 0; i < outers.size(); ++i)
        if (i == 0 || outers[i].tp != outers[i - 1].tp || outers[i].cp != outers[i - 1].cp
            || outers[i].ep != outers[i - 1].ep)
            unit_begin.push_back(i);
    unit_begin.push_back(outers.size());

    std::atomic<std::size_t> next { 0 };
    std::atomic<long long> done { 0 };
    std::atomic<int> last_reported { -1 };
    std::mutex merge_mutex;
    WorkerState merged;
    const int threads = opt.threads > 0 ? opt.threads : std::max(1u, std::thread::hardware_concurrency());

    auto worker = [&]() {
        EvaluationCache cache(ctx);
        WorkerState w;
        auto search_outer = [&](const Outer& o) {
            Strategy s;
            s.tp = o.tp;
            s.cp = o.cp;
            s.pp = o.pp;
            s.ep = o.ep;
            s.dp = static_cast<int>(n / (static_cast<long long>(o.tp) * o.cp * o.pp));
            // Expert tensor parallelism: the dense layers' TP (Megatron's default) or none for the experts.
            std::vector<int> expert_tps { 0 };
            if (fix.expert_tp)
                expert_tps = { *fix.expert_tp };
            else if (m.is_moe() && s.tp > 1)
                expert_tps.push_back(1);
            if (fix.rank_order)
                s.rank_order = *fix.rank_order;
            // The software environment stays the scenario's: its optimizer and the overlaps its framework runs.
            const Strategy& env = scenario.strategy;
            s.tp_comm_overlap = env.tp_comm_overlap;
            s.overlap_grad_reduce = env.overlap_grad_reduce;
            s.overlap_param_gather = env.overlap_param_gather;
            const Optimizer base_optimizer = fix.optimizer ? *fix.optimizer : env.optimizer;
            // 8-bit states change the numerics: offered only to plans whose full-precision Adam does not fit.
            std::vector<Optimizer> optimizers { base_optimizer };
            if (!fix.optimizer && base_optimizer == Optimizer::adam)
                optimizers.push_back(Optimizer::adam8bit);
            std::vector<CpKind> cp_kinds { fix.cp_kind ? *fix.cp_kind : env.cp_kind };
            if (!fix.cp_kind && s.cp > 1)
                cp_kinds = { CpKind::ring, CpKind::all_to_all };
            const long long local_batch = t.global_batch / s.dp;
            std::vector<int> vpps { 1 };
            if (s.pp > 1)
                for (int v = 2; v <= kMaxVpp && static_cast<long long>(s.pp) * v <= m.layers; ++v)
                    if (m.layers % (s.pp * v) == 0)
                        vpps.push_back(v);
            std::vector<Schedule> schedules { Schedule::one_f_one_b };
            if (s.pp > 1) {
                schedules.push_back(Schedule::zb_h1);
                if (s.pp % 2 == 0)
                    schedules.push_back(Schedule::dualpipe);
                // GPipe takes as long as 1F1B and holds more activations: only when asked for.
            }
            const std::vector<int> mbs
                = pinned_or(fix.micro_batch, divisors_of(std::max(1LL, local_batch), kMaxMicroBatch));
            const std::vector<int> zeros = pinned_or(fix.zero, std::vector<int> { 0, 1, 2, 3 });
            const std::vector<bool> sps = fix.sequence_parallel
                ? std::vector<bool> { *fix.sequence_parallel }
                : (s.tp > 1 ? std::vector<bool> { true, false } : std::vector<bool> { false });
            const std::vector<Recompute> rcs = fix.recompute
                ? std::vector<Recompute> { *fix.recompute }
                : std::vector<Recompute> { Recompute::none, Recompute::selective, Recompute::full };
            const std::vector<bool> offloads = fix.offload_optimizer ? std::vector<bool> { *fix.offload_optimizer }
                                                                     : std::vector<bool> { false, true };
            for (CpKind ck : cp_kinds)
                for (int etp : expert_tps)
                    for (int vpp : pinned_or(fix.vpp, vpps)) {
                        s.cp_kind = ck;
                        s.expert_tp = etp;
                        s.vpp = vpp;
                        for (Schedule sch :
                            (fix.schedule ? std::vector<Schedule> { *fix.schedule }
                                          : (vpp > 1 ? std::vector<Schedule> { Schedule::interleaved } : schedules))) {
                            s.schedule = sch;
                            for (int mb : mbs) {
                                s.micro_batch = mb;
                                for (int zero : zeros) {
                                    s.zero = zero;
                                    for (bool sp : sps) {
                                        s.sequence_parallel = sp;
                                        // More recomputation and offloading only ever cost time (and energy):
                                        // once a variant fits, the heavier ones are dominated.
                                        bool fitted = false;
                                        // Overlapping the expert all-to-all with the paired micro-batch is never
                                        // slower and holds the same memory: unless pinned, only that variant runs.
                                        {
                                            Strategy with = s;
                                            with.ep_overlap = true;
                                            s.ep_overlap = fix.ep_overlap
                                                ? *fix.ep_overlap
                                                : (s.schedule != Schedule::dualpipe
                                                    && rule_holds(Rule::ep_overlap_needs_moe, inputs, with));
                                        }
                                        for (Optimizer opt_kind : optimizers) {
                                            if (opt_kind != base_optimizer && fitted)
                                                break;
                                            s.optimizer = opt_kind;
                                            for (bool offload : offloads) {
                                                s.offload_optimizer = offload;
                                                for (Recompute rc : rcs) {
                                                    s.recompute = rc;
                                                    if (check_strategy(inputs, s) != Rule::ok)
                                                        continue;
                                                    ++w.evaluated;
                                                    if (opt.prune && fitted) {
                                                        ++w.pruned;
                                                        continue;
                                                    }
                                                    // Memory before time: a plan that does not fit is never
                                                    // costed (its memory is exact, not a bound).
                                                    const double peak = model.peak_memory_bytes(s, cache);
                                                    if (peak > capacity)
                                                        continue;
                                                    if (min_headroom && (capacity - peak) / capacity < *min_headroom)
                                                        continue;
                                                    Candidate c;
                                                    c.strategy = s;
                                                    model.evaluate(s, c.result, cache);
                                                    if (budget_kW > 0 && c.result.power.cluster_avg_kW > budget_kW)
                                                        continue;
                                                    if (window_s > 0 && c.result.step_time_s > window_s)
                                                        continue;
                                                    fitted = true;
                                                    ++w.feasible;
                                                    c.objective = objective_of(opt.objective, c.result);
                                                    c.headroom = headroom(c.result, capacity);
                                                    offer_top(w, c, keep);
                                                    offer_pareto(w.pareto, c);
                                                }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
            const long long d = done.fetch_add(1) + 1;
            if (opt.progress) {
                const int permille = static_cast<int>(1000.0 * d / outers.size());
                int last = last_reported.load();
                if (permille > last && last_reported.compare_exchange_strong(last, permille))
                    opt.progress(permille / 1000.0);
            }
        };
        for (;;) {
            if (opt.cancel.cancelled())
                break;
            const std::size_t unit = next.fetch_add(1);
            if (unit + 1 >= unit_begin.size())
                break;
            for (std::size_t i = unit_begin[unit]; i < unit_begin[unit + 1]; ++i) {
                if (opt.cancel.cancelled())
                    break;
                search_outer(outers[i]);
            }
        }
        std::lock_guard lock(merge_mutex);
        merged.evaluated += w.evaluated;
        merged.feasible += w.feasible;
        merged.pruned += w.pruned;
        for (const Candidate& c : w.top)
            offer_top(merged, c, keep);
        for (const Candidate& c : w.pareto.items)
            offer_pareto(merged.pareto, c);
    };
    std::vector<std::thread> pool;
    for (int i = 1; i < threads; ++i)
        pool.emplace_back(worker);
    worker();
    for (auto& th : pool)
        th.join();
    out.evaluated = merged.evaluated;
    out.feasible = merged.feasible;
    out.pruned = merged.pruned;
    out.cancelled = opt.cancel.cancelled();

    // Refine the best analytic candidates with the event simulator and re-rank.
    std::vector<Candidate> ranked = merged.top;
    std::vector<Prediction> predictions(ranked.size());
    const std::size_t refine = out.cancelled
        ? 0
        : std::min<std::size_t>(ranked.size(), static_cast<std::size_t>(std::max(0, opt.refine_top)));
    {
        std::atomic<std::size_t> k { 0 };
        auto refine_worker = [&]() {
            for (std::size_t i = k.fetch_add(1); i < ranked.size(); i = k.fetch_add(1)) {
                predictions[i]
                    = i < refine ? predict_simulated(ctx, ranked[i].strategy) : model.predict(ranked[i].strategy);
            }
        };
        std::vector<std::thread> refiners;
        for (int i = 1; i < threads; ++i)
            refiners.emplace_back(refine_worker);
        refine_worker();
        for (auto& th : refiners)
            th.join();
    }
    std::vector<std::size_t> order(ranked.size());
    for (std::size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    auto refined_objective = [&](std::size_t i) {
        const Prediction& p = predictions[i];
        return opt.objective == SearchObjective::energy ? -p.power.energy_J_per_token : p.tokens_per_s;
    };
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        const double oa = refined_objective(a), ob = refined_objective(b);
        if (oa != ob)
            return oa > ob;
        return strategy_less(ranked[a].strategy, ranked[b].strategy);
    });
    for (std::size_t rank = 0; rank < order.size() && static_cast<int>(rank) < opt.top; ++rank) {
        const std::size_t i = order[rank];
        SearchResult r;
        r.strategy = ranked[i].strategy;
        r.analytic = ranked[i].result;
        r.prediction = predictions[i];
        r.objective = refined_objective(i);
        r.limiter = limiter_of(r.analytic, capacity);
        out.results.push_back(std::move(r));
    }

    // The closest runner-up of each result that differs in one dimension.
    {
        EvaluationCache cache(ctx);
        for (SearchResult& r : out.results) {
            const Strategy& best = r.strategy;
            std::optional<RunnerUp> closest;
            auto consider = [&](Strategy alt, const std::string& what) {
                if (alt == best || check_strategy(inputs, alt) != Rule::ok)
                    return;
                AnalyticResult a;
                model.evaluate(alt, a, cache);
                if (!a.feasible)
                    return;
                const double obj = objective_of(opt.objective, a);
                const double base = objective_of(opt.objective, r.analytic);
                const double slower = base != 0 ? (base - obj) / std::fabs(base) : 0;
                if (slower < 0)
                    return; // not a runner-up: the search's ranking used simulated times
                if (!closest || slower < closest->slower_fraction) {
                    RunnerUp u;
                    u.strategy = alt;
                    u.dimension = what;
                    u.slower_fraction = slower;
                    u.because = describe_change(r.analytic, a);
                    closest = u;
                }
            };
            for (int tp : divisors_of(n, kMaxTp)) {
                Strategy alt = best;
                alt.tp = tp;
                const long long mp = static_cast<long long>(tp) * alt.cp * alt.pp;
                if (n % mp || tp == best.tp)
                    continue;
                alt.dp = static_cast<int>(n / mp);
                alt.sequence_parallel = best.sequence_parallel && tp > 1;
                consider(alt, degree_text("TP", best.tp, tp) + " (DP " + std::to_string(alt.dp) + ")");
            }
            for (int pp : divisors_of(n / (static_cast<long long>(best.tp) * best.cp), m.layers)) {
                Strategy alt = best;
                alt.pp = pp;
                alt.dp = static_cast<int>(n / (static_cast<long long>(best.tp) * best.cp * pp));
                if (pp == best.pp)
                    continue;
                if (pp == 1) {
                    alt.vpp = 1;
                    alt.schedule = Schedule::one_f_one_b;
                }
                consider(alt, degree_text("PP", best.pp, pp) + " (DP " + std::to_string(alt.dp) + ")");
            }
            for (int mb : divisors_of(std::max(1LL, t.global_batch / best.dp), kMaxMicroBatch)) {
                Strategy alt = best;
                alt.micro_batch = mb;
                consider(alt, degree_text("micro-batch", best.micro_batch, mb));
            }
            for (int z = 0; z <= 3; ++z) {
                Strategy alt = best;
                alt.zero = z;
                consider(alt, degree_text("ZeRO", best.zero, z));
            }
            for (Recompute rc : { Recompute::none, Recompute::selective, Recompute::full }) {
                Strategy alt = best;
                alt.recompute = rc;
                consider(alt,
                    std::string("recompute ") + std::string(to_string(rc)) + " instead of "
                        + std::string(to_string(best.recompute)));
            }
            if (best.pp > 1) {
                for (Schedule sch :
                    { Schedule::one_f_one_b, Schedule::zb_h1, Schedule::dualpipe, Schedule::interleaved }) {
                    Strategy alt = best;
                    alt.schedule = sch;
                    if (sch != Schedule::interleaved)
                        alt.vpp = 1;
                    else if (best.vpp == 1)
                        alt.vpp = 2;
                    consider(alt,
                        std::string("schedule ") + std::string(to_string(sch)) + " instead of "
                            + std::string(to_string(best.schedule)));
                }
            }
            if (best.tp > 1) {
                Strategy alt = best;
                alt.sequence_parallel = !best.sequence_parallel;
                consider(alt, alt.sequence_parallel ? "sequence parallel on" : "sequence parallel off");
            }
            r.runner_up = closest;
        }
    }
    std::vector<Candidate> pareto = merged.pareto.items;
    std::sort(pareto.begin(), pareto.end(), [](const Candidate& x, const Candidate& y) { return better(x, y); });
    for (const Candidate& c : pareto) {
        SearchResult r;
        r.strategy = c.strategy;
        r.analytic = c.result;
        r.objective = c.objective;
        r.limiter = limiter_of(c.result, capacity);
        out.pareto.push_back(std::move(r));
    }
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return out;
}

} // namespace

} // namespace parallax

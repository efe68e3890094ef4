#include "search/hetero_search.hpp"

#include "model/goodput.hpp"
#include "model/goodput_plan.hpp"
#include "search/hetero_balance.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <map>
#include <mutex>
#include <thread>

namespace parallax {

namespace {

// Pipelines deeper than this are not enumerated: the bubble of 16 stages already needs hundreds of
// micro-batches per step to stay small, and each stage adds a send between GPU types.
constexpr int kMaxDepth = 16;
// Micro-batch sizes tried (powers of two dividing the global batch up to this): an explicit pipeline's
// stages hold their micro-batches' activations on their own GPU, and larger ones rarely fit beside a big
// model's state.
constexpr int kMaxMicroBatch = 8;
// Layer moves in the coarse pass (the fine pass moves up to 2 x stages + 4 from the coarse split).
constexpr int kCoarseMoves = 1;
// TPs a group keeps for layouts of several groups: its best ones alone (the single-group screen).
constexpr std::size_t kScreenedTps = 2;

// The knobs every layout is costed with in the coarse pass, and the software settings every plan keeps:
// the scenario's optimizer and overlaps, its pinned values, the plain search's usual defaults otherwise.
Strategy base_knobs(const Scenario& s, const SearchFix& fix)
{
    Strategy k = s.strategy;
    k.program = nullptr;
    k.layers = nullptr;
    k.first_stage_layers = k.last_stage_layers = 0;
    k.cp = k.ep = k.vpp = 1;
    k.expert_tp = 0;
    k.micro_batch = fix.micro_batch.value_or(1);
    k.recompute = fix.recompute.value_or(Recompute::selective);
    k.zero = fix.zero.value_or(1);
    k.schedule = fix.schedule.value_or(Schedule::one_f_one_b);
    k.sequence_parallel = fix.sequence_parallel.value_or(true);
    if (fix.optimizer)
        k.optimizer = *fix.optimizer;
    if (fix.offload_optimizer)
        k.offload_optimizer = *fix.offload_optimizer;
    return k;
}

// The settings search.fix pins that an explicit pipeline does not have, as notes.
std::vector<std::string> unusable_fix_notes(const SearchFix& fix)
{
    std::vector<std::string> notes;
    auto note = [&](const char* key, const char* why) {
        notes.push_back(std::string("search.fix.") + key + " is ignored: " + why);
    };
    if (fix.dp)
        note("dp", "each stage's replicas follow from its groups' GPUs and TP");
    if ((fix.cp && *fix.cp != 1) || (fix.ep && *fix.ep != 1) || (fix.vpp && *fix.vpp != 1))
        note("cp/ep/vpp", "an explicit pipeline keeps them at 1 (docs/heterogeneous.md)");
    if (fix.schedule && (*fix.schedule == Schedule::interleaved || *fix.schedule == Schedule::dualpipe))
        note("schedule", "an explicit pipeline runs gpipe, 1f1b or zb-h1");
    return notes;
}

SearchFix usable_fix(SearchFix fix)
{
    if (fix.schedule && (*fix.schedule == Schedule::interleaved || *fix.schedule == Schedule::dualpipe))
        fix.schedule.reset();
    return fix;
}

// The knob combinations of the fine pass (recompute is tried lightest first inside each).
std::vector<Strategy> knob_grid(const Scenario& s, const SearchFix& fix, const Strategy& base, int depth)
{
    std::vector<int> mbs;
    for (int mb = 1; mb <= kMaxMicroBatch; mb *= 2)
        if (s.training.global_batch % mb == 0 && (!fix.micro_batch || mb == *fix.micro_batch))
            mbs.push_back(mb);
    if (fix.micro_batch && mbs.empty())
        mbs.push_back(*fix.micro_batch);
    std::vector<Schedule> schedules { Schedule::one_f_one_b };
    if (depth > 1)
        schedules.push_back(Schedule::zb_h1);
    if (fix.schedule)
        schedules = { *fix.schedule };
    const std::vector<int> zeros = fix.zero ? std::vector<int> { *fix.zero } : std::vector<int> { 1, 0, 2, 3 };
    std::vector<Strategy> grid;
    for (int mb : mbs)
        for (Schedule sch : schedules)
            for (int zero : zeros) {
                Strategy k = base;
                k.micro_batch = mb;
                k.schedule = sch;
                k.zero = zero;
                grid.push_back(k);
            }
    return grid;
}

std::vector<Recompute> recompute_order(const SearchFix& fix)
{
    if (fix.recompute)
        return { *fix.recompute };
    return { Recompute::none, Recompute::selective, Recompute::full };
}

struct Ranked {
    HeteroLayout layout;
    Strategy knobs;
    HeteroTrial trial;
    double objective = 0;
};

// What the search shares with its workers; nothing here is written while they run.
struct HeteroSearchContext {
    const Scenario& scenario;
    const HeteroSearchOptions& opt;
    const CancelToken& cancel;
    const Calibration& calibration;
    SearchFix fix;
    Strategy base;
    int threads = 1;
    bool by_goodput = false;
    // The fullest replica's memory over its GPU's may not exceed this (search.limits.memory_headroom).
    double max_memory_ratio = 1;

    double objective(const HeteroLayout& layout, const Strategy& knobs, const HeteroTrial& t) const
    {
        if (!by_goodput)
            return t.prediction.prediction.tokens_per_s;
        const Scenario plan = hetero_plan_scenario(scenario, knobs, layout_stages(layout, scenario.cluster, t.layers));
        return goodput_tokens_per_s(*scenario.reliability, goodput_plan(plan, t.prediction));
    }
};

// Runs fn(coster, i) for i in [0, count) on the context's threads, each with its own coster; stops
// handing out items once the search is cancelled. Returns the plans costed.
template <class Fn> long long run_parallel(const HeteroSearchContext& ctx, std::size_t count, Fn&& fn)
{
    std::atomic<std::size_t> next { 0 };
    std::atomic<long long> evaluated { 0 };
    auto worker = [&]() {
        HeteroPlanCoster coster(ctx.scenario, ctx.calibration);
        for (std::size_t i = next.fetch_add(1); i < count && !ctx.cancel.cancelled(); i = next.fetch_add(1))
            fn(coster, i);
        evaluated += coster.evaluated();
    };
    std::vector<std::thread> pool;
    const int threads = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(ctx.threads), count));
    for (int t = 1; t < threads; ++t)
        pool.emplace_back(worker);
    worker();
    for (std::thread& th : pool)
        th.join();
    return evaluated.load();
}

void report(const HeteroSearchContext& ctx, std::atomic<long long>& done, std::size_t count, double from, double span)
{
    const long long d = done.fetch_add(1) + 1;
    if (ctx.opt.progress && count > 0 && (d % 64 == 0 || d == static_cast<long long>(count)))
        ctx.opt.progress(from + span * static_cast<double>(d) / static_cast<double>(count));
}

// One layout at one set of knobs, recompute lightest first until the plan fits (heavier recompute
// only ever costs time once a lighter one fits).
std::optional<Ranked> best_with_knobs(HeteroPlanCoster& coster, const HeteroLayout& layout, Strategy knobs,
    const std::vector<Recompute>& recomputes, const std::vector<int>* start, double max_memory_ratio)
{
    for (Recompute rc : recomputes) {
        knobs.recompute = rc;
        std::optional<HeteroTrial> t
            = coster.balance(layout, knobs, start ? 2 * layout.depth() + 4 : kCoarseMoves, start);
        if (t && t->feasible() && t->memory_ratio <= max_memory_ratio)
            return Ranked { layout, knobs, std::move(*t), 0 };
    }
    return std::nullopt;
}

// The coarse pass: every layout at the base knobs (recompute selective, then full), a quick balance.
std::vector<std::optional<Ranked>> coarse_pass(const HeteroSearchContext& ctx, const std::vector<HeteroLayout>& layouts,
    long long& evaluated, double progress_from)
{
    std::vector<std::optional<Ranked>> out(layouts.size());
    std::vector<Recompute> recomputes { ctx.base.recompute };
    if (!ctx.fix.recompute && ctx.base.recompute != Recompute::full)
        recomputes.push_back(Recompute::full);
    std::atomic<long long> done { 0 };
    evaluated += run_parallel(ctx, layouts.size(), [&](HeteroPlanCoster& coster, std::size_t i) {
        out[i] = best_with_knobs(coster, layouts[i], ctx.base, recomputes, nullptr, ctx.max_memory_ratio);
        if (out[i])
            out[i]->objective = ctx.objective(out[i]->layout, out[i]->knobs, out[i]->trial);
        report(ctx, done, layouts.size(), progress_from, 0.25);
    });
    return out;
}

// The layouts the fine pass searches: the coarse pass's best `beam`, and the best of every subset of
// groups (so that leaving a group idle or not is decided by the full search, not the coarse one).
std::vector<Ranked> beam_of(const HeteroSearchContext& ctx, const std::vector<std::optional<Ranked>>& coarse)
{
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < coarse.size(); ++i)
        if (coarse[i])
            order.push_back(i);
    std::stable_sort(order.begin(), order.end(),
        [&](std::size_t a, std::size_t b) { return coarse[a]->objective > coarse[b]->objective; });
    std::vector<Ranked> beam;
    std::map<unsigned, int> per_subset;
    for (std::size_t rank = 0; rank < order.size(); ++rank) {
        const HeteroLayout& l = coarse[order[rank]]->layout;
        unsigned subset = 0;
        for (const GroupShare& g : l.shares)
            subset |= 1u << g.group;
        if (static_cast<int>(rank) < ctx.opt.beam || per_subset[subset] == 0)
            beam.push_back(*coarse[order[rank]]);
        ++per_subset[subset];
    }
    return beam;
}

// The fine pass: every beam layout with every knob combination, balanced from its coarse split.
std::vector<Ranked> fine_pass(const HeteroSearchContext& ctx, const std::vector<Ranked>& beam, long long& evaluated)
{
    struct Task {
        std::size_t layout;
        Strategy knobs;
    };
    std::vector<Task> tasks;
    for (std::size_t i = 0; i < beam.size(); ++i)
        for (const Strategy& k : knob_grid(ctx.scenario, ctx.fix, ctx.base, beam[i].layout.depth()))
            tasks.push_back({ i, k });
    std::vector<std::optional<Ranked>> found(tasks.size());
    const std::vector<Recompute> recomputes = recompute_order(ctx.fix);
    std::atomic<long long> done { 0 };
    evaluated += run_parallel(ctx, tasks.size(), [&](HeteroPlanCoster& coster, std::size_t i) {
        const Ranked& from = beam[tasks[i].layout];
        found[i] = best_with_knobs(
            coster, from.layout, tasks[i].knobs, recomputes, &from.trial.layers, ctx.max_memory_ratio);
        if (found[i])
            found[i]->objective = ctx.objective(found[i]->layout, found[i]->knobs, found[i]->trial);
        report(ctx, done, tasks.size(), 0.5, 0.5);
    });
    std::vector<Ranked> out;
    for (std::optional<Ranked>& r : found)
        if (r)
            out.push_back(std::move(*r));
    return out;
}

// The TPs each group keeps for layouts of several groups: those of its best plans alone, or, for a group
// that fits no plan alone, the largest (the most memory-frugal) ones.
GroupTps screened_tps(const HeteroSearchContext& ctx, const std::vector<HeteroLayout>& singles,
    const std::vector<std::optional<Ranked>>& coarse)
{
    const Scenario& s = ctx.scenario;
    GroupTps out(s.cluster.groups.size());
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < coarse.size(); ++i)
        if (coarse[i])
            order.push_back(i);
    std::stable_sort(order.begin(), order.end(),
        [&](std::size_t a, std::size_t b) { return coarse[a]->objective > coarse[b]->objective; });
    for (std::size_t i : order) {
        std::vector<int>& tps = out[static_cast<std::size_t>(singles[i].shares.front().group)];
        const int tp = singles[i].shares.front().tp;
        if (tps.size() < kScreenedTps && std::find(tps.begin(), tps.end(), tp) == tps.end())
            tps.push_back(tp);
    }
    for (std::size_t g = 0; g < out.size(); ++g)
        if (out[g].empty()) {
            std::vector<int> all = group_tps(s, static_cast<int>(g), ctx.fix);
            for (auto it = all.rbegin(); it != all.rend() && out[g].size() < kScreenedTps; ++it)
                out[g].push_back(*it);
        }
    return out;
}

HeteroSearchResult to_result(const HeteroSearchContext& ctx, Ranked r)
{
    HeteroSearchResult out;
    out.layout = r.layout;
    out.stages = layout_stages(r.layout, ctx.scenario.cluster, r.trial.layers);
    out.strategy = hetero_plan_scenario(ctx.scenario, r.knobs, out.stages).strategy;
    out.prediction = std::move(r.trial.prediction);
    out.objective = r.objective;
    if (ctx.by_goodput)
        out.goodput_tokens_per_s = r.objective;
    out.idle_groups = idle_groups(r.layout, ctx.scenario.cluster);
    return out;
}

// Best first; equal objectives by the plan's stages (so the order does not depend on the threads).
std::vector<HeteroSearchResult> top_results(const HeteroSearchContext& ctx, std::vector<Ranked> all)
{
    std::stable_sort(all.begin(), all.end(), [](const Ranked& a, const Ranked& b) {
        if (a.objective != b.objective)
            return a.objective > b.objective;
        return a.trial.layers < b.trial.layers;
    });
    std::vector<HeteroSearchResult> out;
    for (Ranked& r : all) {
        if (static_cast<int>(out.size()) >= ctx.opt.top)
            break;
        HeteroSearchResult res = to_result(ctx, std::move(r));
        const bool seen = std::any_of(out.begin(), out.end(),
            [&](const HeteroSearchResult& o) { return o.stages == res.stages && o.strategy == res.strategy; });
        if (!seen)
            out.push_back(std::move(res));
    }
    return out;
}

} // namespace

std::string HeteroWhatIf::text() const
{
    if (!feasible)
        return change + " would not fit in memory";
    char buf[64];
    const double pct = 100 * std::fabs(step_time_change);
    if (pct < 0.05)
        return change + " would take the same time";
    std::snprintf(buf, sizeof buf, " would be %.1f%% %s", pct, step_time_change < 0 ? "faster" : "slower");
    return change + buf;
}

Scenario hetero_plan_scenario(const Scenario& s, const Strategy& strategy, const std::vector<PipelineStageSpec>& stages)
{
    Scenario plan = s;
    plan.stages = stages;
    plan.strategy = strategy;
    plan.strategy.pp = static_cast<int>(stages.size());
    plan.strategy.tp = stages.front().replicas.front().tp;
    plan.strategy.dp = static_cast<int>(stages.front().replicas.size());
    plan.strategy.cp = plan.strategy.ep = plan.strategy.vpp = 1;
    plan.dp_derived = false;
    return plan;
}

HeteroSearchOutcome search_heterogeneous(const Scenario& s, const HeteroSearchOptions& opt, const CancelToken& cancel)
{
    const auto t0 = std::chrono::steady_clock::now();
    const Calibration& cal = opt.calibration ? *opt.calibration : builtin_calibration();
    HeteroSearchContext ctx { s, opt, cancel, cal, usable_fix(opt.fix), {}, 1, false };
    ctx.base = base_knobs(s, ctx.fix);
    ctx.threads = opt.threads > 0 ? opt.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    ctx.by_goodput = opt.rank_by_goodput && s.reliability.has_value();
    HeteroSearchOutcome out;
    out.gpus = s.cluster.total_gpus();
    out.ranked_by_goodput = ctx.by_goodput;
    out.notes = unusable_fix_notes(opt.fix);
    if (s.search) {
        if (s.search->min_memory_headroom_fraction)
            ctx.max_memory_ratio = 1 - *s.search->min_memory_headroom_fraction;
        if (s.search->power_budget_kW || s.search->max_slowdown || s.search->max_gpus)
            out.notes.push_back("search.limits.power_budget_kW, max_slowdown and max_gpus are not applied to clusters "
                                "with groups yet (leave a group out of the cluster to use fewer GPUs)");
    }
    // Each group alone first: its plans, and the TPs it keeps for the layouts of several groups.
    std::vector<HeteroLayout> layouts = single_group_layouts(s, ctx.fix, kMaxDepth);
    std::vector<std::optional<Ranked>> coarse = coarse_pass(ctx, layouts, out.evaluated, 0.0);
    bool capped = false;
    const std::vector<HeteroLayout> multi
        = multi_group_layouts(s, ctx.fix, kMaxDepth, screened_tps(ctx, layouts, coarse), &capped);
    if (capped)
        out.notes.push_back("the cluster's many groups give more layouts than are costed: the subsets of the most "
                            "groups were left out");
    std::vector<std::optional<Ranked>> coarse_multi = coarse_pass(ctx, multi, out.evaluated, 0.25);
    layouts.insert(layouts.end(), multi.begin(), multi.end());
    coarse.insert(
        coarse.end(), std::make_move_iterator(coarse_multi.begin()), std::make_move_iterator(coarse_multi.end()));
    out.layouts = static_cast<long long>(layouts.size());
    std::vector<Ranked> fine = fine_pass(ctx, beam_of(ctx, coarse), out.evaluated);
    out.feasible = static_cast<long long>(fine.size())
        + std::count_if(coarse.begin(), coarse.end(), [](const auto& c) { return c.has_value(); });
    out.cancelled = cancel.cancelled();
    // The coarse plans compete too: a cancelled search returns the best it has costed so far.
    for (std::optional<Ranked>& c : coarse)
        if (c)
            fine.push_back(std::move(*c));
    out.results = top_results(ctx, std::move(fine));
    if (opt.explain && !out.results.empty() && !out.cancelled) {
        HeteroSearchResult& best = out.results.front();
        std::vector<int> layers;
        for (const PipelineStageSpec& st : best.stages)
            layers.push_back(st.layers);
        best.what_ifs = hetero_what_ifs(s, best.layout, best.strategy, layers, cal);
    }
    if (out.results.empty() && !out.cancelled)
        out.notes.push_back(layouts.empty()
                ? "no layout: no group has a tensor-parallel degree that divides the model's heads and FFN"
                : "no layout fits in memory, even with full recomputation");
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return out;
}

} // namespace parallax

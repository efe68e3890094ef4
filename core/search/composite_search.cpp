#include "search/composite_search.hpp"

#include "io/number_format.hpp"
#include "model/analytic_model.hpp"
#include "model/strategy_costs.hpp"
#include "search/range_tp.hpp"
#include "spec/layer_ranges.hpp"
#include "spec/strategy_label.hpp"
#include "spec/strategy_rules.hpp"
#include "spec/units.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

namespace parallax {

namespace {

// Recompute ranges start at layer 0 and end on a grid of this many steps over the model: fine enough to
// land near a stage boundary (Llama 3 70B: every 5 layers), small enough to keep the grid in thousands.
constexpr int kRecomputeGridSteps = 16;
// Lighter edge stages give up to a quarter of their average layer count (Megatron's
// --decoder-first/last-pipeline-num-layers are used so, to balance the embedding and the loss).
constexpr int kEdgeLighteningDivisor = 4;

// One range, layers 0..k-1 at recompute `heavy` (interned); no ranges when k is 0.
const LayerRanges* first_layers(int k, Recompute heavy)
{
    LayerRange range;
    range.recompute = heavy;
    return first_layers_range(k, range);
}

// The recompute settings to try on a base: its own, and each lighter one with the base's on the first
// k layers only.
std::vector<std::pair<Recompute, const LayerRanges*>> recompute_options(const Strategy& base, int layers, bool ranges)
{
    std::vector<std::pair<Recompute, const LayerRanges*>> out { { base.recompute, nullptr } };
    if (!ranges || base.recompute == Recompute::none)
        return out;
    const int step = std::max(1, layers / kRecomputeGridSteps);
    for (int light = 0; light < static_cast<int>(base.recompute); ++light)
        for (int k = step; k < layers; k += step)
            out.emplace_back(static_cast<Recompute>(light), first_layers(k, base.recompute));
    return out;
}

// The first/last stage layer counts to try (0 = as even as possible).
std::vector<int> edge_options(const Strategy& base, int layers, bool edges)
{
    std::vector<int> out { 0 };
    const bool plain_pipeline = base.schedule == Schedule::one_f_one_b || base.schedule == Schedule::gpipe
        || base.schedule == Schedule::zb_h1;
    if (!edges || base.pp <= 1 || base.vpp != 1 || !plain_pipeline)
        return out;
    const int avg = layers / base.pp;
    for (int d = 1; d <= std::max(1, avg / kEdgeLighteningDivisor) && avg - d >= 1; ++d)
        out.push_back(avg - d);
    return out;
}

std::vector<int> expert_tp_options(const Strategy& base, const ModelSpec& m, const std::vector<int>& wanted)
{
    std::vector<int> out { base.expert_tp };
    if (!m.is_moe())
        return out;
    for (int e : wanted) {
        const int v = e == base.tp ? 0 : e;
        if (std::find(out.begin(), out.end(), v) == out.end())
            out.push_back(v);
    }
    return out;
}

struct Candidate {
    Strategy strategy;
    int base = 0;
};

// Every valid composite around the bases, appended to `out` up to the spec's cap.
void build_candidates(const PlanInputs& in, const std::vector<Strategy>& bases, const CompositeSearchSpec& spec,
    const SearchFix& fix, std::vector<Candidate>& out, bool& truncated)
{
    const int layers = in.model.layers;
    // What search.fix pins stays as the plain plans have it.
    const bool with_ranges = spec.recompute_ranges && !fix.recompute;
    const std::vector<int> no_expert_tps;
    const std::vector<int>& expert_tps = fix.expert_tp ? no_expert_tps : spec.expert_tp;
    for (std::size_t b = 0; b < bases.size(); ++b) {
        const Strategy& base = bases[b];
        for (const auto& [recompute, ranges] : recompute_options(base, layers, with_ranges))
            for (int etp : expert_tp_options(base, in.model, expert_tps))
                for (int first : edge_options(base, layers, spec.edge_stage_layers))
                    for (int last : edge_options(base, layers, spec.edge_stage_layers)) {
                        Strategy s = base;
                        s.recompute = recompute;
                        s.layers = ranges;
                        s.expert_tp = etp;
                        s.first_stage_layers = first;
                        s.last_stage_layers = last;
                        const bool same = !ranges && recompute == base.recompute && etp == base.expert_tp
                            && first == base.first_stage_layers && last == base.last_stage_layers;
                        if (same || check_strategy(in, s) != Rule::ok)
                            continue;
                        if (static_cast<int>(out.size()) >= spec.max_candidates) {
                            truncated = true;
                            return;
                        }
                        out.push_back({ s, static_cast<int>(b) });
                    }
    }
}

// Per-range TP around each base (search/range_tp.hpp), up to the spec's cap. A few per base, they go
// before the grid so that a grid cut at the cap keeps them.
void add_range_tp_candidates(const Scenario& scenario, const AnalyticModel& model, const PlanContext& ctx,
    const std::vector<Strategy>& bases, const CompositeSearchSpec& spec, double usable_bytes,
    std::vector<Candidate>& cands, CompositeOutcome& out)
{
    EvaluationCache cache(ctx);
    const RangeTpLimits limits { usable_bytes };
    for (std::size_t b = 0; b < bases.size() && !out.truncated; ++b)
        for (const Strategy& s : range_tp_composites(scenario, model, cache, bases[b], limits, out.memory_checks)) {
            if (static_cast<int>(cands.size()) >= spec.max_candidates) {
                out.truncated = true;
                break;
            }
            cands.push_back({ s, static_cast<int>(b) });
        }
}

struct Costed {
    double tokens_per_s = 0;
    bool feasible = false;
};

// Costs every candidate on `threads` workers, each with its own evaluation cache.
std::vector<Costed> cost_all(const AnalyticModel& model, const PlanContext& ctx, const std::vector<Candidate>& cands,
    const CompositeSearchOptions& o, double usable_bytes, long long& evaluated)
{
    std::vector<Costed> out(cands.size());
    std::atomic<std::size_t> next { 0 };
    std::atomic<long long> done { 0 };
    auto work = [&] {
        EvaluationCache cache(ctx);
        AnalyticResult r;
        for (std::size_t i = next++; i < cands.size(); i = next++) {
            if (o.cancel.cancelled())
                return;
            model.evaluate(cands[i].strategy, r, cache);
            out[i] = { r.tokens_per_s, r.feasible && r.peak_memory_bytes <= usable_bytes };
            ++done;
        }
    };
    const int threads = o.threads > 0 ? o.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t)
        pool.emplace_back(work);
    work();
    for (std::thread& t : pool)
        t.join();
    evaluated = done;
    return out;
}

std::string percent(double fraction)
{
    return format_number(fraction < 0.1 ? "%.1f%%" : "%.0f%%", 100 * fraction);
}

std::string gib(double bytes)
{
    return format_number("%.1f", bytes / units::kGiB) + " GiB";
}

// How a range of its own TP/CP regroups the stage's data parallelism: "DP doubled", "DP x4", "DP halved".
std::string regrouped_dp(const Strategy& s, const LayerRange& r)
{
    const int block = s.tp * s.cp, range_block = r.tp.value_or(s.tp) * r.cp.value_or(s.cp);
    if (block == 2 * range_block)
        return "DP doubled";
    if (range_block == 2 * block)
        return "DP halved";
    if (block > range_block && block % range_block == 0)
        return "DP x" + std::to_string(block / range_block);
    return "DP " + std::to_string(s.dp * block / range_block);
}

std::string explain(const CompositeOutcome& out)
{
    const Prediction& plain = out.best_plain_prediction;
    if (out.results.empty())
        return "no composite around the best plain plans fits (" + std::to_string(out.evaluated) + " costed)";
    const CompositeResult& w = out.results.front();
    const double gain = 1 - w.prediction.step_time_s / plain.step_time_s;
    const std::string fits
        = "fits in " + gib(w.prediction.peak_memory_bytes) + " of " + gib(w.prediction.capacity_bytes);
    if (gain <= 0)
        return "no composite beats the best plain plan (" + strategy_label(out.best_plain) + ", "
            + format_number("%.3g", plain.step_time_s) + " s); the best composite, " + w.change + ", is "
            + percent(-gain) + " slower";
    std::string text = w.change + ": " + percent(gain) + " faster than the best plain plan ("
        + strategy_label(out.best_plain) + ", " + format_number("%.3g", plain.step_time_s) + " s); " + fits;
    if (!(w.base == out.best_plain))
        text += "; built around " + strategy_label(w.base);
    return text;
}

} // namespace

std::string describe_composite(const Strategy& s, const Strategy& base)
{
    std::vector<std::string> parts;
    if (s.layers) {
        for (const LayerRange& r : s.layers->ranges) {
            const std::string where = "layers " + std::to_string(r.first) + "-" + std::to_string(r.last);
            if (r.recompute)
                parts.push_back(std::string(to_string(*r.recompute)) + " recompute on " + where + " only ("
                    + std::string(to_string(s.recompute)) + " elsewhere)");
            if (r.tp && *r.tp != s.tp)
                parts.push_back("TP " + std::to_string(*r.tp) + " on " + where + " with " + regrouped_dp(s, r));
            if (r.expert_tp)
                parts.push_back("experts at TP " + std::to_string(*r.expert_tp) + " on " + where);
            if (r.precision)
                parts.push_back(std::string(to_string(*r.precision)) + " on " + where);
        }
    } else if (s.recompute != base.recompute) {
        parts.push_back(std::string(to_string(s.recompute)) + " recompute");
    }
    if (s.effective_expert_tp() != base.effective_expert_tp())
        parts.push_back(
            "expert TP " + std::to_string(s.effective_expert_tp()) + " (attention TP " + std::to_string(s.tp) + ")");
    if (s.first_stage_layers != base.first_stage_layers && s.first_stage_layers > 0)
        parts.push_back("first stage " + std::to_string(s.first_stage_layers) + " layers");
    if (s.last_stage_layers != base.last_stage_layers && s.last_stage_layers > 0)
        parts.push_back("last stage " + std::to_string(s.last_stage_layers) + " layers");
    std::string out;
    for (const std::string& p : parts)
        out += (out.empty() ? "" : ", ") + p;
    return out.empty() ? "the plain plan" : out;
}

CompositeOutcome search_composites(
    const Scenario& scenario, const std::vector<SearchResult>& plain, const CompositeSearchOptions& o)
{
    const auto t0 = std::chrono::steady_clock::now();
    CompositeOutcome out;
    const PlanContext ctx(
        scenario.model, scenario.training, scenario.cluster, o.calibration ? *o.calibration : builtin_calibration());
    const AnalyticModel model(ctx);
    const PlanInputs in { ctx.model, ctx.training, ctx.cluster.gpu, ctx.cluster.total_gpus() };
    std::vector<Strategy> bases;
    for (const SearchResult& r : plain) {
        if (static_cast<int>(bases.size()) >= o.spec.base_plans)
            break;
        Strategy s = r.strategy;
        s.layers = nullptr;
        // A plan of fewer nodes (a power budget) runs on another cluster: not this context's.
        if (s.total_gpus() == in.total_gpus)
            bases.push_back(s);
    }
    if (bases.empty()) {
        out.explanation = "no plain plan to build composites around";
        return out;
    }
    const double usable = ctx.cluster.gpu.memory_bytes * (1 - o.min_memory_headroom_fraction.value_or(0.0));
    std::vector<Candidate> cands;
    // A TP pinned by search.fix stays on every layer.
    if (o.spec.range_tp && !o.fix.tp && !o.cancel.cancelled())
        add_range_tp_candidates(scenario, model, ctx, bases, o.spec, usable, cands, out);
    if (!out.truncated)
        build_candidates(in, bases, o.spec, o.fix, cands, out.truncated);
    out.candidates = static_cast<long long>(cands.size());
    const std::vector<Costed> costed = cost_all(model, ctx, cands, o, usable, out.evaluated);
    out.cancelled = o.cancel.cancelled();
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < cands.size(); ++i)
        if (costed[i].feasible)
            order.push_back(i);
    out.feasible = static_cast<long long>(order.size());
    // Best first; ties in the order the grid built them (deterministic over thread counts).
    std::stable_sort(order.begin(), order.end(),
        [&](std::size_t a, std::size_t b) { return costed[a].tokens_per_s > costed[b].tokens_per_s; });
    std::vector<Prediction> base_predictions;
    for (const Strategy& b : bases)
        base_predictions.push_back(model.predict(b));
    std::size_t best = 0;
    for (std::size_t b = 1; b < bases.size(); ++b)
        if (base_predictions[b].tokens_per_s > base_predictions[best].tokens_per_s)
            best = b;
    out.best_plain = bases[best];
    out.best_plain_prediction = base_predictions[best];
    for (std::size_t k = 0; k < order.size() && static_cast<int>(k) < o.top; ++k) {
        const Candidate& c = cands[order[k]];
        CompositeResult r;
        r.strategy = c.strategy;
        r.prediction = model.predict(c.strategy);
        r.base = bases[static_cast<std::size_t>(c.base)];
        r.base_prediction = base_predictions[static_cast<std::size_t>(c.base)];
        r.change = describe_composite(c.strategy, r.base);
        out.results.push_back(std::move(r));
    }
    out.explanation = explain(out);
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return out;
}

} // namespace parallax

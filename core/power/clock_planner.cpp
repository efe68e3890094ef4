#include "power/clock_planner.hpp"

#include "model/analytic_model.hpp"
#include "model/strategy_costs.hpp"
#include "sim/simulated_model.hpp"

#include <algorithm>
#include <cmath>

namespace parallax {

namespace {

// Simulated check: blend factor bisection steps between the start and the greedy plan.
constexpr int kRepairSteps = 8;
// A move must save at least this fraction of the step's energy to count (stops on flat ground).
constexpr double kMinGain = 1e-7;

struct Eval {
    double step_s = 0;
    double energy_J = 0;
};

Eval evaluate_clocks(PlanContext& ctx, const Strategy& s, EvaluationCache& cache, const std::vector<double>& mhz)
{
    ctx.training.stage_clock_MHz = mhz;
    AnalyticResult r;
    AnalyticModel(ctx).evaluate(s, r, cache);
    return { r.step_time_s, r.power.energy_J_per_step };
}

Eval simulate_clocks(PlanContext& ctx, const Strategy& s, const std::vector<double>& mhz)
{
    ctx.training.stage_clock_MHz = mhz;
    const Prediction p = predict_simulated(ctx, s);
    return { p.step_time_s, p.power.energy_J_per_step };
}

// The greedy descent: lower, one step at a time, the stage clock that saves the most energy per second
// added, while the step stays within `budget_s`. `mhz` holds the clocks found; returns their evaluation.
Eval greedy_clock_descent(PlanContext& ctx, const Strategy& s, EvaluationCache& cache, const Eval& base,
    double budget_s, double step_MHz, double floor_MHz, std::vector<double>& mhz, int& moves)
{
    const int pp = s.pp;
    Eval cur = base;
    for (;;) {
        int best = -1;
        double best_score = 0;
        Eval best_eval;
        for (int st = 0; st < pp; ++st) {
            if (mhz[st] - step_MHz < floor_MHz - 1e-9)
                continue;
            std::vector<double> trial = mhz;
            trial[st] -= step_MHz;
            const Eval e = evaluate_clocks(ctx, s, cache, trial);
            const double saved = cur.energy_J - e.energy_J;
            if (e.step_s > budget_s || saved <= kMinGain * base.energy_J)
                continue;
            // Energy saved per second added; moves that add no time come first.
            const double added = std::max(e.step_s - cur.step_s, 1e-9 * base.step_s);
            const double score = saved / added;
            if (best < 0 || score > best_score) {
                best = st;
                best_score = score;
                best_eval = e;
            }
        }
        if (best < 0)
            break;
        mhz[best] -= step_MHz;
        cur = best_eval;
        ++moves;
    }
    return cur;
}

// Check the plan on the event simulator; where the timeline found a wait the closed form missed, pull
// the clocks back toward the start until the simulated step fits again.
void verify_simulated(PlanContext& ctx, const Strategy& s, EvaluationCache& cache, const ClockPlanOptions& o,
    std::vector<double>& mhz, ClockPlan& plan)
{
    const int pp = s.pp;
    const Eval sbase = simulate_clocks(ctx, s, plan.base_clock_MHz);
    Eval sim = simulate_clocks(ctx, s, mhz);
    const double sbudget = sbase.step_s * (1 + o.max_slowdown);
    if (sim.step_s > sbudget) {
        double lo = 0, hi = 1; // fraction of the greedy plan's clock reductions kept
        std::vector<double> good = plan.base_clock_MHz;
        Eval good_eval = sbase;
        for (int i = 0; i < kRepairSteps; ++i) {
            const double mid = 0.5 * (lo + hi);
            std::vector<double> trial(static_cast<std::size_t>(pp));
            for (int st = 0; st < pp; ++st)
                trial[st] = plan.base_clock_MHz[st] - mid * (plan.base_clock_MHz[st] - mhz[st]);
            const Eval e = simulate_clocks(ctx, s, trial);
            if (e.step_s <= sbudget) {
                lo = mid;
                good = trial;
                good_eval = e;
            } else {
                hi = mid;
            }
        }
        plan.notes.push_back("the simulated step exceeded the allowance with the closed form's clocks; kept "
            + std::to_string(static_cast<int>(std::lround(100 * lo))) + "% of each stage's clock reduction");
        mhz = good;
        sim = good_eval;
        plan.stage_clock_MHz = mhz;
        plan.analytic.step_s = evaluate_clocks(ctx, s, cache, mhz).step_s;
        plan.analytic.energy_J = evaluate_clocks(ctx, s, cache, mhz).energy_J;
    }
    plan.simulated = { sbase.step_s, sim.step_s, sbase.energy_J, sim.energy_J };
    plan.verified = true;
}

} // namespace

ClockPlan plan_stage_clocks(const Scenario& sc, const ClockPlanOptions& o)
{
    ClockPlan plan;
    const Strategy& s = sc.strategy;
    const int pp = s.pp;
    // The curves of the layer costs do not depend on the clocks: one context, its training settings'
    // stage clocks changed between evaluations, one cache.
    PlanContext ctx(sc.model, sc.training, sc.cluster, o.calibration ? *o.calibration : builtin_calibration());
    const PowerModel& pm = ctx.power;
    for (int st = 0; st < pp; ++st)
        plan.base_clock_MHz.push_back(pm.clock_MHz(stage_clock(pm, sc.training, pp, st)));
    plan.stage_clock_MHz = plan.base_clock_MHz;
    if (pm.nominal_MHz <= 0) {
        plan.notes.push_back("the GPU has no nominal clock (gpu.clock_MHz): nothing to plan");
        return plan;
    }
    EvaluationCache cache(ctx);
    const Eval base = evaluate_clocks(ctx, s, cache, plan.base_clock_MHz);
    const double budget = base.step_s * (1 + o.max_slowdown);
    const double step_MHz = o.step_fraction * pm.nominal_MHz;
    // Below the voltage floor a lower clock only stretches the kernels: the planner stops at the knee.
    const double floor_MHz = pm.clock_MHz(std::max(pm.min_clock, pm.knee_clock));
    std::vector<double> mhz = plan.base_clock_MHz;
    const Eval cur = greedy_clock_descent(ctx, s, cache, base, budget, step_MHz, floor_MHz, mhz, plan.moves);
    plan.stage_clock_MHz = mhz;
    plan.analytic = { base.step_s, cur.step_s, base.energy_J, cur.energy_J };
    if (o.verify_simulated)
        verify_simulated(ctx, s, cache, o, mhz, plan);
    // Per-stage power before and after.
    for (const auto* clocks : { &plan.base_clock_MHz, &plan.stage_clock_MHz }) {
        ctx.training.stage_clock_MHz = *clocks;
        const Prediction p = AnalyticModel(ctx).predict(s);
        auto& out = clocks == &plan.base_clock_MHz ? plan.stage_base_W : plan.stage_W;
        for (const StageReport& r : p.stages)
            out.push_back(r.avg_W);
    }
    if (plan.moves == 0)
        plan.notes.push_back(
            "no stage can run slower without lengthening the step beyond the allowance or without saving energy");
    return plan;
}

} // namespace parallax

#include "viewdata/plan_evaluation.hpp"

#include "io/layer_ranges_check.hpp"
#include "model/strategy_costs.hpp"
#include "sim/simulated_model.hpp"
#include "viewdata/hetero_plan_evaluation.hpp"

#include <chrono>

namespace parallax {

PlanInputs plan_inputs(const Scenario& s)
{
    return PlanInputs { s.model, s.training, s.cluster.gpu, s.cluster.total_gpus() };
}

PlanPoint evaluate_point(const AnalyticModel& model, DegreeOption option, EvaluationCache* cache)
{
    PlanPoint p;
    p.option = std::move(option);
    if (!p.option.valid())
        return p;
    AnalyticResult r;
    if (cache)
        model.evaluate(p.option.strategy, r, *cache);
    else
        model.evaluate(p.option.strategy, r);
    p.feasible = r.feasible;
    p.step_time_s = r.step_time_s;
    p.tokens_per_s = r.tokens_per_s;
    p.tflops_per_gpu = r.tflops_per_gpu;
    p.mfu = r.mfu;
    p.bubble_fraction = r.bubble_fraction;
    p.peak_memory_bytes = r.peak_memory_bytes;
    p.power_W_per_gpu = r.power.avg_W_per_gpu;
    return p;
}

SensitivityCurve sensitivity_curve(const AnalyticModel& model, const PlanInputs& in, const Strategy& s, Degree d,
    const PlanEvaluationOptions& o, EvaluationCache* cache)
{
    SensitivityCurve c;
    c.degree = d;
    c.absorber = pick_absorber(d, o.preferred_absorber, o.locks);
    c.current = degree_value(s, d);
    for (DegreeOption& option : degree_options(in, s, d, o.preferred_absorber, o.locks))
        c.points.push_back(evaluate_point(model, std::move(option), cache));
    return c;
}

TpPpHeatmap tp_pp_heatmap(const AnalyticModel& model, const PlanInputs& in, const Strategy& s,
    const PlanEvaluationOptions& o, EvaluationCache* cache)
{
    TpPpHeatmap h;
    h.tp_values = candidate_values(in, s, Degree::tp);
    h.pp_values = candidate_values(in, s, Degree::pp);
    // dp (or cp) absorbs both changes: the grid keeps the other choices of the current plan.
    DegreeLocks locks = o.locks;
    locks.set(Degree::tp, true);
    locks.set(Degree::pp, true);
    const Degree preferred = o.preferred_absorber == Degree::cp ? Degree::cp : Degree::dp;
    std::optional<Degree> absorber;
    if (!locks.is_locked(preferred))
        absorber = preferred;
    else if (!locks.is_locked(preferred == Degree::dp ? Degree::cp : Degree::dp))
        absorber = preferred == Degree::dp ? Degree::cp : Degree::dp;
    h.absorber = absorber;
    h.cells.reserve(h.tp_values.size() * h.pp_values.size());
    for (int pp : h.pp_values) {
        for (int tp : h.tp_values) {
            DegreeOption option;
            option.value = tp;
            std::optional<DegreeOption> step = change_degree(in, s, Degree::pp, pp, absorber);
            if (step)
                step = change_degree(in, step->strategy, Degree::tp, tp, absorber);
            if (!step) {
                option.strategy = s;
                option.strategy.tp = tp;
                option.strategy.pp = pp;
                option.rule = Rule::gpu_count;
                option.why = "tp*pp = " + std::to_string(static_cast<long long>(tp) * pp)
                    + (absorber ? " leaves no whole " + std::string(to_string(*absorber)) + " for the "
                                : " with dp and cp locked does not fit the ")
                    + std::to_string(in.total_gpus) + " GPUs";
            } else {
                option = std::move(*step);
                option.value = tp;
            }
            h.cells.push_back(evaluate_point(model, std::move(option), cache));
        }
    }
    return h;
}

PlanEvaluation evaluate_plan(const Scenario& s, const PlanEvaluationOptions& o, const CancelToken& cancel)
{
    if (s.heterogeneous() || s.cluster.heterogeneous())
        return evaluate_heterogeneous_plan(s, o);
    const auto start = std::chrono::steady_clock::now();
    PlanEvaluation e;
    e.scenario = s;
    e.options = o;
    const PlanInputs in = plan_inputs(e.scenario);
    for (Rule r : all_violations(in, s.strategy))
        e.violations.push_back(RuleViolation { r, rule_key(r, s.strategy), explain(r, in, s.strategy) });
    // Ranges read with one plan may not hold for the degrees the planner has moved to since.
    if (const std::optional<InputError> problem = layer_ranges_problem(s))
        e.violations.push_back(RuleViolation { Rule::ok, problem->key(), problem->rule() });
    e.valid = e.violations.empty();
    const PlanContext ctx(s.model, s.training, s.cluster, o.calibration_or_shipped());
    const AnalyticModel model(ctx);
    if (e.valid) {
        e.prediction
            = o.fidelity == Fidelity::simulated ? predict_simulated(ctx, s.strategy) : model.predict(s.strategy);
        e.warnings = e.prediction.warnings;
        e.goodput = goodput_curves(s, e.prediction, o.calibration_or_shipped());
    } else {
        e.prediction.feasible = false;
        e.prediction.infeasible_reason = e.violations.front().message;
    }
    auto stop = [&] { return cancel.cancelled(); };
    EvaluationCache cache(ctx); // one thread: the alternatives share layer costs and power curves
    if (o.alternatives) {
        for (Degree d : kAllDegrees) {
            if (stop()) {
                e.cancelled = true;
                break;
            }
            e.curves[static_cast<int>(d)] = sensitivity_curve(model, in, s.strategy, d, o, &cache);
        }
        if (!e.cancelled && !stop())
            e.heatmap = tp_pp_heatmap(model, in, s.strategy, o, &cache);
        else
            e.cancelled = true;
        if (e.valid && !e.cancelled && !stop())
            e.improvements = plan_improvements(s, o.calibration_or_shipped());
    } else {
        for (Degree d : kAllDegrees) {
            SensitivityCurve& c = e.curves[static_cast<int>(d)];
            c.degree = d;
            c.current = degree_value(s.strategy, d);
        }
    }
    e.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return e;
}

} // namespace parallax

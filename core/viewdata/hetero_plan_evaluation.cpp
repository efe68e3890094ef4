#include "viewdata/hetero_plan_evaluation.hpp"

#include "sim/hetero_simulation.hpp"
#include "viewdata/group_edits.hpp"

#include <chrono>

namespace parallax {

PlanEvaluation evaluate_heterogeneous_plan(const Scenario& s, const PlanEvaluationOptions& o)
{
    const auto start = std::chrono::steady_clock::now();
    PlanEvaluation e;
    e.scenario = s;
    e.options = o;
    // The hetero rules have no plain Rule of their own: the key and the sentence say which one broke.
    if (!s.heterogeneous() || !s.cluster.heterogeneous())
        e.violations.push_back(RuleViolation { Rule::ok, s.heterogeneous() ? "cluster.groups" : "strategy.stages",
            "a cluster with node groups needs strategy.stages, and stages need node groups" });
    else if (const std::optional<GroupEditError> v = group_edit_error(s)) // the hetero rules, names first
        e.violations.push_back(RuleViolation { Rule::ok, v->key, v->message });
    e.valid = e.violations.empty();
    if (e.valid) {
        const HeteroModel model(s, o.calibration_or_shipped());
        e.hetero = model.prediction();
        e.prediction = o.fidelity == Fidelity::simulated
            ? hetero_prediction_from_simulation(model, simulate_heterogeneous(model))
            : model.prediction().prediction;
        e.warnings = e.prediction.warnings;
    } else {
        e.prediction.feasible = false;
        e.prediction.infeasible_reason = e.violations.front().message;
    }
    for (Degree d : kAllDegrees) {
        SensitivityCurve& c = e.curves[static_cast<int>(d)];
        c.degree = d;
        c.current = degree_value(s.strategy, d);
    }
    e.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return e;
}

} // namespace parallax

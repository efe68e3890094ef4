#pragma once
// The planner's evaluation of a heterogeneous plan (cluster.groups + strategy.stages,
// docs/heterogeneous.md): its rules, the hetero model's prediction (or its simulation) and per-stage
// reports. The alternatives around plain degrees (sensitivity curves, the TP x PP map, the
// improvements) do not apply to an explicit pipeline and stay empty.
#include "viewdata/plan_evaluation.hpp"

namespace parallax {

PlanEvaluation evaluate_heterogeneous_plan(const Scenario& s, const PlanEvaluationOptions& o);

} // namespace parallax

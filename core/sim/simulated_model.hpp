#pragma once
// The simulated fidelity: lower the plan to the execution DAG, run the event simulator, and report
// the same Prediction as the analytic model with the step time, bubble and tail taken from the
// simulated timeline.
#include "ir/lowering.hpp"
#include "model/plan_context.hpp"
#include "power/power_trace.hpp"
#include "sim/simulator.hpp"
#include "spec/prediction.hpp"

namespace parallax {

struct SimulatedPlan {
    LoweredPlan lowered;
    SimulationResult result;
    PowerTrace power; // every stage's power over the simulated step
};

SimulatedPlan simulate_plan(const PlanContext& ctx, const Strategy& s);
Prediction predict_simulated(const PlanContext& ctx, const Strategy& s);
// When the simulation is already at hand (the GUI's timeline keeps it).
Prediction prediction_from_simulation(const PlanContext& ctx, const Strategy& s, const SimulatedPlan& sim);

} // namespace parallax

#pragma once
// The simulated fidelity of a heterogeneous plan: the hetero model's stages lowered to the execution
// DAG (ir/hetero_lowering.hpp), run by the event simulator, and its Prediction with the step time,
// bubble and tail taken from the timeline (memory and power stay the hetero model's).
#include "model/hetero_model.hpp"
#include "sim/simulated_model.hpp"

namespace parallax {

// Throws Cancelled when `cancel` is cancelled meanwhile.
SimulatedPlan simulate_heterogeneous(const HeteroModel& h, const CancelToken* cancel = nullptr);
Prediction hetero_prediction_from_simulation(const HeteroModel& h, const SimulatedPlan& sim);
Prediction predict_heterogeneous_simulated(const Scenario& s, const Calibration& cal = builtin_calibration());

} // namespace parallax

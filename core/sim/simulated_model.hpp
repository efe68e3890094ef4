#pragma once
// The simulated fidelity: lower the plan to the execution DAG, run the event simulator, and report
// the same Prediction as the analytic model with the step time, bubble and tail taken from the
// simulated timeline.
#include "ir/lowering.hpp"
#include "model/plan_context.hpp"
#include "power/power_trace.hpp"
#include "sim/simulator.hpp"
#include "spec/prediction.hpp"

#include <string>
#include <vector>

namespace parallax {

// A step of more micro-batches than this is not simulated whole (10^6 micro-batches would take
// gigabytes and minutes): a steady-state window of at most this many is simulated, and the step time
// extrapolated from two window lengths (every micro-batch past the pipeline's fill adds the same time).
inline constexpr long long kMaxSimulatedMicrobatches = 1024;

// What was simulated of the step: all of it, or a window.
struct SimulationWindow {
    long long step_microbatches = 0; // the plan's
    long long simulated_microbatches = 0; // in `lowered` and `result`
    double extra_s = 0; // time the micro-batches beyond the window add (0 when all were simulated)
    bool extrapolated() const { return simulated_microbatches < step_microbatches; }
};

struct SimulatedPlan {
    LoweredPlan lowered;
    SimulationResult result;
    PowerTrace power; // every stage's power over the simulated step (the window's when extrapolated)
    SimulationWindow window;
    // Per device, when stages differ (a heterogeneous plan): what each stands for, for labels and sums.
    std::vector<std::string> device_labels; // "H100-SXM5-80GB tp4 + A100-SXM4-80GB tp4"
    std::vector<std::string> device_gpu_types; // "H100+A100"
    std::vector<long long> device_gpus;
};

// Throws Cancelled when `cancel` is cancelled meanwhile.
SimulatedPlan simulate_plan(const PlanContext& ctx, const Strategy& s, const CancelToken* cancel = nullptr);
Prediction predict_simulated(const PlanContext& ctx, const Strategy& s);
// The micro-batches simulated of a step of `step_microbatches` on `pp` stages: all of them up to
// kMaxSimulatedMicrobatches, else the largest multiple of 2 x pp within it (schedules need whole rounds).
long long simulated_microbatches(long long step_microbatches, int pp);
// The analytic breakdown `a` with the pipeline's end, the step's end and the loader's stall taken from a
// simulation: the bubble, the exposed tail and the optimizer step as the timeline has them.
TimeBreakdown simulated_time(const TimeBreakdown& a, double pipeline_end_s, double gpu_step_s, double data_stall_s);
// The last pipeline pass's end, the micro-batches beyond a simulated window included.
double simulated_pipeline_end_s(const SimulatedPlan& sim);
// When the simulation is already at hand (the GUI's timeline keeps it).
Prediction prediction_from_simulation(const PlanContext& ctx, const Strategy& s, const SimulatedPlan& sim);

} // namespace parallax

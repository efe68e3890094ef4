#pragma once
// Per-stage DVFS planning, after Perseus (Chung et al. SOSP 2024, "Reducing Energy Bloat in
// Large Model Training"): stages off the pipeline's critical path finish their work early and wait;
// run them slower, at a lower voltage, so they arrive just in time and spend less energy, while the
// step time stays (nearly) the same. Greedy on the analytic model: repeatedly lower the clock of the
// stage that saves the most energy per second of step time added, while the step stays within the
// allowed slowdown; then check the plan with the event simulator and pull the clocks back toward
// the start if the simulated step exceeds the allowance.
#include "calibration/calibration.hpp"
#include "spec/prediction.hpp"
#include "spec/scenario.hpp"

#include <string>
#include <vector>

namespace parallax {

struct ClockPlanOptions {
    double max_slowdown = 0.01; // step-time increase allowed over the starting clocks (0.01 = 1%)
    double step_fraction = 0.01; // clock step, fraction of the nominal clock (~18 MHz on H100)
    bool verify_simulated = true; // check (and repair) the plan with the event simulator
    const Calibration* calibration = nullptr; // nullptr = the built-in calibration
};

struct ClockPlanFidelity {
    double base_step_s = 0;
    double step_s = 0;
    double base_energy_J = 0; // all GPUs, one step
    double energy_J = 0;
    double slowdown() const { return base_step_s > 0 ? step_s / base_step_s - 1 : 0; }
    double energy_saved() const { return base_energy_J > 0 ? 1 - energy_J / base_energy_J : 0; }
};

struct ClockPlan {
    std::vector<double> base_clock_MHz; // per stage, where the plan started
    std::vector<double> stage_clock_MHz; // per stage, the plan
    ClockPlanFidelity analytic;
    ClockPlanFidelity simulated; // when verified
    bool verified = false;
    int moves = 0; // clock steps taken
    std::vector<double> stage_base_W, stage_W; // per stage average power per GPU, before and after (analytic)
    std::vector<std::string> notes;
};

// `sc` must be a valid scenario whose GPU has a nominal clock (gpu.clock_MHz).
ClockPlan plan_stage_clocks(const Scenario& sc, const ClockPlanOptions& options);

} // namespace parallax

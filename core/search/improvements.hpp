#pragma once
// The choices around the parallel degrees, as a waterfall: starting from the plan as given, each step
// applies one choice on top of the previous ones and says what it saves (step time, energy) or costs:
// a loader that keeps up, the optimizer, activation and parameter offloads (each off when the plan fits
// without it; on, at its price, when it makes the plan fit), tile-level TP (and MoE dispatch/combine) communication
// overlap where the framework has it, and per-stage clocks (clock_planner.hpp). Only the choices that change something
// are listed.
#include "calibration/calibration.hpp"
#include "spec/prediction.hpp"
#include "spec/scenario.hpp"

#include <string>
#include <vector>

namespace parallax {

struct Improvement {
    std::string name; // "better loader", "optimizer offload", "fused TP overlap", "per-stage clocks"
    std::string change; // the setting, e.g. "training.data.workers 2 -> 8"
    double step_time_s_saved = 0; // negative: a cost (the price of fitting)
    double energy_J_saved = 0; // one step, all GPUs; negative: a cost
    double step_time_s = 0; // the step after this and every earlier choice
    double energy_J = 0;
    std::string note; // why it helps, or what it costs
};

struct ImprovementWaterfall {
    double baseline_step_time_s = 0;
    double baseline_energy_J = 0; // one step, all GPUs
    bool baseline_feasible = true;
    std::vector<Improvement> steps;
    Scenario improved; // the scenario with every listed choice applied
};

// `sc` must be a valid training scenario. Runs a handful of analytic predictions and the clock planner
// (analytic only): milliseconds.
ImprovementWaterfall plan_improvements(const Scenario& sc, const Calibration& calibration = builtin_calibration());

} // namespace parallax

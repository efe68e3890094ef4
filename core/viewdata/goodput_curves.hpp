#pragma once
// What the planner's goodput panel draws: expected goodput (as a share of the uninterrupted throughput)
// against the checkpoint interval, at the scenario's interruption rate and at lower and higher rates, so
// a user sees how flat the optimum is and how much a worse failure or preemption rate would cost.
#include "calibration/calibration.hpp"
#include "spec/prediction.hpp"
#include "spec/scenario.hpp"

#include <array>
#include <vector>

namespace parallax {

// The interruption rates drawn, as multiples of the scenario's (failures and preemptions alike).
inline constexpr std::array<double, 3> kGoodputRateFactors = { 0.5, 1.0, 2.0 };

struct GoodputCurve {
    double rate_factor = 1;
    double interruptions_per_day = 0;
    std::vector<double> fraction; // goodput / throughput at each interval of GoodputCurves::interval_s
    double best_interval_s = 0;
    double best_fraction = 0;
};

struct GoodputCurves {
    bool present = false; // the scenario has a reliability section and the plan is valid
    std::vector<double> interval_s; // log-spaced around the best interval
    std::array<GoodputCurve, kGoodputRateFactors.size()> curves;
    double interval_used_s = 0; // the scenario's interval (or the best, when "auto")
    double fraction_used = 0;
    double checkpoint_write_s = 0;
};

// Points per curve: enough for a smooth curve over the two decades drawn.
inline constexpr int kGoodputCurvePoints = 61;

GoodputCurves goodput_curves(const Scenario& s, const Prediction& p, const Calibration& cal = builtin_calibration());

} // namespace parallax

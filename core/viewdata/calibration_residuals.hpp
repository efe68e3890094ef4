#pragma once
// What the planner draws of a calibration fitted to runs: each run's error before (the shipped
// calibration) and after the fit, read from the calibration's own provenance so a saved file draws the
// same picture as the fit that wrote it.
#include "calibration/calibration.hpp"

#include <string>
#include <vector>

namespace parallax {

struct CalibrationResiduals {
    struct Run {
        std::string run_id;
        double log_before = 0; // ln(measured / predicted) tokens/s per GPU, shipped calibration
        double log_after = 0; // the same with the fitted calibration
        double error_before = 0; // measured / predicted - 1
        double error_after = 0;
    };
    std::vector<Run> runs;
    double rms_before = 0; // root mean square of the log errors
    double rms_after = 0;
    double max_abs_log = 0; // the largest |log error|, before or after: the plot's range
    bool empty() const { return runs.empty(); }
};

// From provenance["runs"] (run, log_error_before, log_error_after); empty for a calibration without.
CalibrationResiduals calibration_residuals(const Calibration& c);

} // namespace parallax

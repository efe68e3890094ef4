#pragma once
// The residuals behind the error bands, from validation files in the published-runs format: rows
// of the runs the shipped calibration was fitted to are predicted by leave-one-source-out fits;
// rows of held-out files (never fitted) by the calibration itself. Never in-sample.
#include "calibration/calibration_fit.hpp"
#include "calibration/error_band.hpp"

#include <string>
#include <vector>

namespace parallax {

ErrorBandTable build_error_band_table(const std::vector<ValidationCase>& fitted_cases,
    const std::vector<ValidationCase>& held_out_cases, const Calibration& shipped, const FitOptions& options,
    const std::string& provenance);

} // namespace parallax

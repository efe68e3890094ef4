#pragma once
// Fitting a Calibration to measured runs (Levenberg-Marquardt on log errors, Eigen), and
// leave-one-source-out cross-validation: the honest estimate of the error on runs the fit never saw.
#include "calibration/calibration.hpp"
#include "calibration/published_runs.hpp"

#include <map>
#include <string>
#include <vector>

namespace parallax {

struct FitOptions {
    // Weight of the prior that keeps each log-scale near 0 (scale 1): a scale moves only where many
    // rows agree it should.
    double prior_weight = 0.5;
    int min_rows_per_parameter = 3;
    std::string name = "fitted";
};

struct FitResult {
    Calibration calibration;
    std::vector<std::string> parameters; // which scales were free
    int rows = 0;
    double rms_log_error_before = 0;
    double rms_log_error_after = 0;
};

FitResult fit_calibration(const std::vector<ValidationCase>& cases, const FitOptions& options = {});

struct CrossValidation {
    std::map<std::string, GroupSummary> by_held_out_source;
    GroupSummary overall; // every row predicted by a fit that did not see its source
    std::vector<ValidationRow> rows;
};

CrossValidation leave_one_source_out(const std::vector<ValidationCase>& cases, const FitOptions& options = {});

} // namespace parallax

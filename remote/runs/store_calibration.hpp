#pragma once
// Calibration from the user's own runs: the completed runs of one cluster in the run store become
// measured cases (the scenario that ran, the median of its steady-state steps), checked before they
// are fitted; a run whose measurement is missing, unsteady or inconsistent with its scenario is
// rejected with the reason, never fitted.
#include "calibration/calibration_fit.hpp"
#include "store/run_record.hpp"

#include <optional>
#include <string>
#include <vector>

namespace parallax::remote {

class RunCatalog;

struct RejectedRun {
    std::string run_id;
    std::string reason;
};

struct StoreCases {
    std::vector<ValidationCase> cases; // source_group: the run id (each run its own source)
    std::vector<std::string> clusters; // of each case
    std::vector<RejectedRun> rejected;
};

// The runs of `cluster` (a profile name; empty: every cluster) that can calibrate the model.
StoreCases store_cases(const RunCatalog& catalog, const std::string& cluster);

// One run's checks and case; `steps` its parsed steps. Returns the reason when it is rejected.
std::optional<std::string> run_case(const RunRecord& run, const std::vector<StepRecord>& steps, ValidationCase& out);

// How far measured and predicted throughput lie apart: ln(measured / predicted) per case.
struct Residual {
    std::string run_id;
    double log_error = 0;
};
std::vector<Residual> residuals(const std::vector<ValidationCase>& cases, const Calibration& calibration);

// The calibration fitted to `cases` (all on one GPU), with its provenance: the runs, the store, the
// time, and each run's residual before and after.
Calibration fit_store_calibration(const std::vector<ValidationCase>& cases, const std::string& cluster,
    const std::string& store_path, const std::string& fitted_at);

// A calibration fitted to the runs selected in the planner's runs table: several runs are those runs,
// one run stands for every run of its cluster. Rejected runs are kept with their reasons either way.
struct StoreFit {
    std::string cluster; // of the fitted runs; empty when they come from several
    StoreCases found;
    std::optional<Calibration> calibration; // none when nothing could be fitted (`error` says why)
    std::string error;
};
StoreFit fit_selected_runs(const RunCatalog& catalog, const std::vector<std::string>& run_ids,
    const std::string& store_path, const std::string& fitted_at);

} // namespace parallax::remote

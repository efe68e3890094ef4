#pragma once
// Validation against published training runs (the format of validation/published-runs.json):
// each row becomes a scenario, with every unstated setting filled by a stated rule and listed as an
// assumption; rows that cannot be modelled are skipped with the reason, never dropped silently.
#include "calibration/calibration.hpp"
#include "io/preset_catalog.hpp"
#include "spec/scenario.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace parallax {

struct ValidationCase {
    std::string id;
    std::string source_group; // e.g. "narayanan21", "nemo2407"
    std::string gpu; // preset name of the GPU the row ran on
    std::string model_name;
    Scenario scenario;
    double measured_tokens_per_s_per_gpu = 0;
    std::string measured_from; // which published field the measurement comes from
    std::optional<double> measured_peak_memory_bytes; // result.peak_memory_gib, where the source states it
    std::optional<double> measured_step_time_s; // where the source states the step time itself
    std::vector<std::string> assumptions;
    // Recompute was unstated: choose the least recomputation that fits in memory.
    bool recompute_unstated = false;
};

struct SkippedRow {
    std::string id;
    std::string reason;
};

struct ValidationRow {
    ValidationCase c;
    double predicted_tokens_per_s_per_gpu = 0;
    double error = 0; // (predicted - measured) / measured
    bool feasible = true;
    double predicted_peak_memory_bytes = 0;
    std::optional<double> memory_error; // (predicted - measured) / measured peak memory, where measured
};

struct GroupSummary {
    int rows = 0;
    double mape = 0;
    double median = 0;
    double worst = 0; // largest |error|
    double step_time_mape = 0; // the same rows' step-time error (predicted / measured step time - 1)
    std::optional<double> spearman; // rank correlation measured vs predicted, when >= 3 rows
};

struct ValidationReport {
    std::vector<ValidationRow> rows;
    std::vector<SkippedRow> skipped;
    GroupSummary overall;
    std::map<std::string, GroupSummary> by_source;
    std::map<std::string, GroupSummary> by_gpu;
    std::map<std::string, GroupSummary> by_workload; // dense, mixture of experts, long context
    // Rank preservation where one source compares several strategies for one model.
    std::map<std::string, GroupSummary> by_source_model;
    // Peak memory per GPU against the published figure (rows that state one): MAPE, median, worst.
    GroupSummary memory;
};

// Throws InputError when the file is not in the published-runs format at all.
std::vector<ValidationCase> read_published_runs(const nlohmann::json& runs, const std::string& file,
    const PresetCatalog& catalog, std::vector<SkippedRow>& skipped);

// `calibration`: none by default, so the table shows the uncalibrated physics.
ValidationReport run_validation(const std::vector<ValidationCase>& cases, std::vector<SkippedRow> skipped,
    const Calibration& calibration = no_calibration());

nlohmann::json validation_report_to_json(const ValidationReport& r);
std::string validation_report_to_markdown(const ValidationReport& r);

double spearman_rank_correlation(const std::vector<double>& a, const std::vector<double>& b);

} // namespace parallax

#pragma once
// Measured runs on mixed clusters (validation/measured-hetero-runs.json: Sailor's artifact runs with their
// per-stage plans, AMP's trials with their layer partitions, HexiScale's MFUs). Each row becomes a scenario
// document with cluster.groups and strategy.stages and is read by the scenario reader, so it obeys the same
// rules as a user's file; the facts a row leaves out (the model's shape, the fabrics the source measured or
// stated, the precision its framework ran at) are filled from named, sourced tables and listed as the row's
// assumptions. Rows that cannot be modelled are skipped with the reason.
#include "calibration/published_runs.hpp"
#include "io/preset_catalog.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace parallax {

// An object whose "rows" carry "cluster.gpus_by_type": the measured-hetero-runs format.
bool is_hetero_runs_file(const nlohmann::json& j);

// Throws InputError when `doc` has no "rows" list.
std::vector<ValidationCase> read_hetero_runs(
    const nlohmann::json& doc, const std::string& file, const PresetCatalog& catalog, std::vector<SkippedRow>& skipped);

} // namespace parallax

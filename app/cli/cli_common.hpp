#pragma once
// Shared plumbing of the parallax-cli commands: exit codes, loading scenarios, writing output.
#include "calibration/calibration.hpp"
#include "io/preset_catalog.hpp"
#include "io/scenario_io.hpp"
#include "serving/serving_spec.hpp"
#include "spec/scenario.hpp"

#include <QStringList>

#include <optional>
#include <string>

namespace parallax::cli {

// Exit codes of the contract (docs/cli.md).
enum ExitCode : int { kOk = 0, kInternalError = 1, kBadInput = 2, kInfeasible = 3 };

// A scenario file path, or the name of a scenario preset ("default"). A search or sweep does not hold the
// scenario's strategy to the validity rules (it ignores its degrees): ScenarioUse::search. Only the
// commands that model heterogeneous clusters (predict) accept cluster.groups / strategy.stages; the
// others refuse them with an InputError rather than plan the first group alone.
Scenario load_scenario_argument(const std::string& arg, const PresetCatalog& catalog,
    ScenarioUse use = ScenarioUse::plan, bool allow_heterogeneous = false);

// The serving scenario in a file or scenario preset (one with "serving"), or nullopt when the argument
// names a training scenario. Throws InputError for a bad serving scenario or an unreadable file.
std::optional<ServingScenario> load_serving_argument(const std::string& arg, const PresetCatalog& catalog);

// --calibration VALUE: a calibration JSON file, "builtin" or "none". Throws InputError.
Calibration calibration_argument(const QString& value);

void print_out(const std::string& text); // stdout
void print_err(const std::string& text); // stderr, with a trailing newline

} // namespace parallax::cli

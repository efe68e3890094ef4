#pragma once
// predict on a co-location scenario (one with "colocation"): the placement of several models on one pool.
#include "io/preset_catalog.hpp"

#include <optional>
#include <string>

namespace parallax::cli {

// The exit code when `arg` is a co-location scenario file (its placement printed), else nullopt.
// Throws InputError for a bad co-location scenario.
std::optional<int> predict_colocation_argument(const std::string& arg, const PresetCatalog& catalog, bool as_json);

} // namespace parallax::cli

#pragma once
// Reads one published-run row (validation/FIELDS.md) as `parallax-cli validate` would, for tests of the
// reader's rules: the scenario it builds, or the reason it skips the row as an exception.
#include "calibration/published_runs.hpp"
#include "io/preset_catalog.hpp"

#include <nlohmann/json.hpp>

#include <stdexcept>
#include <vector>

namespace parallax::test {

inline Scenario published_row_scenario(const nlohmann::json& row)
{
    std::vector<SkippedRow> skipped;
    const std::vector<ValidationCase> cases
        = read_published_runs(nlohmann::json::array({ row }), "t.json", PresetCatalog::standard(), skipped);
    if (cases.size() != 1)
        throw std::runtime_error(skipped.empty() ? "no case" : skipped[0].reason);
    return cases[0].scenario;
}

} // namespace parallax::test

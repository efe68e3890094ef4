#pragma once
// JSON of search and sweep results (docs/cli.md: `search --json`, `sweep --json`) and their tables.
#include "search/search.hpp"
#include "search/sweep.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace parallax {

// The plans' labels as a list shows them (spec/strategy_label.hpp: settings that tell equal-looking rows apart).
std::vector<std::string> result_labels(const std::vector<SearchResult>& results);
// One result; `label` is its row's label from result_labels.
nlohmann::json search_result_to_json(const SearchResult& r, const std::string& label);
nlohmann::json search_outcome_to_json(const SearchOutcome& o);
nlohmann::json sweep_to_json(const std::vector<SweepPoint>& points);
std::string search_outcome_to_text(const SearchOutcome& o);
std::string sweep_to_text(const std::vector<SweepPoint>& points);
// The tables as CSV (search --csv, sweep --csv): one row per result or point, the plan as its label and
// its degrees; an empty search is a header alone.
std::string search_outcome_to_csv(const SearchOutcome& o);
std::string sweep_to_csv(const std::vector<SweepPoint>& points);

} // namespace parallax

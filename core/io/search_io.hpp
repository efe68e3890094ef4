#pragma once
// JSON of search and sweep results (docs/cli.md: `search --json`, `sweep --json`) and their tables.
#include "search/search.hpp"
#include "search/sweep.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace parallax {

nlohmann::json search_result_to_json(const SearchResult& r);
nlohmann::json search_outcome_to_json(const SearchOutcome& o);
nlohmann::json sweep_to_json(const std::vector<SweepPoint>& points);
std::string search_outcome_to_text(const SearchOutcome& o);
std::string sweep_to_text(const std::vector<SweepPoint>& points);

} // namespace parallax

#pragma once
// The heterogeneous search's output (`parallax-cli search` on a cluster with groups): the contract's
// search JSON, each result's strategy an explicit pipeline (`stages`) that can be pasted back into the
// scenario, and the text table with each plan's stages, replicas, memory and idle groups.
#include "search/hetero_search.hpp"
#include "spec/scenario.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace parallax {

// A result's strategy as a scenario's "strategy" object (with "stages", without tp/pp/dp).
nlohmann::json hetero_strategy_to_json(const HeteroSearchResult& r);
nlohmann::json hetero_search_to_json(const Scenario& s, const HeteroSearchOutcome& o);
std::string hetero_search_to_text(const Scenario& s, const HeteroSearchOutcome& o);

} // namespace parallax

#pragma once
// A serving prediction as the contract's JSON (`predict --json` on a serving scenario, docs/cli.md)
// and as the table `predict` prints.
#include "serving/serving_model.hpp"
#include "serving/serving_search.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace parallax {

nlohmann::json serving_prediction_to_json(const ServingPrediction& p);
std::string serving_prediction_to_text(const ServingScenario& s, const ServingPrediction& p);
// "TP 8 × PP 1 × EP 1 × attention-DP 1, 1 replica" or the disaggregated pools.
std::string deployment_label(const ServingScenario& s);

std::string deployment_label(const Deployment& d, int replicas);
nlohmann::json deployment_to_json(const Deployment& d);

// `search` on a serving scenario: {"schema", "mode": "serve", "evaluated", "feasible", "meet_slo",
// "seconds", "results": [{"deployment", "label", "pareto", "prediction"}], "pareto": [...]}.
nlohmann::json serving_search_to_json(const ServingSearchResult& r);
std::string serving_search_to_text(const ServingScenario& s, const ServingSearchResult& r);

} // namespace parallax

#pragma once
// The stops of the serving mode's degree sliders: for one degree of an aggregated deployment (TP, PP,
// EP, attention DP, replicas), the values worth offering on this model and cluster, each valid or
// blocked by the serving rule it breaks (the rule's text, for the slider's hover).
#include "serving/serving_spec.hpp"

#include <string>
#include <vector>

namespace parallax {

enum class ServingDegree : unsigned char { tp, pp, ep, attention_dp, replicas };

struct ServingStop {
    int value = 1;
    bool valid = true;
    std::string why; // the rule that blocks it
};

int degree_of(const ServingScenario& s, ServingDegree d);
// `s` with the degree set; replicas 0 means "as many as the cluster holds".
ServingScenario with_degree(const ServingScenario& s, ServingDegree d, int value);
// Ascending; includes the scenario's own value. Empty for a disaggregated deployment (its pools carry
// their own degrees).
std::vector<ServingStop> serving_degree_stops(const ServingScenario& s, ServingDegree d);

} // namespace parallax

#pragma once
// Deployment search for a serving scenario: every instance layout the model and cluster allow (TP, PP,
// EP, attention DP, as many replicas as fit) and every split into disaggregated prefill and decode
// pools, each predicted; those that fit and meet the SLO are ranked by output tokens/s per GPU, and the
// Pareto front of tokens/s per GPU against tokens/s per user (1 / TPOT) is marked.
#include "jobs/cancel_token.hpp"
#include "serving/serving_model.hpp"

#include <vector>

namespace parallax {

struct ServingCandidate {
    Deployment deployment;
    ServingPrediction prediction;
    bool pareto = false; // no other candidate is at least as good on both axes and better on one
};

struct ServingSearchResult {
    long long evaluated = 0;
    long long feasible = 0; // fit in memory and sustain the load
    long long meet_slo = 0;
    double seconds = 0;
    bool cancelled = false; // stopped early: the counts and results are empty
    std::vector<ServingCandidate> results; // best first, at most `top`
    std::vector<ServingCandidate> pareto; // by tokens/s per user, fastest first
};

// The layouts one instance may take on this cluster (each passes check_instance_layout).
std::vector<InstanceLayout> serving_layouts(const ModelSpec& m, const ClusterSpec& c);
// Multi-threaded; `cancel` is polled before every candidate.
ServingSearchResult search_serving(const ServingScenario& s, int top, const CancelToken& cancel = {});

} // namespace parallax

#pragma once
// What the planner's co-location view draws: the pool, group by group and GPU by GPU, each GPU marked
// with the model placed on it (and that model's residency), so a user sees at a glance which model runs
// where, what is left idle and who is offloaded. Plain values from plan_colocation's result.
#include "jobs/cancel_token.hpp"
#include "serving/colocation.hpp"

#include <string>
#include <vector>

namespace parallax {

struct ColocationGridGroup {
    std::string name;
    std::string gpu;
    int nodes = 1;
    int gpus_per_node = 1;
    std::vector<int> model_of_gpu; // index into the result's models, -1 idle; node-major
};

// GPUs of each group taken in the models' order, each model's replicas on consecutive GPUs.
std::vector<ColocationGridGroup> colocation_grid(const ColocationScenario& s, const ColocationResult& r);

struct ColocationEvaluation {
    ColocationScenario scenario;
    bool cancelled = false;
    ColocationResult result;
    std::vector<ColocationGridGroup> grid;
};

ColocationEvaluation evaluate_colocation(const ColocationScenario& s, const CancelToken& token = {});

} // namespace parallax

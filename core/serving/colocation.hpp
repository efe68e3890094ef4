#pragma once
// Placing several models on one pool of mixed GPUs: for each model its node group, TP and replicas, and
// where memory is short the residency of its weights; each placed instance is predicted by the
// single-model serving model (serving_model.hpp) with the offload pipeline (residency.hpp). The planner
// meets every SLO it can, then maximises the sum of each model's priority times its normalised
// throughput (its output tokens/s over what it reaches with the whole pool to itself). Beside the
// placement it weighs each model's sensitivity to residency against the cost of preempting it
// (preemption.hpp), and says which to offload, preempt or keep resident. Plain values a view can draw.
#include "serving/colocation_spec.hpp"
#include "serving/preemption.hpp"
#include "serving/residency.hpp"

#include <string>
#include <vector>

namespace parallax {

// What bringing a model up on one group's GPUs would cost (a migration there), at its placement's TP.
struct GroupPreemption {
    std::string group;
    std::string gpu;
    PreemptionCost cost;
};

struct PlacedModel {
    std::string name;
    Placement placement;
    std::string gpu; // the group's GPU preset name
    OffloadedPrediction offloaded; // the prediction at this placement
    bool placed = false; // false: no GPUs were left that it fits on
    Placement alone; // its best placement with the pool to itself
    double alone_tokens_per_s = 0;
    double slowdown_vs_alone = 1; // alone tokens/s over these
    double normalised_throughput = 0; // tokens/s over alone
    ResidencyCurve curve; // at this placement's group, TP and replicas
    double loss_at_half_residency = 0; // 1 - relative throughput at 50% residency
    PreemptionCost preemption;
    // Per GPU type of the pool: every weight loaded there, its in-flight requests' cache recovered.
    std::vector<GroupPreemption> preemption_by_group;
    std::string explanation;
};

struct PoolGroupUse {
    std::string group;
    std::string gpu;
    long long gpus = 0;
    long long used = 0;
};

struct ColocationResult {
    bool feasible = false; // every model placed and meeting its SLO
    std::vector<PlacedModel> models; // in the scenario's order
    std::vector<PoolGroupUse> pool;
    double objective = 0; // sum of priority x normalised throughput
    int slo_met = 0;
    long long evaluated = 0; // placements predicted
    double seconds = 0;
    std::vector<std::string> suggestion; // which model to offload, preempt, keep resident, and why
    std::vector<std::string> warnings;
};

// The residencies the planner tries where the weights do not fit: 1, 0.9, ..., 0.1.
inline constexpr int kResidencySteps = 10;
// A model that loses less than this at 50% residency is offloaded before anything is preempted: a
// policy choice (a quarter of its throughput), not a measured constant.
inline constexpr double kTolerableResidencyLoss = 0.25;

ColocationResult plan_colocation(const ColocationScenario& s);
// Sensitivity against migration cost (colocation_advice.cpp): which placed model to offload first when
// memory is short, which to preempt first when whole GPUs are needed, which to keep resident.
std::vector<std::string> colocation_suggestion(const std::vector<PlacedModel>& models);
// The serving scenario of one model at one placement (plain cluster of the group's GPUs).
ServingScenario placed_scenario(const ColocationScenario& s, const ColocatedModel& m, const Placement& p);

} // namespace parallax

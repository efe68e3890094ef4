#pragma once
// Costing one heterogeneous layout with one set of knobs, and balancing its layers over the stages:
// in proportion to the stages' speeds first (a guess from the GPUs' peaks, then the speeds the model
// measured), then moving one layer at a time off the pacing (or out-of-memory) stage to a neighbour
// while that helps.
#include "model/hetero_model.hpp"
#include "search/hetero_layout.hpp"
#include "spec/scenario.hpp"

#include <optional>
#include <vector>

namespace parallax {

struct Calibration;

struct HeteroTrial {
    std::vector<int> layers; // per stage
    HeteroPrediction prediction;
    double memory_ratio = 0; // the fullest replica's memory over its GPU's
    bool feasible() const { return prediction.prediction.feasible; }
    double step_s() const { return prediction.prediction.step_time_s; }
};

// Fits in memory first, then the shorter step; among plans that do not fit, the least over.
bool better_trial(const HeteroTrial& a, const HeteroTrial& b);

// Costs plans of one scenario's cluster; one per worker thread (not thread-safe).
class HeteroPlanCoster {
public:
    HeteroPlanCoster(const Scenario& s, const Calibration& cal);
    // The plan's prediction; nullopt when it breaks a rule of check_hetero_plan (a replica without a
    // micro-batch, a TP the model does not divide by).
    std::optional<HeteroTrial> cost(const HeteroLayout& layout, const Strategy& knobs, const std::vector<int>& layers);
    // The layers balanced as the header says, with at most `max_moves` single-layer moves (from `start`
    // when given, a split already balanced for other knobs); nullopt when the plan breaks a rule.
    std::optional<HeteroTrial> balance(
        const HeteroLayout& layout, const Strategy& knobs, int max_moves, const std::vector<int>* start = nullptr);
    long long evaluated() const { return evaluated_; }
    const Scenario& scenario() const { return plan_; }

private:
    // The plan of the last cost() with other layers per stage, without the rules again (another split
    // of a plan that passed them passes them too).
    HeteroTrial evaluate(const std::vector<int>& layers);
    // Moves single layers between neighbouring stages of the last cost()'s plan while the step gets
    // shorter (or the plan closer to fitting): at most `max_moves`.
    HeteroTrial refine(HeteroTrial best, int max_moves);

    Scenario plan_; // the scenario, its strategy and stages replaced by the plan being costed
    HeteroEvaluator evaluator_;
    long long evaluated_ = 0;
};

} // namespace parallax

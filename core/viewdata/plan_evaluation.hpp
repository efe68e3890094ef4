#pragma once
// Everything the planner window shows about one scenario, computed in one piece (off the GUI
// thread) and handed over as a value: the validity of the plan with the rules it breaks, the
// prediction, and the alternatives around it — each degree varied with the others rebalanced
// (sensitivity curves, which also give the handles their valid stops) and the TP x PP grid.
#include "calibration/calibration.hpp"
#include "jobs/cancel_token.hpp"
#include "model/analytic_model.hpp"
#include "model/hetero_model.hpp"
#include "search/degree_snapping.hpp"
#include "search/improvements.hpp"
#include "spec/prediction.hpp"
#include "spec/scenario.hpp"
#include "viewdata/goodput_curves.hpp"

#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace parallax {

// One evaluated alternative plan.
struct PlanPoint {
    DegreeOption option; // the strategy, the rule it breaks (if any), companion changes
    bool feasible = false; // valid and fits in memory
    double step_time_s = 0;
    double tokens_per_s = 0;
    double tflops_per_gpu = 0;
    double mfu = 0;
    double bubble_fraction = 0;
    double peak_memory_bytes = 0;
    double power_W_per_gpu = 0;
    bool valid() const { return option.valid(); }
};

struct SensitivityCurve {
    Degree degree = Degree::tp;
    std::optional<Degree> absorber; // who takes up the change (GPU degrees only)
    int current = 1;
    std::vector<PlanPoint> points; // ascending value
};

struct TpPpHeatmap {
    std::vector<int> tp_values;
    std::vector<int> pp_values;
    std::optional<Degree> absorber; // dp or cp
    std::vector<PlanPoint> cells; // cells[pp_index * tp_values.size() + tp_index]
    const PlanPoint& at(std::size_t tp_index, std::size_t pp_index) const
    {
        return cells[pp_index * tp_values.size() + tp_index];
    }
};

struct PlanEvaluationOptions {
    Degree preferred_absorber = Degree::dp;
    DegreeLocks locks;
    bool alternatives = true; // sensitivity curves and the heatmap
    // Of the headline prediction; the alternatives are always analytic (they rank, the simulator refines).
    Fidelity fidelity = Fidelity::analytic;
    // The calibration the plan is evaluated with; null: the shipped one. Shared, because options travel
    // with every request and a calibration carries its provenance.
    std::shared_ptr<const Calibration> calibration;
    const Calibration& calibration_or_shipped() const { return calibration ? *calibration : builtin_calibration(); }
};

struct RuleViolation {
    Rule rule = Rule::ok;
    std::string key; // "strategy.tp"
    std::string message;
};

struct PlanEvaluation {
    Scenario scenario;
    PlanEvaluationOptions options;
    bool valid = false;
    std::vector<RuleViolation> violations; // every broken rule (empty when valid)
    std::vector<std::string> warnings; // valid but worth saying
    Prediction prediction; // only when valid
    std::optional<HeteroPrediction> hetero; // a valid heterogeneous plan's stages and replicas (analytic)
    std::array<SensitivityCurve, kDegreeCount> curves; // indexed by Degree
    TpPpHeatmap heatmap;
    ImprovementWaterfall improvements; // the choices around the degrees (with the alternatives)
    GoodputCurves goodput; // against the checkpoint interval, when the scenario has a reliability section
    bool cancelled = false;
    double seconds = 0; // wall time of the evaluation

    const SensitivityCurve& curve(Degree d) const { return curves[static_cast<int>(d)]; }
};

PlanInputs plan_inputs(const Scenario& s);

// Evaluates one alternative with the analytic model (allocation-free path).
// `cache` (optional, one thread): layer costs and power curves shared between the points.
PlanPoint evaluate_point(const AnalyticModel& model, DegreeOption option, EvaluationCache* cache = nullptr);

SensitivityCurve sensitivity_curve(const AnalyticModel& model, const PlanInputs& in, const Strategy& s, Degree d,
    const PlanEvaluationOptions& o, EvaluationCache* cache = nullptr);
// Throughput and memory for every (tp, pp) pair, dp (or cp) absorbing the GPU count.
TpPpHeatmap tp_pp_heatmap(const AnalyticModel& model, const PlanInputs& in, const Strategy& s,
    const PlanEvaluationOptions& o, EvaluationCache* cache = nullptr);

// `cancelled` is polled between parts; a cancelled evaluation says so and is incomplete.
PlanEvaluation evaluate_plan(const Scenario& s, const PlanEvaluationOptions& o, const CancelToken& cancel = {});

} // namespace parallax

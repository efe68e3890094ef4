#pragma once
// The analytic (closed-form) step-time, memory and power model. evaluate() is allocation-free and
// is what the search calls millions of times; predict() adds per-stage reports, warnings and the
// assumptions behind the numbers.
#include "model/plan_context.hpp"
#include "spec/prediction.hpp"
#include "spec/strategy.hpp"

namespace parallax {

struct StageTiming {
    double forward_s = 0; // one micro-batch through all of this stage's chunks, critical path
    double backward_s = 0; // incl. recompute and exposed communication
    double weight_grad_s = 0; // the W part of backward_s (zero-bubble schedules defer it)
    double compute_s = 0; // forward + backward compute without recompute
    double recompute_s = 0;
    double exposed_s[6] = {}; // by OpStream: tp, cp, ep, pp exposure per micro-batch
    double host_copy_s = 0; // exposed copies to and from host memory (offload), in forward_s + backward_s
};

// Everything evaluate() produces, as plain values.
struct AnalyticResult {
    bool feasible = true;
    double step_time_s = 0;
    double tokens_per_s = 0;
    double tflops_per_gpu = 0;
    double mfu = 0;
    double hfu = 0;
    double bubble_fraction = 0;
    double peak_memory_bytes = 0;
    int peak_memory_stage = 0;
    double host_memory_bytes_per_node = 0; // offloads of the node's GPUs (MemoryBreakdown::host)
    MemoryBreakdown memory;
    CommBreakdown communication_s;
    TimeBreakdown time;
    PowerEstimate power;
    long long microbatches = 0;
    int critical_stage = 0;
};

class EvaluationCache;
struct StrategyCosts;
struct StagePower;

// One stage's timing per micro-batch at clock fraction x, ZeRO-3 gathers included: what evaluate()
// costs for each stage (`power`, when given, gets the stage's energy inputs). The heterogeneous model
// costs every replica of a stage with it.
StageTiming stage_timing_at(const PlanContext& ctx, const Strategy& s, const StrategyCosts& c, int stage, double x,
    StagePower* power = nullptr) noexcept;

// The schedule's pipeline time: m micro-batches, p stages, the slowest stage's timing `crit_t` (its
// forward + backward is t_max), and the sums of all stages' forward + backward and weight-gradient times.
double schedule_pipeline_time(const Strategy& s, double m, int p, double t_max, const StageTiming& crit_t,
    double sum_all, double sum_weight) noexcept;

class AnalyticModel {
public:
    explicit AnalyticModel(const PlanContext& ctx)
        : m_ctx(ctx)
    {
    }
    // `s` must satisfy check_strategy(). With a warm cache (one per thread, see strategy_costs.hpp)
    // evaluation touches no heap and costs O(stage classes), independent of pp * vpp.
    void evaluate(const Strategy& s, AnalyticResult& out, EvaluationCache& cache) const;
    void evaluate(const Strategy& s, AnalyticResult& out) const;
    // Memory alone (peak_memory_bytes, memory, peak_memory_stage, microbatches, feasible; no times):
    // evaluate()'s first part, a fraction of its cost (no kernel lists, no timing, no power).
    void evaluate_memory(const Strategy& s, AnalyticResult& out, EvaluationCache& cache) const;
    // The peak memory per GPU evaluate_memory() reports, and nothing else: what the search checks
    // before it costs a strategy's time and power.
    double peak_memory_bytes(const Strategy& s, EvaluationCache& cache) const;
    Prediction predict(const Strategy& s) const;
    const PlanContext& context() const { return m_ctx; }

    // Per-stage timing of one micro-batch (used by predict(), the IR and tests).
    StageTiming stage_timing(const Strategy& s, int stage) const noexcept;

private:
    const PlanContext& m_ctx;
};

} // namespace parallax

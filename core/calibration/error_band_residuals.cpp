#include "calibration/error_band_residuals.hpp"

#include "model/model_math.hpp"
#include "model/plan_context.hpp"
#include "spec/strategy_label.hpp"

#include <algorithm>
#include <cmath>

namespace parallax {

namespace {

// Model FLOPs per second per GPU measured, over the GPU's peak at the run's precision.
double measured_mfu(const Scenario& s, double tokens_per_s_per_gpu)
{
    const PlanContext ctx(s.model, s.training, s.cluster);
    const double peak = s.cluster.gpu.peak(s.training.precision);
    return peak > 0 ? std::min(1.0, ctx.model_flops_per_token * tokens_per_s_per_gpu / peak) : 0.0;
}

RunPlan run_plan(const Scenario& s)
{
    RunPlan pl;
    pl.model = s.model.name;
    pl.gpu = s.cluster.gpu.name;
    pl.params = total_params(s.model);
    pl.seq_len = s.training.seq_len;
    pl.tp = s.strategy.tp;
    pl.pp = s.strategy.pp;
    pl.cp = s.strategy.cp;
    pl.ep = s.strategy.ep;
    pl.vpp = s.strategy.vpp;
    pl.dp = s.strategy.dp;
    pl.label = strategy_label(s.strategy);
    return pl;
}

void add_rows(ErrorBandTable& t, const std::vector<ValidationRow>& rows)
{
    for (const ValidationRow& r : rows) {
        // Rows the model thinks would not fit still ran: their throughput error counts like any other.
        if (!(r.predicted_tokens_per_s_per_gpu > 0) || !(r.c.measured_tokens_per_s_per_gpu > 0))
            continue;
        const Scenario& s = r.c.scenario;
        BandResidual b;
        b.id = r.c.id;
        b.source = r.c.source_group;
        b.workload = workload_class(s.model, s.training, s.cluster);
        b.gpus = s.cluster.total_gpus();
        b.log_error = std::log(r.c.measured_tokens_per_s_per_gpu / r.predicted_tokens_per_s_per_gpu);
        b.measured_mfu = measured_mfu(s, r.c.measured_tokens_per_s_per_gpu);
        b.plan = run_plan(s);
        if (r.c.measured_peak_memory_bytes && *r.c.measured_peak_memory_bytes > 0
            && r.predicted_peak_memory_bytes > 0) {
            BandResidual m = b;
            m.log_error = std::log(*r.c.measured_peak_memory_bytes / r.predicted_peak_memory_bytes);
            t.memory_residuals.push_back(std::move(m));
        }
        t.residuals.push_back(std::move(b));
    }
}

} // namespace

ErrorBandTable build_error_band_table(const std::vector<ValidationCase>& fitted_cases,
    const std::vector<ValidationCase>& held_out_cases, const Calibration& shipped, const FitOptions& options,
    const std::string& provenance)
{
    ErrorBandTable t;
    t.provenance = provenance;
    if (!fitted_cases.empty())
        add_rows(t, leave_one_source_out(fitted_cases, options).rows);
    if (!held_out_cases.empty())
        add_rows(t, run_validation(held_out_cases, {}, shipped).rows);
    return t;
}

} // namespace parallax

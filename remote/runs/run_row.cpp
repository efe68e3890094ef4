#include "runs/run_row.hpp"

#include "runs/run_report.hpp"

namespace parallax::remote {

namespace {

QString qs(const std::string& s)
{
    return QString::fromStdString(s);
}

std::optional<double> ratio_error(const std::optional<double>& measured, const std::optional<double>& predicted)
{
    if (!measured || !predicted || *predicted == 0)
        return std::nullopt;
    return (*measured - *predicted) / *predicted;
}

} // namespace

std::optional<double> RunRow::step_error() const
{
    return ratio_error(step_measured, step_predicted);
}

std::optional<double> RunRow::tps_error() const
{
    return ratio_error(tps_measured, tps_predicted);
}

QString RunRow::state_text() const
{
    return QLatin1String(to_string(state));
}

RunRow run_row(const RunRecord& run, const std::vector<StepRecord>& steps)
{
    RunRow r;
    r.id = qs(run.id);
    r.state = run.state;
    r.detail = qs(run.detail);
    r.cluster = qs(run.cluster);
    r.framework = qs(run.framework);
    r.launcher = qs(run.launcher);
    r.plan = qs(run.scenario_label);
    r.description = qs(run.description);
    r.job_id = qs(run.job_id);
    r.created = qs(run.created_at);
    if (is_terminal(run.state))
        r.finished = qs(run.updated_at);
    r.steps = static_cast<int>(steps.size());
    const RunComparison cmp = compare_run(run, steps);
    r.prediction_source = qs(cmp.prediction_source);
    r.why = qs(cmp.why);
    if (const auto* m = cmp.find("step_time_s")) {
        r.step_measured = m->measured;
        r.step_predicted = m->predicted;
    }
    if (const auto* m = cmp.find("tokens_per_s_per_gpu")) {
        r.tps_measured = m->measured;
        r.tps_predicted = m->predicted;
    }
    return r;
}

} // namespace parallax::remote

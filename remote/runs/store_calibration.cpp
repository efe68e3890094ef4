#include "runs/store_calibration.hpp"

#include "io/input_limits.hpp"
#include "io/preset_catalog.hpp"
#include "io/scenario_io.hpp"
#include "model/plan_context.hpp"
#include "runs/run_catalog.hpp"
#include "spec/input_error.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <set>

namespace parallax::remote {

namespace {

// Steady-state steps whose times spread wider than this (max - min over the median) measure
// something besides the plan (a slow node, preemption, I/O stalls); such a run is not fitted.
constexpr double kMaxSteadySpread = 0.5;
// A log's tokens/s and its step time must describe the scenario's tokens per step to within this,
// or the scenario is not the plan that ran.
constexpr double kMaxTokensPerStepMismatch = 0.10;

double median_of(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The values of one field over the steady-state steps (all but the first).
std::vector<double> steady_values(const std::vector<StepRecord>& steps, std::optional<double> StepRecord::*field)
{
    std::vector<double> out;
    for (std::size_t i = 1; i < steps.size(); ++i)
        if (const auto& v = steps[i].*field; v && std::isfinite(*v) && *v > 0)
            out.push_back(*v);
    return out;
}

std::string percent(double f)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f%%", 100 * f);
    return buf;
}

bool ran_on_cpus(const RunRecord& run)
{
    const nlohmann::json profile = nlohmann::json::parse(run.profile_json, nullptr, false);
    const std::string gpu = profile.is_object() && profile.contains("gpu_type") && profile["gpu_type"].is_string()
        ? profile["gpu_type"].get<std::string>()
        : std::string();
    return gpu.empty() || gpu == "cpu";
}

// The measured tokens/s per GPU, or the reason there is none.
std::optional<std::string> measured_tokens_per_gpu(
    const std::vector<StepRecord>& steps, const Scenario& sc, double& tokens_per_gpu, std::string& from)
{
    const std::vector<double> times = steady_values(steps, &StepRecord::step_time_s);
    const std::vector<double> tokens = steady_values(steps, &StepRecord::tokens_per_s);
    const std::size_t samples = std::max(times.size(), tokens.size());
    if (samples < static_cast<std::size_t>(kMinStepsForMedians))
        return "too few steady-state steps (" + std::to_string(samples) + "; at least "
            + std::to_string(kMinStepsForMedians) + " after the first are needed)";
    if (times.size() >= static_cast<std::size_t>(kMinStepsForMedians)) {
        const double m = median_of(times);
        const double spread
            = (*std::max_element(times.begin(), times.end()) - *std::min_element(times.begin(), times.end())) / m;
        if (spread > kMaxSteadySpread)
            return "unsteady: the steady-state step times spread by " + percent(spread) + " of their median";
    }
    const double gpus = static_cast<double>(sc.strategy.total_gpus());
    const double tokens_per_step
        = static_cast<double>(sc.training.global_batch) * static_cast<double>(sc.training.seq_len);
    if (!tokens.empty() && !times.empty()) {
        const double implied = median_of(tokens) * gpus * median_of(times);
        if (std::fabs(implied / tokens_per_step - 1) > kMaxTokensPerStepMismatch)
            return "inconsistent with its scenario: the log's tokens/s x step time give "
                + std::to_string(std::llround(implied)) + " tokens per step, the scenario "
                + std::to_string(std::llround(tokens_per_step));
    }
    if (!tokens.empty()) {
        tokens_per_gpu = median_of(tokens);
        from = "median tokens/s per GPU of " + std::to_string(tokens.size()) + " steady-state steps";
    } else {
        tokens_per_gpu = tokens_per_s_per_gpu_at(sc, median_of(times));
        from = "global_batch x seq_len / GPUs / median step time of " + std::to_string(times.size())
            + " steady-state steps";
    }
    return std::nullopt;
}

} // namespace

std::optional<std::string> run_case(const RunRecord& run, const std::vector<StepRecord>& steps, ValidationCase& out)
{
    if (run.state != RunState::completed)
        return "state " + std::string(to_string(run.state)) + ": only completed runs measure the plan";
    if (ran_on_cpus(run))
        return "ran on CPU ranks: it measures CPUs, not the GPUs the model predicts";
    if (run.framework == "probe")
        return "a probe run trains a reduced workload, not the stored plan";
    Scenario sc;
    try {
        sc = parse_scenario_text(run.scenario_json, "run " + run.id + " (stored scenario)", PresetCatalog::standard());
    } catch (const InputError& e) {
        return std::string("its stored scenario cannot be read: ") + e.what();
    }
    double tokens_per_gpu = 0;
    std::string from;
    if (auto why = measured_tokens_per_gpu(steps, sc, tokens_per_gpu, from))
        return why;
    // Measured model FLOPs above the GPU's peak cannot be real: a wrong GPU count or batch in the plan.
    const PlanContext ctx(sc.model, sc.training, sc.cluster, no_calibration());
    const double peak = sc.cluster.gpu.peak(sc.training.precision);
    const double mfu = peak > 0 ? ctx.model_flops_per_token * tokens_per_gpu / peak : 0;
    if (mfu > 1)
        return "impossible: " + std::to_string(std::llround(tokens_per_gpu)) + " tokens/s per GPU is " + percent(mfu)
            + " of the GPU's peak FLOP/s";
    out = ValidationCase {};
    out.id = run.id;
    out.source_group = run.id;
    out.gpu = sc.cluster.gpu.name;
    out.model_name = sc.model.name;
    out.scenario = sc;
    out.measured_tokens_per_s_per_gpu = tokens_per_gpu;
    out.measured_from = from;
    return std::nullopt;
}

namespace {

// The store's runs that `keep` accepts, checked one by one.
StoreCases cases_of(const RunCatalog& catalog, const std::function<bool(const RunRecord&)>& keep)
{
    StoreCases out;
    for (const RunRecord& run : catalog.runs()) {
        if (!keep(run))
            continue;
        ValidationCase c;
        if (auto why = run_case(run, catalog.steps(run.id), c)) {
            out.rejected.push_back({ run.id, *why });
            continue;
        }
        out.cases.push_back(std::move(c));
        out.clusters.push_back(run.cluster);
    }
    return out;
}

} // namespace

StoreCases store_cases(const RunCatalog& catalog, const std::string& cluster)
{
    return cases_of(catalog, [&](const RunRecord& run) { return cluster.empty() || run.cluster == cluster; });
}

std::vector<Residual> residuals(const std::vector<ValidationCase>& cases, const Calibration& calibration)
{
    std::vector<Residual> out;
    for (const ValidationRow& r : run_validation(cases, {}, calibration).rows)
        if (r.predicted_tokens_per_s_per_gpu > 0)
            out.push_back({ r.c.id, std::log(r.c.measured_tokens_per_s_per_gpu / r.predicted_tokens_per_s_per_gpu) });
    return out;
}

Calibration fit_store_calibration(const std::vector<ValidationCase>& cases, const std::string& cluster,
    const std::string& store_path, const std::string& fitted_at)
{
    FitOptions options;
    options.name = "runs:" + (cluster.empty() ? std::string("all") : cluster);
    Calibration c = fit_calibration(cases, options).calibration;
    c.gpu = cases.empty() ? std::string() : cases.front().gpu;
    c.source = "fitted to " + std::to_string(cases.size()) + " runs of " + (cluster.empty() ? "the store" : cluster)
        + " on " + c.gpu + " (" + fitted_at + ")";
    const std::vector<Residual> before = residuals(cases, builtin_calibration());
    const std::vector<Residual> after = residuals(cases, c);
    nlohmann::json runs = nlohmann::json::array();
    for (std::size_t i = 0; i < before.size() && i < after.size(); ++i)
        runs.push_back({ { "run", before[i].run_id }, { "log_error_before", before[i].log_error },
            { "log_error_after", after[i].log_error } });
    c.provenance = { { "store", store_path }, { "cluster", cluster }, { "fitted_at", fitted_at },
        { "residuals_are", "ln(measured / predicted) tokens/s per GPU; before: the shipped calibration" },
        { "runs", runs } };
    return c;
}

StoreFit fit_selected_runs(const RunCatalog& catalog, const std::vector<std::string>& run_ids,
    const std::string& store_path, const std::string& fitted_at)
{
    StoreFit out;
    if (run_ids.size() == 1) {
        const std::optional<RunRecord> run = catalog.run(run_ids.front());
        if (!run) {
            out.error = "no run " + quoted_for_message(run_ids.front()) + " in the store";
            return out;
        }
        out.cluster = run->cluster;
        out.found = store_cases(catalog, out.cluster);
    } else {
        const std::set<std::string> chosen(run_ids.begin(), run_ids.end());
        out.found = cases_of(catalog, [&](const RunRecord& run) { return chosen.count(run.id) > 0; });
        const std::set<std::string> clusters(out.found.clusters.begin(), out.found.clusters.end());
        if (clusters.size() == 1)
            out.cluster = *clusters.begin();
    }
    std::set<std::string> gpus;
    for (const ValidationCase& c : out.found.cases)
        gpus.insert(c.gpu);
    if (out.found.cases.empty()) {
        out.error = "none of these runs can calibrate the model";
        return out;
    }
    if (gpus.size() > 1) {
        std::string names;
        for (const std::string& g : gpus)
            names += (names.empty() ? "" : ", ") + g;
        out.error = "the runs are on several GPUs (" + names + "); a calibration is fitted to one GPU's runs";
        return out;
    }
    out.calibration = fit_store_calibration(out.found.cases, out.cluster, store_path, fitted_at);
    return out;
}

} // namespace parallax::remote

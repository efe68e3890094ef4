#include "runs/run_report.hpp"

#include "io/scenario_io.hpp"
#include "spec/input_error.hpp"
#include "spec/strategy_label.hpp"
#include "ssh/ssh_interaction.hpp"
#include "store/run_store.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace parallax::remote {

namespace {

std::optional<double> number_at(const nlohmann::ordered_json& j, std::initializer_list<const char*> path)
{
    const nlohmann::ordered_json* cur = &j;
    for (const char* key : path) {
        if (!cur->is_object())
            return std::nullopt;
        const auto it = cur->find(key);
        if (it == cur->end())
            return std::nullopt;
        cur = &*it;
    }
    if (!cur->is_number())
        return std::nullopt;
    const double v = cur->get<double>();
    return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

MetricComparison steady(const std::string& metric, const std::vector<StepRecord>& steps,
    std::optional<double> StepRecord::*field, std::optional<double> predicted, bool peak = false)
{
    MetricComparison m;
    m.metric = metric;
    m.predicted = predicted;
    std::vector<double> values;
    // All but the first logged step; with a single step, that one.
    for (std::size_t i = steps.size() > 1 ? 1 : 0; i < steps.size(); ++i)
        if (const auto& v = steps[i].*field)
            values.push_back(*v);
    if (peak) {
        for (const StepRecord& s : steps)
            if (const auto& v = s.*field)
                m.measured = std::max(m.measured.value_or(*v), *v);
    }
    if (values.empty())
        return m;
    m.samples = static_cast<int>(values.size());
    if (!peak)
        m.measured = median(values);
    m.spread_low = *std::min_element(values.begin(), values.end());
    m.spread_high = *std::max_element(values.begin(), values.end());
    return m;
}

nlohmann::ordered_json parse_or_null(const std::string& text)
{
    if (text.empty())
        return nullptr;
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(text, nullptr, false);
    return j.is_discarded() ? nlohmann::ordered_json(nullptr) : j;
}

void put(nlohmann::ordered_json& j, const char* key, const std::optional<double>& v)
{
    if (v)
        j[key] = *v;
}

} // namespace

nlohmann::ordered_json metric_comparison_json(const MetricComparison& m)
{
    nlohmann::ordered_json e;
    put(e, "measured", m.measured);
    put(e, "low", m.spread_low);
    put(e, "high", m.spread_high);
    e["samples"] = m.samples;
    put(e, "predicted", m.predicted);
    put(e, "error", m.error());
    return e;
}

const MetricComparison* RunComparison::find(const std::string& metric) const
{
    for (const auto& m : metrics)
        if (m.metric == metric)
            return &m;
    return nullptr;
}

std::vector<MetricComparison> compare_steps(
    const std::vector<StepRecord>& steps, const nlohmann::ordered_json& prediction, std::optional<double> gpus)
{
    std::vector<MetricComparison> out;
    std::optional<double> tokens_per_gpu;
    if (const auto t = number_at(prediction, { "tokens_per_s" }); t && gpus && *gpus > 0)
        tokens_per_gpu = *t / *gpus;
    out.push_back(steady("step_time_s", steps, &StepRecord::step_time_s, number_at(prediction, { "step_time_s" })));
    out.push_back(steady("tokens_per_s_per_gpu", steps, &StepRecord::tokens_per_s, tokens_per_gpu));
    out.push_back(
        steady("tflops_per_gpu", steps, &StepRecord::tflops_per_gpu, number_at(prediction, { "tflops_per_gpu" })));
    out.push_back(
        steady("memory_GiB", steps, &StepRecord::memory_GiB, number_at(prediction, { "memory", "peak_GiB" }), true));
    out.push_back(steady("power_W", steps, &StepRecord::power_W, number_at(prediction, { "power", "avg_W_per_gpu" })));
    out.push_back(steady("energy_J", steps, &StepRecord::energy_J,
        number_at(prediction, { "power", "energy_J_per_iteration_per_gpu" })));
    return out;
}

RunComparison compare_run(const RunRecord& run, const std::vector<StepRecord>& steps)
{
    RunComparison c;
    nlohmann::ordered_json prediction;
    const nlohmann::ordered_json profile = parse_or_null(run.profile_json);
    const std::string gpu_type = profile.is_object() && profile.contains("gpu_type") && profile["gpu_type"].is_string()
        ? profile["gpu_type"].get<std::string>()
        : std::string();
    if (gpu_type.empty() || gpu_type == "cpu") {
        c.prediction_source = "none";
        c.why = "the run used CPU ranks; the plan's GPU predictions (stored with the run) do not apply to them";
    } else if (run.framework == "probe" && !run.workload_prediction_json.empty()) {
        prediction = parse_or_null(run.workload_prediction_json);
        c.prediction_source = "workload";
    } else {
        prediction = parse_or_null(run.prediction_json);
        c.prediction_source = "plan";
    }
    // Predictions count tokens/s for the whole job; the logs print them per GPU. Both the plan and the
    // probe's workload run on tp * pp * dp * cp GPUs (the probe trains CP ranks as DP replicas).
    std::optional<double> gpus;
    const nlohmann::ordered_json scenario = parse_or_null(run.scenario_json);
    const auto tp = number_at(scenario, { "strategy", "tp" });
    const auto pp = number_at(scenario, { "strategy", "pp" });
    const auto dp = number_at(scenario, { "strategy", "dp" });
    const auto cp = number_at(scenario, { "strategy", "cp" });
    if (tp && pp && dp)
        gpus = *tp * *pp * *dp * cp.value_or(1.0);
    c.metrics = compare_steps(steps, prediction, gpus);
    return c;
}

std::string run_plan_label(const RunRecord& run)
{
    const auto scenario = nlohmann::json::parse(run.scenario_json, nullptr, false);
    if (!scenario.is_object() || !scenario.contains("strategy") || !scenario["strategy"].is_object())
        return {};
    try {
        return strategy_label(parse_strategy(scenario["strategy"], "run " + run.id, "strategy", Strategy {}));
    } catch (const InputError&) {
        return {};
    }
}

nlohmann::ordered_json run_to_json(const RunStore& store, const RunRecord& run, bool detailed)
{
    nlohmann::ordered_json j;
    j["id"] = run.id;
    j["created_at"] = run.created_at;
    j["updated_at"] = run.updated_at;
    j["framework"] = run.framework;
    j["launcher"] = run.launcher;
    j["cluster"] = run.cluster;
    j["scenario"] = run.scenario_label;
    j["label"] = run_plan_label(run);
    j["description"] = run.description;
    j["state"] = std::string(to_string(run.state));
    j["detail"] = run.detail;
    j["job_id"] = run.job_id;
    if (run.exit_code)
        j["exit_code"] = *run.exit_code;
    else
        j["exit_code"] = nullptr;
    j["remote_dir"] = run.remote_dir;
    j["log_path"] = run.log_path;
    j["log_bytes"] = run.log_bytes;
    j["log_format"] = run.log_format;
    j["summary"] = parse_or_null(run.summary_json);
    const std::vector<StepRecord> steps = store.steps(run.id);
    const RunComparison cmp = compare_run(run, steps);
    nlohmann::ordered_json comparison;
    comparison["prediction"] = cmp.prediction_source;
    if (!cmp.why.empty())
        comparison["why"] = cmp.why;
    for (const MetricComparison& m : cmp.metrics) {
        if (!m.measured && !m.predicted)
            continue;
        comparison[m.metric] = metric_comparison_json(m);
    }
    j["comparison"] = comparison;
    if (!detailed)
        return j;
    j["notes"] = parse_or_null(run.notes_json);
    j["run_info"] = parse_or_null(run.run_info_json);
    j["prediction"] = parse_or_null(run.prediction_json);
    j["workload_prediction"] = parse_or_null(run.workload_prediction_json);
    j["submit_command"] = run.submit_command;
    auto transitions = nlohmann::ordered_json::array();
    for (const StateTransition& t : store.transitions(run.id))
        transitions.push_back({ { "at", t.at }, { "state", std::string(to_string(t.state)) }, { "detail", t.detail } });
    j["transitions"] = transitions;
    auto step_list = nlohmann::ordered_json::array();
    for (const StepRecord& s : steps) {
        nlohmann::ordered_json e;
        e["step"] = s.step;
        put(e, "step_time_s", s.step_time_s);
        put(e, "tokens_per_s", s.tokens_per_s);
        put(e, "samples_per_s", s.samples_per_s);
        put(e, "tflops_per_gpu", s.tflops_per_gpu);
        put(e, "mfu", s.mfu);
        put(e, "memory_GiB", s.memory_GiB);
        put(e, "power_W", s.power_W);
        put(e, "energy_J", s.energy_J);
        put(e, "loss", s.loss);
        step_list.push_back(e);
    }
    j["steps"] = step_list;
    auto benches = nlohmann::ordered_json::array();
    for (const BenchRecord& b : store.benches(run.id))
        benches.push_back(parse_or_null(b.json));
    j["benchmarks"] = benches;
    auto files = nlohmann::ordered_json::array();
    for (const StoredFile& f : store.files(run.id))
        files.push_back({ { "name", f.name }, { "mode", f.mode }, { "bytes", f.content.size() } });
    j["files"] = files;
    return j;
}

std::string run_summary_text(const RunStore& store, const RunRecord& run)
{
    std::string out
        = "run " + run.id + ": " + std::string(to_string(run.state)) + " (" + terminal_text(run.detail) + ")\n";
    out += "  " + run.framework + " on '" + run.cluster + "' (" + run.launcher + "), " + run.description + "\n";
    if (const std::string label = run_plan_label(run); !label.empty())
        out += "  plan " + label + "\n";
    const std::vector<StepRecord> steps = store.steps(run.id);
    char line[256];
    std::snprintf(line, sizeof line, "  %zu steps parsed from %.1f KiB of log%s\n", steps.size(),
        static_cast<double>(run.log_bytes) / 1024.0,
        run.log_format.empty() ? "" : (" (" + run.log_format + " format)").c_str());
    out += line;
    const RunComparison cmp = compare_run(run, steps);
    struct Label {
        const char* metric;
        const char* name;
        const char* unit;
    };
    static constexpr Label kLabels[]
        = { { "step_time_s", "step time", "s" }, { "tokens_per_s_per_gpu", "tokens/s/GPU", "" },
              { "tflops_per_gpu", "TFLOP/s/GPU", "" }, { "memory_GiB", "peak memory", "GiB" },
              { "power_W", "power/GPU", "W" }, { "energy_J", "energy/step/GPU", "J" } };
    for (const Label& l : kLabels) {
        const MetricComparison* m = cmp.find(l.metric);
        if (!m || !m->measured)
            continue;
        std::snprintf(line, sizeof line, "  %-13s measured %.4g %s", l.name, *m->measured, l.unit);
        out += line;
        if (m->spread_low && m->spread_high && m->samples > 1) {
            std::snprintf(
                line, sizeof line, " (%.4g..%.4g over %d steps)", *m->spread_low, *m->spread_high, m->samples);
            out += line;
        }
        if (m->predicted) {
            std::snprintf(line, sizeof line, ", predicted %.4g %s (%s)", *m->predicted, l.unit,
                cmp.prediction_source == "workload" ? "the probe's workload" : "the plan");
            out += line;
        }
        if (const auto e = m->error()) {
            std::snprintf(line, sizeof line, ", error %+.1f%%", *e * 100.0);
            out += line;
        }
        out += "\n";
    }
    if (!cmp.why.empty())
        out += "  not compared with a prediction: " + cmp.why + "\n";
    const nlohmann::ordered_json notes = parse_or_null(run.notes_json);
    if (notes.is_array())
        for (const auto& n : notes)
            if (n.is_string())
                out += "  note: " + n.get<std::string>() + "\n";
    return out;
}

} // namespace parallax::remote

// parallax-cli parse-log LOG [--format auto|megatron|torchtitan|deepspeed|probe] [--json] [--scenario S]
// Reads a training log as the framework printed it and reports its steps (docs/cli.md, `parse-log --json`);
// with --scenario, also the log's steady state against the prediction of the plan that ran.
#include "cli/cli_commands.hpp"
#include "cli/cli_common.hpp"
#include "cli/cli_parser.hpp"
#include "io/input_limits.hpp"
#include "io/number_format.hpp"
#include "io/prediction_io.hpp"
#include "log_parse/training_log_parser.hpp"
#include "model/analytic_model.hpp"
#include "model/plan_context.hpp"
#include "runs/run_report.hpp"
#include "spec/input_error.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

namespace parallax::cli {

namespace {

using remote::LogFormat;
using remote::ParsedLog;
using remote::StepRecord;

// Logs reach gigabytes; they are streamed through the parser, never held whole.
constexpr std::size_t kReadChunkBytes = 1 << 20;

// Streams `path` through `parser`; throws InputError naming the file when it cannot be read.
void feed_file(const std::string& path, remote::TrainingLogParser& parser)
{
    // /dev/zero would never end and a FIFO would block; a log of any size is fine (it is streamed).
    require_regular_file(path, "a training log file");
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw InputError(path, "", "cannot open the file for reading");
    std::vector<char> buffer(kReadChunkBytes);
    while (in) {
        in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
        const auto n = static_cast<std::size_t>(in.gcount());
        parser.feed(std::string_view(buffer.data(), n));
    }
    if (in.bad())
        throw InputError(path, "", "error while reading the file");
}

void put_if(nlohmann::ordered_json& j, const char* key, const std::optional<double>& v)
{
    if (v)
        j[key] = *v;
}

nlohmann::ordered_json to_json(const ParsedLog& log)
{
    nlohmann::ordered_json j;
    j["schema"] = 1;
    j["format"] = std::string(remote::log_format_name(log.format));
    auto steps = nlohmann::ordered_json::array();
    for (const StepRecord& s : log.steps) {
        nlohmann::ordered_json step;
        step["step"] = s.step;
        put_if(step, "step_time_s", s.step_time_s);
        put_if(step, "tokens_per_s", s.tokens_per_s);
        put_if(step, "samples_per_s", s.samples_per_s);
        put_if(step, "tflops_per_gpu", s.tflops_per_gpu);
        put_if(step, "mfu", s.mfu);
        put_if(step, "memory_GiB", s.memory_GiB);
        put_if(step, "power_W", s.power_W);
        put_if(step, "energy_J", s.energy_J);
        steps.push_back(std::move(step));
    }
    j["steps"] = std::move(steps);
    nlohmann::ordered_json summary;
    summary["steps"] = log.summary.steps;
    put_if(summary, "step_time_s", log.summary.step_time_s);
    put_if(summary, "tokens_per_s", log.summary.tokens_per_s);
    put_if(summary, "tflops_per_gpu", log.summary.tflops_per_gpu);
    put_if(summary, "peak_memory_GiB", log.summary.peak_memory_GiB);
    put_if(summary, "power_W", log.summary.power_W);
    put_if(summary, "energy_J", log.summary.energy_J);
    j["summary"] = std::move(summary);
    return j;
}

struct Column {
    const char* header;
    std::optional<double> StepRecord::*field;
};

// Only the columns the log printed: a Megatron table has no tokens/s column full of dashes.
std::string to_table(const ParsedLog& log, const std::string& path)
{
    static constexpr Column kColumns[] = {
        { "step_time_s", &StepRecord::step_time_s },
        { "tokens/s/GPU", &StepRecord::tokens_per_s },
        { "samples/s", &StepRecord::samples_per_s },
        { "TFLOP/s/GPU", &StepRecord::tflops_per_gpu },
        { "MFU", &StepRecord::mfu },
        { "memory_GiB", &StepRecord::memory_GiB },
        { "power_W", &StepRecord::power_W },
        { "energy_J", &StepRecord::energy_J },
        { "loss", &StepRecord::loss },
    };
    std::vector<const Column*> shown;
    for (const Column& c : kColumns) {
        for (const StepRecord& s : log.steps) {
            if (s.*c.field) {
                shown.push_back(&c);
                break;
            }
        }
    }
    std::string out = path + ": " + std::string(remote::log_format_name(log.format)) + " log, "
        + std::to_string(log.summary.steps) + " steps\n";
    out += "(tokens/s are per GPU, samples/s for the whole job";
    out += log.step_time_from_timestamps ? "; step times from the log's timestamps)\n\n" : ")\n\n";
    char cell[64];
    std::snprintf(cell, sizeof cell, "%10s", "step");
    out += cell;
    for (const Column* c : shown) {
        std::snprintf(cell, sizeof cell, "  %13s", c->header);
        out += cell;
    }
    out += '\n';
    for (const StepRecord& s : log.steps) {
        std::snprintf(cell, sizeof cell, "%10lld", static_cast<long long>(s.step));
        out += cell;
        for (const Column* c : shown) {
            if (const auto& v = s.*c->field)
                std::snprintf(cell, sizeof cell, "  %13.6g", *v);
            else
                std::snprintf(cell, sizeof cell, "  %13s", "-");
            out += cell;
        }
        out += '\n';
    }
    const auto item = [&](const char* name, const std::optional<double>& v) {
        if (!v)
            return;
        std::snprintf(cell, sizeof cell, "  %s %.6g", name, *v);
        out += cell;
    };
    out += "\nsummary (medians over all steps but the first):";
    item("step_time_s", log.summary.step_time_s);
    item("tokens/s/GPU", log.summary.tokens_per_s);
    item("TFLOP/s/GPU", log.summary.tflops_per_gpu);
    item("peak memory_GiB", log.summary.peak_memory_GiB);
    if (!log.summary.step_time_s && !log.summary.tokens_per_s && !log.summary.tflops_per_gpu)
        out += "  (medians need at least " + std::to_string(remote::kMinStepsForMedians) + " logged steps)";
    out += '\n';
    return out;
}

// The log's steady state against the scenario's prediction; tokens/s per GPU from the step time
// (tokens per step / GPUs / step time) where the log prints no throughput.
struct LogComparison {
    std::vector<remote::MetricComparison> metrics;
    Prediction prediction;
    double gpus = 1;
    bool tokens_from_step_time = false;
    std::optional<bool> inside_band;
};

LogComparison compare_with_scenario(const ParsedLog& log, const Scenario& sc)
{
    LogComparison c;
    const PlanContext ctx(sc.model, sc.training, sc.cluster);
    c.prediction = AnalyticModel(ctx).predict(sc.strategy);
    c.gpus = static_cast<double>(sc.strategy.total_gpus());
    const nlohmann::ordered_json pj = nlohmann::ordered_json::parse(prediction_to_json(c.prediction).dump());
    c.metrics = remote::compare_steps(log.steps, pj, c.gpus);
    const remote::MetricComparison* step = nullptr;
    for (const auto& m : c.metrics)
        if (m.metric == "step_time_s")
            step = &m;
    for (auto& m : c.metrics) {
        if (m.metric != "tokens_per_s_per_gpu")
            continue;
        if (!m.measured && step && step->measured && *step->measured > 0) {
            m.measured = tokens_per_s_per_gpu_at(sc, *step->measured);
            m.spread_low = tokens_per_s_per_gpu_at(sc, *step->spread_high);
            m.spread_high = tokens_per_s_per_gpu_at(sc, *step->spread_low);
            m.samples = step->samples;
            c.tokens_from_step_time = true;
        }
        const PredictionInterval& band = c.prediction.interval;
        if (m.measured && band.level > 0)
            c.inside_band
                = *m.measured * c.gpus >= band.tokens_per_s_low && *m.measured * c.gpus <= band.tokens_per_s_high;
    }
    return c;
}

nlohmann::ordered_json comparison_json(const LogComparison& c, const std::string& scenario)
{
    nlohmann::ordered_json j;
    j["scenario"] = scenario;
    auto metrics = nlohmann::ordered_json::array();
    for (const auto& m : c.metrics) {
        if (!m.measured && !m.predicted)
            continue;
        nlohmann::ordered_json mj { { "metric", m.metric } };
        mj.update(remote::metric_comparison_json(m));
        metrics.push_back(std::move(mj));
    }
    j["metrics"] = std::move(metrics);
    j["tokens_from_step_time"] = c.tokens_from_step_time;
    const PredictionInterval& band = c.prediction.interval;
    if (band.level > 0) {
        j["tokens_per_s_per_gpu_interval"] = { band.tokens_per_s_low / c.gpus, band.tokens_per_s_high / c.gpus };
        j["interval_level"] = band.level;
    }
    if (c.inside_band)
        j["inside_band"] = *c.inside_band;
    return j;
}

std::string comparison_text(const LogComparison& c, const std::string& scenario)
{
    std::string out = "\nagainst the prediction of " + scenario + " (" + std::to_string(static_cast<long long>(c.gpus))
        + " GPUs; error = (measured - predicted) / predicted):\n";
    char line[256];
    for (const auto& m : c.metrics) {
        if (!m.measured || !m.predicted)
            continue;
        std::snprintf(line, sizeof line, "  %-22s measured %12.6g   predicted %12.6g   %+6.1f%%\n", m.metric.c_str(),
            *m.measured, *m.predicted, 100 * m.error().value_or(0));
        out += line;
    }
    if (c.tokens_from_step_time)
        out += "  (tokens/s per GPU from the step time: global_batch x seq_len / GPUs / step time)\n";
    const PredictionInterval& band = c.prediction.interval;
    if (c.inside_band)
        out += "  measured throughput is " + std::string(*c.inside_band ? "inside" : "OUTSIDE") + " the "
            + format_number("%.0f%%", 100 * band.level) + " band ("
            + format_number("%.6g", band.tokens_per_s_low / c.gpus) + "-"
            + format_number("%.6g", band.tokens_per_s_high / c.gpus) + " tokens/s per GPU; " + band.basis + ")\n";
    return out;
}

} // namespace

int run_parse_log(const QStringList& args)
{
    CommandParser cmd(QStringLiteral("Reads a Megatron-LM, torchtitan, DeepSpeed or probe training log as printed "
                                     "(colour codes, warnings and cut lines included) and reports each step."),
        QStringLiteral("LOG"), QStringLiteral("training log file"));
    cmd.parser().addOption({ QStringLiteral("format"),
        QStringLiteral("Log format: auto (default), megatron, torchtitan, deepspeed or probe."), QStringLiteral("name"),
        QStringLiteral("auto") });
    cmd.parser().addOption({ QStringLiteral("json"), QStringLiteral("Print the contract's JSON.") });
    cmd.parser().addOption({ QStringLiteral("scenario"),
        QStringLiteral("Also compare the log with the prediction of this scenario (a file or a preset name): the "
                       "plan that ran, with its degrees, batch and sequence length."),
        QStringLiteral("SCENARIO") });
    if (auto rc = cmd.parse(args, 1, 1))
        return *rc;
    const std::string format_name = cmd.parser().value(QStringLiteral("format")).toStdString();
    const auto format = remote::log_format_from_name(format_name);
    if (!format) {
        print_err("parallax-cli parse-log: --format: must be one of auto, megatron, torchtitan, deepspeed, probe; "
                  "found '"
            + format_name + "'");
        return kBadInput;
    }
    const std::string path = cmd.positional(0).toStdString();
    remote::TrainingLogParser parser(*format);
    try {
        feed_file(path, parser);
    } catch (const InputError& e) {
        print_err(e.what());
        return kBadInput;
    }
    const ParsedLog log = parser.finish();
    if (!log.recognised()) {
        if (*format == LogFormat::auto_detect)
            print_err(path
                + ": no training-log format recognised (no Megatron-LM, torchtitan, DeepSpeed or probe "
                  "step records found)");
        else
            print_err(path + ": no " + format_name + " step records found");
        return kBadInput;
    }
    std::optional<LogComparison> comparison;
    const std::string scenario_arg = cmd.parser().value(QStringLiteral("scenario")).toStdString();
    if (cmd.parser().isSet(QStringLiteral("scenario"))) {
        try {
            comparison = compare_with_scenario(log, load_scenario_argument(scenario_arg, PresetCatalog::standard()));
        } catch (const InputError& e) {
            print_err(e.what());
            return kBadInput;
        }
    }
    if (cmd.parser().isSet(QStringLiteral("json"))) {
        nlohmann::ordered_json j = to_json(log);
        if (comparison)
            j["comparison"] = comparison_json(*comparison, scenario_arg);
        print_out(j.dump(2) + "\n");
    } else {
        print_out(to_table(log, path) + (comparison ? comparison_text(*comparison, scenario_arg) : std::string()));
    }
    return kOk;
}

} // namespace parallax::cli

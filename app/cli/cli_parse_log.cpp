// parallax-cli parse-log LOG [--format auto|megatron|torchtitan|deepspeed|probe] [--json]
// Reads a training log as the framework printed it and reports its steps (SCENARIO.md, `parse-log --json`).
#include "cli/cli_commands.hpp"
#include "cli/cli_common.hpp"
#include "cli/cli_parser.hpp"
#include "log_parse/training_log_parser.hpp"
#include "spec/input_error.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
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
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        throw InputError(path, "", "is a directory, expected a training log file");
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
    if (cmd.parser().isSet(QStringLiteral("json")))
        print_out(to_json(log).dump(2) + "\n");
    else
        print_out(to_table(log, path));
    return kOk;
}

} // namespace parallax::cli

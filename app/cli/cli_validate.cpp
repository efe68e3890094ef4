// parallax-cli validate RUNS.json [--json] [--markdown]
#include "calibration/hetero_runs.hpp"
#include "calibration/published_runs.hpp"
#include "cli/cli_commands.hpp"
#include "cli/cli_common.hpp"
#include "cli/cli_parser.hpp"
#include "io/csv_writer.hpp"
#include "io/json_reader.hpp"
#include "io/scenario_io.hpp"
#include "io/serving_io.hpp"
#include "io/serving_runs.hpp"
#include "spec/input_error.hpp"
#include "spec/strategy_label.hpp"

#include <QDir>

#include <cstdio>
#include <initializer_list>
#include <optional>

namespace parallax::cli {

namespace {

// One row per predicted run, then one per skipped run (empty numbers, its reason), so that the CSV
// holds every row of the file as the other formats do.
std::string validation_csv(const ValidationReport& report)
{
    CsvWriter csv { "id", "source", "gpu", "label", "measured_tokens_per_s_per_gpu", "predicted_tokens_per_s_per_gpu",
        "error", "feasible", "skipped_reason" };
    for (const auto& row : report.rows)
        csv.field(row.c.id)
            .field(row.c.source_group)
            .field(row.c.gpu)
            .field(strategy_label(row.c.scenario.strategy))
            .number(row.c.measured_tokens_per_s_per_gpu, 8)
            .number(row.predicted_tokens_per_s_per_gpu, 8)
            .number(row.error, 6)
            .integer(row.feasible ? 1 : 0)
            .field("")
            .end_row();
    for (const SkippedRow& r : report.skipped)
        csv.field(r.id).field("").field("").field("").field("").field("").field("").field("").field(r.reason).end_row();
    return csv.text();
}

// One row per predicted serving run (measured and predicted TTFT, TPOT, tokens/s per GPU), then one per
// skipped run with its reason.
std::string serving_validation_csv(const ServingValidationReport& report)
{
    const std::initializer_list<std::string_view> kColumns = { "id", "source", "engine", "gpu", "model", "mode",
        "measured_ttft_ms", "predicted_ttft_ms", "ttft_error", "measured_tpot_ms", "predicted_tpot_ms", "tpot_error",
        "measured_tokens_per_s_per_gpu", "predicted_tokens_per_s_per_gpu", "throughput_error", "skipped_reason" };
    CsvWriter csv(kColumns);
    for (const ServingRunResult& x : report.rows) {
        const ServingRun& r = *x.run;
        csv.field(r.id).field(r.source).field(r.engine).field(r.gpu).field(r.model).field(r.mode);
        if (r.latencies_measured) {
            csv.number(r.ttft_ms, 6).number(x.ttft_ms, 6).number(x.ttft_error, 6);
            csv.number(r.tpot_ms, 6).number(x.tpot_ms, 6).number(x.tpot_error, 6);
        } else { // an offline run states its throughput only
            csv.field("").number(x.ttft_ms, 6).field("").field("").number(x.tpot_ms, 6).field("");
        }
        csv.number(r.tokens_per_s_per_gpu, 6).number(x.tokens_per_s_per_gpu, 6).number(x.throughput_error, 6);
        csv.field("").end_row();
    }
    for (const ServingSkip& s : report.skipped) {
        csv.field(s.id);
        for (std::size_t i = 2; i < kColumns.size(); ++i) // every column between the id and the reason
            csv.field("");
        csv.field(s.reason).end_row();
    }
    return csv.text();
}

// --scenarios DIR: writes each row's scenario to DIR/<id>.json with `save(path, row)`, as `predict` reads
// it; false (the reason on stderr) when the folder or a file cannot be written.
template <class Rows, class Save> bool write_row_scenarios(const QString& dir, const Rows& rows, Save save)
{
    if (!QDir().mkpath(dir)) {
        print_err("cannot create the folder " + dir.toStdString());
        return false;
    }
    try {
        for (const auto& row : rows)
            save(QDir(dir).filePath(QString::fromStdString(row.id + ".json")).toStdString(), row);
    } catch (const InputError& e) {
        print_err(e.what());
        return false;
    }
    return true;
}

enum class ServingOutput { text, json, markdown, csv };

// Measured serving rows (validation/measured-serving.json): TTFT, TPOT and tokens/s per GPU.
int validate_serving(const nlohmann::json& rows, const std::string& path, ServingOutput output,
    const std::optional<QString>& scenarios_dir)
{
    std::vector<ServingSkip> skipped;
    std::vector<ServingRun> runs;
    try {
        runs = read_serving_runs(rows, path, PresetCatalog::standard(), skipped);
    } catch (const InputError& e) {
        print_err(e.what());
        return kBadInput;
    }
    const auto save = [](const std::string& file, const ServingRun& r) {
        write_text_file_atomically(file, serving_scenario_to_json(r.scenario).dump(2) + "\n");
    };
    if (scenarios_dir && !write_row_scenarios(*scenarios_dir, runs, save))
        return kBadInput;
    const ServingValidationReport report = run_serving_validation(runs, skipped);
    if (output == ServingOutput::json) {
        print_out(serving_validation_to_json(report).dump(2) + "\n");
    } else if (output == ServingOutput::markdown) {
        print_out(serving_validation_to_markdown(report));
    } else if (output == ServingOutput::csv) {
        print_out(serving_validation_csv(report));
    } else {
        for (const auto& x : report.rows) {
            char line[320];
            if (x.run->latencies_measured)
                std::snprintf(line, sizeof line,
                    "%-64s TTFT %9.1f / %9.1f ms %+7.1f%%   TPOT %7.2f / %7.2f ms %+7.1f%%\n", x.run->id.c_str(),
                    x.run->ttft_ms, x.ttft_ms, 100 * x.ttft_error, x.run->tpot_ms, x.tpot_ms, 100 * x.tpot_error);
            else
                std::snprintf(line, sizeof line, "%-64s tokens/s per GPU %9.0f / %9.0f %+7.1f%%\n", x.run->id.c_str(),
                    x.run->tokens_per_s_per_gpu, x.tokens_per_s_per_gpu, 100 * x.throughput_error);
            print_out(line);
        }
        print_out("\n(measured / predicted)\n" + serving_validation_to_markdown(report));
        if (!report.skipped.empty()) {
            print_out("skipped:\n");
            for (const ServingSkip& s : report.skipped)
                print_out("  " + s.id + ": " + s.reason + "\n");
        }
    }
    if (report.overall.rows == 0) {
        print_err(path + ": no usable rows to validate against (" + std::to_string(report.skipped.size())
            + " skipped; the reasons are listed with the output)");
        return kBadInput;
    }
    return kOk;
}

// The text report: one line per row, the calibration, the overall and per-source and per-workload errors, and
// every skipped row with its reason (as --json and --markdown list them).
std::string validation_text(
    const ValidationReport& report, const Calibration& calibration, const std::string& calibration_name)
{
    std::string out;
    char line[256];
    for (const auto& row : report.rows) {
        std::snprintf(line, sizeof line, "%-48s %-16s measured %9.1f  predicted %9.1f  %+6.1f%%  ", row.c.id.c_str(),
            row.c.gpu.c_str(), row.c.measured_tokens_per_s_per_gpu, row.predicted_tokens_per_s_per_gpu,
            100 * row.error);
        out += line + strategy_label(row.c.scenario.strategy) + "\n";
    }
    out += "\ncalibration: " + calibration_name
        + (calibration.is_identity() ? " (uncalibrated physics)" : " (" + calibration.source + ")") + "\n";
    if (report.overall.rows > 0)
        std::snprintf(line, sizeof line, "%d rows, %zu skipped: MAPE %.1f%%, median %.1f%%, worst %.1f%%\n",
            report.overall.rows, report.skipped.size(), 100 * report.overall.mape, 100 * report.overall.median,
            100 * report.overall.worst);
    else // an error of 0% over nothing would read as a perfect model
        std::snprintf(line, sizeof line, "no usable rows, %zu skipped: no error to report\n", report.skipped.size());
    out += line;
    for (const auto& [k, g] : report.by_source) {
        std::snprintf(line, sizeof line, "  %-14s %3d rows  MAPE %5.1f%%  worst %5.1f%%%s\n", k.c_str(), g.rows,
            100 * g.mape, 100 * g.worst,
            g.spearman ? ("  Spearman " + std::to_string(*g.spearman).substr(0, 5)).c_str() : "");
        out += line;
    }
    for (const auto& [k, g] : report.by_workload) {
        std::snprintf(line, sizeof line, "  %-27s %3d rows  MAPE %5.1f%%  worst %5.1f%%\n", k.c_str(), g.rows,
            100 * g.mape, 100 * g.worst);
        out += line;
    }
    if (!report.skipped.empty()) {
        out += "\nskipped:\n";
        for (const SkippedRow& r : report.skipped)
            out += "  " + r.id + ": " + r.reason + "\n";
    }
    return out;
}

} // namespace

int run_validate(const QStringList& args)
{
    CommandParser cmd(QStringLiteral("Predicts every run of a published-runs file (the format of "
                                     "validation/published-runs.json) and compares tokens/s per GPU."),
        QStringLiteral("RUNS"), QStringLiteral("published-runs JSON file"));
    cmd.parser().addOption({ QStringLiteral("json"), QStringLiteral("Print the contract's JSON.") });
    cmd.parser().addOption({ QStringLiteral("markdown"), QStringLiteral("Print Markdown tables (docs/accuracy.md).") });
    cmd.add_csv_option();
    cmd.parser().addOption({ QStringLiteral("calibration"),
        QStringLiteral("Calibration to predict with: builtin (default: the one predict uses), none (the uncalibrated "
                       "physics), or a JSON file."),
        QStringLiteral("FILE|builtin|none"), QStringLiteral("builtin") });
    cmd.parser().addOption({ QStringLiteral("scenarios"),
        QStringLiteral(
            "Also write the scenario each row was predicted from to DIR/<id>.json (for predict, timeline, the GUI)."),
        QStringLiteral("DIR") });
    if (auto rc = cmd.parse(args, 1, 1))
        return *rc;
    const std::string path = cmd.positional(0).toStdString();
    std::vector<SkippedRow> skipped;
    std::vector<ValidationCase> cases;
    Calibration calibration;
    try {
        calibration = calibration_argument(cmd.parser().value(QStringLiteral("calibration")));
        const auto j = parse_json_text(read_text_file(path), path);
        if (is_serving_runs_file(j)) {
            const ServingOutput output = cmd.parser().isSet(QStringLiteral("json")) ? ServingOutput::json
                : cmd.parser().isSet(QStringLiteral("markdown"))                    ? ServingOutput::markdown
                : cmd.csv()                                                         ? ServingOutput::csv
                                                                                    : ServingOutput::text;
            std::optional<QString> dir;
            if (cmd.parser().isSet(QStringLiteral("scenarios")))
                dir = cmd.parser().value(QStringLiteral("scenarios"));
            return validate_serving(j, path, output, dir);
        }
        cases = is_hetero_runs_file(j) ? read_hetero_runs(j, path, PresetCatalog::standard(), skipped)
                                       : read_published_runs(j, path, PresetCatalog::standard(), skipped);
    } catch (const InputError& e) {
        print_err(e.what());
        return kBadInput;
    }
    const auto save = [](const std::string& file, const ValidationCase& c) { save_scenario_file(file, c.scenario); };
    if (cmd.parser().isSet(QStringLiteral("scenarios"))
        && !write_row_scenarios(cmd.parser().value(QStringLiteral("scenarios")), cases, save))
        return kBadInput;
    const ValidationReport report = run_validation(cases, skipped, calibration);
    const std::string calibration_name = calibration.is_identity() ? std::string("none") : calibration.name;
    if (cmd.parser().isSet(QStringLiteral("json"))) {
        nlohmann::json j = validation_report_to_json(report);
        j["calibration"] = calibration_name;
        print_out(j.dump(2) + "\n");
    } else if (cmd.parser().isSet(QStringLiteral("markdown"))) {
        print_out(validation_report_to_markdown(report));
    } else if (cmd.csv()) {
        print_out(validation_csv(report));
    } else {
        print_out(validation_text(report, calibration, calibration_name));
    }
    if (report.overall.rows == 0) {
        print_err(path + ": no usable rows to validate against (" + std::to_string(report.skipped.size())
            + " skipped; the reasons are listed with the output)");
        return kBadInput;
    }
    return kOk;
}

} // namespace parallax::cli

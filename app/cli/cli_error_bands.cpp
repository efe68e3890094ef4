// parallax-cli error-bands [FITTED_RUNS.json [HELD_OUT_RUNS.json ...]] [--out FILE] [--json]
// parallax-cli error-bands --serving [MEASURED_SERVING.json ...] [--out FILE] [--json]
// Without files: the shipped table's classes, bands and leave-one-source-out coverage. With files:
// rebuilds the table from them (the first file's rows by leave-one-source-out fits, the others by
// the shipped calibration) and reports the same; --out writes it (presets/calibration/). With --serving
// the same for serving predictions: TTFT, TPOT and output tokens/s bands from measured serving rows, their
// coverage leaving each model out.
#include "calibration/error_band_residuals.hpp"
#include "calibration/serving_band_residuals.hpp"
#include "cli/cli_commands.hpp"
#include "cli/cli_common.hpp"
#include "cli/cli_parser.hpp"
#include "io/csv_writer.hpp"
#include "io/json_reader.hpp"
#include "io/scenario_io.hpp"
#include "io/serving_runs.hpp"
#include "spec/input_error.hpp"

#include <cmath>
#include <cstdio>
#include <map>

namespace parallax::cli {

namespace {

std::vector<ValidationCase> read_cases(const std::string& path)
{
    std::vector<SkippedRow> skipped;
    return read_published_runs(parse_json_text(read_text_file(path), path), path, PresetCatalog::standard(), skipped);
}

struct ClassBand {
    std::string name;
    int runs = 0;
    ErrorBand band; // what a new run of the class gets, at the class's largest validated size
};

// Every workload class present in the table, by name.
std::vector<ClassBand> class_bands(const ErrorBandTable& t)
{
    std::map<std::string, std::pair<WorkloadClass, std::pair<int, long long>>> classes;
    for (const BandResidual& r : t.residuals) {
        auto& c = classes[workload_class_name(r.workload)];
        c.first = r.workload;
        ++c.second.first;
        c.second.second = std::max(c.second.second, r.gpus);
    }
    std::vector<ClassBand> out;
    for (const auto& [name, c] : classes)
        out.push_back({ name, c.second.first, error_band(t, c.first, c.second.second) });
    return out;
}

std::string class_table(const std::vector<ClassBand>& classes, double level)
{
    char line[512];
    std::snprintf(line, sizeof line,
        "workload class                     runs   %.0f%% band (measured / predicted)   basis\n", 100 * level);
    std::string out = line;
    for (const ClassBand& c : classes) {
        std::snprintf(line, sizeof line, "%-34s %4d   %+6.1f%% .. %+6.1f%%                 %s\n", c.name.c_str(),
            c.runs, 100 * (c.band.low_factor - 1), 100 * (c.band.high_factor - 1), c.band.basis.c_str());
        out += line;
    }
    return out;
}

nlohmann::json class_json(const std::vector<ClassBand>& classes)
{
    nlohmann::json j = nlohmann::json::array();
    for (const ClassBand& c : classes)
        j.push_back({ { "class", c.name }, { "runs", c.runs }, { "low_factor", c.band.low_factor },
            { "high_factor", c.band.high_factor }, { "rows", c.band.rows }, { "sources", c.band.sources },
            { "basis", c.band.basis } });
    return j;
}

std::string coverage_table(const std::vector<BandCoverage>& cov, double level)
{
    char line[256];
    std::snprintf(line, sizeof line,
        "\nleave-one-source-out coverage of the %.0f%% bands (each run's band built without its source):\n",
        100 * level);
    std::string out = line;
    for (const BandCoverage& c : cov) {
        std::snprintf(line, sizeof line, "  %-14s %4d runs  covered %5.1f%%  mean width %5.1f%%\n", c.group.c_str(),
            c.rows, 100 * c.coverage(), 100 * c.mean_width);
        out += line;
    }
    return out;
}

nlohmann::json coverage_json(const std::vector<BandCoverage>& cov)
{
    nlohmann::json j = nlohmann::json::array();
    for (const BandCoverage& c : cov)
        j.push_back({ { "group", c.group }, { "rows", c.rows }, { "covered", c.covered }, { "coverage", c.coverage() },
            { "mean_width", c.mean_width } });
    return j;
}

// Both tables in one: a "table" column says which ("class" rows: the bands; "coverage" rows: their
// leave-one-source-out coverage); a column that does not apply to a row is empty.
std::string csv_tables(const std::vector<ClassBand>& classes, const std::vector<BandCoverage>& cov)
{
    CsvWriter csv { "table", "name", "runs", "low_factor", "high_factor", "basis", "covered", "coverage",
        "mean_width" };
    for (const ClassBand& c : classes)
        csv.field("class")
            .field(c.name)
            .integer(c.runs)
            .number(c.band.low_factor, 6)
            .number(c.band.high_factor, 6)
            .field(c.band.basis)
            .field("")
            .field("")
            .field("")
            .end_row();
    for (const BandCoverage& c : cov)
        csv.field("coverage")
            .field(c.group)
            .integer(c.rows)
            .field("")
            .field("")
            .field("")
            .integer(c.covered)
            .number(c.coverage(), 6)
            .number(c.mean_width, 6)
            .end_row();
    return csv.text();
}

// The table with each residual on a line of its own: a diff of a rebuilt table shows the rows that moved.
std::string one_row_per_line(nlohmann::json j)
{
    nlohmann::json rows = std::move(j["residuals"]);
    j.erase("residuals");
    std::string text = j.dump(1);
    text.erase(text.find_last_of('}'));
    while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
        text.pop_back();
    text += ",\n \"residuals\": [\n";
    for (std::size_t i = 0; i < rows.size(); ++i)
        text += "  " + rows[i].dump() + (i + 1 < rows.size() ? ",\n" : "\n");
    return text + " ]\n}\n";
}

ServingBandTable read_serving_band_table(const QStringList& files)
{
    std::vector<ServingRun> runs;
    std::vector<ServingSkip> skipped;
    std::string provenance = "serving model on";
    for (const QString& f : files) {
        const std::string path = f.toStdString();
        const nlohmann::json rows = parse_json_text(read_text_file(path), path);
        if (!is_serving_runs_file(rows))
            throw InputError(
                path, "(top level)", "--serving reads measured serving rows (validation/measured-serving.json)");
        auto more = read_serving_runs(rows, path, PresetCatalog::standard(), skipped);
        runs.insert(runs.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
        provenance += " " + path;
    }
    const ServingValidationReport report = run_serving_validation(runs, skipped);
    return build_serving_band_table(report, provenance);
}

std::string serving_band_text(const ServingBandTable& t, nlohmann::json* out)
{
    std::map<std::string, std::pair<ServingBandClass, int>> classes;
    for (const ServingBandResidual& r : t.residuals) {
        auto& c = classes[serving_band_class_name(r.klass)];
        c.first = r.klass;
        ++c.second;
    }
    const auto pct = [](double f) { return 100 * (f - 1); };
    char line[512];
    std::snprintf(line, sizeof line, "%.0f%% bands (measured / predicted - 1)\n%-32s %5s   %-17s %-17s %-17s\n",
        100 * t.level, "deployment class", "rows", "TTFT", "TPOT", "tokens/s");
    std::string text = t.provenance + "\n" + std::to_string(t.residuals.size()) + " rows\n\n" + line;
    nlohmann::json jc = nlohmann::json::array();
    for (const auto& [name, c] : classes) {
        const ServingBand b[] = { serving_error_band(t, c.first, ServingMetric::ttft),
            serving_error_band(t, c.first, ServingMetric::tpot),
            serving_error_band(t, c.first, ServingMetric::throughput) };
        std::snprintf(line, sizeof line,
            "%-32s %5d   %+5.0f%% .. %+5.0f%%  %+5.0f%% .. %+5.0f%%  %+5.0f%% .. %+5.0f%%\n", name.c_str(), c.second,
            pct(b[0].low_factor), pct(b[0].high_factor), pct(b[1].low_factor), pct(b[1].high_factor),
            pct(b[2].low_factor), pct(b[2].high_factor));
        text += line;
        nlohmann::json k = { { "class", name }, { "rows", c.second } };
        const char* names[] = { "ttft", "tpot", "throughput" };
        for (int m = 0; m < 3; ++m)
            k[names[m]] = { { "low_factor", b[m].low_factor }, { "high_factor", b[m].high_factor },
                { "rows", b[m].rows }, { "basis", b[m].basis } };
        jc.push_back(k);
    }
    const std::vector<BandCoverage> cov = serving_band_coverage(t);
    std::snprintf(line, sizeof line,
        "\nleave-one-model-out coverage of the %.0f%% bands (each row's band built without its model):\n",
        100 * t.level);
    text += line;
    nlohmann::json jv = nlohmann::json::array();
    for (const BandCoverage& c : cov) {
        std::snprintf(line, sizeof line, "  %-11s %5d rows  covered %5.1f%%  mean width %6.1f%%\n", c.group.c_str(),
            c.rows, 100 * c.coverage(), 100 * c.mean_width);
        text += line;
        jv.push_back({ { "metric", c.group }, { "rows", c.rows }, { "covered", c.covered },
            { "coverage", c.coverage() }, { "mean_width", c.mean_width } });
    }
    *out = { { "schema", 1 }, { "level", t.level }, { "provenance", t.provenance }, { "rows", t.residuals.size() },
        { "classes", jc }, { "coverage", jv } };
    return text;
}

// The class and coverage tables of the serving bands' JSON as one CSV, told apart by the first column.
std::string serving_csv(const nlohmann::json& j)
{
    CsvWriter csv { "table", "name", "rows", "ttft_low_factor", "ttft_high_factor", "tpot_low_factor",
        "tpot_high_factor", "throughput_low_factor", "throughput_high_factor", "covered", "coverage", "mean_width" };
    for (const nlohmann::json& c : j.at("classes")) {
        csv.field("class").field(c.at("class").get<std::string>()).integer(c.at("rows").get<long long>());
        for (const char* m : { "ttft", "tpot", "throughput" })
            csv.number(c.at(m).at("low_factor").get<double>(), 6).number(c.at(m).at("high_factor").get<double>(), 6);
        csv.field("").field("").field("").end_row();
    }
    for (const nlohmann::json& c : j.at("coverage")) {
        csv.field("coverage").field(c.at("metric").get<std::string>()).integer(c.at("rows").get<long long>());
        for (int i = 0; i < 6; ++i)
            csv.field("");
        csv.integer(c.at("covered").get<long long>())
            .number(c.at("coverage").get<double>(), 6)
            .number(c.at("mean_width").get<double>(), 6)
            .end_row();
    }
    return csv.text();
}

// The serving bands: shown, or rebuilt from measured serving rows and written with --out.
int serving_error_bands(const CommandParser& cmd)
{
    const QStringList files = cmd.parser().positionalArguments();
    const ServingBandTable table = files.isEmpty() ? builtin_serving_error_bands() : read_serving_band_table(files);
    if (table.residuals.empty()) {
        print_err("parallax-cli error-bands: no serving residuals, no bands");
        return kBadInput;
    }
    if (cmd.parser().isSet(QStringLiteral("out")))
        write_text_file_atomically(cmd.parser().value(QStringLiteral("out")).toStdString(),
            one_row_per_line(serving_band_table_to_json(table)));
    nlohmann::json j;
    const std::string text = serving_band_text(table, &j);
    if (cmd.parser().isSet(QStringLiteral("json")))
        print_out(j.dump(2) + "\n");
    else if (cmd.csv())
        print_out(serving_csv(j));
    else
        print_out(text);
    return kOk;
}

} // namespace

int run_error_bands(const QStringList& args)
{
    CommandParser cmd(QStringLiteral("Shows, or rebuilds from validation files, the error bands predictions carry, "
                                     "with their leave-one-source-out coverage."),
        QStringLiteral("RUNS"),
        QStringLiteral("published-runs JSON files: the runs the shipped calibration was fitted to, then held-out "
                       "files"));
    cmd.parser().addOption(
        { QStringLiteral("out"), QStringLiteral("Write the rebuilt table here (atomic)."), QStringLiteral("FILE") });
    cmd.parser().addOption({ QStringLiteral("json"), QStringLiteral("Print JSON.") });
    cmd.parser().addOption({ QStringLiteral("serving"),
        QStringLiteral("Serving bands (TTFT, TPOT, output tokens/s): RUNS are measured serving rows "
                       "(validation/measured-serving.json, validation/published-serving-throughput.json).") });
    cmd.add_csv_option();
    if (auto rc = cmd.parse(args, 0, 16))
        return *rc;
    try {
        if (cmd.parser().isSet(QStringLiteral("serving")))
            return serving_error_bands(cmd);
        ErrorBandTable table = builtin_error_bands();
        const QStringList files = cmd.parser().positionalArguments();
        if (!files.isEmpty()) {
            const std::vector<ValidationCase> fitted = read_cases(files.front().toStdString());
            std::vector<ValidationCase> held_out;
            std::string provenance = "leave-one-source-out fits on " + files.front().toStdString();
            for (qsizetype i = 1; i < files.size(); ++i) {
                auto more = read_cases(files[i].toStdString());
                held_out.insert(held_out.end(), more.begin(), more.end());
                provenance += (i == 1 ? "; calibration " + builtin_calibration().name + " on " : ", ")
                    + files[i].toStdString();
            }
            table = build_error_band_table(fitted, held_out, builtin_calibration(), FitOptions {}, provenance);
        }
        if (table.residuals.empty()) {
            print_err("parallax-cli error-bands: no residuals, no bands");
            return kBadInput;
        }
        if (cmd.parser().isSet(QStringLiteral("out")))
            write_text_file_atomically(cmd.parser().value(QStringLiteral("out")).toStdString(),
                error_band_table_to_json(table).dump(1) + "\n");
        std::vector<BandCoverage> cov = band_coverage(table);
        if (const BandCoverage memory = memory_band_coverage(table); memory.rows > 0)
            cov.push_back(memory); // peak memory per GPU, from the rows that state it
        const std::vector<ClassBand> classes = class_bands(table);
        if (cmd.parser().isSet(QStringLiteral("json"))) {
            nlohmann::json j = { { "schema", 1 }, { "level", table.level }, { "provenance", table.provenance },
                { "runs", table.residuals.size() }, { "classes", class_json(classes) },
                { "coverage", coverage_json(cov) } };
            print_out(j.dump(2) + "\n");
        } else if (cmd.csv()) {
            print_out(csv_tables(classes, cov));
        } else {
            print_out(table.provenance + "\n" + std::to_string(table.residuals.size()) + " runs\n\n"
                + class_table(classes, table.level) + coverage_table(cov, table.level));
        }
    } catch (const InputError& e) {
        print_err(e.what());
        return kBadInput;
    }
    return kOk;
}

} // namespace parallax::cli

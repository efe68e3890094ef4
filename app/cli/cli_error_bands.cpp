// parallax-cli error-bands [FITTED_RUNS.json [HELD_OUT_RUNS.json ...]] [--out FILE] [--json]
// Without files: the shipped table's classes, bands and leave-one-source-out coverage. With files:
// rebuilds the table from them (the first file's rows by leave-one-source-out fits, the others by
// the shipped calibration) and reports the same; --out writes it (presets/calibration/).
#include "calibration/error_band_residuals.hpp"
#include "cli/cli_commands.hpp"
#include "cli/cli_common.hpp"
#include "cli/cli_parser.hpp"
#include "io/csv_writer.hpp"
#include "io/json_reader.hpp"
#include "io/scenario_io.hpp"
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
    cmd.add_csv_option();
    if (auto rc = cmd.parse(args, 0, 16))
        return *rc;
    try {
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

// parallax-cli calibrate RUNS.json [--out calibration.json] [--cross-validate] [--json]
// parallax-cli calibrate --from-store [--store FILE] [--cluster PROFILE] [--out calibration.json] [--json]
#include "calibration/calibration_fit.hpp"
#include "cli/cli_commands.hpp"
#include "cli/cli_common.hpp"
#include "cli/cli_parser.hpp"
#include "cli/cli_store.hpp"
#include "io/json_reader.hpp"
#include "io/scenario_io.hpp"
#include "runs/run_catalog.hpp"
#include "runs/store_calibration.hpp"
#include "spec/input_error.hpp"

#include <QDateTime>

#include <cmath>
#include <cstdio>
#include <set>

namespace parallax::cli {

namespace {

double rms(const std::vector<remote::Residual>& r)
{
    double ss = 0;
    for (const auto& x : r)
        ss += x.log_error * x.log_error;
    return r.empty() ? 0 : std::sqrt(ss / static_cast<double>(r.size()));
}

// calibrate --from-store: the completed runs of one cluster, checked, fitted, written with provenance.
int calibrate_from_store(CommandParser& cmd)
{
    QCommandLineParser& p = cmd.parser();
    const QString path = p.isSet(QStringLiteral("store")) ? p.value(QStringLiteral("store"))
                                                          : remote::RunCatalog::default_store_path();
    const std::string cluster = p.value(QStringLiteral("cluster")).toStdString();
    if (!remote::RunCatalog::store_exists(path)) {
        print_err("parallax-cli calibrate: no run store at " + path.toStdString());
        return kBadInput;
    }
    std::unique_ptr<remote::RunCatalog> store;
    try {
        store = open_run_store(path);
    } catch (const InputError& e) {
        print_err(e.what());
        return kBadInput;
    }
    const remote::RunCatalog& catalog = *store;
    const remote::StoreCases found = remote::store_cases(catalog, cluster);
    std::set<std::string> gpus;
    for (const ValidationCase& c : found.cases)
        gpus.insert(c.gpu);
    std::string rejected_text;
    for (const remote::RejectedRun& r : found.rejected)
        rejected_text += "  rejected " + r.run_id + ": " + r.reason + "\n";
    if (found.cases.empty()) {
        print_err("parallax-cli calibrate: no run of " + (cluster.empty() ? std::string("the store") : cluster)
            + " can calibrate the model\n" + rejected_text);
        return kBadInput;
    }
    if (gpus.size() > 1) {
        print_err("parallax-cli calibrate: the runs are on several GPUs; choose one cluster with --cluster");
        return kBadInput;
    }
    const std::string now = QDateTime::currentDateTimeUtc().toString(Qt::ISODate).toStdString();
    const Calibration c = remote::fit_store_calibration(found.cases, cluster, path.toStdString(), now);
    const nlohmann::json file = calibration_to_json(c);
    if (p.isSet(QStringLiteral("out")))
        write_text_file_atomically(p.value(QStringLiteral("out")).toStdString(), file.dump(2) + "\n");
    if (p.isSet(QStringLiteral("json"))) {
        nlohmann::json j = file;
        nlohmann::json rejected = nlohmann::json::array();
        for (const remote::RejectedRun& r : found.rejected)
            rejected.push_back({ { "run", r.run_id }, { "reason", r.reason } });
        j["rejected"] = rejected;
        print_out(j.dump(2) + "\n");
        return kOk;
    }
    const std::vector<remote::Residual> before = remote::residuals(found.cases, builtin_calibration());
    const std::vector<remote::Residual> after = remote::residuals(found.cases, c);
    char line[256];
    std::snprintf(line, sizeof line, "fitted %zu runs on %s: RMS log error %.3f (shipped calibration) -> %.3f\n",
        found.cases.size(), c.gpu.c_str(), rms(before), rms(after));
    print_out(std::string(line) + rejected_text + file.dump(2) + "\n");
    return kOk;
}

} // namespace

namespace {

void add_calibrate_options(CommandParser& cmd)
{
    cmd.parser().addOption({ QStringLiteral("from-store"),
        QStringLiteral("Fit to the completed runs in the run store (measured vs predicted); runs whose measurement is "
                       "missing, unsteady or inconsistent with their scenario are rejected with the reason.") });
    cmd.parser().addOption({ QStringLiteral("store"),
        QStringLiteral("With --from-store: the run store (SQLite); default ")
            + remote::RunCatalog::default_store_path(),
        QStringLiteral("FILE") });
    cmd.parser().addOption({ QStringLiteral("cluster"),
        QStringLiteral("With --from-store: only the runs of this cluster profile."), QStringLiteral("PROFILE") });
    cmd.parser().addOption(
        { QStringLiteral("out"), QStringLiteral("Write the calibration JSON here (atomic)."), QStringLiteral("FILE") });
    cmd.parser().addOption(
        { QStringLiteral("cross-validate"), QStringLiteral("Also report leave-one-source-out errors.") });
    cmd.parser().addOption({ QStringLiteral("json"), QStringLiteral("Print JSON.") });
    cmd.parser().addOption(
        { QStringLiteral("prior"), QStringLiteral("Weight of the prior towards scale 1 (default 0.5)."),
            QStringLiteral("WEIGHT"), QStringLiteral("0.5") });
}

nlohmann::json cross_validation_json(const CrossValidation& cv)
{
    nlohmann::json by = nlohmann::json::object();
    for (const auto& [k, g] : cv.by_held_out_source)
        by[k] = { { "rows", g.rows }, { "mape", g.mape }, { "median", g.median }, { "worst", g.worst } };
    return { { "method", "leave one source out" }, { "rows", cv.overall.rows }, { "mape", cv.overall.mape },
        { "median", cv.overall.median }, { "worst", cv.overall.worst }, { "by_source", by } };
}

std::string cross_validation_text(const nlohmann::json& c)
{
    char line[256];
    std::snprintf(line, sizeof line, "leave-one-source-out: %d rows, MAPE %.1f%%, median %.1f%%, worst %.1f%%\n",
        c["rows"].get<int>(), 100 * c["mape"].get<double>(), 100 * c["median"].get<double>(),
        100 * c["worst"].get<double>());
    std::string text = line;
    for (auto it = c["by_source"].begin(); it != c["by_source"].end(); ++it) {
        std::snprintf(line, sizeof line, "  %-14s %3d rows  MAPE %5.1f%%  worst %5.1f%%\n", it.key().c_str(),
            (*it)["rows"].get<int>(), 100 * (*it)["mape"].get<double>(), 100 * (*it)["worst"].get<double>());
        text += line;
    }
    return text;
}

// Fits the scales to a published-runs file; prints the fit (and its leave-one-source-out errors).
int calibrate_from_file(const CommandParser& cmd, const std::string& path, FitOptions options)
{
    std::vector<SkippedRow> skipped;
    const auto cases
        = read_published_runs(parse_json_text(read_text_file(path), path), path, PresetCatalog::standard(), skipped);
    if (cases.empty()) {
        print_err(path + ": no run can be modelled, nothing to fit");
        return kBadInput;
    }
    options.name = "fit:" + path;
    const FitResult fit = fit_calibration(cases, options);
    nlohmann::json out = calibration_to_json(fit.calibration);
    out["parameters"] = fit.parameters;
    out["rows"] = fit.rows;
    out["rms_log_error_before"] = fit.rms_log_error_before;
    out["rms_log_error_after"] = fit.rms_log_error_after;
    if (cmd.parser().isSet(QStringLiteral("cross-validate")))
        out["cross_validation"] = cross_validation_json(leave_one_source_out(cases, options));
    if (cmd.parser().isSet(QStringLiteral("out"))) {
        const nlohmann::json file = calibration_to_json(fit.calibration);
        write_text_file_atomically(cmd.parser().value(QStringLiteral("out")).toStdString(), file.dump(2) + "\n");
    }
    if (cmd.parser().isSet(QStringLiteral("json"))) {
        print_out(out.dump(2) + "\n");
        return kOk;
    }
    std::string text = "fitted " + std::to_string(fit.rows) + " runs: RMS log error "
        + std::to_string(fit.rms_log_error_before) + " -> " + std::to_string(fit.rms_log_error_after) + "\n";
    text += calibration_to_json(fit.calibration).dump(2) + "\n";
    if (out.contains("cross_validation"))
        text += cross_validation_text(out["cross_validation"]);
    print_out(text);
    return kOk;
}

} // namespace

int run_calibrate(const QStringList& args)
{
    CommandParser cmd(
        QStringLiteral("Fits the calibration scales (per GPU generation and framework) to measured runs in the "
                       "published-runs format, and optionally cross-validates the fit (leave one source out)."),
        QStringLiteral("RUNS"), QStringLiteral("published-runs JSON file (or --from-store)"));
    add_calibrate_options(cmd);
    if (auto rc = cmd.parse(args, 0, 1))
        return *rc;
    if (cmd.parser().isSet(QStringLiteral("from-store"))) {
        try {
            return calibrate_from_store(cmd);
        } catch (const InputError& e) {
            print_err(e.what());
            return kBadInput;
        } catch (const remote::StoreError& e) {
            print_err(std::string("parallax-cli calibrate: ") + e.what());
            return kBadInput;
        }
    }
    if (cmd.positional(0).isEmpty()) {
        print_err("parallax-cli calibrate: give a published-runs file, or --from-store");
        return kBadInput;
    }
    FitOptions options;
    bool ok = false;
    options.prior_weight = cmd.parser().value(QStringLiteral("prior")).toDouble(&ok);
    if (!ok || options.prior_weight < 0 || options.prior_weight > 100) {
        print_err("parallax-cli calibrate: --prior must be a number in [0, 100]");
        return kBadInput;
    }
    try {
        return calibrate_from_file(cmd, cmd.positional(0).toStdString(), options);
    } catch (const InputError& e) {
        print_err(e.what());
        return kBadInput;
    }
}

} // namespace parallax::cli

// parallax-cli calibrate RUNS.json [--out calibration.json] [--cross-validate] [--json] [--cpp]
#include "calibration/calibration_fit.hpp"
#include "cli/cli_commands.hpp"
#include "cli/cli_common.hpp"
#include "cli/cli_parser.hpp"
#include "io/json_reader.hpp"
#include "io/scenario_io.hpp"
#include "spec/input_error.hpp"

#include <cstdio>

namespace parallax::cli {

int run_calibrate(const QStringList& args)
{
    CommandParser cmd(
        QStringLiteral("Fits the calibration scales (per GPU generation and framework) to measured runs in the "
                       "published-runs format, and optionally cross-validates the fit (leave one source out)."),
        QStringLiteral("RUNS"), QStringLiteral("published-runs JSON file"));
    cmd.parser().addOption(
        { QStringLiteral("out"), QStringLiteral("Write the calibration JSON here (atomic)."), QStringLiteral("FILE") });
    cmd.parser().addOption(
        { QStringLiteral("cross-validate"), QStringLiteral("Also report leave-one-source-out errors.") });
    cmd.parser().addOption({ QStringLiteral("json"), QStringLiteral("Print JSON.") });
    cmd.parser().addOption(
        { QStringLiteral("prior"), QStringLiteral("Weight of the prior towards scale 1 (default 0.5)."),
            QStringLiteral("WEIGHT"), QStringLiteral("0.5") });
    if (auto rc = cmd.parse(args, 1, 1))
        return *rc;
    const std::string path = cmd.positional(0).toStdString();
    FitOptions options;
    bool ok = false;
    options.prior_weight = cmd.parser().value(QStringLiteral("prior")).toDouble(&ok);
    if (!ok || options.prior_weight < 0 || options.prior_weight > 100) {
        print_err("parallax-cli calibrate: --prior must be a number in [0, 100]");
        return kBadInput;
    }
    try {
        std::vector<SkippedRow> skipped;
        const auto cases = read_published_runs(
            parse_json_text(read_text_file(path), path), path, PresetCatalog::standard(), skipped);
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
        if (cmd.parser().isSet(QStringLiteral("cross-validate"))) {
            const CrossValidation cv = leave_one_source_out(cases, options);
            nlohmann::json by = nlohmann::json::object();
            for (const auto& [k, g] : cv.by_held_out_source)
                by[k] = { { "rows", g.rows }, { "mape", g.mape }, { "median", g.median }, { "worst", g.worst } };
            out["cross_validation"]
                = { { "method", "leave one source out" }, { "rows", cv.overall.rows }, { "mape", cv.overall.mape },
                      { "median", cv.overall.median }, { "worst", cv.overall.worst }, { "by_source", by } };
        }
        if (cmd.parser().isSet(QStringLiteral("out"))) {
            nlohmann::json file = calibration_to_json(fit.calibration);
            write_text_file_atomically(cmd.parser().value(QStringLiteral("out")).toStdString(), file.dump(2) + "\n");
        }
        if (cmd.parser().isSet(QStringLiteral("json"))) {
            print_out(out.dump(2) + "\n");
        } else {
            std::string text = "fitted " + std::to_string(fit.rows) + " runs: RMS log error "
                + std::to_string(fit.rms_log_error_before) + " -> " + std::to_string(fit.rms_log_error_after) + "\n";
            text += calibration_to_json(fit.calibration).dump(2) + "\n";
            if (out.contains("cross_validation")) {
                const auto& c = out["cross_validation"];
                char line[256];
                std::snprintf(line, sizeof line,
                    "leave-one-source-out: %d rows, MAPE %.1f%%, median %.1f%%, worst %.1f%%\n", c["rows"].get<int>(),
                    100 * c["mape"].get<double>(), 100 * c["median"].get<double>(), 100 * c["worst"].get<double>());
                text += line;
                for (auto it = c["by_source"].begin(); it != c["by_source"].end(); ++it) {
                    std::snprintf(line, sizeof line, "  %-14s %3d rows  MAPE %5.1f%%  worst %5.1f%%\n",
                        it.key().c_str(), (*it)["rows"].get<int>(), 100 * (*it)["mape"].get<double>(),
                        100 * (*it)["worst"].get<double>());
                    text += line;
                }
            }
            print_out(text);
        }
    } catch (const InputError& e) {
        print_err(e.what());
        return kBadInput;
    }
    return kOk;
}

} // namespace parallax::cli

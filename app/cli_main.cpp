// parallax-cli: headless access to everything the planner shows (docs/cli.md describes every command).
#include "cli/cli_commands.hpp"
#include "cli/cli_common.hpp"
#include "cli/cli_logging.hpp"

#include <QCoreApplication>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <map>

namespace {

using Command = int (*)(const QStringList&);

const char* kUsage
    = "usage: parallax-cli [--verbose] <command> [options]\n"
      "\n"
      "commands:\n"
      "  predict  SCENARIO.json [--json] [--fidelity analytic|simulated]\n"
      "  search   SCENARIO.json [--json] [--top N] [--threads N] [--objective throughput|time_to_train|energy]\n"
      "           [--max-slowdown F] [--power-budget-kW KW] [--any-framework]\n"
      "  sweep    SCENARIO.json --gpus 64,128,256,... [--json] [--any-framework]\n"
      "  export   SCENARIO.json --format megatron|torchtitan|nemo|deepspeed [--out FILE|DIR]   (launch files)\n"
      "  presets  [gpus|fabrics|clusters|models|scenarios] [--json]\n"
      "  validate RUNS.json [--json] [--calibration FILE|builtin|none]\n"
      "  calibrate RUNS.json [--out FILE] [--cross-validate] [--json]\n"
      "  calibrate --from-store [--store FILE] [--cluster PROFILE] [--out FILE] [--json]   (from your own runs)\n"
      "  error-bands [FITTED_RUNS.json [HELD_OUT.json ...]] [--out FILE] [--json]   (bands and their coverage)\n"
      "  timeline SCENARIO.json --out trace.json   (Chrome trace / Perfetto)\n"
      "  clocks   SCENARIO.json [--max-slowdown 0.01] [--json]   (per-stage DVFS plan)\n"
      "  parse-log LOG [--format auto|megatron|torchtitan|deepspeed|probe] [--json]\n"
      "  import   FILE|- [--format megatron-args|nemo-yaml|torchtitan-toml|deepspeed-json|hf-config]\n"
      "           [--out SCENARIO.json] [--json] [--cluster PRESET] [--gpus N] [--model PRESET|config.json]\n"
      "  run      SCENARIO --cluster PROFILE [--framework probe|megatron|torchtitan|deepspeed] [--wait]\n"
      "  runs     [RUN_ID] [--json]                 (the run store: measured vs predicted)\n"
      "\n"
      "`parallax-cli <command> --help` describes one command; --version prints the version.\n"
      "Tables: --csv prints search, sweep, validate, runs, presets, error-bands and clocks as CSV.\n"
      "--verbose (-V): debug log of the parallax.* categories on stderr; QT_LOGGING_RULES overrides it.\n"
      "Exit codes: 0 success, 1 internal error, 2 bad input, 3 infeasible plan.\n"
      "run: 4 the remote run failed, was cancelled or could not be sent.\n";

} // namespace

int main(int argc, char** argv)
{
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("parallax-cli"));
    QCoreApplication::setApplicationVersion(QStringLiteral(PARALLAX_VERSION));
    QStringList args = QCoreApplication::arguments();
    const auto is_verbose
        = [](const QString& a) { return a == QLatin1String("--verbose") || a == QLatin1String("-V"); };
    parallax::cli::setup_logging(std::any_of(args.begin() + 1, args.end(), is_verbose));
    // Before the command it is a global option; after it, the command's parser accepts it.
    while (args.size() > 1 && is_verbose(args.at(1)))
        args.removeAt(1);
    if (args.size() < 2 || args.at(1) == QLatin1String("--help") || args.at(1) == QLatin1String("-h")
        || args.at(1) == QLatin1String("help")) {
        std::fputs(kUsage, args.size() < 2 ? stderr : stdout);
        return args.size() < 2 ? parallax::cli::kBadInput : parallax::cli::kOk;
    }
    if (args.at(1) == QLatin1String("--version") || args.at(1) == QLatin1String("-v")) {
        std::printf("parallax-cli %s\n", PARALLAX_VERSION);
        return 0;
    }
    const std::map<QString, Command> commands {
        { QStringLiteral("predict"), &parallax::cli::run_predict },
        { QStringLiteral("presets"), &parallax::cli::run_presets },
        { QStringLiteral("validate"), &parallax::cli::run_validate },
        { QStringLiteral("timeline"), &parallax::cli::run_timeline },
        { QStringLiteral("search"), &parallax::cli::run_search },
        { QStringLiteral("sweep"), &parallax::cli::run_sweep },
        { QStringLiteral("calibrate"), &parallax::cli::run_calibrate },
        { QStringLiteral("error-bands"), &parallax::cli::run_error_bands },
        { QStringLiteral("parse-log"), &parallax::cli::run_parse_log },
        { QStringLiteral("run"), &parallax::cli::run_run },
        { QStringLiteral("runs"), &parallax::cli::run_runs },
        { QStringLiteral("clocks"), &parallax::cli::run_clocks },
        { QStringLiteral("import"), &parallax::cli::run_import },
        { QStringLiteral("export"), &parallax::cli::run_export },
    };
    const auto it = commands.find(args.at(1));
    if (it == commands.end()) {
        parallax::cli::print_err("parallax-cli: unknown command '" + args.at(1).toStdString() + "'\n\n" + kUsage);
        return parallax::cli::kBadInput;
    }
    qCDebug(parallax::cli::lcCli).noquote()
        << "command" << args.at(1) << "arguments" << args.mid(2).join(QLatin1Char(' '));
    QStringList rest = args.mid(1);
    rest[0] = args.at(0) + QLatin1Char(' ') + args.at(1);
    try {
        return it->second(rest);
    } catch (const std::exception& e) {
        parallax::cli::print_err(std::string("parallax-cli: internal error: ") + e.what());
        return parallax::cli::kInternalError;
    }
}

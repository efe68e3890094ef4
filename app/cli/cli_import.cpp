// parallax-cli import FILE|- [--format F] [--out SCENARIO.json] [--json] [--cluster PRESET] [--gpus N]
//                          [--model PRESET|config.json] [--seq-len N]
// Reads a training launch configuration (Megatron-LM command line or script, NeMo / Megatron-Bridge YAML,
// torchtitan TOML, DeepSpeed JSON, Hugging Face config.json) and writes the scenario it describes, with a
// report of what became of every key of the input.
#include "cli/cli_commands.hpp"
#include "cli/cli_common.hpp"
#include "cli/cli_parser.hpp"
#include "io/import/import_scenario.hpp"
#include "io/input_limits.hpp"
#include "io/scenario_io.hpp"
#include "spec/input_error.hpp"

#include <iostream>
#include <optional>
#include <string>

namespace parallax::cli {

namespace {

struct ImportArguments {
    std::string path;
    std::optional<ImportFormat> format;
    ImportOptions options;
    std::string out;
    bool json = false;
};

void add_options(QCommandLineParser& p)
{
    p.addOption({ QStringLiteral("format"),
        QStringLiteral("Input format: megatron-args, nemo-yaml, torchtitan-toml, deepspeed-json or hf-config "
                       "(default: detected from the content)."),
        QStringLiteral("name") });
    p.addOption({ QStringLiteral("out"), QStringLiteral("Write the scenario to this file instead of stdout."),
        QStringLiteral("SCENARIO.json") });
    p.addOption({ QStringLiteral("json"),
        QStringLiteral("Print {\"schema\", \"scenario\", \"import_report\"} on stdout (the report as JSON).") });
    p.addOption({ QStringLiteral("cluster"),
        QStringLiteral("Cluster preset for the GPU and the networks (default dgx-h100-superpod; `parallax-cli presets "
                       "clusters`), sized to the file's GPU count."),
        QStringLiteral("PRESET") });
    p.addOption({ QStringLiteral("gpus"), QStringLiteral("Total GPUs (replaces the file's node and GPU counts)."),
        QStringLiteral("N") });
    p.addOption({ QStringLiteral("model"),
        QStringLiteral("Model preset or Hugging Face config.json (a DeepSpeed config has no model; replaces the "
                       "file's model)."),
        QStringLiteral("PRESET|config.json") });
    p.addOption({ QStringLiteral("seq-len"), QStringLiteral("Sequence length (a DeepSpeed config has none)."),
        QStringLiteral("N") });
}

std::optional<long long> positive_option(const QCommandLineParser& p, const QString& name)
{
    if (!p.isSet(name))
        return std::nullopt;
    bool ok = false;
    const long long v = p.value(name).toLongLong(&ok);
    if (!ok || v < 1)
        throw InputError(
            "--" + name.toStdString(), "", "must be a positive integer, found \"" + p.value(name).toStdString() + "\"");
    return v;
}

ImportArguments read_arguments(CommandParser& cmd)
{
    const QCommandLineParser& p = cmd.parser();
    ImportArguments a;
    a.path = cmd.positional(0).toStdString();
    if (p.isSet(QStringLiteral("format"))) {
        const std::string name = p.value(QStringLiteral("format")).toStdString();
        a.format = import_format_from_string(name);
        if (!a.format)
            throw InputError("--format", "", "must be one of " + import_format_names() + ", found \"" + name + "\"");
    }
    a.options.cluster = p.value(QStringLiteral("cluster")).toStdString();
    a.options.model = p.value(QStringLiteral("model")).toStdString();
    a.options.gpus = positive_option(p, QStringLiteral("gpus"));
    a.options.seq_len = positive_option(p, QStringLiteral("seq-len"));
    a.out = p.value(QStringLiteral("out")).toStdString();
    a.json = p.isSet(QStringLiteral("json"));
    return a;
}

ImportResult run_import(const ImportArguments& a)
{
    if (a.path == "-") {
        const std::string text = read_input_stream(std::cin, "<stdin>");
        return import_launch_config(text, "<stdin>", a.format, a.options, PresetCatalog::standard());
    }
    return import_launch_config_file(a.path, a.format, a.options, PresetCatalog::standard());
}

} // namespace

int run_import(const QStringList& args)
{
    CommandParser cmd(
        QStringLiteral("Imports a training launch configuration as a scenario: a Megatron-LM command line "
                       "or launch script, a NeMo / Megatron-Bridge YAML, a torchtitan TOML, a DeepSpeed "
                       "JSON or a Hugging Face config.json. Every key of the input is reported as mapped, "
                       "without effect on the prediction, or not modelled (stderr, or \"import_report\" "
                       "with --json)."),
        QStringLiteral("FILE"), QStringLiteral("the file to import, or - for stdin"));
    add_options(cmd.parser());
    if (auto rc = cmd.parse(args, 1, 1))
        return *rc;
    try {
        const ImportArguments a = read_arguments(cmd);
        const ImportResult r = run_import(a);
        const std::string scenario = r.scenario.dump(2) + "\n";
        if (!a.out.empty())
            write_text_file_atomically(a.out, scenario);
        if (a.json) {
            nlohmann::ordered_json j;
            j["schema"] = kScenarioSchema;
            j["scenario"] = r.scenario;
            j["import_report"] = import_report_to_json(r.report);
            print_out(j.dump(2) + "\n");
        } else {
            if (a.out.empty())
                print_out(scenario);
            print_err(import_report_to_text(r.report) + (a.out.empty() ? "" : "wrote " + a.out));
        }
    } catch (const InputError& e) {
        print_err(e.what());
        return kBadInput;
    }
    return kOk;
}

} // namespace parallax::cli

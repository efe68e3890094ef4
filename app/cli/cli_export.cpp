// parallax-cli export SCENARIO --format megatron|torchtitan|nemo|deepspeed [--out FILE|DIR] [--steps N]
// parallax-cli export SERVING_SCENARIO [--format vllm|sglang|trtllm] [--out FILE|DIR]
// The plan as the framework's own launch files (core/io/export/launch_config.hpp, the generator `run` uses
// too), standalone: no cluster profile. What the framework cannot run is refused (exit 2), naming the
// feature and the framework. A mixed-GPU plan (strategy.stages) gets host lists per group
// (core/io/export/hetero_launch.hpp).
#include "cli/cli_commands.hpp"
#include "cli/cli_common.hpp"
#include "cli/cli_parser.hpp"
#include "io/export/launch_config.hpp"
#include "io/export/serving_launch.hpp"
#include "io/scenario_io.hpp"
#include "io/serving_io.hpp"
#include "spec/input_error.hpp"

#include <filesystem>

namespace parallax::cli {

namespace {

void write_file(const std::filesystem::path& path, const LaunchFile& f)
{
    write_text_file_atomically(path.string(), f.content);
    std::error_code ec;
    if (f.mode & 0111)
        std::filesystem::permissions(path,
            std::filesystem::perms::owner_exec | std::filesystem::perms::group_exec
                | std::filesystem::perms::others_exec,
            std::filesystem::perm_options::add, ec);
}

// The main file on stdout, or every file under --out (a folder, or the main file's path with its companions
// beside it).
int write_launch(const LaunchConfig& config, CommandParser& cmd)
{
    if (!cmd.parser().isSet(QStringLiteral("out"))) {
        print_out(config.files.front().content);
        if (config.files.size() > 1) {
            std::string rest;
            for (std::size_t i = 1; i < config.files.size(); ++i)
                rest += (i > 1 ? ", " : "") + config.files[i].name;
            print_err("note: the plan also needs " + rest + " (written with --out DIR)");
        }
        return kOk;
    }
    const std::string out = cmd.parser().value(QStringLiteral("out")).toStdString();
    std::error_code ec;
    const bool folder = std::filesystem::is_directory(out, ec) || (!out.empty() && out.back() == '/');
    if (folder && !std::filesystem::is_directory(out, ec)) {
        std::filesystem::create_directories(out, ec);
        if (ec)
            throw InputError(out, "", "cannot create the folder: " + ec.message());
    }
    // The files of a plan name each other (DeepSpeed's launcher reads ds_config.json beside it): under
    // another name the main file would be lost to the script.
    if (!folder && config.files.size() > 1
        && std::filesystem::path(out).filename().string() != config.files.front().name)
        throw InputError(out, "--out",
            "this plan is " + std::to_string(config.files.size()) + " files that refer to each other by name ("
                + config.files.front().name + ", " + config.files[1].name
                + "): give a folder (--out DIR/) or the main file's own name");
    std::string written;
    for (std::size_t i = 0; i < config.files.size(); ++i) {
        const LaunchFile& f = config.files[i];
        const std::filesystem::path path = folder ? std::filesystem::path(out) / f.name
            : i == 0                              ? std::filesystem::path(out)
                                                  : std::filesystem::path(out).parent_path() / f.name;
        write_file(path, f);
        written += (written.empty() ? "" : ", ") + path.string();
    }
    print_out("wrote " + written + "\n");
    return kOk;
}

// A serving scenario: the engine's launch script (core/io/export/serving_launch.hpp); --format names the
// engine, the scenario's own by default.
int export_serving(const std::string& arg, CommandParser& cmd)
{
    const ServingScenario s = load_serving_scenario_file(arg, PresetCatalog::standard());
    ServingEngine engine = s.serving.engine;
    if (cmd.parser().isSet(QStringLiteral("format"))) {
        const auto e = serving_launch_format_from_string(cmd.parser().value(QStringLiteral("format")).toStdString());
        if (!e)
            throw InputError(arg, "--format",
                "a serving scenario exports as vllm, sglang or trtllm, got '"
                    + cmd.parser().value(QStringLiteral("format")).toStdString() + "'");
        engine = *e;
    }
    const LaunchConfig config = export_serving_launch(s, engine);
    for (const auto& n : config.notes)
        print_err("note: " + n);
    return write_launch(config, cmd);
}

} // namespace

int run_export(const QStringList& args)
{
    CommandParser cmd(
        QStringLiteral(
            "Writes the scenario's plan as the framework's own launch files: a Megatron-LM pretrain_gpt.py script "
            "(megatron), a torchtitan TOML (torchtitan, v0.2.x JobConfig), a NeMo Megatron-Bridge ConfigContainer "
            "YAML (nemo) or a DeepSpeed ds_config.json with its Megatron-DeepSpeed script (deepspeed). What the "
            "framework cannot run is refused (exit 2), naming the feature and the framework."),
        QStringLiteral("SCENARIO"), QStringLiteral("scenario file or preset name"));
    cmd.parser().addOption({ QStringLiteral("format"),
        QStringLiteral("megatron, torchtitan, nemo or deepspeed; for a serving scenario vllm, sglang or trtllm "
                       "(default: its engine)."),
        QStringLiteral("FORMAT") });
    cmd.parser().addOption({ QStringLiteral("out"),
        QStringLiteral("A file (the main file; companions go beside it) or a folder (an existing one, or a path "
                       "ending in /) for every file. Default: the main file on stdout."),
        QStringLiteral("FILE|DIR") });
    cmd.parser().addOption({ QStringLiteral("steps"), QStringLiteral("Training iterations in the files (default 30)."),
        QStringLiteral("N"), QStringLiteral("30") });
    if (auto rc = cmd.parse(args, 1, 1))
        return *rc;
    const std::string scenario_arg = cmd.positional(0).toStdString();
    if (is_serving_scenario_file(scenario_arg)) {
        try {
            return export_serving(scenario_arg, cmd);
        } catch (const InputError& e) {
            print_err(e.what());
            return kBadInput;
        }
    }
    const auto format = launch_format_from_string(cmd.parser().value(QStringLiteral("format")).toStdString());
    if (!format) {
        print_err("parallax-cli export: --format must be megatron, torchtitan, nemo or deepspeed, got '"
            + cmd.parser().value(QStringLiteral("format")).toStdString() + "'");
        return kBadInput;
    }
    bool ok = false;
    LaunchSettings settings;
    settings.steps = cmd.parser().value(QStringLiteral("steps")).toInt(&ok);
    if (!ok || settings.steps < 1 || settings.steps > 100000000) {
        print_err("parallax-cli export: --steps must be a positive integer");
        return kBadInput;
    }
    try {
        const std::string arg = cmd.positional(0).toStdString();
        const Scenario scenario = load_scenario_argument(arg, PresetCatalog::standard(), ScenarioUse::plan, true);
        settings.run_label = std::filesystem::path(arg).filename().string();
        const LaunchConfig config = export_launch_config(*format, scenario, settings, arg);
        const Framework fw = launch_framework(*format, scenario);
        if (fw != scenario.training.framework
            && !(fw == Framework::torchtitan && scenario.training.framework == Framework::torchtitan_compile))
            print_err("note: the scenario predicts for training.framework "
                + std::string(to_string(scenario.training.framework)) + "; this file runs the plan under "
                + std::string(to_string(fw)) + ", whose kernels differ");
        for (const auto& n : config.notes)
            print_err("note: " + n);
        return write_launch(config, cmd);
    } catch (const InputError& e) {
        print_err(e.what());
        return kBadInput;
    }
}

} // namespace parallax::cli

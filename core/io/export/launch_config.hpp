#pragma once
// A plan as the training framework's own launch files: Megatron-LM pretrain_gpt.py flags, a torchtitan
// TOML (v0.2.x JobConfig), a NeMo Megatron-Bridge ConfigContainer YAML, a DeepSpeed ds_config.json with
// Megatron-DeepSpeed's flags. The one generator: `parallax-cli export` writes these files standalone, and
// remote/ (`run`, the planner's Send) wraps the same pieces into the job it sends to a cluster.
//
// What a framework cannot run (framework_support.hpp) is refused by export_launch_config(); the pieces
// below, used by `run`, adapt instead and say what they changed in `notes` (a validation run of the
// closest plan the framework runs, said plainly).
#include "spec/framework_support.hpp"
#include "spec/scenario.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace parallax {

enum class LaunchFormat : unsigned char { megatron, torchtitan, nemo, deepspeed };
std::string_view to_string(LaunchFormat f);
std::optional<LaunchFormat> launch_format_from_string(std::string_view s);
// The framework whose capabilities a format is held to: NeMo (Megatron-Bridge) drives Megatron-LM's core;
// the torchtitan format is torchtitan with torch.compile when the scenario's framework is
// torchtitan-compile, eager torchtitan otherwise.
Framework launch_framework(LaunchFormat f, const Scenario& s);

struct LaunchSettings {
    int steps = 30; // training iterations
    // Where the files refer to the framework's checkout; empty: a variable the script asks for
    // ($MEGATRON_LM, $MEGATRON_DEEPSPEED) or torchtitan's own relative paths.
    std::string framework_path;
    std::string run_label; // names the run in descriptions and comments ("" = none)
};

struct LaunchFile {
    std::string name;
    std::string content;
    int mode = 0644;
};

struct LaunchConfig {
    std::vector<LaunchFile> files; // the main file first
    // Remarks a user should read: a model torchtitan has no flavour for, settings the file leaves to
    // the framework's defaults, adaptations (run only).
    std::vector<std::string> notes;
    const LaunchFile* find(std::string_view name) const;
};

// Everything of the scenario the format's framework cannot run (the plan's choices and its settings, with
// the format's own limits), in a stable order; empty when the file can say it all.
std::vector<Unsupported> launch_unsupported(LaunchFormat f, const Scenario& s);

// The standalone files of `export`. Throws InputError (`file` labels it; the key of the first unsupported
// feature, every one named with the framework) when launch_unsupported() is not empty.
LaunchConfig export_launch_config(LaunchFormat f, const Scenario& s, const LaunchSettings& o, const std::string& file);

// ---- The pieces (remote/ assembles them into its job scripts) ----

// Megatron-LM pretrain_gpt.py flags in Megatron's example-script groups (model, parallelism, training,
// data, logging): one word per element, flags followed by their values.
struct ArgGroup {
    std::string name; // MODEL_ARGS, ...
    std::vector<std::string> words;
};
std::vector<ArgGroup> megatron_arg_groups(const Scenario& s, const LaunchSettings& o, std::vector<std::string>& notes);
// Megatron-DeepSpeed pretrain_gpt.py flags, without --deepspeed_config's path and the data paths.
std::vector<ArgGroup> megatron_deepspeed_arg_groups(
    const Scenario& s, const LaunchSettings& o, std::vector<std::string>& notes);
nlohmann::ordered_json deepspeed_config(const Scenario& s, std::vector<std::string>& notes);
// torchtitan's TOML; `assets_root` prefixes hf_assets_path ("" = torchtitan's ./assets/hf).
std::string torchtitan_toml(
    const Scenario& s, const LaunchSettings& o, const std::string& assets_root, std::vector<std::string>& notes);
std::string nemo_yaml(const Scenario& s, const LaunchSettings& o, std::vector<std::string>& notes);

// The plan in one line, for file headers and job comments.
std::string plan_summary(const Scenario& s);
// torchtitan's model for the scenario's model: a registered flavour, or the family a custom flavour would
// join and why none fits.
struct TorchtitanModel {
    std::string name; // torchtitan model name: llama3, qwen3, deepseek_v3, gpt_oss, llama4
    std::string flavor; // registered flavour, or the custom name a note asks to register
    std::string hf_repo; // the Hugging Face repo its tokenizer comes from ("" = unknown)
    bool registered = false;
    std::string custom_note; // for a custom flavour: what to register, with the model's shapes
};
TorchtitanModel torchtitan_model(const ModelSpec& m);

} // namespace parallax

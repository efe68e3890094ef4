#include "io/import/import_scenario.hpp"

#include "io/import/deepspeed_json.hpp"
#include "io/import/hf_config.hpp"
#include "io/import/import_cluster.hpp"
#include "io/import/import_model.hpp"
#include "io/import/megatron_args.hpp"
#include "io/import/nemo_yaml.hpp"
#include "io/import/torchtitan_toml.hpp"
#include "io/json_reader.hpp"
#include "io/scenario_io.hpp"
#include "spec/input_error.hpp"

#include <array>
#include <filesystem>

namespace parallax {

using nlohmann::json;

namespace {

struct FormatName {
    ImportFormat format;
    std::string_view name;
};
constexpr std::array<FormatName, 5> kFormatNames = { { { ImportFormat::megatron_args, "megatron-args" },
    { ImportFormat::nemo_yaml, "nemo-yaml" }, { ImportFormat::torchtitan_toml, "torchtitan-toml" },
    { ImportFormat::deepspeed_json, "deepspeed-json" }, { ImportFormat::hf_config, "hf-config" } } };

// DeepSpeed's rule when only the global batch and the accumulation are given: micro-batch = global batch /
// (accumulation x data-parallel ranks).
void fill_micro_batch(ImportDraft& d, long long gpus)
{
    if (!d.accumulation_steps || d.has("strategy.micro_batch"))
        return;
    const long long mp = d.get_int("strategy.tp", 1) * d.get_int("strategy.pp", 1) * d.get_int("strategy.cp", 1);
    const long long dp = d.get_int("strategy.dp", mp > 0 ? gpus / mp : 1);
    const long long per_step = *d.accumulation_steps * std::max(1LL, dp);
    const long long global = d.get_int("training.global_batch", 1);
    if (global % per_step != 0)
        throw InputError(d.report.file, "train_batch_size",
            std::to_string(global) + " sequences are not gradient_accumulation_steps x " + std::to_string(dp)
                + " data-parallel ranks x a micro-batch");
    d.put("strategy.micro_batch", global / per_step);
    d.report.assumed("strategy.micro_batch", std::to_string(global / per_step),
        "global batch / (accumulation x " + std::to_string(dp) + " data-parallel ranks), as DeepSpeed derives it");
}

// Training keys the file leaves open: the precision, the sequence length (an error unless the file holds
// only a model) and the global batch (one micro-batch per data-parallel rank, as Megatron-LM and
// torchtitan do when it is not set).
void fill_training_defaults(ImportDraft& d, const ImportOptions& options, long long gpus)
{
    if (options.seq_len) {
        d.put("training.seq_len", *options.seq_len);
        d.report.assumed("training.seq_len", std::to_string(*options.seq_len), "--seq-len");
    }
    if (!d.has("training.precision")) {
        d.put("training.precision", "bf16");
        d.report.assumed("training.precision", "bf16", "the file sets no matmul precision");
    }
    if (!d.has("training.seq_len")) {
        if (!d.model_only)
            throw InputError(d.report.file, d.seq_len_key.empty() ? std::string("seq_len") : d.seq_len_key,
                "missing: the sequence length is needed to predict a step (or give --seq-len N)");
        d.put("training.seq_len", 8192);
        d.report.assumed("training.seq_len", "8192", "the file holds only a model: the default scenario's");
    }
    if (d.has("training.global_batch")) {
        fill_micro_batch(d, gpus);
        return;
    }
    if (d.model_only) {
        d.put("training.global_batch", 128);
        d.report.assumed(
            "training.global_batch", "128", "the file holds only a model: the default scenario's (1M tokens of 8192)");
        return;
    }
    const long long mp = d.get_int("strategy.tp", 1) * d.get_int("strategy.pp", 1) * d.get_int("strategy.cp", 1);
    const long long dp = d.get_int("strategy.dp", mp > 0 ? gpus / mp : 1);
    const long long per_rank = d.batch_per_dp_rank.value_or(d.get_int("strategy.micro_batch", 1));
    const long long batch = std::max(1LL, dp) * per_rank;
    d.put("training.global_batch", batch);
    d.report.assumed("training.global_batch", std::to_string(batch),
        "not set: " + std::string(d.batch_per_dp_rank ? "the local batch" : "micro-batch") + " x data-parallel ranks ("
            + std::to_string(dp) + "), as the frameworks default");
}

// Parses the finished scenario with the scenario reader (one set of rules); an error's scenario key is
// named together with the input key that set it.
Scenario validate_import(
    const nlohmann::ordered_json& scenario, const ImportReport& report, const PresetCatalog& catalog)
{
    try {
        return parse_scenario(json::parse(scenario.dump()), report.file, catalog);
    } catch (const InputError& e) {
        const std::string source = report.source_of(e.key());
        throw InputError(report.file, source.empty() ? e.key() : source + " (" + e.key() + ")", e.rule());
    }
}

ImportDraft read_draft(ImportFormat format, const std::string& text, const std::string& file)
{
    switch (format) {
    case ImportFormat::megatron_args:
        return read_megatron_args(text, file);
    case ImportFormat::nemo_yaml:
        return read_nemo_yaml(text, file);
    case ImportFormat::torchtitan_toml:
        return read_torchtitan_toml(text, file);
    case ImportFormat::deepspeed_json:
        return read_deepspeed_json(parse_json_text(text, file), file);
    case ImportFormat::hf_config:
        return read_hf_config(parse_json_text(text, file), file);
    }
    throw InputError(file, "--format", "unknown format");
}

std::optional<ImportFormat> detect_json(const std::string& text)
{
    json j;
    try {
        j = json::parse(text);
    } catch (const json::exception&) {
        return std::nullopt;
    }
    if (looks_like_hf_config(j))
        return ImportFormat::hf_config;
    if (looks_like_deepspeed_json(j))
        return ImportFormat::deepspeed_json;
    return std::nullopt;
}

} // namespace

std::string_view to_string(ImportFormat f)
{
    for (const FormatName& n : kFormatNames)
        if (n.format == f)
            return n.name;
    return "megatron-args";
}

std::optional<ImportFormat> import_format_from_string(std::string_view s)
{
    for (const FormatName& n : kFormatNames)
        if (n.name == s)
            return n.format;
    return std::nullopt;
}

std::string import_format_names()
{
    std::string out;
    for (const FormatName& n : kFormatNames)
        out += (out.empty() ? "" : "|") + std::string(n.name);
    return out;
}

bool is_scenario_text(const std::string& text)
{
    try {
        const json j = json::parse(text);
        return j.is_object() && j.contains("schema") && j.contains("model");
    } catch (const json::exception&) {
        return false;
    }
}

std::optional<ImportFormat> detect_import_format(const std::string& text, const std::string& file_name)
{
    const std::size_t first = text.find_first_not_of(" \t\r\n");
    if (first != std::string::npos && text[first] == '{')
        return detect_json(text);
    if (looks_like_megatron_args(text))
        return ImportFormat::megatron_args;
    if (looks_like_torchtitan_toml(text))
        return ImportFormat::torchtitan_toml;
    if (looks_like_nemo_yaml(text))
        return ImportFormat::nemo_yaml;
    const std::string ext = std::filesystem::path(file_name).extension().string();
    if (ext == ".sh")
        return ImportFormat::megatron_args;
    return std::nullopt;
}

namespace {

// vpp from the layers per virtual stage, once the model (a preset or inline) is known.
void fill_virtual_stages(ImportDraft& d, const nlohmann::ordered_json& model, const PresetCatalog& catalog)
{
    if (!d.layers_per_pipeline_chunk || d.has("strategy.vpp"))
        return;
    const nlohmann::json plain_model = json::parse(model.dump());
    const ModelSpec m = model.is_string() ? resolve_model(plain_model, d.report.file, "model", catalog, nullptr)
                                          : parse_model(plain_model, d.report.file, "model");
    const long long pp = d.get_int("strategy.pp", 1);
    const long long per = *d.layers_per_pipeline_chunk;
    const long long stages = (m.layers + d.pipeline_extra_layers + per - 1) / per;
    if (stages % pp != 0)
        throw InputError(d.report.file, d.layers_per_pipeline_chunk_key,
            "the model's " + std::to_string(m.layers) + " layers in stages of " + std::to_string(per) + " give "
                + std::to_string(stages) + " stages, not a multiple of pp (" + std::to_string(pp) + ")");
    d.set("strategy.vpp", stages / pp, d.layers_per_pipeline_chunk_key, std::to_string(per),
        "stages of this many layers per pipeline rank");
}

} // namespace

ImportResult finish_import(ImportDraft draft, const ImportOptions& options, const PresetCatalog& catalog)
{
    nlohmann::ordered_json scenario;
    scenario["schema"] = kScenarioSchema;
    scenario["description"] = "Imported from " + std::filesystem::path(draft.report.file).filename().string() + " ("
        + draft.report.format + ") by parallax-cli import";
    scenario["model"] = finish_import_model(draft, options, catalog);
    fill_virtual_stages(draft, scenario["model"], catalog);
    const ImportedCluster cluster = finish_import_cluster(draft, options, catalog);
    scenario["cluster"] = cluster.json;
    fill_training_defaults(draft, options, cluster.gpus);
    scenario["training"] = draft.parts["training"];
    scenario["strategy"] = draft.parts["strategy"];
    ImportResult result;
    result.parsed = validate_import(scenario, draft.report, catalog);
    result.scenario = std::move(scenario);
    result.report = std::move(draft.report);
    return result;
}

ImportResult import_launch_config(const std::string& text, const std::string& file, std::optional<ImportFormat> format,
    const ImportOptions& options, const PresetCatalog& catalog)
{
    if (!format) {
        if (is_scenario_text(text))
            throw InputError(file, "", "is already a Parallax scenario: open it (predict, the planner's File > Open)");
        format = detect_import_format(text, file);
    }
    if (!format)
        throw InputError(file, "--format",
            "not recognised as a Megatron-LM command line, NeMo YAML, torchtitan TOML, DeepSpeed JSON or Hugging Face "
            "config; name the format with --format "
                + import_format_names());
    try {
        return finish_import(read_draft(*format, text, file), options, catalog);
    } catch (const json::exception& e) {
        throw InputError(file, "", std::string("a value of an unexpected type: ") + e.what());
    }
}

ImportResult import_launch_config_file(const std::string& path, std::optional<ImportFormat> format,
    const ImportOptions& options, const PresetCatalog& catalog)
{
    return import_launch_config(read_text_file(path), path, format, options, catalog);
}

} // namespace parallax

#pragma once
// Importing a training launch configuration as a scenario: the formats, their detection, and the last
// step every format shares (the model as a preset or inline, the cluster, the GPU count, the defaults the
// file leaves open, and the scenario's own validation with errors that name the input's key).
#include "io/import/import_draft.hpp"
#include "io/import/import_report.hpp"
#include "io/preset_catalog.hpp"
#include "spec/scenario.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace parallax {

enum class ImportFormat : unsigned char { megatron_args, nemo_yaml, torchtitan_toml, deepspeed_json, hf_config };
std::string_view to_string(ImportFormat f);
std::optional<ImportFormat> import_format_from_string(std::string_view s);
// "megatron-args|nemo-yaml|torchtitan-toml|deepspeed-json|hf-config", for help texts and errors.
std::string import_format_names();

// The format of `text` by its content (a JSON's keys, TOML tables, YAML sections, Megatron flags), the
// file name's extension only breaking ties; nullopt when it is none of them.
std::optional<ImportFormat> detect_import_format(const std::string& text, const std::string& file_name);
// True when `text` is a Parallax scenario (a JSON object with "schema"): it opens, it is not imported.
bool is_scenario_text(const std::string& text);

struct ImportResult {
    nlohmann::ordered_json scenario; // schema 1; loads with load_scenario_file as it is
    Scenario parsed; // the same, parsed and validated
    ImportReport report;
};

// Reads `text` (labelled `file` in errors and the report) in `format`, or the detected one. Throws
// InputError naming the file, the input key and the rule.
ImportResult import_launch_config(const std::string& text, const std::string& file, std::optional<ImportFormat> format,
    const ImportOptions& options, const PresetCatalog& catalog);
ImportResult import_launch_config_file(const std::string& path, std::optional<ImportFormat> format,
    const ImportOptions& options, const PresetCatalog& catalog);

// The shared last step: completes and validates a draft one format's reader produced.
ImportResult finish_import(ImportDraft draft, const ImportOptions& options, const PresetCatalog& catalog);

} // namespace parallax

#pragma once
// Scenario files (docs/scenario-format.md): strict parsing with presets resolved by name at every level,
// defaults, dp derivation and the validity rules; and writing back (atomic), so that
// load -> save -> load gives the same scenario.
#include "io/preset_catalog.hpp"
#include "spec/scenario.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace parallax {

inline constexpr int kScenarioSchema = 1;

class JsonObjectReader;
// The file's "schema" key: required, and the one this Parallax reads (training and serving scenarios).
int read_scenario_schema(JsonObjectReader& r);

// What the scenario is loaded for. A plan (predict, timeline, the planner) must have a strategy that fits
// the model, cluster and batch; a search or sweep ignores the strategy's degrees, so its strategy is read
// (the software settings a search keeps: optimizer, overlaps) but not held to the validity rules, and a dp
// that cannot be derived is left at 1.
enum class ScenarioUse : unsigned char { plan, search };

// `file` labels error messages. Throws InputError.
Scenario parse_scenario(const nlohmann::json& j, const std::string& file, const PresetCatalog& catalog,
    ScenarioUse use = ScenarioUse::plan);
Scenario parse_scenario_text(const std::string& text, const std::string& file, const PresetCatalog& catalog,
    ScenarioUse use = ScenarioUse::plan);
Scenario load_scenario_file(const std::string& path, const PresetCatalog& catalog, ScenarioUse use = ScenarioUse::plan);
// A built-in or user scenario preset by name ("default").
Scenario load_scenario_preset(
    const std::string& name, const PresetCatalog& catalog, ScenarioUse use = ScenarioUse::plan);

// Checks the strategy against the model, cluster and training settings; throws InputError naming
// the key and the rule. parse_scenario() calls it; the GUI calls it after edits.
// The power and DVFS settings of the training section against the GPU and the strategy (clock ranges,
// the cap between idle and TDP, one stage clock per pipeline stage). Throws InputError.
void check_power_settings(const Scenario& s, const std::string& file);
void validate_scenario(const Scenario& s, const std::string& file);

nlohmann::json scenario_to_json(const Scenario& s);
nlohmann::json strategy_to_json(const Strategy& s, bool include_dp = true);
nlohmann::json model_to_json(const ModelSpec& m);
nlohmann::json gpu_to_json(const GpuSpec& g);
nlohmann::json fabric_to_json(const FabricSpec& f);
nlohmann::json cluster_to_json(const ClusterSpec& c, const ScenarioRefs& refs);

// Writes to a temporary file in the same folder and renames it over `path`, so a crash never
// leaves a half-written scenario. Throws InputError when the folder is not writable.
void save_scenario_file(const std::string& path, const Scenario& s);
void write_text_file_atomically(const std::string& path, const std::string& text);

// Individual specs, for presets and tests. `path` is the key path of the object in its file.
GpuSpec parse_gpu(const nlohmann::json& j, const std::string& file, const std::string& path);
FabricSpec parse_fabric(const nlohmann::json& j, const std::string& file, const std::string& path);
ModelSpec parse_model(const nlohmann::json& j, const std::string& file, const std::string& path);
// Applies `fields` (strategy keys) on top of `base`. Used for "strategy" and "search.fix".
Strategy parse_strategy(const nlohmann::json& j, const std::string& file, const std::string& path, Strategy base,
    bool* dp_given = nullptr, bool* schedule_given = nullptr);

// Resolve a preset by name or an inline object.
GpuSpec resolve_gpu(const nlohmann::json& j, const std::string& file, const std::string& path,
    const PresetCatalog& catalog, std::string* ref);
FabricSpec resolve_fabric(const nlohmann::json& j, const std::string& file, const std::string& path,
    const PresetCatalog& catalog, std::string* ref);
ModelSpec resolve_model(const nlohmann::json& j, const std::string& file, const std::string& path,
    const PresetCatalog& catalog, std::string* ref);
ClusterSpec resolve_cluster(const nlohmann::json& j, const std::string& file, const std::string& path,
    const PresetCatalog& catalog, ScenarioRefs* refs);

} // namespace parallax

#pragma once
// Every preset the program knows: the built-in ones compiled from presets/ and the user's own
// (PARALLAX_PRESET_PATH, then ${XDG_CONFIG_HOME:-~/.config}/parallax/presets). A user preset
// with a built-in's name replaces it.
#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace parallax {

enum class PresetKind : unsigned char { gpus, fabrics, clusters, models, scenarios };
inline constexpr PresetKind kAllPresetKinds[]
    = { PresetKind::gpus, PresetKind::fabrics, PresetKind::clusters, PresetKind::models, PresetKind::scenarios };

std::string_view to_string(PresetKind k);
std::optional<PresetKind> preset_kind_from_string(std::string_view s);

// A built-in file of presets/ by its path there ("calibration/error-bands.json"): the tables that are data but
// not presets of a kind. `origin` ("builtin:<path>") names it in errors.
struct BuiltinFile {
    nlohmann::json json;
    std::string origin;
};
// Nullopt when the build embeds no such file; throws InputError naming the origin when it is not JSON.
std::optional<BuiltinFile> builtin_preset_file(std::string_view path);

struct PresetEntry {
    PresetKind kind = PresetKind::gpus;
    std::string name;
    std::string origin; // "builtin:gpus/H100-SXM5-80GB.json" or a file path
    bool user = false;
    nlohmann::json json;
};

class PresetCatalog {
public:
    // Built-in presets plus the files found in `user_dirs` (each with kind sub-folders).
    static PresetCatalog load(const std::vector<std::string>& user_dirs);
    static std::vector<std::string> default_user_dirs();
    // Loaded once per process from the built-ins and default_user_dirs().
    static const PresetCatalog& standard();

    const PresetEntry* find(PresetKind kind, std::string_view name) const;
    std::vector<const PresetEntry*> entries(PresetKind kind) const;
    std::vector<std::string> names(PresetKind kind) const;
    // User files that could not be read; they are skipped, never fatal.
    const std::vector<std::string>& load_errors() const { return m_errors; }

    void add(PresetEntry entry); // replaces an entry of the same kind and name

private:
    std::vector<PresetEntry> m_entries;
    std::vector<std::string> m_errors;
};

} // namespace parallax

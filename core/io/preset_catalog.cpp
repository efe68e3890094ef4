#include "io/preset_catalog.hpp"

#include "embedded_presets.hpp"
#include "io/json_reader.hpp"
#include "spec/input_error.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

namespace parallax {

namespace fs = std::filesystem;

std::string_view to_string(PresetKind k)
{
    switch (k) {
    case PresetKind::gpus:
        return "gpus";
    case PresetKind::fabrics:
        return "fabrics";
    case PresetKind::clusters:
        return "clusters";
    case PresetKind::models:
        return "models";
    case PresetKind::scenarios:
        return "scenarios";
    }
    return "?";
}

std::optional<PresetKind> preset_kind_from_string(std::string_view s)
{
    for (PresetKind k : kAllPresetKinds)
        if (to_string(k) == s)
            return k;
    return std::nullopt;
}

namespace {

std::string name_of(const nlohmann::json& j, const std::string& fallback)
{
    if (j.is_object()) {
        auto it = j.find("name");
        if (it != j.end() && it->is_string())
            return it->get<std::string>();
    }
    return fallback;
}

} // namespace

void PresetCatalog::add(PresetEntry entry)
{
    for (auto& e : m_entries) {
        if (e.kind == entry.kind && e.name == entry.name) {
            e = std::move(entry);
            return;
        }
    }
    m_entries.push_back(std::move(entry));
}

std::optional<BuiltinFile> builtin_preset_file(std::string_view path)
{
    for (const auto& p : presets::embedded_presets())
        if (p.path == path) {
            const std::string origin = "builtin:" + std::string(path);
            return BuiltinFile { parse_json_text(std::string(p.json), origin), origin };
        }
    return std::nullopt;
}

PresetCatalog PresetCatalog::load(const std::vector<std::string>& user_dirs)
{
    PresetCatalog catalog;
    for (const auto& p : presets::embedded_presets()) {
        const auto kind = preset_kind_from_string(p.kind);
        if (!kind)
            continue;
        const std::string origin = "builtin:" + std::string(p.path);
        try {
            nlohmann::json j = parse_json_text(std::string(p.json), origin);
            const std::string stem = fs::path(std::string(p.path)).stem().string();
            catalog.add(PresetEntry { *kind, name_of(j, stem), origin, false, std::move(j) });
        } catch (const InputError& e) {
            catalog.m_errors.push_back(e.what());
        }
    }
    for (const auto& dir : user_dirs) {
        for (PresetKind kind : kAllPresetKinds) {
            const fs::path sub = fs::path(dir) / std::string(to_string(kind));
            std::error_code ec;
            if (!fs::is_directory(sub, ec))
                continue;
            std::vector<fs::path> files;
            for (const auto& entry : fs::directory_iterator(sub, ec))
                if (entry.path().extension() == ".json")
                    files.push_back(entry.path());
            std::sort(files.begin(), files.end());
            for (const auto& f : files) {
                try {
                    nlohmann::json j = parse_json_text(read_text_file(f.string()), f.string());
                    if (!j.is_object())
                        throw InputError(f.string(), "", "a preset file must hold one JSON object");
                    catalog.add(PresetEntry { kind, name_of(j, f.stem().string()), f.string(), true, std::move(j) });
                } catch (const InputError& e) {
                    catalog.m_errors.push_back(e.what());
                }
            }
        }
    }
    return catalog;
}

std::vector<std::string> PresetCatalog::default_user_dirs()
{
    std::vector<std::string> dirs;
    if (const char* env = std::getenv("PARALLAX_PRESET_PATH")) {
        std::string s = env;
        std::size_t pos = 0;
        while (pos <= s.size()) {
            const std::size_t colon = s.find(':', pos);
            const std::string part = s.substr(pos, colon == std::string::npos ? std::string::npos : colon - pos);
            if (!part.empty())
                dirs.push_back(part);
            if (colon == std::string::npos)
                break;
            pos = colon + 1;
        }
    }
    if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg)
        dirs.push_back(std::string(xdg) + "/parallax/presets");
    else if (const char* home = std::getenv("HOME"); home && *home)
        dirs.push_back(std::string(home) + "/.config/parallax/presets");
    return dirs;
}

const PresetCatalog& PresetCatalog::standard()
{
    static const PresetCatalog catalog = load(default_user_dirs());
    return catalog;
}

const PresetEntry* PresetCatalog::find(PresetKind kind, std::string_view name) const
{
    for (const auto& e : m_entries)
        if (e.kind == kind && e.name == name)
            return &e;
    return nullptr;
}

std::vector<const PresetEntry*> PresetCatalog::entries(PresetKind kind) const
{
    std::vector<const PresetEntry*> out;
    for (const auto& e : m_entries)
        if (e.kind == kind)
            out.push_back(&e);
    std::sort(out.begin(), out.end(), [](const PresetEntry* a, const PresetEntry* b) { return a->name < b->name; });
    return out;
}

std::vector<std::string> PresetCatalog::names(PresetKind kind) const
{
    std::vector<std::string> out;
    for (const auto* e : entries(kind))
        out.push_back(e->name);
    return out;
}

} // namespace parallax

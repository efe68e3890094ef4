#pragma once
// The preset JSON files of presets/, compiled into the binaries (see cmake/EmbedPresets.cmake).
#include <span>
#include <string_view>

namespace parallax::presets {

struct EmbeddedPreset {
    std::string_view kind; // "gpus", "fabrics", "clusters", "models", "scenarios"
    std::string_view path; // relative to presets/, e.g. "gpus/H100-SXM5-80GB.json"
    std::string_view json;
};

std::span<const EmbeddedPreset> embedded_presets();

} // namespace parallax::presets

// libFuzzer target for the launch-configuration importers: the first byte picks the format (or
// auto-detection), the rest is the file. Every import ends in a scenario or an InputError.
#include "io/fuzz/fuzz_common.hpp"
#include "io/import/import_scenario.hpp"
#include "io/preset_catalog.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace parallax;
    if (size == 0)
        return 0;
    constexpr ImportFormat kFormats[] = { ImportFormat::megatron_args, ImportFormat::nemo_yaml,
        ImportFormat::torchtitan_toml, ImportFormat::deepspeed_json, ImportFormat::hf_config };
    const std::size_t pick = data[0] % (std::size(kFormats) + 1);
    const std::optional<ImportFormat> format
        = pick < std::size(kFormats) ? std::optional<ImportFormat>(kFormats[pick]) : std::nullopt;
    const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
    fuzz::accepts([&] { import_launch_config(text, "fuzz.cfg", format, ImportOptions {}, PresetCatalog::standard()); });
    return 0;
}

// libFuzzer target for the preset reader: any bytes are read as a user preset of each kind (GPU,
// fabric, model, cluster), as PresetCatalog::load reads the files of a presets folder.
#include "io/fuzz/fuzz_common.hpp"
#include "io/json_reader.hpp"
#include "io/preset_catalog.hpp"
#include "io/scenario_io.hpp"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace parallax;
    const std::string text(reinterpret_cast<const char*>(data), size);
    nlohmann::json j;
    if (!fuzz::accepts([&] { j = parse_json_text(text, "preset.json"); }))
        return 0;
    const PresetCatalog& catalog = PresetCatalog::standard();
    fuzz::accepts([&] { parse_gpu(j, "gpus/x.json", ""); });
    fuzz::accepts([&] { parse_fabric(j, "fabrics/x.json", ""); });
    fuzz::accepts([&] { parse_model(j, "models/x.json", ""); });
    ScenarioRefs refs;
    fuzz::accepts([&] { resolve_cluster(j, "clusters/x.json", "", catalog, &refs); });
    return 0;
}

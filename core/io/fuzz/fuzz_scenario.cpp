// libFuzzer target for the scenario reader: any bytes are read as a scenario file; what is accepted
// must save and read back to the same scenario JSON.
#include "io/fuzz/fuzz_common.hpp"
#include "io/preset_catalog.hpp"
#include "io/scenario_io.hpp"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace parallax;
    const std::string text(reinterpret_cast<const char*>(data), size);
    const PresetCatalog& catalog = PresetCatalog::standard();
    for (ScenarioUse use : { ScenarioUse::plan, ScenarioUse::search }) {
        Scenario s;
        if (!fuzz::accepts([&] { s = parse_scenario_text(text, "fuzz.json", catalog, use); }))
            continue;
        const nlohmann::json saved = scenario_to_json(s);
        Scenario again;
        if (!fuzz::accepts([&] { again = parse_scenario(saved, "saved.json", catalog, use); }))
            fuzz::broken("a scenario that was read does not read back after saving: " + saved.dump());
        if (scenario_to_json(again) != saved)
            fuzz::broken("saving, reading and saving again changes the scenario: " + saved.dump());
    }
    return 0;
}

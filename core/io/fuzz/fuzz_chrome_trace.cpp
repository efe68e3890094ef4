// libFuzzer target for Chrome traces, both ways: any bytes are read as a measured trace (the planner's
// overlay), and any bytes used as the title of a simulated step's trace must give JSON that parses
// back and reads as a trace.
#include "io/chrome_trace.hpp"
#include "io/fuzz/fuzz_common.hpp"
#include "io/preset_catalog.hpp"
#include "io/scenario_io.hpp"
#include "viewdata/measured_trace.hpp"

#include <cstddef>
#include <cstdint>

namespace {

// One small plan, simulated once: the fuzzer varies the title, not the plan.
const parallax::SimulatedPlan& small_plan()
{
    using namespace parallax;
    static const SimulatedPlan plan = [] {
        const Scenario s = parse_scenario_text(R"({ "schema": 1, "model": "llama3-8b",
            "cluster": { "gpu": "H100-SXM5-80GB", "nodes": 1, "gpus_per_node": 8,
                         "intra_node": "nvlink4-nvswitch", "inter_node": "ib-ndr" },
            "training": { "global_batch": 4, "seq_len": 1024 },
            "strategy": { "tp": 2, "pp": 2, "dp": 2 } })",
            "small.json", PresetCatalog::standard());
        return simulate_plan(PlanContext(s.model, s.training, s.cluster), s.strategy);
    }();
    return plan;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace parallax;
    const std::string text(reinterpret_cast<const char*>(data), size);
    fuzz::accepts([&] { parse_measured_trace(text, "measured.json"); });
    // Writing and re-reading a whole step's trace costs ~50x a read: one input in eight tries it, so
    // the reader still sees most of the smoke run's inputs.
    if (size == 0 || data[0] % 8 != 0)
        return 0;

    const std::string written
        = chrome_trace(small_plan(), text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    try {
        (void)nlohmann::json::parse(written);
    } catch (const nlohmann::json::exception& e) {
        fuzz::broken(std::string("the trace written is not valid JSON: ") + e.what());
    }
    if (!fuzz::accepts([&] { parse_measured_trace(written, "written.json"); }))
        fuzz::broken("the trace written does not read back as a trace");
    return 0;
}

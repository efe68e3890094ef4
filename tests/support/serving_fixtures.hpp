#pragma once
// The serving scenario the serving tests start from, and the reader's verdict on a variant of it.
#include "io/preset_catalog.hpp"
#include "io/serving_io.hpp"
#include "spec/input_error.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace parallax::test {

// Llama 3 70B with fp8 weights and KV cache on one node of eight H100 SXM, TP 8, with `workload`.
inline nlohmann::json llama70b_fp8_on_h100_node(const nlohmann::json& workload)
{
    nlohmann::json j = nlohmann::json::parse(R"({
      "schema": 1, "model": "llama3-70b",
      "cluster": { "gpu": "H100-SXM5-80GB", "nodes": 1, "gpus_per_node": 8,
                   "intra_node": "nvlink4-nvswitch", "inter_node": "ib-ndr" },
      "serving": { "precision": { "weights": "fp8", "kv_cache": "fp8" } },
      "deployment": { "tp": 8 } })");
    j["serving"]["workload"] = workload;
    return j;
}

inline ServingScenario parse_serving(const nlohmann::json& j)
{
    return parse_serving_scenario(j, "test.json", PresetCatalog::standard());
}

// The reader's error for `j`, empty when it loads.
inline std::string serving_error_of(const nlohmann::json& j)
{
    try {
        parse_serving(j);
    } catch (const InputError& e) {
        return e.what();
    }
    return {};
}

} // namespace parallax::test

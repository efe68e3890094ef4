#pragma once
// Small helpers shared by the core tests: scenarios built in code from the built-in presets.
#include "io/preset_catalog.hpp"
#include "io/scenario_io.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace parallax::test {

inline GpuSpec gpu(const std::string& name)
{
    const PresetEntry* e = PresetCatalog::standard().find(PresetKind::gpus, name);
    return parse_gpu(e->json, e->origin, "");
}

inline FabricSpec fabric(const std::string& name)
{
    const PresetEntry* e = PresetCatalog::standard().find(PresetKind::fabrics, name);
    return parse_fabric(e->json, e->origin, "");
}

inline ModelSpec model(const std::string& name)
{
    const PresetEntry* e = PresetCatalog::standard().find(PresetKind::models, name);
    return parse_model(e->json, e->origin, "");
}

inline ClusterSpec cluster(
    const std::string& gpu_name, int nodes, int gpus_per_node, const std::string& intra, const std::string& inter)
{
    ClusterSpec c;
    c.name = "test";
    c.gpu = gpu(gpu_name);
    c.nodes = nodes;
    c.gpus_per_node = gpus_per_node;
    c.intra_node = fabric(intra);
    c.inter_node = fabric(inter);
    return c;
}

// A GPT-style model of the given shape (MHA, 4h GeLU MLP, dropout), as in Korthikanti et al. 2022.
inline ModelSpec gpt(int layers, long long hidden, int heads, long long vocab = 51200)
{
    ModelSpec m;
    m.name = "gpt-" + std::to_string(layers) + "x" + std::to_string(hidden);
    m.layers = layers;
    m.hidden = hidden;
    m.heads = heads;
    m.kv_heads = heads;
    m.ffn_hidden = 4 * hidden;
    m.vocab = vocab;
    m.ffn_act = FfnActivation::gelu;
    return m;
}

} // namespace parallax::test

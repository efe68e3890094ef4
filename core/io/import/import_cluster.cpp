#include "io/import/import_cluster.hpp"

#include "io/json_reader.hpp"
#include "spec/input_error.hpp"

namespace parallax {

using nlohmann::json;

namespace {

const PresetEntry& cluster_preset(const ImportOptions& options, const PresetCatalog& catalog)
{
    const std::string name = options.cluster.empty() ? std::string(kDefaultImportCluster) : options.cluster;
    if (const PresetEntry* e = catalog.find(PresetKind::clusters, name))
        return *e;
    std::string rule = "unknown cluster preset \"" + name + "\"";
    const std::string guess = closest_match(name, catalog.names(PresetKind::clusters));
    if (!guess.empty())
        rule += " (did you mean \"" + guess + "\"?)";
    throw InputError("--cluster", "", rule + "; `parallax-cli presets clusters` lists them");
}

// The model-parallel GPUs of one replica (tp x pp x cp), from what the file set.
long long model_parallel_gpus(const ImportDraft& d)
{
    return d.get_int("strategy.tp", 1) * d.get_int("strategy.pp", 1) * d.get_int("strategy.cp", 1);
}

// Total GPUs: --gpus, the file's nodes x GPUs per node, the product the file implies, or the default.
long long total_gpus(ImportDraft& d, const ImportOptions& options, long long gpus_per_node)
{
    if (options.gpus) {
        d.report.assumed("cluster.gpus", std::to_string(*options.gpus), "--gpus");
        return *options.gpus;
    }
    if (d.nodes) {
        if (!d.gpus_per_node)
            d.report.assumed("cluster.gpus_per_node", std::to_string(gpus_per_node),
                "the file gives the nodes but not the GPUs per node: the cluster preset's");
        return *d.nodes * gpus_per_node;
    }
    if (d.total_gpus)
        return *d.total_gpus;
    const long long mp = model_parallel_gpus(d);
    long long gpus = 0;
    std::string why;
    if (const json* dp = d.get("strategy.dp")) {
        gpus = mp * dp->get<long long>();
        why = "tp x pp x cp x dp of the file";
    } else {
        gpus = (kDefaultImportGpus + mp - 1) / mp * mp;
        why = "the file does not say how many GPUs: the default scenario's " + std::to_string(kDefaultImportGpus)
            + (gpus != kDefaultImportGpus ? ", rounded up to a multiple of tp x pp x cp" : std::string())
            + "; --gpus N sets it";
    }
    d.report.assumed("cluster.gpus", std::to_string(gpus), why);
    return gpus;
}

} // namespace

ImportedCluster finish_import_cluster(ImportDraft& d, const ImportOptions& options, const PresetCatalog& catalog)
{
    const PresetEntry& preset = cluster_preset(options, catalog);
    const json& p = preset.json;
    long long per_node = d.gpus_per_node.value_or(p.value("gpus_per_node", 8LL));
    const long long gpus = total_gpus(d, options, per_node);
    if (gpus < 1)
        throw InputError(d.report.file, "cluster.gpus", "needs at least one GPU");
    long long nodes = gpus / per_node;
    if (gpus < per_node) {
        nodes = 1;
        per_node = gpus;
    } else if (gpus % per_node != 0) {
        throw InputError(d.report.file, options.gpus ? "--gpus" : "cluster.gpus",
            std::to_string(gpus) + " GPUs do not fill whole nodes of " + std::to_string(per_node));
    }
    const long long mp = model_parallel_gpus(d);
    if (gpus % mp != 0) {
        const std::string nodes_key = d.report.source_of("cluster.nodes");
        const std::string where = options.gpus ? "--gpus"
            : d.nodes                          ? (nodes_key.empty() ? std::string("cluster.nodes") : nodes_key)
                                               : std::string("cluster.gpus");
        throw InputError(d.report.file, where,
            std::to_string(gpus) + " GPUs (" + std::to_string(nodes) + " nodes x " + std::to_string(per_node)
                + ") cannot hold tp x pp x cp = " + std::to_string(mp)
                + " GPUs per replica; give the GPU count with --gpus N");
    }
    ImportedCluster c;
    c.gpus = gpus;
    c.json["gpu"] = p.at("gpu");
    c.json["nodes"] = nodes;
    c.json["gpus_per_node"] = per_node;
    c.json["intra_node"] = p.at("intra_node");
    c.json["inter_node"] = p.at("inter_node");
    for (const char* key : { "node_overhead_W", "nodes_per_rack" })
        if (p.contains(key))
            c.json[key] = p.at(key);
    d.report.assumed("cluster", preset.name,
        options.cluster.empty() ? "the file names no GPU or network: the default cluster's GPU and fabrics; --cluster "
                                  "PRESET picks another (`parallax-cli presets clusters`)"
                                : "--cluster: its GPU and fabrics, sized to the imported GPU count");
    return c;
}

} // namespace parallax

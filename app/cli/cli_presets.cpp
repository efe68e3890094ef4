// parallax-cli presets [gpus|fabrics|clusters|models|scenarios] [--json]
#include "cli/cli_commands.hpp"
#include "cli/cli_common.hpp"
#include "cli/cli_parser.hpp"
#include "io/csv_writer.hpp"
#include "io/scenario_io.hpp"
#include "model/model_math.hpp"
#include "spec/input_error.hpp"
#include "spec/units.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>

namespace parallax::cli {

namespace {

std::string summary(const PresetEntry& e)
{
    char buf[256];
    try {
        switch (e.kind) {
        case PresetKind::gpus: {
            const GpuSpec g = parse_gpu(e.json, e.origin, "");
            std::snprintf(buf, sizeof buf, "%s, %.0f TFLOP/s bf16, %.0f GiB, %.0f GB/s, %.0f W",
                std::string(to_string(g.architecture)).c_str(), g.peak(Precision::bf16) / units::kTFLOP,
                g.memory_bytes / units::kGiB, g.memory_bw_Bps / units::kGB, g.tdp_W);
            return buf;
        }
        case PresetKind::fabrics: {
            const FabricSpec f = parse_fabric(e.json, e.origin, "");
            std::snprintf(buf, sizeof buf, "%s, %.0f GB/s per GPU, %.1f us", std::string(to_string(f.kind)).c_str(),
                f.bw_Bps / units::kGB, f.latency_s / units::kMicrosecond);
            return buf;
        }
        case PresetKind::clusters: {
            ScenarioRefs refs;
            const ClusterSpec c = resolve_cluster(e.json, e.origin, "", PresetCatalog::standard(), &refs);
            std::snprintf(buf, sizeof buf, "%d x %d %s (%s / %s)", c.nodes, c.gpus_per_node, c.gpu.name.c_str(),
                refs.intra_node.c_str(), refs.inter_node.c_str());
            return buf;
        }
        case PresetKind::models: {
            const ModelSpec m = parse_model(e.json, e.origin, "");
            std::snprintf(buf, sizeof buf, "%.1fB params%s, %d layers, hidden %lld, %d heads / %d kv",
                total_params(m) / 1e9, m.is_moe() ? " (MoE)" : "", m.layers, m.hidden, m.heads, m.kv_heads);
            return buf;
        }
        case PresetKind::scenarios:
            if (e.json.contains("description") && e.json["description"].is_string())
                return e.json["description"].get<std::string>();
            return "";
        }
    } catch (const InputError& err) {
        return std::string("INVALID: ") + err.what();
    }
    return "";
}

} // namespace

int run_presets(const QStringList& args)
{
    CommandParser cmd(QStringLiteral("Lists the built-in and user presets (user folders: $PARALLAX_PRESET_PATH, "
                                     "${XDG_CONFIG_HOME:-~/.config}/parallax/presets)."),
        QStringLiteral("KIND"), QStringLiteral("gpus, fabrics, clusters, models or scenarios (default: all)"));
    cmd.parser().addOption({ QStringLiteral("json"), QStringLiteral("Print the presets as JSON.") });
    cmd.add_csv_option();
    if (auto rc = cmd.parse(args, 0, 1))
        return *rc;
    std::vector<PresetKind> kinds;
    if (!cmd.positional(0).isEmpty()) {
        const auto k = preset_kind_from_string(cmd.positional(0).toStdString());
        if (!k) {
            print_err("parallax-cli presets: unknown kind '" + cmd.positional(0).toStdString()
                + "' (expected gpus, fabrics, clusters, models or scenarios)");
            return kBadInput;
        }
        kinds.push_back(*k);
    } else {
        kinds.assign(std::begin(kAllPresetKinds), std::end(kAllPresetKinds));
    }
    const PresetCatalog& catalog = PresetCatalog::standard();
    for (const auto& err : catalog.load_errors())
        print_err("warning: skipped preset: " + err);
    if (cmd.parser().isSet(QStringLiteral("json"))) {
        nlohmann::json out = nlohmann::json::object();
        for (PresetKind k : kinds) {
            nlohmann::json list = nlohmann::json::array();
            for (const PresetEntry* e : catalog.entries(k))
                list.push_back(
                    { { "name", e->name }, { "origin", e->origin }, { "user", e->user }, { "preset", e->json } });
            out[std::string(to_string(k))] = list;
        }
        print_out(out.dump(2) + "\n");
        return kOk;
    }
    if (cmd.csv()) {
        CsvWriter csv { "kind", "name", "user", "origin", "summary" };
        for (PresetKind k : kinds)
            for (const PresetEntry* e : catalog.entries(k))
                csv.field(to_string(k))
                    .field(e->name)
                    .integer(e->user ? 1 : 0)
                    .field(e->origin)
                    .field(summary(*e))
                    .end_row();
        print_out(csv.text());
        return kOk;
    }
    for (PresetKind k : kinds) {
        print_out(std::string(to_string(k)) + ":\n");
        for (const PresetEntry* e : catalog.entries(k)) {
            char line[512];
            std::snprintf(
                line, sizeof line, "  %-28s %s%s\n", e->name.c_str(), e->user ? "[user] " : "", summary(*e).c_str());
            print_out(line);
        }
    }
    return kOk;
}

} // namespace parallax::cli

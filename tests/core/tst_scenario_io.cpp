// Scenario files (docs/scenario-format.md): every preset loads, load -> save -> load gives the same scenario, and
// every kind of bad input is an InputError that names the file, the key path and the rule.
#include "io/number_format.hpp"
#include "io/preset_catalog.hpp"
#include "io/scenario_io.hpp"
#include "spec/input_error.hpp"
#include "spec/strategy_rules.hpp"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

using namespace parallax;
using nlohmann::json;

namespace {

const PresetCatalog& catalog()
{
    return PresetCatalog::standard();
}

QString qs(const std::string& s)
{
    return QString::fromStdString(s);
}

// ---- Field-by-field comparison: a readable list of differences, empty when equal. ----

class Differ {
public:
    QStringList out;

    void str(const QString& path, const std::string& a, const std::string& b)
    {
        if (a != b)
            out << path + QStringLiteral(": \"") + qs(a) + QStringLiteral("\" != \"") + qs(b) + QLatin1Char('"');
    }
    void integer(const QString& path, long long a, long long b)
    {
        if (a != b)
            out << path + QStringLiteral(": ") + QString::number(a) + QStringLiteral(" != ") + QString::number(b);
    }
    void boolean(const QString& path, bool a, bool b)
    {
        if (a != b)
            out << path + QStringLiteral(": ") + QLatin1String(a ? "true" : "false") + QStringLiteral(" != ")
                    + QLatin1String(b ? "true" : "false");
    }
    // Numbers pass through unit conversions (GiB <-> bytes, us <-> s) on the way; allow the last bits.
    void number(const QString& path, double a, double b)
    {
        const double scale = std::max({ std::fabs(a), std::fabs(b), 1e-300 });
        if (std::fabs(a - b) > 1e-12 * scale)
            out << path + QStringLiteral(": ") + QString::number(a, 'g', 17) + QStringLiteral(" != ")
                    + QString::number(b, 'g', 17);
    }
    template <class T> void presence(const QString& path, const std::optional<T>& a, const std::optional<T>& b)
    {
        if (a.has_value() != b.has_value())
            out << path + QStringLiteral(": ") + QLatin1String(a ? "set" : "unset") + QStringLiteral(" != ")
                    + QLatin1String(b ? "set" : "unset");
    }
    void optional_number(const QString& path, const std::optional<double>& a, const std::optional<double>& b)
    {
        presence(path, a, b);
        if (a && b)
            number(path, *a, *b);
    }
    void optional_integer(const QString& path, const std::optional<long long>& a, const std::optional<long long>& b)
    {
        presence(path, a, b);
        if (a && b)
            integer(path, *a, *b);
    }

    void model(const QString& p, const ModelSpec& a, const ModelSpec& b)
    {
        str(p + QStringLiteral(".name"), a.name, b.name);
        integer(p + QStringLiteral(".layers"), a.layers, b.layers);
        integer(p + QStringLiteral(".hidden"), a.hidden, b.hidden);
        integer(p + QStringLiteral(".heads"), a.heads, b.heads);
        integer(p + QStringLiteral(".kv_heads"), a.kv_heads, b.kv_heads);
        integer(p + QStringLiteral(".ffn_hidden"), a.ffn_hidden, b.ffn_hidden);
        integer(p + QStringLiteral(".vocab"), a.vocab, b.vocab);
        integer(p + QStringLiteral(".ffn_act"), static_cast<int>(a.ffn_act), static_cast<int>(b.ffn_act));
        boolean(p + QStringLiteral(".tied_embeddings"), a.tied_embeddings, b.tied_embeddings);
        presence(p + QStringLiteral(".dropout"), a.dropout, b.dropout);
        if (a.dropout && b.dropout)
            boolean(p + QStringLiteral(".dropout"), *a.dropout, *b.dropout);
        presence(p + QStringLiteral(".head_dim"), a.head_dim_override, b.head_dim_override);
        if (a.head_dim_override && b.head_dim_override)
            integer(p + QStringLiteral(".head_dim"), *a.head_dim_override, *b.head_dim_override);
        presence(p + QStringLiteral(".attention"), a.mla, b.mla);
        if (a.mla && b.mla) {
            const QString q = p + QStringLiteral(".attention.");
            integer(q + QStringLiteral("q_lora_rank"), a.mla->q_lora_rank, b.mla->q_lora_rank);
            integer(q + QStringLiteral("kv_lora_rank"), a.mla->kv_lora_rank, b.mla->kv_lora_rank);
            integer(q + QStringLiteral("qk_nope_head_dim"), a.mla->qk_nope_head_dim, b.mla->qk_nope_head_dim);
            integer(q + QStringLiteral("qk_rope_head_dim"), a.mla->qk_rope_head_dim, b.mla->qk_rope_head_dim);
            integer(q + QStringLiteral("v_head_dim"), a.mla->v_head_dim, b.mla->v_head_dim);
        }
        presence(p + QStringLiteral(".moe"), a.moe, b.moe);
        if (a.moe && b.moe) {
            const QString q = p + QStringLiteral(".moe.");
            integer(q + QStringLiteral("experts"), a.moe->experts, b.moe->experts);
            integer(q + QStringLiteral("top_k"), a.moe->top_k, b.moe->top_k);
            integer(q + QStringLiteral("expert_ffn_hidden"), a.moe->expert_ffn_hidden, b.moe->expert_ffn_hidden);
            integer(q + QStringLiteral("shared_experts"), a.moe->shared_experts, b.moe->shared_experts);
            integer(q + QStringLiteral("moe_layer_freq"), a.moe->moe_layer_freq, b.moe->moe_layer_freq);
            integer(q + QStringLiteral("first_dense_layers"), a.moe->first_dense_layers, b.moe->first_dense_layers);
            optional_number(q + QStringLiteral("capacity_factor"), a.moe->capacity_factor, b.moe->capacity_factor);
        }
        optional_number(p + QStringLiteral(".params_B"), a.params_B, b.params_B);
        str(p + QStringLiteral(".source"), a.source, b.source);
    }

    void gpu(const QString& p, const GpuSpec& a, const GpuSpec& b)
    {
        str(p + QStringLiteral(".name"), a.name, b.name);
        integer(
            p + QStringLiteral(".architecture"), static_cast<int>(a.architecture), static_cast<int>(b.architecture));
        for (int i = 0; i < kPrecisionCount; ++i)
            number(p + QStringLiteral(".peak_TFLOPs.") + qs(std::string(kPrecisionNames[i])), a.peak_flops[i],
                b.peak_flops[i]);
        number(p + QStringLiteral(".memory_GiB"), a.memory_bytes, b.memory_bytes);
        number(p + QStringLiteral(".memory_bw_GBps"), a.memory_bw_Bps, b.memory_bw_Bps);
        number(p + QStringLiteral(".tdp_W"), a.tdp_W, b.tdp_W);
        number(p + QStringLiteral(".idle_W"), a.idle_W, b.idle_W);
        number(p + QStringLiteral(".power_limit_W"), a.power_limit_W, b.power_limit_W);
        integer(p + QStringLiteral(".sm_count"), a.sm_count, b.sm_count);
        number(p + QStringLiteral(".clock_MHz"), a.clock_MHz, b.clock_MHz);
        number(p + QStringLiteral(".max_clock_MHz"), a.max_clock_MHz, b.max_clock_MHz);
        number(p + QStringLiteral(".active_idle_W"), a.active_idle_W, b.active_idle_W);
        str(p + QStringLiteral(".source"), a.source, b.source);
    }

    void fabric(const QString& p, const FabricSpec& a, const FabricSpec& b)
    {
        str(p + QStringLiteral(".name"), a.name, b.name);
        integer(p + QStringLiteral(".kind"), static_cast<int>(a.kind), static_cast<int>(b.kind));
        number(p + QStringLiteral(".bw_GBps"), a.bw_Bps, b.bw_Bps);
        number(p + QStringLiteral(".latency_us"), a.latency_s, b.latency_s);
        boolean(p + QStringLiteral(".rail_optimized"), a.rail_optimized, b.rail_optimized);
        number(p + QStringLiteral(".oversubscription"), a.oversubscription, b.oversubscription);
        str(p + QStringLiteral(".source"), a.source, b.source);
    }

    void cluster(const QString& p, const ClusterSpec& a, const ClusterSpec& b)
    {
        str(p + QStringLiteral(".name"), a.name, b.name);
        gpu(p + QStringLiteral(".gpu"), a.gpu, b.gpu);
        integer(p + QStringLiteral(".nodes"), a.nodes, b.nodes);
        integer(p + QStringLiteral(".gpus_per_node"), a.gpus_per_node, b.gpus_per_node);
        fabric(p + QStringLiteral(".intra_node"), a.intra_node, b.intra_node);
        fabric(p + QStringLiteral(".inter_node"), a.inter_node, b.inter_node);
        optional_number(p + QStringLiteral(".node_overhead_W"), a.node_overhead_W, b.node_overhead_W);
        optional_number(p + QStringLiteral(".host_memory_GB"), a.host_memory_GB, b.host_memory_GB);
        presence(p + QStringLiteral(".nodes_per_rack"), a.nodes_per_rack, b.nodes_per_rack);
        if (a.nodes_per_rack && b.nodes_per_rack)
            integer(p + QStringLiteral(".nodes_per_rack"), *a.nodes_per_rack, *b.nodes_per_rack);
        str(p + QStringLiteral(".source"), a.source, b.source);
    }

    void training(const QString& p, const TrainingSpec& a, const TrainingSpec& b)
    {
        integer(p + QStringLiteral(".global_batch"), a.global_batch, b.global_batch);
        integer(p + QStringLiteral(".seq_len"), a.seq_len, b.seq_len);
        integer(p + QStringLiteral(".precision"), static_cast<int>(a.precision), static_cast<int>(b.precision));
        boolean(p + QStringLiteral(".flash_attention"), a.flash_attention, b.flash_attention);
        boolean(p + QStringLiteral(".grad_reduce_in_fp32"), a.grad_reduce_in_fp32, b.grad_reduce_in_fp32);
        boolean(p + QStringLiteral(".grad_reduce_in_bf16"), a.grad_reduce_in_bf16, b.grad_reduce_in_bf16);
        integer(p + QStringLiteral(".framework"), static_cast<int>(a.framework), static_cast<int>(b.framework));
        str(p + QStringLiteral(".software"), a.software ? std::string(a.software->id) : std::string(),
            b.software ? std::string(b.software->id) : std::string());
        optional_number(p + QStringLiteral(".tokens_to_train"), a.tokens_to_train, b.tokens_to_train);
        integer(p + QStringLiteral(".fp8_scaling"), static_cast<int>(a.fp8_scaling), static_cast<int>(b.fp8_scaling));
        number(p + QStringLiteral(".moe_imbalance"), a.moe_imbalance, b.moe_imbalance);
        integer(p + QStringLiteral(".moe_expert_load.size"), static_cast<long long>(a.moe_expert_load.size()),
            static_cast<long long>(b.moe_expert_load.size()));
        for (std::size_t i = 0; i < std::min(a.moe_expert_load.size(), b.moe_expert_load.size()); ++i)
            number(p + QStringLiteral(".moe_expert_load[%1]").arg(i), a.moe_expert_load[i], b.moe_expert_load[i]);
        integer(p + QStringLiteral(".moe_dispatcher"), static_cast<int>(a.moe_dispatcher),
            static_cast<int>(b.moe_dispatcher));
        integer(p + QStringLiteral(".cuda_graphs"), static_cast<int>(a.cuda_graphs), static_cast<int>(b.cuda_graphs));
        integer(p + QStringLiteral(".attention_kernel"),
            a.attention_kernel ? static_cast<int>(*a.attention_kernel) : -1,
            b.attention_kernel ? static_cast<int>(*b.attention_kernel) : -1);
        number(p + QStringLiteral(".clock_MHz"), a.clock_MHz, b.clock_MHz);
        integer(p + QStringLiteral(".stage_clock_MHz.size"), static_cast<long long>(a.stage_clock_MHz.size()),
            static_cast<long long>(b.stage_clock_MHz.size()));
        for (std::size_t i = 0; i < a.stage_clock_MHz.size() && i < b.stage_clock_MHz.size(); ++i)
            number(p + QStringLiteral(".stage_clock_MHz.") + QString::number(i), a.stage_clock_MHz[i],
                b.stage_clock_MHz[i]);
        number(p + QStringLiteral(".power_cap_W"), a.power_cap_W, b.power_cap_W);
        optional_number(p + QStringLiteral(".inlet_temp_C"), a.inlet_temp_C, b.inlet_temp_C);
    }

    void strategy(const QString& p, const Strategy& a, const Strategy& b)
    {
        integer(p + QStringLiteral(".tp"), a.tp, b.tp);
        integer(p + QStringLiteral(".pp"), a.pp, b.pp);
        integer(p + QStringLiteral(".dp"), a.dp, b.dp);
        integer(p + QStringLiteral(".cp"), a.cp, b.cp);
        integer(p + QStringLiteral(".ep"), a.ep, b.ep);
        integer(p + QStringLiteral(".vpp"), a.vpp, b.vpp);
        integer(p + QStringLiteral(".micro_batch"), a.micro_batch, b.micro_batch);
        boolean(p + QStringLiteral(".sequence_parallel"), a.sequence_parallel, b.sequence_parallel);
        integer(p + QStringLiteral(".recompute"), static_cast<int>(a.recompute), static_cast<int>(b.recompute));
        integer(p + QStringLiteral(".recompute_modules"), a.recompute_modules, b.recompute_modules);
        integer(p + QStringLiteral(".zero"), a.zero, b.zero);
        integer(p + QStringLiteral(".schedule"), static_cast<int>(a.schedule), static_cast<int>(b.schedule));
        integer(p + QStringLiteral(".optimizer"), static_cast<int>(a.optimizer), static_cast<int>(b.optimizer));
        boolean(p + QStringLiteral(".offload_optimizer"), a.offload_optimizer, b.offload_optimizer);
        str(p + QStringLiteral(".rank_order"), to_string(a.rank_order), to_string(b.rank_order));
        integer(p + QStringLiteral(".first_stage_layers"), a.first_stage_layers, b.first_stage_layers);
        integer(p + QStringLiteral(".last_stage_layers"), a.last_stage_layers, b.last_stage_layers);
        integer(p + QStringLiteral(".expert_tp"), a.expert_tp, b.expert_tp);
        integer(p + QStringLiteral(".cp_kind"), static_cast<int>(a.cp_kind), static_cast<int>(b.cp_kind));
        boolean(p + QStringLiteral(".overlap_grad_reduce"), a.overlap_grad_reduce, b.overlap_grad_reduce);
        boolean(p + QStringLiteral(".overlap_param_gather"), a.overlap_param_gather, b.overlap_param_gather);
        boolean(p + QStringLiteral(".tp_comm_overlap"), a.tp_comm_overlap, b.tp_comm_overlap);
        boolean(p + QStringLiteral(".gradient_release"), a.gradient_release, b.gradient_release);
        boolean(p + QStringLiteral(".ep_overlap"), a.ep_overlap, b.ep_overlap);
        // Catches fields added to Strategy after this comparison was written.
        if (out.isEmpty() && !(a == b))
            out << p + QStringLiteral(": Strategy::operator== differs");
    }

    void search(const QString& p, const std::optional<SearchSpec>& a, const std::optional<SearchSpec>& b)
    {
        presence(p, a, b);
        if (!a || !b)
            return;
        integer(p + QStringLiteral(".fix.size"), static_cast<long long>(a->fix.size()),
            static_cast<long long>(b->fix.size()));
        for (const auto& [k, v] : a->fix) {
            const auto it = b->fix.find(k);
            if (it == b->fix.end())
                out << p + QStringLiteral(".fix.") + qs(k) + QStringLiteral(": missing after reload");
            else
                str(p + QStringLiteral(".fix.") + qs(k), v, it->second);
        }
        optional_number(p + QStringLiteral(".limits.memory_headroom"), a->min_memory_headroom_fraction,
            b->min_memory_headroom_fraction);
        optional_integer(p + QStringLiteral(".limits.max_gpus"), a->max_gpus, b->max_gpus);
        optional_number(p + QStringLiteral(".limits.power_budget_kW"), a->power_budget_kW, b->power_budget_kW);
        optional_number(p + QStringLiteral(".limits.max_slowdown"), a->max_slowdown, b->max_slowdown);
        str(p + QStringLiteral(".objective"), a->objective, b->objective);
    }

    void scenario(const Scenario& a, const Scenario& b)
    {
        integer(QStringLiteral("schema"), a.schema, b.schema);
        str(QStringLiteral("description"), a.description, b.description);
        model(QStringLiteral("model"), a.model, b.model);
        cluster(QStringLiteral("cluster"), a.cluster, b.cluster);
        training(QStringLiteral("training"), a.training, b.training);
        strategy(QStringLiteral("strategy"), a.strategy, b.strategy);
        boolean(QStringLiteral("dp_derived"), a.dp_derived, b.dp_derived);
        search(QStringLiteral("search"), a.search, b.search);
        str(QStringLiteral("refs.model"), a.refs.model, b.refs.model);
        str(QStringLiteral("refs.cluster"), a.refs.cluster, b.refs.cluster);
        str(QStringLiteral("refs.gpu"), a.refs.gpu, b.refs.gpu);
        str(QStringLiteral("refs.intra_node"), a.refs.intra_node, b.refs.intra_node);
        str(QStringLiteral("refs.inter_node"), a.refs.inter_node, b.refs.inter_node);
    }
};

QStringList scenario_diff(const Scenario& a, const Scenario& b)
{
    Differ d;
    d.scenario(a, b);
    return d.out;
}

// ---- Scenario texts ----

// A valid minimal scenario made of presets: llama3-8b (32 layers, 32 heads, 8 KV heads, FFN 14336)
// on 16 H100, TP 2 x PP 2 x DP 4, 16 micro-batches per step.
const char* const kBase = R"({
  "schema": 1,
  "model": "llama3-8b",
  "cluster": { "gpu": "H100-SXM5-80GB", "nodes": 2, "gpus_per_node": 8,
               "intra_node": "nvlink4-nvswitch", "inter_node": "ib-ndr" },
  "training": { "global_batch": 64, "seq_len": 4096, "precision": "bf16" },
  "strategy": { "tp": 2, "pp": 2, "dp": 4, "micro_batch": 1 }
})";

// Everything inline: an MoE model with multi-head latent attention, a cluster with an inline GPU and
// Inline fabrics, every strategy key set away from its default, and a search block.
const char* const kInline = R"({
  "schema": 1,
  "description": "inline everything",
  "model": {
    "name": "mini-moe", "layers": 8, "hidden": 1024, "heads": 16, "kv_heads": 16, "ffn_hidden": 4096,
    "vocab": 32000, "ffn_act": "swiglu", "tied_embeddings": true, "dropout": false,
    "attention": { "kind": "mla", "q_lora_rank": 256, "kv_lora_rank": 128, "qk_nope_head_dim": 64,
                   "qk_rope_head_dim": 32, "v_head_dim": 64 },
    "moe": { "experts": 16, "top_k": 2, "expert_ffn_hidden": 512, "shared_experts": 1, "moe_layer_freq": 2,
             "first_dense_layers": 1, "capacity_factor": 1.25 },
    "params_B": 0.5,
    "source": "made up for a test"
  },
  "cluster": {
    "name": "lab",
    "gpu": { "name": "TestGPU", "architecture": "hopper",
             "peak_TFLOPs": { "fp32": 60.5, "tf32": 400, "bf16": 800.25, "fp16": 800.25, "fp8": 1600.5, "fp4": null },
             "memory_GiB": 96.3, "memory_bw_GBps": 4000.7, "tdp_W": 700, "idle_W": 80.5, "power_limit_W": 610.5, "sm_count": 132,
             "clock_MHz": 1755, "max_clock_MHz": 1980, "active_idle_W": 150.5, "source": { "peak_TFLOPs": "datasheet", "memory_GiB": "nvidia-smi" } },
    "nodes": 2, "gpus_per_node": 8,
    "intra_node": { "name": "nvl", "kind": "nvswitch", "bw_GBps": 450.5, "latency_us": 2.7,
                    "rail_optimized": false, "oversubscription": 1 },
    "inter_node": { "kind": "ib", "bw_GBps": 50, "latency_us": 8.3, "oversubscription": 2.5, "source": "estimate" },
    "node_overhead_W": 2500.5, "nodes_per_rack": 2, "host_memory_GB": 1536.5,
    "source": "lab notes"
  },
  "training": { "global_batch": 64, "seq_len": 4096, "precision": "fp8", "flash_attention": false, "framework": "torchtitan",
                "tokens_to_train": 1e12, "moe_imbalance": 1.3, "moe_dispatcher": "deepep", "cuda_graphs": "layers",
                "moe_expert_load": [3, 1, 1, 1, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0.5],
                "clock_MHz": 1500.5, "stage_clock_MHz": [1600, 1400.5], "power_cap_W": 600.5,
                "inlet_temp_C": 31.5 },
  "strategy": { "tp": 2, "pp": 2, "dp": 4, "cp": 1, "ep": 4, "vpp": 2, "micro_batch": 2,
                "sequence_parallel": true, "recompute": "full", "zero": 1, "schedule": "interleaved",
                "optimizer": "adam8bit", "offload_optimizer": true, "rank_order": "tp-ep-cp-dp-pp",
                "expert_tp": 1, "cp_kind": "all-to-all", "overlap_grad_reduce": false,
                "overlap_param_gather": false, "tp_comm_overlap": true, "ep_overlap": true },
  "search": { "fix": { "tp": 2, "schedule": "interleaved", "sequence_parallel": true },
              "limits": { "memory_headroom": 0.1, "max_gpus": 64, "power_budget_kW": 25.5, "max_slowdown": 0.05 },
              "objective": "energy" }
})";

// An inline dense GQA model with a head_dim override on a cluster preset; dp derived, pipeline
// stage overrides, no schedule given.
const char* const kInlineDense = R"({
  "schema": 1,
  "model": { "name": "gqa-1b", "layers": 16, "hidden": 2048, "heads": 16, "kv_heads": 4, "head_dim": 256,
             "ffn_hidden": 5632, "vocab": 50304, "ffn_act": "gelu", "tied_embeddings": false, "dropout": true },
  "cluster": "dgx-h100-superpod",
  "training": { "global_batch": 254, "seq_len": 2048 },
  "strategy": { "tp": 2, "pp": 4, "first_stage_layers": 3, "last_stage_layers": 3, "optimizer": "lion", "zero": 3 },
  "search": {}
})";

// kBase with a JSON merge patch (RFC 7386: null deletes a key) applied, as text.
QString patched(const char* patch, const char* base = kBase)
{
    json j = json::parse(base);
    j.merge_patch(json::parse(patch));
    return qs(j.dump(2));
}

QString patched_inline(const char* patch)
{
    return patched(patch, kInline);
}

const QString kLabel = QStringLiteral("rows/bad-scenario.json");

} // namespace

class TestScenarioIo : public QObject {
    Q_OBJECT
private slots:
    void catalogLoadsWithoutErrors();
    void searchUseSkipsTheExampleStrategy();
    void everyScenarioPresetLoads_data();
    void everyScenarioPresetLoads();
    void diffDetectsChanges();
    void roundTripPresets_data();
    void roundTripPresets();
    void roundTripInline_data();
    void roundTripInline();
    void savedPresetNamesStayNames();
    void saveToFileAndReload_data();
    void saveToFileAndReload();
    void saveToMissingFolderFails();
    void badInput_data();
    void badInput();
    void syntaxErrorHasLineAndColumn();
    void numberOverflowIsInputError_data();
    void numberOverflowIsInputError();
    void missingFileNamesPath();
    void unknownScenarioPreset();
    void unevenStagesAreValidWithWarning_data();
    void unevenStagesAreValidWithWarning();
    void fewerLayersThanChunksIsError();
    void documentedDefaults();
    void dpDerivedFromGpuCount();
    void vppImpliesInterleaved();
    void explicitScheduleWithVppKept();
    void numberFormatMatchesPrintf();
};

void TestScenarioIo::catalogLoadsWithoutErrors()
{
    QVERIFY2(catalog().load_errors().empty(),
        catalog().load_errors().empty() ? "" : catalog().load_errors().front().c_str());
    QVERIFY(catalog().names(PresetKind::scenarios).size() >= 5);
    QVERIFY(catalog().find(PresetKind::scenarios, "default") != nullptr);
}

void TestScenarioIo::everyScenarioPresetLoads_data()
{
    QTest::addColumn<QString>("name");
    for (const auto& n : catalog().names(PresetKind::scenarios))
        QTest::newRow(n.c_str()) << qs(n);
}

void TestScenarioIo::everyScenarioPresetLoads()
{
    QFETCH(QString, name);
    try {
        const Scenario s = load_scenario_preset(name.toStdString(), catalog());
        QCOMPARE(s.schema, 1);
        QVERIFY(!s.model.name.empty());
        QVERIFY(s.model.layers > 0);
        QVERIFY(s.cluster.total_gpus() > 0);
        QCOMPARE(s.strategy.total_gpus(), s.cluster.total_gpus());
        QVERIFY(s.cluster.gpu.supports(s.training.precision));
        QVERIFY(s.training.global_batch % (static_cast<long long>(s.strategy.micro_batch) * s.strategy.dp) == 0);
        validate_scenario(s, "again"); // the loaded scenario passes the validator on its own
    } catch (const InputError& e) {
        QFAIL(e.what());
    }
}

void TestScenarioIo::diffDetectsChanges()
{
    // The comparison must not be vacuous: each kind of change is reported with its key path.
    const Scenario a = parse_scenario_text(kInline, "a", catalog());
    QCOMPARE(scenario_diff(a, a), QStringList());
    struct Change {
        const char* path;
        void (*apply)(Scenario&);
    };
    const Change changes[] = {
        { "model.moe.capacity_factor", [](Scenario& s) { s.model.moe->capacity_factor.reset(); } },
        { "model.attention.kv_lora_rank", [](Scenario& s) { s.model.mla->kv_lora_rank = 64; } },
        { "cluster.gpu.peak_TFLOPs.fp8", [](Scenario& s) { s.cluster.gpu.peak_flops[4] *= 1.001; } },
        { "cluster.inter_node.oversubscription", [](Scenario& s) { s.cluster.inter_node.oversubscription = 1; } },
        { "training.tokens_to_train", [](Scenario& s) { s.training.tokens_to_train.reset(); } },
        { "training.framework", [](Scenario& s) { s.training.framework = Framework::megatron; } },
        { "training.moe_imbalance", [](Scenario& s) { s.training.moe_imbalance = 1; } },
        { "training.moe_expert_load[1]", [](Scenario& s) { s.training.moe_expert_load[1] = 2; } },
        { "training.moe_dispatcher", [](Scenario& s) { s.training.moe_dispatcher = MoeDispatcher::all_to_all; } },
        { "training.cuda_graphs", [](Scenario& s) { s.training.cuda_graphs = CudaGraphs::none; } },
        { "strategy.ep_overlap", [](Scenario& s) { s.strategy.ep_overlap = false; } },
        { "cluster.gpu.power_limit_W", [](Scenario& s) { s.cluster.gpu.power_limit_W = 0; } },
        { "strategy.rank_order", [](Scenario& s) { s.strategy.rank_order = RankOrder {}; } },
        { "dp_derived", [](Scenario& s) { s.dp_derived = !s.dp_derived; } },
        { "search.fix.size", [](Scenario& s) { s.search->fix.erase("tp"); } },
        { "search.objective", [](Scenario& s) { s.search->objective = "throughput"; } },
    };
    for (const auto& c : changes) {
        Scenario b = a;
        c.apply(b);
        const QStringList d = scenario_diff(a, b);
        QVERIFY2(!d.isEmpty(), c.path);
        QVERIFY2(d.first().startsWith(QLatin1String(c.path)), qPrintable(d.join(QLatin1Char('\n'))));
    }
}

void TestScenarioIo::roundTripPresets_data()
{
    QTest::addColumn<QString>("name");
    for (const auto& n : catalog().names(PresetKind::scenarios))
        QTest::newRow(n.c_str()) << qs(n);
}

void TestScenarioIo::roundTripPresets()
{
    QFETCH(QString, name);
    try {
        const Scenario a = load_scenario_preset(name.toStdString(), catalog());
        const json saved = scenario_to_json(a);
        const Scenario b = parse_scenario(saved, "roundtrip.json", catalog());
        QCOMPARE(scenario_diff(a, b), QStringList());
        // Through text as well (what a file holds), and saving again gives the same JSON.
        const Scenario c = parse_scenario_text(saved.dump(2), "roundtrip.json", catalog());
        QCOMPARE(scenario_diff(a, c), QStringList());
        QCOMPARE(qs(scenario_to_json(c).dump(2)), qs(saved.dump(2)));
    } catch (const InputError& e) {
        QFAIL(e.what());
    }
}

void TestScenarioIo::roundTripInline_data()
{
    QTest::addColumn<QString>("text");
    QTest::newRow("base (presets by name)") << qs(kBase);
    QTest::newRow("inline MoE+MLA model, inline GPU and fabrics, search") << qs(kInline);
    QTest::newRow("inline dense GQA with head_dim, cluster preset, dp derived") << qs(kInlineDense);
    QTest::newRow("no strategy at all") << patched(R"({"strategy": null})");
    QTest::newRow("framework release") << patched(R"({"training": {"software": "nemo-24.03"}})");
    QTest::newRow("fp32 gradient reduction") << patched(R"({"training": {"grad_reduce_in_fp32": true}})");
    QTest::newRow("bf16 gradient buffers") << patched(R"({"training": {"grad_reduce_in_bf16": true}})");
    QTest::newRow("recompute modules") << patched(
        R"({"strategy": {"recompute": "selective", "recompute_modules": ["layernorm", "moe_act"]}})");
    QTest::newRow("inline cluster, preset GPU, inline fabrics")
        << patched(R"({"cluster": {"intra_node": {"bw_GBps": 300, "latency_us": 3},
                                   "inter_node": {"bw_GBps": 25, "latency_us": 10, "kind": "roce",
                                                  "rail_optimized": false}}})");
    QTest::newRow("inline cluster, inline GPU, preset fabrics") << patched(R"({"cluster": {"gpu": {
        "name": "G", "peak_TFLOPs": {"bf16": 500}, "memory_GiB": 48, "memory_bw_GBps": 1000,
        "tdp_W": 300, "idle_W": 30}}})");
    QTest::newRow("search fix only") << patched(R"({"search": {"fix": {"pp": 2, "recompute": "full"}}})");
    QTest::newRow("MoE parallel folding: EP over the TP x DP ranks") << patched_inline(
        R"({"model": {"moe": {"experts": 24}}, "training": {"moe_expert_load": null}, "strategy": {"ep": 8, "expert_tp": 1}})");
    QTest::newRow("MoE dispatcher, CUDA graphs, EP overlap") << patched_inline(
        R"({"training": {"moe_dispatcher": "deepep", "cuda_graphs": "layers"}, "strategy": {"ep": 2, "ep_overlap": true}})");
    QTest::newRow("FlashAttention-2 kernel") << patched(R"({"training": {"attention_kernel": "flash2"}})");
    QTest::newRow("best attention kernel under torchtitan")
        << patched(R"({"training": {"attention_kernel": "best", "framework": "torchtitan"}})");
}

void TestScenarioIo::roundTripInline()
{
    QFETCH(QString, text);
    try {
        const Scenario a = parse_scenario_text(text.toStdString(), "inline.json", catalog());
        const json saved = scenario_to_json(a);
        const Scenario b = parse_scenario_text(saved.dump(2), "saved.json", catalog());
        QCOMPARE(scenario_diff(a, b), QStringList());
        QCOMPARE(qs(scenario_to_json(b).dump(2)), qs(saved.dump(2)));
    } catch (const InputError& e) {
        QFAIL(e.what());
    }
}

void TestScenarioIo::savedPresetNamesStayNames()
{
    // Saving writes preset references back as names, and inline objects as objects.
    const Scenario base = parse_scenario_text(kBase, "base.json", catalog());
    const json j = scenario_to_json(base);
    QVERIFY(j["model"].is_string());
    QCOMPARE(qs(j["model"].get<std::string>()), QStringLiteral("llama3-8b"));
    QCOMPARE(qs(j["cluster"]["gpu"].get<std::string>()), QStringLiteral("H100-SXM5-80GB"));
    QCOMPARE(qs(j["cluster"]["intra_node"].get<std::string>()), QStringLiteral("nvlink4-nvswitch"));
    QCOMPARE(qs(j["cluster"]["inter_node"].get<std::string>()), QStringLiteral("ib-ndr"));
    QCOMPARE(j["strategy"]["dp"].get<int>(), 4); // dp was given, so it is written

    const Scenario inl = parse_scenario_text(kInline, "inline.json", catalog());
    const json k = scenario_to_json(inl);
    QVERIFY(k["model"].is_object());
    QVERIFY(k["model"]["moe"].is_object());
    QVERIFY(k["model"]["attention"].is_object());
    QVERIFY(k["cluster"]["gpu"].is_object());
    QVERIFY(k["cluster"]["intra_node"].is_object());
    QVERIFY(k["cluster"]["inter_node"].is_object());

    const Scenario dense = parse_scenario_text(kInlineDense, "dense.json", catalog());
    const json d = scenario_to_json(dense);
    QCOMPARE(qs(d["cluster"].get<std::string>()), QStringLiteral("dgx-h100-superpod"));
    QVERIFY2(!d["strategy"].contains("dp"), "a derived dp is not written, so it is derived again on load");
}

void TestScenarioIo::saveToFileAndReload_data()
{
    QTest::addColumn<QString>("text");
    for (const auto& n : catalog().names(PresetKind::scenarios))
        QTest::newRow(n.c_str()) << qs(catalog().find(PresetKind::scenarios, n)->json.dump());
    QTest::newRow("inline") << qs(kInline);
    QTest::newRow("inline dense") << qs(kInlineDense);
}

void TestScenarioIo::saveToFileAndReload()
{
    QFETCH(QString, text);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string path = dir.filePath(QStringLiteral("saved scenario.json")).toStdString();
    try {
        const Scenario a = parse_scenario_text(text.toStdString(), "in.json", catalog());
        save_scenario_file(path, a);
        const Scenario b = load_scenario_file(path, catalog());
        QCOMPARE(scenario_diff(a, b), QStringList());
        // Saving over an existing file replaces it and leaves no temporary file behind.
        save_scenario_file(path, b);
        const Scenario c = load_scenario_file(path, catalog());
        QCOMPARE(scenario_diff(a, c), QStringList());
    } catch (const InputError& e) {
        QFAIL(e.what());
    }
    QCOMPARE(
        QDir(dir.path()).entryList(QDir::Files | QDir::Hidden), QStringList { QStringLiteral("saved scenario.json") });
}

void TestScenarioIo::saveToMissingFolderFails()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const Scenario a = parse_scenario_text(kBase, "base.json", catalog());
    const std::string path = dir.filePath(QStringLiteral("no/such/folder/x.json")).toStdString();
    try {
        save_scenario_file(path, a);
        QFAIL("saving into a missing folder must throw");
    } catch (const InputError& e) {
        QCOMPARE(qs(e.file()), qs(path));
        QVERIFY(qs(e.what()).contains(qs(path)));
    }
    QVERIFY(!QFile::exists(qs(path)));
}

void TestScenarioIo::badInput_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("key");
    QTest::addColumn<QString>("rule");

    // Syntax.
    const QString base = qs(kBase);
    QTest::newRow("truncated JSON") << base.left(base.size() / 2) << QString()
                                    << QStringLiteral("not valid JSON at line");
    QTest::newRow("empty file") << QString() << QString() << QStringLiteral("not valid JSON");
    QTest::newRow("trailing comma") << QStringLiteral("{\"schema\": 1,}") << QString()
                                    << QStringLiteral("line 1, column");
    QTest::newRow("single quotes") << QStringLiteral("{'schema': 1}") << QString() << QStringLiteral("not valid JSON");
    QTest::newRow("two documents") << base + base << QString() << QStringLiteral("not valid JSON");

    // Shape of the top level.
    QTest::newRow("top level array") << QStringLiteral("[1, 2]") << QStringLiteral("(top level)")
                                     << QStringLiteral("must be a JSON object, found an array");
    QTest::newRow("top level string") << QStringLiteral("\"default\"") << QStringLiteral("(top level)")
                                      << QStringLiteral("must be a JSON object");
    QTest::newRow("top level null") << QStringLiteral("null") << QStringLiteral("(top level)")
                                    << QStringLiteral("must be a JSON object");
    QTest::newRow("missing schema") << patched(R"({"schema": null})") << QStringLiteral("schema")
                                    << QStringLiteral("missing");
    QTest::newRow("schema 2") << patched(R"({"schema": 2})") << QStringLiteral("schema") << QStringLiteral("schema 1");
    QTest::newRow("schema 0") << patched(R"({"schema": 0})") << QStringLiteral("schema") << QStringLiteral("must be");
    QTest::newRow("schema string") << patched(R"({"schema": "1"})") << QStringLiteral("schema")
                                   << QStringLiteral("must be an integer, found a string");
    QTest::newRow("missing model") << patched(R"({"model": null})") << QStringLiteral("model")
                                   << QStringLiteral("missing");
    QTest::newRow("missing cluster") << patched(R"({"cluster": null})") << QStringLiteral("cluster")
                                     << QStringLiteral("missing");
    QTest::newRow("missing training") << patched(R"({"training": null})") << QStringLiteral("training")
                                      << QStringLiteral("missing");
    QTest::newRow("model is a number") << patched(R"({"model": 8})") << QStringLiteral("model")
                                       << QStringLiteral("preset name (string) or an inline object");
    QTest::newRow("strategy is an array") << patched(R"({"strategy": [2, 2, 4]})") << QStringLiteral("strategy")
                                          << QStringLiteral("must be a JSON object, found an array");

    // Unknown keys.
    QTest::newRow("unknown top-level key")
        << patched(R"({"colour": "blue"})") << QStringLiteral("colour") << QStringLiteral("unknown key");
    QTest::newRow("top-level typo") << patched(R"({"descripton": "x"})") << QStringLiteral("descripton")
                                    << QStringLiteral("did you mean \"description\"");
    QTest::newRow("strategy typo") << patched(R"({"strategy": {"micro_bacth": 2}})")
                                   << QStringLiteral("strategy.micro_bacth")
                                   << QStringLiteral("did you mean \"micro_batch\"");
    QTest::newRow("strategy typo 2") << patched(R"({"strategy": {"sequence_paralel": true}})")
                                     << QStringLiteral("strategy.sequence_paralel")
                                     << QStringLiteral("did you mean \"sequence_parallel\"");
    QTest::newRow("training typo") << patched(R"({"training": {"precison": "fp16"}})")
                                   << QStringLiteral("training.precison")
                                   << QStringLiteral("did you mean \"precision\"");
    QTest::newRow("cluster typo") << patched(R"({"cluster": {"gpus_per_nodes": 8}})")
                                  << QStringLiteral("cluster.gpus_per_nodes")
                                  << QStringLiteral("did you mean \"gpus_per_node\"");
    QTest::newRow("inline model typo") << patched_inline(R"({"model": {"kv_head": 8}})")
                                       << QStringLiteral("model.kv_head")
                                       << QStringLiteral("did you mean \"kv_heads\"");
    QTest::newRow("inline moe typo") << patched_inline(R"({"model": {"moe": {"topk": 2}}})")
                                     << QStringLiteral("model.moe.topk") << QStringLiteral("did you mean \"top_k\"");
    QTest::newRow("inline gpu peak typo")
        << patched_inline(R"({"cluster": {"gpu": {"peak_TFLOPs": {"bf61": 1}}}})")
        << QStringLiteral("cluster.gpu.peak_TFLOPs.bf61") << QStringLiteral("did you mean \"bf16\"");
    QTest::newRow("inline fabric typo") << patched_inline(R"({"cluster": {"inter_node": {"latency_uss": 8}}})")
                                        << QStringLiteral("cluster.inter_node.latency_uss")
                                        << QStringLiteral("did you mean \"latency_us\"");
    QTest::newRow("search typo") << patched(R"({"search": {"objectiv": "energy"}})")
                                 << QStringLiteral("search.objectiv") << QStringLiteral("did you mean \"objective\"");

    // Wrong types.
    QTest::newRow("tp string") << patched(R"({"strategy": {"tp": "2"}})") << QStringLiteral("strategy.tp")
                               << QStringLiteral("must be an integer, found a string");
    QTest::newRow("tp 2.5") << patched(R"({"strategy": {"tp": 2.5}})") << QStringLiteral("strategy.tp")
                            << QStringLiteral("must be an integer, got 2.5");
    QTest::newRow("tp array") << patched(R"({"strategy": {"pp": 1, "dp": 8, "tp": [2]}})")
                              << QStringLiteral("strategy.tp") << QStringLiteral("must be an integer, found an array");
    QTest::newRow("layers bool") << patched_inline(R"({"model": {"layers": true}})") << QStringLiteral("model.layers")
                                 << QStringLiteral("must be an integer, found a boolean");
    QTest::newRow("precision object") << patched(R"({"training": {"precision": {"bf16": true}}})")
                                      << QStringLiteral("training.precision")
                                      << QStringLiteral("must be a string, found an object");
    QTest::newRow("sequence_parallel string")
        << patched(R"({"strategy": {"sequence_parallel": "yes"}})") << QStringLiteral("strategy.sequence_parallel")
        << QStringLiteral("must be true or false, found a string");
    QTest::newRow("memory_GiB string") << patched_inline(R"({"cluster": {"gpu": {"memory_GiB": "80"}}})")
                                       << QStringLiteral("cluster.gpu.memory_GiB")
                                       << QStringLiteral("must be a number, found a string");
    QTest::newRow("source a number") << patched_inline(R"({"model": {"source": 5}})") << QStringLiteral("model.source")
                                     << QStringLiteral("must be a string or an object");
    QTest::newRow("peak_TFLOPs a number")
        << patched_inline(R"({"cluster": {"gpu": {"peak_TFLOPs": 900}}})") << QStringLiteral("cluster.gpu.peak_TFLOPs")
        << QStringLiteral("must be a JSON object");

    // Zero, negative and huge numbers.
    QTest::newRow("tp 0") << patched(R"({"strategy": {"tp": 0}})") << QStringLiteral("strategy.tp")
                          << QStringLiteral("must be an integer in [1, ");
    QTest::newRow("pp -1") << patched(R"({"strategy": {"pp": -1}})") << QStringLiteral("strategy.pp")
                           << QStringLiteral("got -1");
    QTest::newRow("dp 0") << patched(R"({"strategy": {"dp": 0}})") << QStringLiteral("strategy.dp")
                          << QStringLiteral("must be an integer in [1, ");
    QTest::newRow("micro_batch 0") << patched(R"({"strategy": {"micro_batch": 0}})")
                                   << QStringLiteral("strategy.micro_batch")
                                   << QStringLiteral("must be an integer in [1, ");
    QTest::newRow("tp 1e30") << patched(R"({"strategy": {"tp": 1e30}})") << QStringLiteral("strategy.tp")
                             << QStringLiteral("must be an integer");
    QTest::newRow("tp 2^63") << patched(R"({"strategy": {"tp": 9223372036854775808}})") << QStringLiteral("strategy.tp")
                             << QStringLiteral("must be an integer in [1, ");
    QTest::newRow("dp -2^63") << patched(R"({"strategy": {"dp": -9223372036854775808}})")
                              << QStringLiteral("strategy.dp") << QStringLiteral("must be an integer in [1, ");
    QTest::newRow("cp 2^64") << patched(R"({"strategy": {"cp": 18446744073709551616}})")
                             << QStringLiteral("strategy.cp") << QStringLiteral("must be an integer");
    QTest::newRow("ep 2^31") << patched(R"({"strategy": {"ep": 2147483648}})") << QStringLiteral("strategy.ep")
                             << QStringLiteral("must be an integer in [1, ");
    QTest::newRow("vpp 2^32+2") << patched(R"({"strategy": {"vpp": 4294967298}})") << QStringLiteral("strategy.vpp")
                                << QStringLiteral("must be an integer in [1, ");
    QTest::newRow("nodes 0") << patched(R"({"cluster": {"nodes": 0}})") << QStringLiteral("cluster.nodes")
                             << QStringLiteral("must be an integer in [1, ");
    QTest::newRow("nodes 1e30") << patched(R"({"cluster": {"nodes": 1e30}})") << QStringLiteral("cluster.nodes")
                                << QStringLiteral("must be an integer");
    QTest::newRow("gpus_per_node -8") << patched(R"({"cluster": {"gpus_per_node": -8}})")
                                      << QStringLiteral("cluster.gpus_per_node") << QStringLiteral("got -8");
    QTest::newRow("global_batch 0") << patched(R"({"training": {"global_batch": 0}})")
                                    << QStringLiteral("training.global_batch")
                                    << QStringLiteral("must be an integer in [1, ");
    QTest::newRow("global_batch 2^63") << patched(R"({"training": {"global_batch": 9223372036854775808}})")
                                       << QStringLiteral("training.global_batch")
                                       << QStringLiteral("must be an integer in [1, ");
    QTest::newRow("seq_len -4096") << patched(R"({"training": {"seq_len": -4096}})")
                                   << QStringLiteral("training.seq_len") << QStringLiteral("got -4096");
    QTest::newRow("zero 4") << patched(R"({"strategy": {"zero": 4}})") << QStringLiteral("strategy.zero")
                            << QStringLiteral("must be an integer in [0, 3]");
    QTest::newRow("layers 0") << patched_inline(R"({"model": {"layers": 0}})") << QStringLiteral("model.layers")
                              << QStringLiteral("must be an integer in [1, ");
    QTest::newRow("hidden 1e30") << patched_inline(R"({"model": {"hidden": 1e30}})") << QStringLiteral("model.hidden")
                                 << QStringLiteral("must be an integer");
    QTest::newRow("negative memory_GiB") << patched_inline(R"({"cluster": {"gpu": {"memory_GiB": -80}}})")
                                         << QStringLiteral("cluster.gpu.memory_GiB") << QStringLiteral("got -80");
    QTest::newRow("negative peak") << patched_inline(R"({"cluster": {"gpu": {"peak_TFLOPs": {"bf16": -1}}}})")
                                   << QStringLiteral("cluster.gpu.peak_TFLOPs.bf16")
                                   << QStringLiteral("must be a number in");
    QTest::newRow("no positive peak") << patched_inline(
        R"({"cluster": {"gpu": {"peak_TFLOPs": {"fp32": null, "tf32": null, "bf16": null, "fp16": null, "fp8": null}}}})")
                                      << QStringLiteral("cluster.gpu.peak_TFLOPs")
                                      << QStringLiteral("at least one precision");
    QTest::newRow("idle_W = tdp_W") << patched_inline(R"({"cluster": {"gpu": {"idle_W": 700}}})")
                                    << QStringLiteral("cluster.gpu.idle_W") << QStringLiteral("must be below tdp_W");
    QTest::newRow("idle_W > tdp_W") << patched_inline(R"({"cluster": {"gpu": {"idle_W": 900}}})")
                                    << QStringLiteral("cluster.gpu.idle_W") << QStringLiteral("must be below tdp_W");
    QTest::newRow("power_limit_W above tdp_W")
        << patched_inline(R"({"cluster": {"gpu": {"power_limit_W": 800}}})")
        << QStringLiteral("cluster.gpu.power_limit_W") << QStringLiteral("must not exceed tdp_W");
    QTest::newRow("framework unknown") << patched(R"({"training": {"framework": "jax"}})")
                                       << QStringLiteral("training.framework") << QStringLiteral("got \"jax\"");
    QTest::newRow("software unknown") << patched(R"({"training": {"software": "nemo-23.01"}})")
                                      << QStringLiteral("training.software")
                                      << QStringLiteral("known releases of megatron: nemo-24.03, nemo-24.07");
    QTest::newRow("software of another framework")
        << patched(R"({"training": {"framework": "torchtitan", "software": "nemo-25.11"}})")
        << QStringLiteral("training.software") << QStringLiteral("is a release of megatron, not of torchtitan");
    QTest::newRow("software of a framework without releases")
        << patched(R"({"training": {"framework": "torchtitan", "software": "torchtitan-0.1"}})")
        << QStringLiteral("training.software") << QStringLiteral("no release of torchtitan is catalogued");
    QTest::newRow("mxfp8 on Hopper") << patched(R"({"training": {"precision": "fp8", "fp8_scaling": "mxfp8"}})")
                                     << QStringLiteral("training.fp8_scaling")
                                     << QStringLiteral("mxfp8 needs block-scaled tensor cores");
    QTest::newRow("fp8 scaling unknown") << patched(R"({"training": {"fp8_scaling": "per-channel"}})")
                                         << QStringLiteral("training.fp8_scaling") << QStringLiteral("blockwise");
    QTest::newRow("software not a string") << patched(R"({"training": {"software": 2403}})")
                                           << QStringLiteral("training.software") << QStringLiteral("string");
    QTest::newRow("negative bandwidth") << patched_inline(R"({"cluster": {"intra_node": {"bw_GBps": -450}}})")
                                        << QStringLiteral("cluster.intra_node.bw_GBps") << QStringLiteral("got -450");
    QTest::newRow("oversubscription 0.5")
        << patched_inline(R"({"cluster": {"inter_node": {"oversubscription": 0.5}}})")
        << QStringLiteral("cluster.inter_node.oversubscription") << QStringLiteral("must be a number in [1, ");

    // Unknown presets, with a suggestion.
    QTest::newRow("unknown model preset")
        << patched(R"({"model": "llama3-8"})") << QStringLiteral("model")
        << QStringLiteral("unknown models preset \"llama3-8\" (did you mean \"llama3-8b\"?)");
    QTest::newRow("unknown gpu preset") << patched(R"({"cluster": {"gpu": "H100-SXM5-80G"}})")
                                        << QStringLiteral("cluster.gpu")
                                        << QStringLiteral("(did you mean \"H100-SXM5-80GB\"?)");
    QTest::newRow("unknown intra fabric")
        << patched(R"({"cluster": {"intra_node": "nvlink4-nvswich"}})") << QStringLiteral("cluster.intra_node")
        << QStringLiteral("(did you mean \"nvlink4-nvswitch\"?)");
    QTest::newRow("unknown inter fabric")
        << patched(R"({"cluster": {"inter_node": "ib-ndrr"}})") << QStringLiteral("cluster.inter_node")
        << QStringLiteral("(did you mean \"ib-ndr\"?)");
    QTest::newRow("unknown cluster preset")
        << patched(R"({"cluster": "dgx-h100-superpd"})") << QStringLiteral("cluster")
        << QStringLiteral("(did you mean \"dgx-h100-superpod\"?)");
    QTest::newRow("far-off model name") << patched(R"({"model": "zzzzzzzzzzzzzzzzzzzz"})") << QStringLiteral("model")
                                        << QStringLiteral("parallax-cli presets models");

    // Enumerations.
    QTest::newRow("recompute module unknown")
        << patched(R"({"strategy": {"recompute": "selective", "recompute_modules": ["attention"]}})")
        << QStringLiteral("strategy.recompute_modules") << QStringLiteral("entries are module names (core_attn, ");
    QTest::newRow("recompute module twice")
        << patched(R"({"strategy": {"recompute": "selective", "recompute_modules": ["mlp", "mlp"]}})")
        << QStringLiteral("strategy.recompute_modules") << QStringLiteral("names mlp twice");
    QTest::newRow("recompute modules without selective")
        << patched(R"({"strategy": {"recompute": "full", "recompute_modules": ["mlp"]}})")
        << QStringLiteral("strategy.recompute_modules") << QStringLiteral("strategy.recompute is full");
    QTest::newRow("recompute modules outside Megatron")
        << patched(R"({"training": {"framework": "torchtitan"},
                        "strategy": {"recompute": "selective", "recompute_modules": ["mlp"]}})")
        << QStringLiteral("strategy.recompute_modules") << QStringLiteral("recomputation by submodule is Megatron's");
    QTest::newRow("expert bias without experts")
        << patched(R"({"model": {"name": "x", "layers": 2, "hidden": 256, "heads": 4, "kv_heads": 4,
                        "ffn_hidden": 1024, "vocab": 1000, "expert_bias": true}})")
        << QStringLiteral("model.expert_bias") << QStringLiteral("needs a moe section");
    QTest::newRow("recompute partial") << patched(R"({"strategy": {"recompute": "partial"}})")
                                       << QStringLiteral("strategy.recompute")
                                       << QStringLiteral(
                                              "must be one of \"none\", \"selective\", \"full\", got \"partial\"");
    QTest::newRow("schedule 1F1B") << patched(R"({"strategy": {"schedule": "1F1B"}})")
                                   << QStringLiteral("strategy.schedule") << QStringLiteral("got \"1F1B\"");
    QTest::newRow("optimizer adamw") << patched(R"({"strategy": {"optimizer": "adamw"}})")
                                     << QStringLiteral("strategy.optimizer") << QStringLiteral("got \"adamw\"");
    QTest::newRow("precision fp64") << patched(R"({"training": {"precision": "fp64"}})")
                                    << QStringLiteral("training.precision") << QStringLiteral("must be one of");
    QTest::newRow("ffn_act relu") << patched_inline(R"({"model": {"ffn_act": "relu"}})")
                                  << QStringLiteral("model.ffn_act")
                                  << QStringLiteral("must be one of \"gelu\", \"swiglu\"");
    QTest::newRow("attention kind") << patched_inline(R"({"model": {"attention": {"kind": "mqa"}}})")
                                    << QStringLiteral("model.attention.kind") << QStringLiteral("got \"mqa\"");
    QTest::newRow("fabric kind") << patched_inline(R"({"cluster": {"intra_node": {"kind": "ethernet"}}})")
                                 << QStringLiteral("cluster.intra_node.kind") << QStringLiteral("got \"ethernet\"");
    QTest::newRow("architecture") << patched_inline(R"({"cluster": {"gpu": {"architecture": "maxwell"}}})")
                                  << QStringLiteral("cluster.gpu.architecture") << QStringLiteral("got \"maxwell\"");
    QTest::newRow("rank_order duplicate") << patched(R"({"strategy": {"rank_order": "tp-tp-ep-dp-pp"}})")
                                          << QStringLiteral("strategy.rank_order") << QString();
    QTest::newRow("rank_order unknown dim") << patched(R"({"strategy": {"rank_order": "tp-cp-ep-dp-xx"}})")
                                            << QStringLiteral("strategy.rank_order") << QString();
    QTest::newRow("rank_order too few") << patched(R"({"strategy": {"rank_order": "tp-cp-ep"}})")
                                        << QStringLiteral("strategy.rank_order") << QString();
    QTest::newRow("rank_order empty") << patched(R"({"strategy": {"rank_order": ""}})")
                                      << QStringLiteral("strategy.rank_order") << QString();

    // Model shape rules.
    QTest::newRow("kv_heads not dividing heads")
        << patched_inline(R"({"model": {"kv_heads": 6}})") << QStringLiteral("model.kv_heads")
        << QStringLiteral("must divide heads (16)");
    QTest::newRow("kv_heads above heads") << patched_inline(R"({"model": {"kv_heads": 32}})")
                                          << QStringLiteral("model.kv_heads") << QStringLiteral("must divide heads");
    QTest::newRow("heads not dividing hidden") << patched_inline(R"({"model": {"heads": 24, "kv_heads": 24}})")
                                               << QStringLiteral("model.heads") << QStringLiteral("must divide hidden");
    QTest::newRow("moe top_k > experts") << patched_inline(R"({"model": {"moe": {"top_k": 17}}})")
                                         << QStringLiteral("model.moe.top_k")
                                         << QStringLiteral("must not exceed experts (16)");
    QTest::newRow("moe first_dense_layers >= layers")
        << patched_inline(R"({"model": {"moe": {"first_dense_layers": 8}}})")
        << QStringLiteral("model.moe.first_dense_layers") << QStringLiteral("below the layer count");

    // Strategy rules (core/strategy_rules.hpp), each with the numbers in the message.
    QTest::newRow("tp not dividing heads")
        << patched(R"({"cluster": {"nodes": 3}, "strategy": {"tp": 3, "pp": 2, "dp": 4}})")
        << QStringLiteral("strategy.tp")
        << QStringLiteral("tensor parallel degree 3 must divide the 32 attention heads");
    QTest::newRow("tp not dividing kv_heads")
        << patched(R"({"strategy": {"tp": 16, "pp": 1, "dp": 1}})") << QStringLiteral("strategy.tp")
        << QStringLiteral("tensor parallel degree 16 must divide the 8 KV heads");
    QTest::newRow("tp not dividing ffn") << patched_inline(R"({"model": {"ffn_hidden": 4097}})")
                                         << QStringLiteral("strategy.tp")
                                         << QStringLiteral("must divide the FFN hidden size 4097");
    QTest::newRow("degrees != GPUs") << patched(R"({"strategy": {"dp": 8}})") << QStringLiteral("strategy.dp")
                                     << QStringLiteral("= 32 must equal the cluster's 16 GPUs");
    QTest::newRow("degrees < GPUs") << patched(R"({"strategy": {"tp": 1, "pp": 1, "dp": 1}})")
                                    << QStringLiteral("strategy.dp")
                                    << QStringLiteral("must equal the cluster's 16 GPUs");
    // 384773*5581*791632*43405 = 4*2^64 + 16: the product must not wrap around to the 16 GPUs.
    QTest::newRow("degree product overflows 64 bits")
        << patched(R"({"model": {"name": "wide", "layers": 5581, "hidden": 384773, "heads": 384773, "kv_heads": 384773,
                        "head_dim": 1, "ffn_hidden": 769546, "vocab": 1000},
                       "training": {"global_batch": 43405, "seq_len": 1583264},
                       "strategy": {"tp": 384773, "pp": 5581, "cp": 791632, "dp": 43405}})")
        << QStringLiteral("strategy.dp") << QStringLiteral("must equal the cluster's 16 GPUs");
    // pp*vpp = 2^32 must not wrap around to 0 chunks and pass the "fewer layers than chunks" rule.
    QTest::newRow("pp*vpp overflows int")
        << patched(R"({"cluster": {"nodes": 8192}, "training": {"global_batch": 65536},
                       "strategy": {"tp": 1, "pp": 65536, "dp": 1, "vpp": 65536}})")
        << QStringLiteral("strategy.pp") << QStringLiteral("has only 32 layers");
    QTest::newRow("cannot derive dp") << patched(R"({"strategy": {"tp": 3, "dp": null}})")
                                      << QStringLiteral("strategy.dp") << QStringLiteral("cannot derive dp");
    QTest::newRow("cannot derive dp (cp)")
        << patched(R"({"strategy": {"pp": 1, "cp": 32, "dp": null}})") << QStringLiteral("strategy.dp")
        << QStringLiteral("not a multiple of tp*pp*cp = 64");
    QTest::newRow("batch not divisible") << patched(R"({"training": {"global_batch": 66}})")
                                         << QStringLiteral("training.global_batch")
                                         << QStringLiteral("multiple of micro_batch*dp = 1*4 = 4");
    QTest::newRow("batch below micro_batch*dp")
        << patched(R"({"training": {"global_batch": 4}, "strategy": {"micro_batch": 2}})")
        << QStringLiteral("training.global_batch") << QStringLiteral("positive multiple of micro_batch*dp = 2*4 = 8");
    QTest::newRow("cp not dividing seq (2*cp)")
        << patched(R"({"training": {"seq_len": 4098}, "strategy": {"cp": 2, "dp": 2}})")
        << QStringLiteral("strategy.cp") << QStringLiteral("divisible by 2*cp = 4");
    QTest::newRow("ep on a dense model") << patched(R"({"strategy": {"ep": 2}})") << QStringLiteral("strategy.ep")
                                         << QStringLiteral("needs a mixture-of-experts model");
    QTest::newRow("ep not dividing experts")
        << patched(R"({"model": "mixtral-8x7b", "cluster": {"nodes": 8}, "strategy": {"dp": 16, "ep": 16}})")
        << QStringLiteral("strategy.ep") << QStringLiteral("must divide the 8 experts");
    QTest::newRow("ep not dividing dp*cp") << patched_inline(
        R"({"model": {"moe": {"experts": 24}}, "training": {"moe_expert_load": null}, "strategy": {"ep": 8, "expert_tp": null}})")
                                           << QStringLiteral("strategy.ep") << QStringLiteral("must divide dp*cp = 4");
    QTest::newRow("expert_tp*ep not dividing tp*dp*cp") << patched_inline(
        R"({"model": {"moe": {"experts": 24}}, "training": {"moe_expert_load": null}, "strategy": {"ep": 8, "expert_tp": 2}})")
                                                        << QStringLiteral("strategy.expert_tp")
                                                        << QStringLiteral("must divide tp*dp*cp = 8");
    QTest::newRow("ep_overlap on a dense model")
        << patched(R"({"strategy": {"ep_overlap": true}})") << QStringLiteral("strategy.ep_overlap")
        << QStringLiteral("needs a mixture-of-experts model with ep > 1");
    QTest::newRow("moe_imbalance below 1") << patched_inline(R"({"training": {"moe_imbalance": 0.5}})")
                                           << QStringLiteral("training.moe_imbalance") << QStringLiteral("1");
    QTest::newRow("moe_expert_load not an array")
        << patched_inline(R"({"training": {"moe_expert_load": 3}})") << QStringLiteral("training.moe_expert_load")
        << QStringLiteral("must be an array");
    QTest::newRow("moe_expert_load negative")
        << patched_inline(R"({"training": {"moe_expert_load": [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1]}})")
        << QStringLiteral("training.moe_expert_load") << QStringLiteral("entry 15 must be a non-negative number");
    QTest::newRow("moe_expert_load wrong length")
        << patched_inline(R"({"training": {"moe_expert_load": [1, 2, 3]}})")
        << QStringLiteral("training.moe_expert_load") << QStringLiteral("needs one load per expert (16), got 3");
    QTest::newRow("moe_expert_load on a dense model")
        << patched(R"({"training": {"moe_expert_load": [1, 2]}})") << QStringLiteral("training.moe_expert_load")
        << QStringLiteral("needs one load per expert (0)");
    QTest::newRow("gradient release with accumulation")
        << patched(R"({"strategy": {"gradient_release": true}})") << QStringLiteral("strategy.gradient_release")
        << QStringLiteral("exactly one micro-batch per step");
    QTest::newRow("unknown moe_dispatcher") << patched(R"({"training": {"moe_dispatcher": "nccl"}})")
                                            << QStringLiteral("training.moe_dispatcher") << QStringLiteral("deepep");
    QTest::newRow("unknown attention_kernel")
        << patched(R"({"training": {"attention_kernel": "flash4"}})") << QStringLiteral("training.attention_kernel")
        << QStringLiteral("flash2");
    QTest::newRow("unknown cuda_graphs") << patched(R"({"training": {"cuda_graphs": "always"}})")
                                         << QStringLiteral("training.cuda_graphs") << QStringLiteral("full-iteration");
    QTest::newRow("vpp with pp 1") << patched(R"({"strategy": {"pp": 1, "dp": 8, "vpp": 2}})")
                                   << QStringLiteral("strategy.vpp") << QStringLiteral("needs pipeline parallelism");
    QTest::newRow("vpp with 1f1b") << patched(R"({"strategy": {"vpp": 2, "schedule": "1f1b"}})")
                                   << QStringLiteral("strategy.vpp")
                                   << QStringLiteral("needs schedule \"interleaved\"");
    QTest::newRow("interleaved with vpp 1") << patched(R"({"strategy": {"schedule": "interleaved"}})")
                                            << QStringLiteral("strategy.schedule") << QStringLiteral("needs vpp > 1");
    QTest::newRow("interleaved micro-batches")
        << patched(R"({"training": {"global_batch": 12}, "strategy": {"vpp": 2}})")
        << QStringLiteral("strategy.schedule") << QStringLiteral("micro-batches (3) to be a multiple of pp (2)");
    QTest::newRow("dualpipe odd pp") << patched(
        R"({"cluster": {"nodes": 3}, "strategy": {"pp": 3, "schedule": "dualpipe"}})")
                                     << QStringLiteral("strategy.schedule") << QStringLiteral("even pp");
    QTest::newRow("dualpipe pp 1") << patched(R"({"strategy": {"pp": 1, "dp": 8, "schedule": "dualpipe"}})")
                                   << QStringLiteral("strategy.schedule") << QStringLiteral("even pp");
    QTest::newRow("fp8 on A100") << patched(
        R"({"cluster": {"gpu": "A100-SXM4-80GB"}, "training": {"precision": "fp8"}})")
                                 << QStringLiteral("training.precision") << QStringLiteral("A100-SXM4-80GB has no fp8");
    QTest::newRow("fp4 on H100") << patched(R"({"training": {"precision": "fp4"}})")
                                 << QStringLiteral("training.precision") << QStringLiteral("has no fp4");
    QTest::newRow("fp32 reduce with DeepSpeed ZeRO")
        << patched(R"({"training": {"framework": "megatron-deepspeed", "grad_reduce_in_fp32": true},
                        "strategy": {"pp": 1, "dp": 8, "zero": 1}})")
        << QStringLiteral("training.grad_reduce_in_fp32") << QStringLiteral("only without ZeRO; strategy.zero is 1");
    QTest::newRow("bf16 gradients outside Megatron")
        << patched(R"({"training": {"framework": "torchtitan", "grad_reduce_in_bf16": true}})")
        << QStringLiteral("training.grad_reduce_in_bf16") << QStringLiteral("Megatron's switch");
    QTest::newRow("bf16 gradients with fp32 parameters")
        << patched(R"({"training": {"precision": "fp32", "grad_reduce_in_bf16": true}})")
        << QStringLiteral("training.grad_reduce_in_bf16") << QStringLiteral("training.precision is fp32");
    QTest::newRow("bf16 and fp32 gradient reduction")
        << patched(R"({"training": {"grad_reduce_in_fp32": true, "grad_reduce_in_bf16": true}})")
        << QStringLiteral("training.grad_reduce_in_bf16") << QStringLiteral("contradicts grad_reduce_in_fp32");
    QTest::newRow("fp32 reduce not a boolean")
        << patched(R"({"training": {"grad_reduce_in_fp32": "yes"}})") << QStringLiteral("training.grad_reduce_in_fp32")
        << QStringLiteral("must be true or false");
    QTest::newRow("offload with zero 0") << patched(R"({"strategy": {"offload_optimizer": true, "zero": 0}})")
                                         << QStringLiteral("strategy.offload_optimizer")
                                         << QStringLiteral("ZeRO stage >= 1");
    QTest::newRow("pp*vpp > layers") << patched(R"({"strategy": {"tp": 1, "pp": 8, "dp": 2, "vpp": 8}})")
                                     << QStringLiteral("strategy.pp") << QStringLiteral("has only 32 layers");
    QTest::newRow("pp > layers") << patched_inline(R"({"cluster": {"nodes": 4}, "strategy": {"tp": 1, "pp": 16, "dp": 2,
                                      "vpp": 1, "schedule": "1f1b", "ep": 2, "micro_batch": 1}})")
                                 << QStringLiteral("strategy.pp") << QStringLiteral("has only 8 layers");
    QTest::newRow("first+last stage layers too large")
        << patched(R"({"strategy": {"pp": 2, "first_stage_layers": 20, "last_stage_layers": 20}})")
        << QStringLiteral("strategy.first_stage_layers") << QStringLiteral("leave too few of the 32 layers");
    QTest::newRow("first+last short of the layers at pp 2")
        << patched(R"({"strategy": {"pp": 2, "first_stage_layers": 7, "last_stage_layers": 7}})")
        << QStringLiteral("strategy.first_stage_layers") << QStringLiteral("must add up to the 32 layers");
    QTest::newRow("first+last leave middle stages empty")
        << patched(R"({"strategy": {"tp": 1, "pp": 4, "first_stage_layers": 16, "last_stage_layers": 16}})")
        << QStringLiteral("strategy.first_stage_layers") << QStringLiteral("too few");
    QTest::newRow("first_stage_layers too large")
        << patched(R"({"strategy": {"first_stage_layers": 33}})") << QStringLiteral("strategy.first_stage_layers")
        << QStringLiteral("too few");
    QTest::newRow("first_stage_layers with pp 1")
        << patched(R"({"strategy": {"pp": 1, "dp": 8, "first_stage_layers": 4}})")
        << QStringLiteral("strategy.first_stage_layers") << QStringLiteral("need pp >= 2");
    // Only last_stage_layers is in the file: the error must name that key, not first_stage_layers.
    QTest::newRow("last_stage_layers alone too large")
        << patched(R"({"strategy": {"last_stage_layers": 40}})") << QStringLiteral("strategy.last_stage_layers")
        << QStringLiteral("too few");
    QTest::newRow("first_stage_layers 0")
        << patched(R"({"strategy": {"first_stage_layers": 0}})") << QStringLiteral("strategy.first_stage_layers")
        << QStringLiteral("must be an integer in [1, ");

    // search.fix is validated like the strategy itself.
    QTest::newRow("search.fix unknown key")
        << patched(R"({"search": {"fix": {"ttp": 2}}})") << QStringLiteral("search.fix.ttp")
        << QStringLiteral("did you mean \"tp\"");
    QTest::newRow("search.fix bad value")
        << patched(R"({"search": {"fix": {"tp": 0}}})") << QStringLiteral("search.fix.tp")
        << QStringLiteral("must be an integer in [1, ");
    QTest::newRow("search.fix bad schedule") << patched(R"({"search": {"fix": {"schedule": "fast"}}})")
                                             << QStringLiteral("search.fix.schedule") << QStringLiteral("got \"fast\"");
    QTest::newRow("search.fix not an object")
        << patched(R"({"search": {"fix": ["tp"]}})") << QStringLiteral("search.fix")
        << QStringLiteral("must be a JSON object");
    QTest::newRow("search.limits headroom 1")
        << patched(R"({"search": {"limits": {"memory_headroom": 1}}})")
        << QStringLiteral("search.limits.memory_headroom") << QStringLiteral("must be a number in");
    QTest::newRow("search objective") << patched(R"({"search": {"objective": "speed"}})")
                                      << QStringLiteral("search.objective") << QStringLiteral("got \"speed\"");

    // Power and DVFS.
    QTest::newRow("clock below the GPU's range")
        << patched(R"({"training": {"clock_MHz": 100}})") << QStringLiteral("training.clock_MHz")
        << QStringLiteral("must be within 549-1980 MHz");
    QTest::newRow("clock above boost") << patched(R"({"training": {"clock_MHz": 2100}})")
                                       << QStringLiteral("training.clock_MHz") << QStringLiteral("must be within");
    QTest::newRow("clock a string") << patched(R"({"training": {"clock_MHz": "fast"}})")
                                    << QStringLiteral("training.clock_MHz")
                                    << QStringLiteral("must be a number, found a string");
    QTest::newRow("clock without a nominal clock")
        << patched(R"({"cluster": {"gpu": {"name": "G", "peak_TFLOPs": {"bf16": 500}, "memory_GiB": 48,
                       "memory_bw_GBps": 1000, "tdp_W": 300, "idle_W": 30}}, "training": {"clock_MHz": 1000}})")
        << QStringLiteral("training.clock_MHz") << QStringLiteral("needs the GPU's nominal clock");
    QTest::newRow("stage clocks not one per stage")
        << patched(R"({"training": {"stage_clock_MHz": [1500, 1500, 1500]}})")
        << QStringLiteral("training.stage_clock_MHz") << QStringLiteral("one clock per pipeline stage (pp = 2), got 3");
    QTest::newRow("stage clocks not an array")
        << patched(R"({"training": {"stage_clock_MHz": 1500}})") << QStringLiteral("training.stage_clock_MHz")
        << QStringLiteral("must be an array");
    QTest::newRow("stage clock a string")
        << patched(R"({"training": {"stage_clock_MHz": [1500, "x"]}})") << QStringLiteral("training.stage_clock_MHz")
        << QStringLiteral("entry 1 must be a number");
    QTest::newRow("stage clock out of range")
        << patched(R"({"training": {"stage_clock_MHz": [1500, 5000]}})") << QStringLiteral("training.stage_clock_MHz")
        << QStringLiteral("must be within");
    QTest::newRow("power cap above TDP") << patched(R"({"training": {"power_cap_W": 800}})")
                                         << QStringLiteral("training.power_cap_W")
                                         << QStringLiteral("must not exceed the GPU's tdp_W");
    QTest::newRow("power cap at idle") << patched(R"({"training": {"power_cap_W": 70}})")
                                       << QStringLiteral("training.power_cap_W")
                                       << QStringLiteral("must be above the GPU's idle_W");
    QTest::newRow("inlet too hot") << patched(R"({"training": {"inlet_temp_C": 90}})")
                                   << QStringLiteral("training.inlet_temp_C") << QStringLiteral("must be a number in");
    QTest::newRow("active idle below idle")
        << patched_inline(R"({"cluster": {"gpu": {"active_idle_W": 50}}})")
        << QStringLiteral("cluster.gpu.active_idle_W") << QStringLiteral("must lie between idle_W");
    QTest::newRow("max clock below nominal")
        << patched_inline(R"({"cluster": {"gpu": {"max_clock_MHz": 1000}}})")
        << QStringLiteral("cluster.gpu.max_clock_MHz") << QStringLiteral("must not be below clock_MHz");
    QTest::newRow("node overhead negative")
        << patched_inline(R"({"cluster": {"node_overhead_W": -5}})") << QStringLiteral("cluster.node_overhead_W")
        << QStringLiteral("must be a number in");
    QTest::newRow("host memory 0") << patched_inline(R"({"cluster": {"host_memory_GB": 0}})")
                                   << QStringLiteral("cluster.host_memory_GB") << QStringLiteral("must be a number in");
    QTest::newRow("nodes per rack 0") << patched_inline(R"({"cluster": {"nodes_per_rack": 0}})")
                                      << QStringLiteral("cluster.nodes_per_rack") << QStringLiteral("must be");
    QTest::newRow("power budget 0") << patched(R"({"search": {"limits": {"power_budget_kW": 0}}})")
                                    << QStringLiteral("search.limits.power_budget_kW")
                                    << QStringLiteral("must be a number in");
    QTest::newRow("max slowdown string") << patched(R"({"search": {"limits": {"max_slowdown": "5%"}}})")
                                         << QStringLiteral("search.limits.max_slowdown")
                                         << QStringLiteral("found a string");
    QTest::newRow("power typo") << patched(R"({"training": {"power_cap_w": 500}})")
                                << QStringLiteral("training.power_cap_w")
                                << QStringLiteral("did you mean \"power_cap_W\"");
}

void TestScenarioIo::badInput()
{
    QFETCH(QString, text);
    QFETCH(QString, key);
    QFETCH(QString, rule);
    try {
        const Scenario s = parse_scenario_text(text.toStdString(), kLabel.toStdString(), catalog());
        QFAIL(qPrintable(QStringLiteral("accepted; strategy ") + qs(strategy_to_json(s.strategy).dump())));
    } catch (const InputError& e) {
        const QString what = qs(e.what());
        QCOMPARE(qs(e.key()), key);
        QCOMPARE(qs(e.file()), kLabel);
        QVERIFY2(what.startsWith(kLabel + QStringLiteral(": ")), qPrintable(what));
        if (!key.isEmpty())
            QVERIFY2(what.contains(QStringLiteral(": ") + key + QStringLiteral(": ")), qPrintable(what));
        QVERIFY2(!e.rule().empty(), qPrintable(what));
        QVERIFY2(qs(e.rule()).contains(rule), qPrintable(what));
    } catch (const std::exception& e) {
        QFAIL(qPrintable(QStringLiteral("not an InputError: ") + QString::fromUtf8(e.what())));
    }
}

void TestScenarioIo::syntaxErrorHasLineAndColumn()
{
    // The stray comma is on line 3, column 12: what an editor shows.
    const std::string text = "{\n  \"schema\": 1,\n  \"model\": ,\n  \"cluster\": \"x\"\n}\n";
    try {
        parse_scenario_text(text, "broken.json", catalog());
        QFAIL("accepted broken JSON");
    } catch (const InputError& e) {
        QCOMPARE(qs(e.file()), QStringLiteral("broken.json"));
        QVERIFY2(qs(e.rule()).contains(QStringLiteral("line 3, column 12")), e.what());
    }
    // A truncated file points at its end.
    const std::string truncated = "{\n  \"schema\": 1,\n  \"model\": \"llama3-8b\"";
    try {
        parse_scenario_text(truncated, "cut.json", catalog());
        QFAIL("accepted truncated JSON");
    } catch (const InputError& e) {
        QVERIFY2(qs(e.rule()).contains(QStringLiteral("line 3")), e.what());
    }
}

void TestScenarioIo::numberOverflowIsInputError_data()
{
    QTest::addColumn<QString>("text");
    // Literals beyond the range of a double: valid JSON grammar, but no number can hold them.
    QTest::newRow("tp 1e400") << qs(kBase).replace(QStringLiteral("\"tp\": 2"), QStringLiteral("\"tp\": 1e400"));
    QTest::newRow("dp -1e400") << qs(kBase).replace(QStringLiteral("\"dp\": 4"), QStringLiteral("\"dp\": -1e400"));
    QTest::newRow("memory_GiB 1e309") << qs(kInline).replace(
        QStringLiteral("\"memory_GiB\": 96.3"), QStringLiteral("\"memory_GiB\": 1e309"));
}

void TestScenarioIo::numberOverflowIsInputError()
{
    // Bad input, not an internal error: an InputError naming the file (the CLI exits 2, not 1).
    QFETCH(QString, text);
    QVERIFY(text.contains(QStringLiteral("e4")) || text.contains(QStringLiteral("e309")));
    try {
        parse_scenario_text(text.toStdString(), kLabel.toStdString(), catalog());
        QFAIL("accepted a number no double can hold");
    } catch (const InputError& e) {
        QCOMPARE(qs(e.file()), kLabel);
        QVERIFY2(qs(e.what()).startsWith(kLabel + QStringLiteral(": ")), e.what());
    } catch (const std::exception& e) {
        QFAIL(qPrintable(QStringLiteral("not an InputError: ") + QString::fromUtf8(e.what())));
    }
}

void TestScenarioIo::missingFileNamesPath()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string path = dir.filePath(QStringLiteral("does-not-exist.json")).toStdString();
    try {
        load_scenario_file(path, catalog());
        QFAIL("loaded a missing file");
    } catch (const InputError& e) {
        QCOMPARE(qs(e.file()), qs(path));
        QVERIFY(qs(e.what()).contains(qs(path)));
        QVERIFY(qs(e.rule()).contains(QStringLiteral("cannot open")));
    }
    // A folder is not a scenario either.
    try {
        load_scenario_file(dir.path().toStdString(), catalog());
        QFAIL("loaded a folder");
    } catch (const InputError& e) {
        QCOMPARE(qs(e.file()), dir.path());
    }
}

void TestScenarioIo::unknownScenarioPreset()
{
    try {
        load_scenario_preset("defautl", catalog());
        QFAIL("loaded an unknown preset");
    } catch (const InputError& e) {
        QVERIFY2(qs(e.what()).contains(QStringLiteral("defautl")), e.what());
        QVERIFY2(qs(e.what()).contains(QStringLiteral("did you mean \"default\"")), e.what());
    }
}

void TestScenarioIo::unevenStagesAreValidWithWarning_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("counts");
    // Llama 3.1 405B: 126 layers. PP 16 without overrides: 14 stages of 8 and 2 of 7 (docs/scenario-format.md).
    const char* const k405 = R"({"schema": 1, "model": "llama3.1-405b",
        "cluster": {"gpu": "H100-SXM5-80GB", "nodes": 16, "gpus_per_node": 8,
                    "intra_node": "nvlink4-nvswitch", "inter_node": "ib-ndr"},
        "training": {"global_batch": 16, "seq_len": 8192},
        "strategy": {"tp": 8, "pp": 16, "sequence_parallel": true}})";
    QTest::newRow("405b pp16") << qs(k405) << QStringLiteral("layers per stage ");
    QTest::newRow("405b pp8 vpp2") << patched(
        R"({"cluster": {"nodes": 8}, "strategy": {"pp": 8, "vpp": 2}, "training": {"global_batch": 64}})", k405)
                                   << QStringLiteral("layers per stage ");
}

void TestScenarioIo::unevenStagesAreValidWithWarning()
{
    QFETCH(QString, text);
    QFETCH(QString, counts);
    try {
        const Scenario s = parse_scenario_text(text.toStdString(), "uneven.json", catalog());
        QCOMPARE(s.model.layers, 126);
        const PlanInputs in { s.model, s.training, s.cluster.gpu, s.cluster.total_gpus() };
        QCOMPARE(check_strategy(in, s.strategy), Rule::ok);
        const auto warnings = strategy_warnings(in, s.strategy);
        QStringList all;
        for (const auto& w : warnings)
            all << qs(w);
        const QStringList uneven = all.filter(QStringLiteral("uneven"));
        QVERIFY2(uneven.size() == 1, qPrintable(all.join(QLatin1Char('\n'))));
        QVERIFY2(uneven.first().contains(counts), qPrintable(uneven.first()));
        // The per-stage counts in the warning add up to the model's layers.
        const QString list
            = uneven.first().section(QStringLiteral("layers per stage "), 1).section(QLatin1Char(';'), 0, 0);
        int sum = 0;
        const QStringList parts = list.split(QLatin1Char(','));
        QCOMPARE(parts.size(), s.strategy.pp);
        for (const auto& p : parts)
            sum += p.toInt();
        QCOMPARE(sum, 126);
    } catch (const InputError& e) {
        QFAIL(e.what());
    }
}

void TestScenarioIo::fewerLayersThanChunksIsError()
{
    // Exactly as many layers as chunks is valid (one layer each); one chunk more is not.
    const QString ok = patched(R"({"strategy": {"tp": 1, "pp": 8, "dp": 2, "vpp": 4}})");
    try {
        const Scenario s = parse_scenario_text(ok.toStdString(), "ok.json", catalog());
        QCOMPARE(s.strategy.pp * s.strategy.vpp, s.model.layers);
    } catch (const InputError& e) {
        QFAIL(e.what());
    }
    const QString bad = patched(R"({"model": {"name": "l31", "layers": 31, "hidden": 4096, "heads": 32, "kv_heads": 8,
        "ffn_hidden": 14336, "vocab": 128256}, "strategy": {"tp": 1, "pp": 8, "dp": 2, "vpp": 4}})");
    QVERIFY_THROWS_EXCEPTION(InputError, parse_scenario_text(bad.toStdString(), "bad.json", catalog()));
}

void TestScenarioIo::documentedDefaults()
{
    // Only tp and pp given: everything else takes the documented default.
    const QString text = patched(R"({"strategy": {"tp": 2, "pp": 2, "dp": null, "micro_batch": null},
                                     "training": {"precision": null}})");
    const Scenario s = parse_scenario_text(text.toStdString(), "defaults.json", catalog());
    QCOMPARE(s.strategy.dp, 4);
    QVERIFY(s.dp_derived);
    QCOMPARE(s.strategy.cp, 1);
    QCOMPARE(s.strategy.ep, 1);
    QCOMPARE(s.strategy.vpp, 1);
    QCOMPARE(s.strategy.micro_batch, 1);
    QCOMPARE(s.strategy.schedule, Schedule::one_f_one_b);
    QCOMPARE(qs(to_string(s.strategy.rank_order)), QStringLiteral("tp-cp-ep-dp-pp"));
    QCOMPARE(s.strategy.first_stage_layers, 0);
    QCOMPARE(s.strategy.last_stage_layers, 0);
    QCOMPARE(s.training.precision, Precision::bf16);
    QVERIFY(!s.search.has_value());
    QVERIFY(s.description.empty());
    // Defaults are the values of a default-constructed Strategy (one source of truth).
    Strategy expected;
    expected.tp = 2;
    expected.pp = 2;
    expected.dp = 4;
    QCOMPARE(s.strategy == expected, true);

    // An inline model's kv_heads defaults to heads (plain multi-head attention), ffn_act to gelu.
    const QString inl
        = patched(R"({"model": {"layers": 4, "hidden": 512, "heads": 8, "ffn_hidden": 2048, "vocab": 1000},
                                    "strategy": {"tp": 8, "pp": 1, "dp": 2}})");
    const Scenario m = parse_scenario_text(inl.toStdString(), "inline-defaults.json", catalog());
    QCOMPARE(m.model.kv_heads, 8);
    QCOMPARE(m.model.ffn_act, FfnActivation::gelu);
    QVERIFY(!m.model.tied_embeddings);
    QVERIFY(!m.model.is_moe());
    QVERIFY(!m.model.mla.has_value());
    QVERIFY(m.refs.model.empty());
}

void TestScenarioIo::dpDerivedFromGpuCount()
{
    // dp = total GPUs / (tp*pp*cp); EP reuses DP x CP ranks and does not enter the product.
    struct Case {
        const char* patch;
        int dp;
    };
    const Case cases[] = {
        { R"({"strategy": {"dp": null}})", 4 },
        { R"({"strategy": {"dp": null, "tp": 8, "pp": 1}})", 2 },
        { R"({"strategy": {"dp": null, "tp": 1, "pp": 1}})", 16 },
        { R"({"strategy": {"dp": null, "cp": 2}, "training": {"seq_len": 8192}})", 2 },
        { R"({"strategy": null})", 16 },
        { R"({"model": "mixtral-8x7b", "strategy": {"dp": null, "tp": 1, "pp": 2, "ep": 8}})", 8 },
    };
    for (const auto& c : cases) {
        try {
            const Scenario s = parse_scenario_text(patched(c.patch).toStdString(), "derive.json", catalog());
            QVERIFY2(s.dp_derived, c.patch);
            QVERIFY2(s.strategy.dp == c.dp, c.patch);
            QCOMPARE(s.strategy.total_gpus(), 16LL);
        } catch (const InputError& e) {
            QFAIL(qPrintable(QString::fromUtf8(c.patch) + QStringLiteral(": ") + QString::fromUtf8(e.what())));
        }
    }
    const Scenario given = parse_scenario_text(kBase, "given.json", catalog());
    QVERIFY(!given.dp_derived);
}

void TestScenarioIo::vppImpliesInterleaved()
{
    // docs/scenario-format.md: schedule omitted with vpp > 1 means the interleaved 1F1B schedule.
    const Scenario s = parse_scenario_text(patched(R"({"strategy": {"vpp": 2}})").toStdString(), "vpp.json", catalog());
    QCOMPARE(s.strategy.vpp, 2);
    QCOMPARE(s.strategy.schedule, Schedule::interleaved);
    // And it survives a round trip (the schedule is written out).
    const Scenario t = parse_scenario(scenario_to_json(s), "vpp2.json", catalog());
    QCOMPARE(t.strategy.schedule, Schedule::interleaved);
}

void TestScenarioIo::explicitScheduleWithVppKept()
{
    // An explicit schedule is never silently changed: vpp 2 with gpipe is an error, not a fix.
    QVERIFY_THROWS_EXCEPTION(InputError,
        parse_scenario_text(
            patched(R"({"strategy": {"vpp": 2, "schedule": "gpipe"}})").toStdString(), "gpipe.json", catalog()));
    const Scenario s
        = parse_scenario_text(patched(R"({"strategy": {"schedule": "gpipe"}})").toStdString(), "gpipe.json", catalog());
    QCOMPARE(s.strategy.schedule, Schedule::gpipe);
}

void TestScenarioIo::numberFormatMatchesPrintf()
{
    QCOMPARE(format_number("%.1f GiB", 61.27707), std::string("61.3 GiB"));
    QCOMPARE(format_number("%+.1f%%", -3.25), std::string("-3.2%"));
    QCOMPARE(format_number("%.0f", 8.0), std::string("8"));
    // Beyond the stack buffer the text is complete, not cut.
    const std::string huge = format_number("%.3f", 1e120);
    char reference[512];
    std::snprintf(reference, sizeof reference, "%.3f", 1e120);
    QVERIFY(huge.size() > 96);
    QCOMPARE(huge, std::string(reference));
}

// A search or sweep ignores the scenario's degrees: loaded for a search, a strategy that does not fit (here
// the derived dp 96 for a global batch of 12, or degrees that do not multiply out) is not refused; loaded as
// a plan it is, naming the rule.
void TestScenarioIo::searchUseSkipsTheExampleStrategy()
{
    nlohmann::json j = nlohmann::json::parse(R"({ "schema": 1, "model": "llama3-8b",
      "cluster": { "gpu": "H100-SXM5-80GB", "nodes": 12, "gpus_per_node": 8, "intra_node": "nvlink4-nvswitch",
                   "inter_node": "ib-ndr" },
      "training": { "global_batch": 12, "seq_len": 131072, "precision": "bf16" } })");
    const PresetCatalog& c = PresetCatalog::standard();
    try {
        parse_scenario(j, "unfit.json", c);
        QFAIL("the plan's dp 96 does not divide the batch of 12");
    } catch (const InputError& e) {
        QCOMPARE(e.key(), std::string("training.global_batch"));
    }
    const Scenario s = parse_scenario(j, "unfit.json", c, ScenarioUse::search);
    QCOMPARE(s.cluster.total_gpus(), 96LL);
    QCOMPARE(s.training.global_batch, 12LL);
    j["strategy"] = { { "tp", 7 } }; // 96 GPUs are no multiple of 7: no dp to derive
    QVERIFY_THROWS_EXCEPTION(InputError, parse_scenario(j, "unfit.json", c));
    QCOMPARE(parse_scenario(j, "unfit.json", c, ScenarioUse::search).strategy.tp, 7);
    // The rest of the file is still held to its rules.
    j["training"]["precision"] = "fp64";
    QVERIFY_THROWS_EXCEPTION(InputError, parse_scenario(j, "unfit.json", c, ScenarioUse::search));
}

QTEST_GUILESS_MAIN(TestScenarioIo)
#include "tst_scenario_io.moc"

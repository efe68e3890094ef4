#include "io/scenario_io.hpp"

#include "io/hetero_io.hpp"
#include "io/json_reader.hpp"
#include "io/layer_ranges_io.hpp"
#include "io/reliability_io.hpp"
#include "io/schedule_program_io.hpp"
#include "model/power_model.hpp"
#include "spec/hetero_rules.hpp"
#include "spec/input_error.hpp"
#include "spec/strategy_rules.hpp"
#include "spec/units.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

namespace parallax {

using nlohmann::json;

namespace {

// Upper bounds that keep arithmetic far from overflow; real plans are orders of magnitude smaller.
constexpr long long kMaxDegree = 1 << 20;
constexpr long long kMaxLayers = 100000;
constexpr long long kMaxWidth = 10'000'000;
constexpr long long kMaxVocab = 100'000'000;
constexpr long long kMaxNodes = 1'000'000;
constexpr long long kMaxGpusPerNode = 4096;
constexpr long long kMaxBatch = 1'000'000'000;
constexpr long long kMaxSeq = 1LL << 32;

// "source" may be a citation string or an object of per-key citations.
std::string read_source(JsonObjectReader& r)
{
    const json* v = r.raw("source");
    if (!v || v->is_null())
        return {};
    if (v->is_string())
        return v->get<std::string>();
    if (v->is_object())
        return v->dump();
    r.fail("source", "must be a string or an object of per-key citations, found " + json_type_name(*v));
}

void write_source(json& j, const std::string& source)
{
    if (source.empty())
        return;
    if (source.front() == '{') {
        try {
            j["source"] = json::parse(source);
            return;
        } catch (const json::exception&) {
        }
    }
    j["source"] = source;
}

std::vector<std::string> kind_names(PresetKind kind, const PresetCatalog& catalog)
{
    return catalog.names(kind);
}

const PresetEntry& find_preset(PresetKind kind, const std::string& name, const std::string& file,
    const std::string& path, const PresetCatalog& catalog)
{
    if (const PresetEntry* e = catalog.find(kind, name))
        return *e;
    std::string rule = "unknown " + std::string(to_string(kind)) + " preset \"" + name + "\"";
    const std::string guess = closest_match(name, kind_names(kind, catalog));
    if (!guess.empty())
        rule += " (did you mean \"" + guess + "\"?)";
    rule += "; `parallax-cli presets " + std::string(to_string(kind)) + "` lists them";
    throw InputError(file, path, rule);
}

void require_object_or_name(const json& j, const std::string& file, const std::string& path)
{
    if (!j.is_string() && !j.is_object())
        throw InputError(file, path, "must be a preset name (string) or an inline object, found " + json_type_name(j));
}

} // namespace

GpuSpec parse_gpu(const json& j, const std::string& file, const std::string& path)
{
    JsonObjectReader r(j, file, path);
    GpuSpec g;
    g.name = r.get_string("name");
    const std::string arch = r.get_string("architecture", std::string("generic"));
    if (!architecture_from_string(arch, g.architecture))
        r.fail("architecture",
            "must be one of generic, volta, ampere, hopper, blackwell, cdna2, cdna3; got \"" + arch + "\"");
    const json* peaks = r.raw("peak_TFLOPs");
    if (!peaks)
        r.fail("peak_TFLOPs", "missing (required): dense peak TFLOP/s per precision");
    JsonObjectReader pr(*peaks, file, r.path_of("peak_TFLOPs"));
    bool any = false;
    for (int i = 0; i < kPrecisionCount; ++i) {
        const auto v = pr.get_optional_number(std::string(kPrecisionNames[i]), 0, 1e7);
        g.peak_flops[i] = v.value_or(0) * units::kTFLOP;
        any = any || g.peak_flops[i] > 0;
    }
    pr.finish();
    if (!any)
        r.fail("peak_TFLOPs", "needs at least one precision with a positive peak");
    g.memory_bytes = r.get_number("memory_GiB", 1e-3, 1e6) * units::kGiB;
    g.memory_bw_Bps = r.get_number("memory_bw_GBps", 1e-3, 1e7) * units::kGB;
    g.tdp_W = r.get_number("tdp_W", 1, 1e5);
    g.idle_W = r.get_number("idle_W", 0, 1e5);
    if (g.idle_W >= g.tdp_W)
        r.fail("idle_W", "must be below tdp_W (" + std::to_string(g.tdp_W) + ")");
    g.power_limit_W = r.get_number("power_limit_W", 1, 1e5, 0.0);
    if (g.power_limit_W > g.tdp_W)
        r.fail("power_limit_W", "must not exceed tdp_W (" + std::to_string(g.tdp_W) + ")");
    if (g.power_limit_W > 0 && g.power_limit_W <= g.idle_W)
        r.fail("power_limit_W", "must be above idle_W (" + std::to_string(g.idle_W) + ")");
    g.active_idle_W = r.get_number("active_idle_W", 0, 1e5, 0.0);
    if (g.active_idle_W > 0 && (g.active_idle_W < g.idle_W || g.active_idle_W >= g.tdp_W))
        r.fail("active_idle_W",
            "must lie between idle_W (" + std::to_string(g.idle_W) + ") and tdp_W (" + std::to_string(g.tdp_W) + ")");
    g.sm_count = static_cast<int>(r.get_int("sm_count", 1, 100000, 0LL));
    g.clock_MHz = r.get_number("clock_MHz", 1, 1e5, 0.0);
    g.max_clock_MHz = r.get_number("max_clock_MHz", 1, 1e5, 0.0);
    if (g.max_clock_MHz > 0 && g.max_clock_MHz < g.clock_MHz)
        r.fail("max_clock_MHz", "must not be below clock_MHz (" + std::to_string(g.clock_MHz) + ")");
    g.tdp_gemm_TFLOPs = r.get_number("tdp_gemm_TFLOPs", 1e-3, 1e7, 0.0);
    const double peak16 = std::max(g.peak(Precision::bf16), g.peak(Precision::fp16)) / units::kTFLOP;
    if (g.tdp_gemm_TFLOPs > 0 && peak16 <= 0)
        r.fail("tdp_gemm_TFLOPs", "needs a bf16 or fp16 entry in peak_TFLOPs (it is a 16-bit GEMM rate)");
    if (g.tdp_gemm_TFLOPs > 0 && g.tdp_gemm_TFLOPs >= peak16)
        r.fail("tdp_gemm_TFLOPs", "must be below the 16-bit dense peak (" + std::to_string(peak16) + " TFLOP/s)");
    g.source = read_source(r);
    r.raw("notes");
    r.finish();
    return g;
}

FabricSpec parse_fabric(const json& j, const std::string& file, const std::string& path)
{
    JsonObjectReader r(j, file, path);
    FabricSpec f;
    f.name = r.get_string("name", std::string("custom"));
    if (r.has("kind")) {
        const std::string kind = r.get_string("kind");
        if (!fabric_kind_from_string(kind, f.kind))
            r.fail("kind", "must be one of nvlink, nvswitch, pcie, xgmi, ib, roce, tcp; got \"" + kind + "\"");
    }
    f.bw_Bps = r.get_number("bw_GBps", 1e-3, 1e6) * units::kGB;
    f.latency_s = r.get_number("latency_us", 0, 1e6) * units::kMicrosecond;
    f.rail_optimized = r.get_bool("rail_optimized", true);
    f.oversubscription = r.get_number("oversubscription", 1, 1000, 1.0);
    f.source = read_source(r);
    r.raw("notes");
    r.finish();
    return f;
}

ModelSpec parse_model(const json& j, const std::string& file, const std::string& path)
{
    JsonObjectReader r(j, file, path);
    ModelSpec m;
    m.name = r.get_string("name", std::string("custom-model"));
    m.layers = static_cast<int>(r.get_int("layers", 1, kMaxLayers));
    m.hidden = r.get_int("hidden", 1, kMaxWidth);
    m.heads = static_cast<int>(r.get_int("heads", 1, kMaxWidth));
    m.kv_heads = static_cast<int>(r.get_int("kv_heads", 1, kMaxWidth, static_cast<long long>(m.heads)));
    m.ffn_hidden = r.get_int("ffn_hidden", 1, kMaxWidth);
    m.vocab = r.get_int("vocab", 1, kMaxVocab);
    const std::string act = r.get_choice("ffn_act", { "gelu", "swiglu" }, std::string("gelu"));
    m.ffn_act = act == "swiglu" ? FfnActivation::swiglu : FfnActivation::gelu;
    m.tied_embeddings = r.get_bool("tied_embeddings", false);
    if (r.has("dropout"))
        m.dropout = r.get_bool("dropout");
    if (r.has("head_dim"))
        m.head_dim_override = static_cast<int>(r.get_int("head_dim", 1, 65536));
    m.sliding_window = static_cast<int>(r.get_int("sliding_window", 0, kMaxSeq, 0LL));
    m.full_attention_every = static_cast<int>(r.get_int("full_attention_every", 0, kMaxLayers, 0LL));
    m.attention_sinks = r.get_bool("attention_sinks", false);
    m.yarn_rope = r.get_bool("yarn_rope", false);
    m.expert_bias = r.get_bool("expert_bias", false);
    if (m.kv_heads > m.heads || m.heads % m.kv_heads != 0)
        r.fail("kv_heads", "must divide heads (" + std::to_string(m.heads) + "), got " + std::to_string(m.kv_heads));
    if (!m.head_dim_override && m.hidden % m.heads != 0)
        r.fail("heads", "must divide hidden (" + std::to_string(m.hidden) + ") unless head_dim is given");
    if (const json* att = r.raw("attention"); att && !att->is_null()) {
        JsonObjectReader a(*att, file, r.path_of("attention"));
        const std::string kind = a.get_choice("kind", { "mha", "gqa", "mla" });
        if (kind == "mla") {
            MlaSpec mla;
            mla.q_lora_rank = static_cast<int>(a.get_int("q_lora_rank", 0, kMaxWidth, 0LL));
            mla.kv_lora_rank = static_cast<int>(a.get_int("kv_lora_rank", 1, kMaxWidth));
            mla.qk_nope_head_dim = static_cast<int>(a.get_int("qk_nope_head_dim", 1, 65536));
            mla.qk_rope_head_dim = static_cast<int>(a.get_int("qk_rope_head_dim", 0, 65536));
            mla.v_head_dim = static_cast<int>(a.get_int("v_head_dim", 1, 65536));
            m.mla = mla;
        }
        a.finish();
    }
    if (const json* moe = r.raw("moe"); moe && !moe->is_null()) {
        JsonObjectReader mr(*moe, file, r.path_of("moe"));
        MoeSpec e;
        e.experts = static_cast<int>(mr.get_int("experts", 1, kMaxWidth));
        e.top_k = static_cast<int>(mr.get_int("top_k", 1, kMaxWidth));
        if (e.top_k > e.experts)
            mr.fail("top_k", "must not exceed experts (" + std::to_string(e.experts) + ")");
        e.expert_ffn_hidden = mr.get_int("expert_ffn_hidden", 1, kMaxWidth);
        e.shared_experts = static_cast<int>(mr.get_int("shared_experts", 0, kMaxWidth, 0LL));
        e.moe_layer_freq = static_cast<int>(mr.get_int("moe_layer_freq", 1, kMaxLayers, 1LL));
        e.first_dense_layers = static_cast<int>(mr.get_int("first_dense_layers", 0, kMaxLayers, 0LL));
        if (e.first_dense_layers >= m.layers)
            mr.fail("first_dense_layers", "must be below the layer count (" + std::to_string(m.layers) + ")");
        e.capacity_factor = mr.get_optional_number("capacity_factor", 1e-3, 1e4);
        mr.finish();
        m.moe = e;
    }
    if (m.expert_bias && !m.moe)
        r.fail("expert_bias", "needs a moe section: a dense model has no experts");
    if (r.has("params_B"))
        m.params_B = r.get_number("params_B", 0, 1e9);
    m.source = read_source(r);
    r.raw("notes");
    r.finish();
    return m;
}

// strategy.schedule_program: a custom schedule; its chunks per stage are the virtual stages.
void read_strategy_program(JsonObjectReader& r, Strategy& s)
{
    const json* text = r.raw("schedule_program");
    if (!text) {
        if (s.schedule == Schedule::custom && !s.program)
            r.fail("schedule", "custom needs strategy.schedule_program (docs/schedule-programs.md)");
        return;
    }
    if (r.has("schedule") && s.schedule != Schedule::custom)
        r.fail("schedule",
            "must be absent or \"custom\" when strategy.schedule_program is given, got \""
                + std::string(to_string(s.schedule)) + "\"");
    s.program = read_schedule_program(*text, r.file(), r.path_of("schedule_program"));
    s.schedule = Schedule::custom;
    const int chunks = program_vpp(*s.program);
    if (r.has("vpp") && s.vpp != chunks)
        r.fail("vpp",
            "is " + std::to_string(s.vpp) + " but the schedule program runs " + std::to_string(chunks)
                + " chunk(s) per stage");
    s.vpp = chunks;
}

// strategy.recompute_modules: Megatron's selective recomputation by submodule, a list of names without
// repeats; only with recompute "selective" (the key is meaningless otherwise).
void read_recompute_modules(JsonObjectReader& r, Strategy& s)
{
    const json* list = r.raw("recompute_modules");
    if (!list || list->is_null())
        return;
    if (!list->is_array() || list->empty())
        r.fail("recompute_modules", "must be a non-empty array of module names, found " + json_type_name(*list));
    std::string names;
    for (std::string_view name : recompute_module_names(0xff))
        names += (names.empty() ? "" : ", ") + std::string(name);
    unsigned char bits = 0;
    for (const json& v : *list) {
        RecomputeModule m {};
        if (!v.is_string() || !recompute_module_from_string(v.get<std::string>(), m))
            r.fail("recompute_modules", "entries are module names (" + names + "), found " + v.dump());
        const unsigned char bit = recompute_module_bit(m);
        if (bits & bit)
            r.fail("recompute_modules", "names " + v.get<std::string>() + " twice");
        bits |= bit;
    }
    if (s.recompute != Recompute::selective)
        r.fail("recompute_modules",
            "applies to recompute \"selective\" only; strategy.recompute is " + std::string(to_string(s.recompute)));
    s.recompute_modules = bits;
}

Strategy parse_strategy(
    const json& j, const std::string& file, const std::string& path, Strategy s, bool* dp_given, bool* schedule_given)
{
    JsonObjectReader r(j, file, path);
    auto degree = [&](const char* key, int current) {
        return static_cast<int>(r.get_int(key, 1, kMaxDegree, static_cast<long long>(current)));
    };
    s.tp = degree("tp", s.tp);
    s.pp = degree("pp", s.pp);
    if (dp_given)
        *dp_given = r.has("dp");
    s.dp = degree("dp", s.dp);
    s.cp = degree("cp", s.cp);
    s.ep = degree("ep", s.ep);
    s.vpp = degree("vpp", s.vpp);
    s.micro_batch = degree("micro_batch", s.micro_batch);
    s.sequence_parallel = r.get_bool("sequence_parallel", s.sequence_parallel);
    {
        const std::string v
            = r.get_choice("recompute", { "none", "selective", "full" }, std::string(to_string(s.recompute)));
        recompute_from_string(v, s.recompute);
    }
    read_recompute_modules(r, s);
    s.zero = static_cast<int>(r.get_int("zero", 0, 3, static_cast<long long>(s.zero)));
    if (schedule_given)
        *schedule_given = r.has("schedule");
    {
        const std::string v = r.get_choice("schedule",
            { "gpipe", "1f1b", "interleaved", "zb-h1", "dualpipe", "custom" }, std::string(to_string(s.schedule)));
        schedule_from_string(v, s.schedule);
    }
    read_strategy_program(r, s);
    {
        const std::string v
            = r.get_choice("optimizer", { "adam", "adam8bit", "sgd", "lion" }, std::string(to_string(s.optimizer)));
        optimizer_from_string(v, s.optimizer);
    }
    s.offload_optimizer = r.get_bool("offload_optimizer", s.offload_optimizer);
    s.gradient_release = r.get_bool("gradient_release", s.gradient_release);
    if (r.has("rank_order")) {
        const std::string v = r.get_string("rank_order");
        if (auto err = rank_order_from_string(v, s.rank_order))
            r.fail("rank_order", *err);
    }
    s.first_stage_layers = static_cast<int>(r.get_int("first_stage_layers", 1, kMaxLayers,
        s.first_stage_layers > 0 ? std::optional<long long>(s.first_stage_layers) : std::optional<long long>(0LL)));
    s.last_stage_layers = static_cast<int>(r.get_int("last_stage_layers", 1, kMaxLayers,
        s.last_stage_layers > 0 ? std::optional<long long>(s.last_stage_layers) : std::optional<long long>(0LL)));
    s.expert_tp = static_cast<int>(r.get_int("expert_tp", 1, kMaxDegree,
        s.expert_tp > 0 ? std::optional<long long>(s.expert_tp) : std::optional<long long>(0LL)));
    {
        const std::string v = r.get_choice("cp_kind", { "ring", "all-to-all" }, std::string(to_string(s.cp_kind)));
        cp_kind_from_string(v, s.cp_kind);
    }
    s.overlap_grad_reduce = r.get_bool("overlap_grad_reduce", s.overlap_grad_reduce);
    s.overlap_param_gather = r.get_bool("overlap_param_gather", s.overlap_param_gather);
    s.tp_comm_overlap = r.get_bool("tp_comm_overlap", s.tp_comm_overlap);
    s.ep_overlap = r.get_bool("ep_overlap", s.ep_overlap);
    s.ep_tile_overlap = r.get_bool("ep_tile_overlap", s.ep_tile_overlap);
    s.offload_activations = r.get_bool("offload_activations", s.offload_activations);
    s.offload_params = r.get_bool("offload_params", s.offload_params);
    r.finish();
    return s;
}

GpuSpec resolve_gpu(
    const json& j, const std::string& file, const std::string& path, const PresetCatalog& catalog, std::string* ref)
{
    require_object_or_name(j, file, path);
    if (j.is_string()) {
        const PresetEntry& e = find_preset(PresetKind::gpus, j.get<std::string>(), file, path, catalog);
        if (ref)
            *ref = e.name;
        return parse_gpu(e.json, e.origin, "");
    }
    if (ref)
        ref->clear();
    return parse_gpu(j, file, path);
}

FabricSpec resolve_fabric(
    const json& j, const std::string& file, const std::string& path, const PresetCatalog& catalog, std::string* ref)
{
    require_object_or_name(j, file, path);
    if (j.is_string()) {
        const PresetEntry& e = find_preset(PresetKind::fabrics, j.get<std::string>(), file, path, catalog);
        if (ref)
            *ref = e.name;
        return parse_fabric(e.json, e.origin, "");
    }
    if (ref)
        ref->clear();
    return parse_fabric(j, file, path);
}

ModelSpec resolve_model(
    const json& j, const std::string& file, const std::string& path, const PresetCatalog& catalog, std::string* ref)
{
    require_object_or_name(j, file, path);
    if (j.is_string()) {
        const PresetEntry& e = find_preset(PresetKind::models, j.get<std::string>(), file, path, catalog);
        if (ref)
            *ref = e.name;
        return parse_model(e.json, e.origin, "");
    }
    if (ref)
        ref->clear();
    return parse_model(j, file, path);
}

namespace {

ClusterSpec parse_cluster_object(
    const json& j, const std::string& file, const std::string& path, const PresetCatalog& catalog, ScenarioRefs* refs)
{
    JsonObjectReader r(j, file, path);
    ClusterSpec c;
    c.name = r.get_string("name", std::string("custom-cluster"));
    if (const json* groups = r.raw("groups")) {
        for (const char* key : { "gpu", "nodes", "gpus_per_node", "intra_node" })
            if (r.has(key))
                r.fail(key, "a cluster has either groups or gpu/nodes/gpus_per_node/intra_node, not both");
        read_node_groups(*groups, file, r.path_of("groups"), catalog, c);
    } else {
        const json* gpu = r.raw("gpu");
        if (!gpu)
            r.fail("gpu", "missing (required): a GPU preset name or an inline GPU object (or node groups)");
        c.gpu = resolve_gpu(*gpu, file, r.path_of("gpu"), catalog, refs ? &refs->gpu : nullptr);
        c.nodes = static_cast<int>(r.get_int("nodes", 1, kMaxNodes));
        c.gpus_per_node = static_cast<int>(r.get_int("gpus_per_node", 1, kMaxGpusPerNode));
        const json* intra = r.raw("intra_node");
        if (!intra)
            r.fail("intra_node", "missing (required): a fabric preset name or {\"bw_GBps\", \"latency_us\"}");
        c.intra_node
            = resolve_fabric(*intra, file, r.path_of("intra_node"), catalog, refs ? &refs->intra_node : nullptr);
    }
    const json* inter = r.raw("inter_node");
    if (!inter)
        r.fail("inter_node", "missing (required): a fabric preset name or {\"bw_GBps\", \"latency_us\"}");
    c.inter_node = resolve_fabric(*inter, file, r.path_of("inter_node"), catalog, refs ? &refs->inter_node : nullptr);
    if (r.raw("node_overhead_W"))
        c.node_overhead_W = r.get_number("node_overhead_W", 0, 1e7);
    if (r.raw("nodes_per_rack"))
        c.nodes_per_rack = static_cast<int>(r.get_int("nodes_per_rack", 1, 100000));
    if (r.raw("host_memory_GB"))
        c.host_memory_GB = r.get_number("host_memory_GB", 1, 1e6);
    c.source = read_source(r);
    r.raw("notes");
    r.raw("description");
    r.finish();
    return c;
}

} // namespace

ClusterSpec resolve_cluster(
    const json& j, const std::string& file, const std::string& path, const PresetCatalog& catalog, ScenarioRefs* refs)
{
    require_object_or_name(j, file, path);
    if (j.is_string()) {
        const PresetEntry& e = find_preset(PresetKind::clusters, j.get<std::string>(), file, path, catalog);
        ScenarioRefs inner;
        ClusterSpec c = parse_cluster_object(e.json, e.origin, "", catalog, &inner);
        if (refs)
            refs->cluster = e.name;
        return c;
    }
    if (refs)
        refs->cluster.clear();
    return parse_cluster_object(j, file, path, catalog, refs);
}

namespace {
void check_power(const Scenario& s, const std::string& file, ScenarioUse use);
}

void check_power_settings(const Scenario& s, const std::string& file)
{
    check_power(s, file, ScenarioUse::plan);
}

namespace {

void check_power(const Scenario& s, const std::string& file, ScenarioUse use)
{
    const GpuSpec& gpu = s.cluster.gpu;
    const TrainingSpec& t = s.training;
    auto check_clock = [&](const std::string& key, double mhz) {
        if (gpu.clock_MHz <= 0)
            throw InputError(file, key,
                "needs the GPU's nominal clock (cluster.gpu.clock_MHz), which " + gpu.name + " does not give");
        const PowerGeneration& pg = power_generation(gpu.architecture);
        const double lo = pg.min_clock * gpu.clock_MHz;
        const double hi = std::max(gpu.clock_MHz, gpu.max_clock_MHz);
        if (!(mhz >= lo - 1e-9 && mhz <= hi + 1e-9))
            throw InputError(file, key,
                "must be within " + std::to_string(static_cast<long long>(std::ceil(lo))) + "-"
                    + std::to_string(static_cast<long long>(hi)) + " MHz for the " + gpu.name + ", got "
                    + std::to_string(mhz));
    };
    if (t.clock_MHz > 0)
        check_clock("training.clock_MHz", t.clock_MHz);
    for (double v : t.stage_clock_MHz)
        check_clock("training.stage_clock_MHz", v);
    if (use == ScenarioUse::plan && !t.stage_clock_MHz.empty()
        && static_cast<int>(t.stage_clock_MHz.size()) != s.strategy.pp)
        throw InputError(file, "training.stage_clock_MHz",
            "needs one clock per pipeline stage (pp = " + std::to_string(s.strategy.pp) + "), got "
                + std::to_string(t.stage_clock_MHz.size()));
    if (t.power_cap_W > 0 && t.power_cap_W > gpu.tdp_W)
        throw InputError(
            file, "training.power_cap_W", "must not exceed the GPU's tdp_W (" + std::to_string(gpu.tdp_W) + ")");
    if (t.power_cap_W > 0 && t.power_cap_W <= gpu.idle_W)
        throw InputError(
            file, "training.power_cap_W", "must be above the GPU's idle_W (" + std::to_string(gpu.idle_W) + ")");
    if (t.inlet_temp_C && !(*t.inlet_temp_C >= -20 && *t.inlet_temp_C <= 70))
        throw InputError(file, "training.inlet_temp_C", "must be a number in [-20, 70]");
}

} // namespace

void validate_scenario(const Scenario& s, const std::string& file)
{
    const PlanInputs in { s.model, s.training, s.cluster.gpu, s.cluster.total_gpus() };
    const Rule rule = check_strategy(in, s.strategy);
    if (rule != Rule::ok)
        throw InputError(file, rule_key(rule, s.strategy), explain(rule, in, s.strategy));
}

namespace {

// training.software: a catalogued release of the training's framework.
const SoftwareRelease* read_software_release(JsonObjectReader& t, Framework framework)
{
    const std::string id = t.get_string("software");
    const SoftwareRelease* release = find_software_release(id);
    const std::string known = software_release_ids(framework);
    if (!release)
        t.fail("software",
            "unknown release '" + id + "'; "
                + (known.empty() ? std::string("no release of ") + std::string(to_string(framework))
                            + " is catalogued: leave the key out"
                                 : "known releases of " + std::string(to_string(framework)) + ": " + known));
    if (release->framework != framework)
        t.fail("software",
            "'" + id + "' is a release of " + std::string(to_string(release->framework)) + ", not of "
                + std::string(to_string(framework)));
    return release;
}

// The training's numerics and software: precision, framework, kernels, MoE routing, CUDA graphs.
void read_training_software(JsonObjectReader& t, TrainingSpec& training)
{
    const std::string p
        = t.get_choice("precision", { "fp32", "tf32", "bf16", "fp16", "fp8", "fp4" }, std::string("bf16"));
    training.precision = *precision_from_string(p);
    training.flash_attention = t.get_bool("flash_attention", true);
    training.grad_reduce_in_fp32 = t.get_bool("grad_reduce_in_fp32", false);
    {
        const std::string fw = t.get_choice("framework",
            { "megatron", "torchtitan", "torchtitan-compile", "megatron-deepspeed" }, std::string("megatron"));
        framework_from_string(fw, training.framework);
    }
    training.grad_reduce_in_bf16 = t.get_bool("grad_reduce_in_bf16", false);
    if (t.has("software"))
        training.software = read_software_release(t, training.framework);
    {
        const std::string k
            = t.get_choice("attention_kernel", { "framework", "best", "flash2" }, std::string("framework"));
        if (k == "best")
            training.attention_kernel = AttentionKernel::best;
        else if (k == "flash2")
            training.attention_kernel = AttentionKernel::flash2;
    }
    training.fp8_scaling = *fp8_scaling_from_string(t.get_choice("fp8_scaling",
        { kFp8ScalingNames.begin(), kFp8ScalingNames.end() }, std::string(to_string(Fp8Scaling::tensorwise))));
    training.moe_imbalance = t.get_number("moe_imbalance", 1, 1e4, 1.0);
    training.moe_dispatcher
        = t.get_choice("moe_dispatcher", { "all-to-all", "deepep" }, std::string("all-to-all")) == "deepep"
        ? MoeDispatcher::deepep
        : MoeDispatcher::all_to_all;
    {
        const std::string g = t.get_choice("cuda_graphs", { "none", "layers", "full-iteration" }, std::string("none"));
        training.cuda_graphs = g == "layers" ? CudaGraphs::layers
            : g == "full-iteration"          ? CudaGraphs::full_iteration
                                             : CudaGraphs::none;
    }
}

void read_expert_load(JsonObjectReader& t, TrainingSpec& training)
{
    if (const json* load = t.raw("moe_expert_load"); load && !load->is_null()) {
        if (!load->is_array())
            t.fail("moe_expert_load", "must be an array of per-expert loads, found " + json_type_name(*load));
        for (std::size_t i = 0; i < load->size(); ++i) {
            const json& v = (*load)[i];
            if (!v.is_number() || !(v.get<double>() >= 0) || !std::isfinite(v.get<double>()))
                t.fail("moe_expert_load", "entry " + std::to_string(i) + " must be a non-negative number");
            training.moe_expert_load.push_back(v.get<double>());
        }
    }
}

// Power and DVFS (power_model.hpp): clocks within the GPU's range, a cap between idle and TDP.
void read_training_power(JsonObjectReader& t, const GpuSpec& gpu, TrainingSpec& training)
{
    auto check_clock = [&](const std::string& key, double mhz) {
        if (gpu.clock_MHz <= 0)
            t.fail(key, "needs the GPU's nominal clock (cluster.gpu.clock_MHz), which " + gpu.name + " does not give");
        const PowerGeneration& pg = power_generation(gpu.architecture);
        const double lo = pg.min_clock * gpu.clock_MHz;
        const double hi = std::max(gpu.clock_MHz, gpu.max_clock_MHz);
        if (mhz < lo - 1e-9 || mhz > hi + 1e-9)
            t.fail(key,
                "must be within " + std::to_string(static_cast<long long>(std::ceil(lo))) + "-"
                    + std::to_string(static_cast<long long>(hi)) + " MHz for the " + gpu.name + ", got "
                    + std::to_string(mhz));
    };
    if (t.raw("clock_MHz")) {
        training.clock_MHz = t.get_number("clock_MHz", 1, 1e5);
        check_clock("clock_MHz", training.clock_MHz);
    }
    if (const json* sc = t.raw("stage_clock_MHz"); sc && !sc->is_null()) {
        if (!sc->is_array() || sc->empty())
            t.fail("stage_clock_MHz",
                "must be an array of clocks in MHz, one per pipeline stage, found " + json_type_name(*sc));
        for (std::size_t i = 0; i < sc->size(); ++i) {
            const json& v = (*sc)[i];
            if (!v.is_number() || !std::isfinite(v.get<double>()))
                t.fail("stage_clock_MHz", "entry " + std::to_string(i) + " must be a number (MHz)");
            check_clock("stage_clock_MHz", v.get<double>());
            training.stage_clock_MHz.push_back(v.get<double>());
        }
    }
    if (t.raw("power_cap_W")) {
        training.power_cap_W = t.get_number("power_cap_W", 1, 1e5);
        if (training.power_cap_W > gpu.tdp_W)
            t.fail("power_cap_W", "must not exceed the GPU's tdp_W (" + std::to_string(gpu.tdp_W) + ")");
        if (training.power_cap_W <= gpu.idle_W)
            t.fail("power_cap_W", "must be above the GPU's idle_W (" + std::to_string(gpu.idle_W) + ")");
    }
    if (t.raw("inlet_temp_C"))
        training.inlet_temp_C = t.get_number("inlet_temp_C", -20, 70);
}

// training.data: the dataset's storage and the loader (data_pipeline.hpp); absent: the defaults.
void read_training_data(JsonObjectReader& t, TrainingSpec& training)
{
    const json* data = t.raw("data");
    if (!data)
        return;
    if (!data->is_object())
        t.fail("data", "must be an object, found " + json_type_name(*data));
    JsonObjectReader d(*data, t.file(), t.path_of("data"));
    DataPipelineSpec& p = training.data;
    p.pretokenized = d.get_bool("pretokenized", true);
    if (d.has("bytes_per_token"))
        p.bytes_per_token = d.get_number("bytes_per_token", 0.1, 1e4);
    p.storage_read_GBps_per_node = d.get_number("storage_read_GBps_per_node", 1e-4, 1e5, 2.0);
    p.tokenize_tokens_per_s_per_core = d.get_number("tokenize_tokens_per_s_per_core", 1, 1e10, 2.5e5);
    p.workers = static_cast<int>(d.get_int("workers", 0, 1024, 2));
    p.prefetch_batches = static_cast<int>(d.get_int("prefetch_batches", 0, 1024, 2));
    if (p.workers > 0 && p.prefetch_batches < 1)
        d.fail("prefetch_batches", "must be at least 1 when workers > 0 (each worker prepares a batch ahead)");
    if (d.has("cpu_cores_per_node"))
        p.cpu_cores_per_node = static_cast<int>(d.get_int("cpu_cores_per_node", 1, 100000));
    d.finish();
}

json training_data_to_json(const DataPipelineSpec& p)
{
    json d;
    d["pretokenized"] = p.pretokenized;
    if (p.bytes_per_token)
        d["bytes_per_token"] = *p.bytes_per_token;
    d["storage_read_GBps_per_node"] = p.storage_read_GBps_per_node;
    d["tokenize_tokens_per_s_per_core"] = p.tokenize_tokens_per_s_per_core;
    d["workers"] = p.workers;
    d["prefetch_batches"] = p.prefetch_batches;
    if (p.cpu_cores_per_node)
        d["cpu_cores_per_node"] = *p.cpu_cores_per_node;
    return d;
}

void read_training(const json& training_json, const std::string& file, const GpuSpec& gpu, TrainingSpec& training)
{
    JsonObjectReader t(training_json, file, "training");
    training.global_batch = t.get_int("global_batch", 1, kMaxBatch);
    training.seq_len = t.get_int("seq_len", 1, kMaxSeq);
    read_training_software(t, training);
    if (training.fp8_scaling == Fp8Scaling::mxfp8 && gpu.architecture != GpuArchitecture::blackwell
        && (training.precision == Precision::fp8 || training.precision == Precision::fp4))
        t.fail("fp8_scaling",
            "mxfp8 needs block-scaled tensor cores (Blackwell); " + gpu.name + " is "
                + std::string(to_string(gpu.architecture)));
    read_expert_load(t, training);
    if (t.has("tokens_to_train"))
        training.tokens_to_train = t.get_number("tokens_to_train", 1, 1e18);
    read_training_power(t, gpu, training);
    read_training_data(t, training);
    t.finish();
}

// An explicit pipeline: the stages, and the other strategy keys for every stage. The plain degrees
// repeat the first stage's first replica so code that reads one strategy sees a representative one.
void read_stages_strategy(const json& strategy, const std::string& file, Scenario& s)
{
    for (const char* key : { "tp", "pp", "dp", "schedule_program" })
        if (strategy.contains(key))
            throw InputError(file, std::string("strategy.") + key,
                "is not given with strategy.stages: the stages and their replicas say it");
    s.stages = read_pipeline_stages(strategy.at("stages"), file, "strategy.stages");
    s.batch_split = read_batch_split(strategy, file);
    json rest = strategy;
    rest.erase("stages");
    rest.erase("batch_split");
    s.strategy = parse_strategy(rest, file, "strategy", Strategy {});
    s.strategy.pp = static_cast<int>(s.stages.size());
    s.strategy.tp = s.stages.front().replicas.front().tp;
    s.strategy.dp = static_cast<int>(s.stages.front().replicas.size());
}

// A schedule program fixes the pipeline depth and the micro-batch count.
void check_program_fits(const Scenario& s, const std::string& file)
{
    const ScheduleProgram* p = s.strategy.program;
    if (!p)
        return;
    const std::string key = "strategy.schedule_program";
    if (static_cast<int>(p->stages.size()) != s.strategy.pp)
        throw InputError(file, key,
            "has " + std::to_string(p->stages.size()) + " stages but strategy.pp is " + std::to_string(s.strategy.pp));
    const long long m = microbatch_count(s.training, s.strategy);
    if (m != p->microbatches)
        throw InputError(file, key,
            "runs " + std::to_string(p->microbatches) + " micro-batches per step but the batch gives "
                + std::to_string(m) + " (training.global_batch / (dp x micro_batch))");
}

// The strategy; dp, when not given, is what the cluster leaves after tp*pp*cp.
void read_scenario_strategy(JsonObjectReader& r, const std::string& file, Scenario& s, ScenarioUse use)
{
    bool dp_given = false;
    bool schedule_given = false;
    if (const json* strategy = r.raw("strategy")) {
        const bool composite = strategy->is_object() && strategy->contains("layers");
        if (composite && use == ScenarioUse::search)
            throw InputError(file, "strategy.layers",
                "search and sweep vary the layer-level degrees of the whole model and would drop the ranges (remove "
                "strategy.layers and add \"search\": {\"composite\": {}} to search composites, or predict this "
                "plan; docs/composite-strategies.md)");
        // The ranges are read once the plan is known (read_layer_ranges checks them against it).
        json plain = *strategy;
        if (composite)
            plain.erase("layers");
        if (plain.is_object() && plain.contains("stages")) {
            if (composite)
                throw InputError(file, "strategy.layers",
                    "is not supported yet with strategy.stages (docs/composite-strategies.md)");
            read_stages_strategy(plain, file, s);
            return;
        }
        s.strategy = parse_strategy(plain, file, "strategy", Strategy {}, &dp_given, &schedule_given);
    }
    if (s.strategy.program && use == ScenarioUse::search)
        throw InputError(file, "strategy.schedule_program",
            "search and sweep vary the pipeline and its schedule; a fixed program cannot be searched (remove it "
            "to search the built-in schedules, or predict this plan)");
    // Documented default: vpp > 1 means interleaved 1F1B (a program's chunks are its own).
    if (!schedule_given && s.strategy.vpp > 1 && !s.strategy.program)
        s.strategy.schedule = Schedule::interleaved;
    if (!dp_given) {
        const long long total = s.cluster.total_gpus();
        const long long mp = s.strategy.model_parallel_gpus();
        if (use == ScenarioUse::search && (mp <= 0 || total % mp != 0 || total / mp > kMaxDegree)) {
            s.strategy.dp = 1; // a search finds its own degrees
            s.dp_derived = true;
            return;
        }
        if (total % mp != 0)
            throw InputError(file, "strategy.dp",
                "cannot derive dp: the cluster's " + std::to_string(total)
                    + " GPUs are not a multiple of tp*pp*cp = " + std::to_string(mp));
        if (total / mp > kMaxDegree)
            throw InputError(file, "strategy.dp", "derived dp " + std::to_string(total / mp) + " is too large");
        s.strategy.dp = static_cast<int>(total / mp);
        s.dp_derived = true;
    }
    check_program_fits(s, file);
}

// The largest expert TP a composite search may try (as the strategy reader's degree bound).
constexpr long long kMaxCompositeExpertTp = 1024;
constexpr long long kMaxCompositeCandidates = 1000000;
constexpr long long kMaxCompositeBasePlans = 100;

CompositeSearchSpec parse_composite_search(const json& composite, const std::string& file)
{
    JsonObjectReader cr(composite, file, "search.composite");
    CompositeSearchSpec c;
    c.recompute_ranges = cr.get_bool("recompute_ranges", true);
    c.edge_stage_layers = cr.get_bool("edge_stage_layers", true);
    c.range_tp = cr.get_bool("range_tp", true);
    if (const json* etp = cr.raw("expert_tp"); etp && !etp->is_null()) {
        if (!etp->is_array())
            cr.fail("expert_tp", "must be a list of expert TP degrees, e.g. [1, 2, 4, 8]");
        for (const json& v : *etp) {
            if (!v.is_number_integer() || v.get<long long>() < 1 || v.get<long long>() > kMaxCompositeExpertTp)
                cr.fail("expert_tp",
                    "each value must be an integer in [1, " + std::to_string(kMaxCompositeExpertTp) + "], got "
                        + v.dump());
            c.expert_tp.push_back(v.get<int>());
        }
    }
    c.max_candidates = static_cast<int>(cr.get_int("max_candidates", 1, kMaxCompositeCandidates, 2000));
    c.base_plans = static_cast<int>(cr.get_int("base_plans", 1, kMaxCompositeBasePlans, 5));
    cr.finish();
    return c;
}

SearchSpec parse_search_spec(const json& search, const std::string& file)
{
    JsonObjectReader sr(search, file, "search");
    SearchSpec spec;
    if (const json* fix = sr.raw("fix"); fix && !fix->is_null()) {
        // Validate the pinned values with the strategy parser itself (one source of truth).
        parse_strategy(*fix, file, "search.fix", Strategy {});
        for (auto it = fix->begin(); it != fix->end(); ++it)
            spec.fix[it.key()] = it->is_string() ? it->get<std::string>() : it->dump();
    }
    if (const json* limits = sr.raw("limits"); limits && !limits->is_null()) {
        JsonObjectReader lr(*limits, file, "search.limits");
        spec.min_memory_headroom_fraction = lr.get_optional_number("memory_headroom", 0, 0.99);
        if (lr.has("max_gpus"))
            spec.max_gpus = lr.get_int("max_gpus", 1, kMaxNodes * kMaxGpusPerNode);
        spec.power_budget_kW = lr.get_optional_number("power_budget_kW", 1e-3, 1e9);
        spec.max_slowdown = lr.get_optional_number("max_slowdown", 0, 10);
        lr.finish();
    }
    spec.objective = sr.get_choice("objective", { "throughput", "time_to_train", "energy" }, std::string("throughput"));
    if (const json* composite = sr.raw("composite"); composite && !composite->is_null())
        spec.composite = parse_composite_search(*composite, file);
    sr.finish();
    return spec;
}

} // namespace

int read_scenario_schema(JsonObjectReader& r)
{
    if (!r.has("schema"))
        r.fail("schema", "missing: scenario files carry \"schema\": 1");
    const int schema = static_cast<int>(r.get_int("schema", 1, 1000));
    if (schema != kScenarioSchema)
        r.fail("schema", "this Parallax reads schema 1; the file has schema " + std::to_string(schema));
    return schema;
}

namespace {

// strategy.layers, when the scenario has it.
const json* composite_layers(const json& j)
{
    if (!j.is_object() || !j.contains("strategy") || !j["strategy"].is_object() || !j["strategy"].contains("layers"))
        return nullptr;
    return &j["strategy"]["layers"];
}

} // namespace

Scenario parse_scenario(const json& j, const std::string& file, const PresetCatalog& catalog, ScenarioUse use)
{
    JsonObjectReader r(j, file, "");
    Scenario s;
    s.schema = read_scenario_schema(r);
    s.description = r.get_string("description", std::string());
    if (r.has("serving"))
        r.fail("serving",
            "a serving scenario (inference): `parallax-cli predict` reads it; this command plans training only");

    const json* model = r.raw("model");
    if (!model)
        r.fail("model", "missing (required): a model preset name or an inline model object");
    s.model = resolve_model(*model, file, "model", catalog, &s.refs.model);

    const json* cluster = r.raw("cluster");
    if (!cluster)
        r.fail("cluster", "missing (required): a cluster preset name or an inline cluster object");
    s.cluster = resolve_cluster(*cluster, file, "cluster", catalog, &s.refs);

    const json* training = r.raw("training");
    if (!training)
        r.fail("training", "missing (required): {\"global_batch\", \"seq_len\", \"precision\"}");
    read_training(*training, file, s.cluster.gpu, s.training);

    if (!s.training.moe_expert_load.empty()
        && (!s.model.is_moe() || s.training.moe_expert_load.size() != static_cast<std::size_t>(s.model.moe->experts)))
        throw InputError(file, "training.moe_expert_load",
            "needs one load per expert (" + std::to_string(s.model.is_moe() ? s.model.moe->experts : 0) + "), got "
                + std::to_string(s.training.moe_expert_load.size()));
    read_scenario_strategy(r, file, s, use);
    if (const json* search = r.raw("search"); search && !search->is_null())
        s.search = parse_search_spec(*search, file);
    if (const json* reliability = r.raw("reliability"); reliability && !reliability->is_null())
        s.reliability = read_reliability(*reliability, file);
    r.finish();
    // A search finds the stages of a cluster with groups: it needs none (hetero_search.hpp).
    const bool stages_to_search = use == ScenarioUse::search && s.cluster.heterogeneous() && s.stages.empty();
    if ((s.heterogeneous() || s.cluster.heterogeneous()) && !stages_to_search) {
        if (auto v = check_hetero_plan(s))
            throw InputError(file, v->key, v->rule);
    } else if (use == ScenarioUse::plan) {
        validate_scenario(s, file);
    }
    if (const json* layers = composite_layers(j)) {
        if (s.heterogeneous() || s.cluster.heterogeneous())
            throw InputError(file, "strategy.layers",
                "is not supported yet on a heterogeneous cluster or with strategy.stages "
                "(docs/composite-strategies.md)");
        read_layer_ranges(*layers, file, s);
    }
    check_power(s, file, use);
    if (use == ScenarioUse::plan)
        check_reliability_plan(s, file);
    return s;
}

Scenario parse_scenario_text(
    const std::string& text, const std::string& file, const PresetCatalog& catalog, ScenarioUse use)
{
    return parse_scenario(parse_json_text(text, file), file, catalog, use);
}

Scenario load_scenario_file(const std::string& path, const PresetCatalog& catalog, ScenarioUse use)
{
    return parse_scenario_text(read_text_file(path), path, catalog, use);
}

Scenario load_scenario_preset(const std::string& name, const PresetCatalog& catalog, ScenarioUse use)
{
    const PresetEntry& e = find_preset(PresetKind::scenarios, name, "scenario", "", catalog);
    return parse_scenario(e.json, e.origin, catalog, use);
}

json gpu_to_json(const GpuSpec& g)
{
    json j;
    j["name"] = g.name;
    if (g.architecture != GpuArchitecture::generic)
        j["architecture"] = std::string(to_string(g.architecture));
    json peaks = json::object();
    for (int i = 0; i < kPrecisionCount; ++i)
        peaks[std::string(kPrecisionNames[i])]
            = g.peak_flops[i] > 0 ? json(g.peak_flops[i] / units::kTFLOP) : json(nullptr);
    j["peak_TFLOPs"] = peaks;
    j["memory_GiB"] = g.memory_bytes / units::kGiB;
    j["memory_bw_GBps"] = g.memory_bw_Bps / units::kGB;
    j["tdp_W"] = g.tdp_W;
    j["idle_W"] = g.idle_W;
    if (g.power_limit_W > 0)
        j["power_limit_W"] = g.power_limit_W;
    if (g.active_idle_W > 0)
        j["active_idle_W"] = g.active_idle_W;
    if (g.sm_count > 0)
        j["sm_count"] = g.sm_count;
    if (g.clock_MHz > 0)
        j["clock_MHz"] = g.clock_MHz;
    if (g.max_clock_MHz > 0)
        j["max_clock_MHz"] = g.max_clock_MHz;
    if (g.tdp_gemm_TFLOPs > 0)
        j["tdp_gemm_TFLOPs"] = g.tdp_gemm_TFLOPs;
    write_source(j, g.source);
    return j;
}

json fabric_to_json(const FabricSpec& f)
{
    json j;
    j["name"] = f.name;
    if (f.kind != FabricKind::unspecified)
        j["kind"] = std::string(to_string(f.kind));
    j["bw_GBps"] = f.bw_Bps / units::kGB;
    j["latency_us"] = f.latency_s / units::kMicrosecond;
    j["rail_optimized"] = f.rail_optimized;
    j["oversubscription"] = f.oversubscription;
    write_source(j, f.source);
    return j;
}

json model_to_json(const ModelSpec& m)
{
    json j;
    j["name"] = m.name;
    j["layers"] = m.layers;
    j["hidden"] = m.hidden;
    j["heads"] = m.heads;
    j["kv_heads"] = m.kv_heads;
    j["ffn_hidden"] = m.ffn_hidden;
    j["vocab"] = m.vocab;
    j["ffn_act"] = m.ffn_act == FfnActivation::swiglu ? "swiglu" : "gelu";
    j["tied_embeddings"] = m.tied_embeddings;
    if (m.dropout)
        j["dropout"] = *m.dropout;
    if (m.head_dim_override)
        j["head_dim"] = *m.head_dim_override;
    if (m.sliding_window > 0) {
        j["sliding_window"] = m.sliding_window;
        j["full_attention_every"] = m.full_attention_every;
    }
    if (m.attention_sinks)
        j["attention_sinks"] = true;
    if (m.yarn_rope)
        j["yarn_rope"] = true;
    if (m.expert_bias)
        j["expert_bias"] = true;
    if (m.mla) {
        j["attention"] = { { "kind", "mla" }, { "q_lora_rank", m.mla->q_lora_rank },
            { "kv_lora_rank", m.mla->kv_lora_rank }, { "qk_nope_head_dim", m.mla->qk_nope_head_dim },
            { "qk_rope_head_dim", m.mla->qk_rope_head_dim }, { "v_head_dim", m.mla->v_head_dim } };
    }
    if (m.moe) {
        json e = { { "experts", m.moe->experts }, { "top_k", m.moe->top_k },
            { "expert_ffn_hidden", m.moe->expert_ffn_hidden }, { "shared_experts", m.moe->shared_experts },
            { "moe_layer_freq", m.moe->moe_layer_freq }, { "first_dense_layers", m.moe->first_dense_layers } };
        if (m.moe->capacity_factor)
            e["capacity_factor"] = *m.moe->capacity_factor;
        j["moe"] = e;
    }
    if (m.params_B)
        j["params_B"] = *m.params_B;
    write_source(j, m.source);
    return j;
}

json cluster_to_json(const ClusterSpec& c, const ScenarioRefs& refs)
{
    if (!refs.cluster.empty())
        return refs.cluster;
    json j;
    j["name"] = c.name;
    if (c.heterogeneous()) {
        j["groups"] = node_groups_to_json(c);
    } else {
        j["gpu"] = refs.gpu.empty() ? gpu_to_json(c.gpu) : json(refs.gpu);
        j["nodes"] = c.nodes;
        j["gpus_per_node"] = c.gpus_per_node;
        j["intra_node"] = refs.intra_node.empty() ? fabric_to_json(c.intra_node) : json(refs.intra_node);
    }
    j["inter_node"] = refs.inter_node.empty() ? fabric_to_json(c.inter_node) : json(refs.inter_node);
    if (c.node_overhead_W)
        j["node_overhead_W"] = *c.node_overhead_W;
    if (c.nodes_per_rack)
        j["nodes_per_rack"] = *c.nodes_per_rack;
    if (c.host_memory_GB)
        j["host_memory_GB"] = *c.host_memory_GB;
    write_source(j, c.source);
    return j;
}

json strategy_to_json(const Strategy& s, bool include_dp)
{
    json j;
    j["tp"] = s.tp;
    j["pp"] = s.pp;
    if (include_dp)
        j["dp"] = s.dp;
    j["cp"] = s.cp;
    j["ep"] = s.ep;
    j["vpp"] = s.vpp;
    j["micro_batch"] = s.micro_batch;
    j["sequence_parallel"] = s.sequence_parallel;
    j["recompute"] = std::string(to_string(s.recompute));
    if (s.recompute == Recompute::selective && s.recompute_modules != kDefaultRecomputeModules)
        j["recompute_modules"] = recompute_module_names(s.recompute_modules);
    j["zero"] = s.zero;
    j["schedule"] = std::string(to_string(s.schedule));
    if (s.schedule == Schedule::custom && s.program)
        j["schedule_program"] = schedule_program_text(*s.program);
    j["optimizer"] = std::string(to_string(s.optimizer));
    j["offload_optimizer"] = s.offload_optimizer;
    if (s.gradient_release)
        j["gradient_release"] = true;
    j["rank_order"] = to_string(s.rank_order);
    if (s.first_stage_layers > 0)
        j["first_stage_layers"] = s.first_stage_layers;
    if (s.last_stage_layers > 0)
        j["last_stage_layers"] = s.last_stage_layers;
    if (s.expert_tp > 0)
        j["expert_tp"] = s.expert_tp;
    j["cp_kind"] = std::string(to_string(s.cp_kind));
    j["overlap_grad_reduce"] = s.overlap_grad_reduce;
    j["overlap_param_gather"] = s.overlap_param_gather;
    j["tp_comm_overlap"] = s.tp_comm_overlap;
    if (s.ep_overlap)
        j["ep_overlap"] = true;
    if (s.ep_tile_overlap)
        j["ep_tile_overlap"] = true;
    if (s.offload_activations)
        j["offload_activations"] = true;
    if (s.offload_params)
        j["offload_params"] = true;
    if (s.layers)
        j["layers"] = layer_ranges_to_json(*s.layers);
    return j;
}

json scenario_to_json(const Scenario& s)
{
    json j;
    j["schema"] = kScenarioSchema;
    if (!s.description.empty())
        j["description"] = s.description;
    j["model"] = s.refs.model.empty() ? model_to_json(s.model) : json(s.refs.model);
    j["cluster"] = cluster_to_json(s.cluster, s.refs);
    json t;
    t["global_batch"] = s.training.global_batch;
    t["seq_len"] = s.training.seq_len;
    t["precision"] = std::string(to_string(s.training.precision));
    t["flash_attention"] = s.training.flash_attention;
    if (s.training.grad_reduce_in_fp32)
        t["grad_reduce_in_fp32"] = true;
    if (s.training.grad_reduce_in_bf16)
        t["grad_reduce_in_bf16"] = true;
    t["framework"] = std::string(to_string(s.training.framework));
    if (s.training.software)
        t["software"] = std::string(s.training.software->id);
    if (s.training.attention_kernel)
        t["attention_kernel"] = *s.training.attention_kernel == AttentionKernel::flash2 ? "flash2" : "best";
    if (s.training.fp8_scaling != Fp8Scaling::tensorwise)
        t["fp8_scaling"] = std::string(to_string(s.training.fp8_scaling));
    if (s.training.moe_imbalance != 1.0)
        t["moe_imbalance"] = s.training.moe_imbalance;
    if (!s.training.moe_expert_load.empty())
        t["moe_expert_load"] = s.training.moe_expert_load;
    if (s.training.moe_dispatcher == MoeDispatcher::deepep)
        t["moe_dispatcher"] = "deepep";
    if (s.training.cuda_graphs != CudaGraphs::none)
        t["cuda_graphs"] = s.training.cuda_graphs == CudaGraphs::layers ? "layers" : "full-iteration";
    if (s.training.tokens_to_train)
        t["tokens_to_train"] = *s.training.tokens_to_train;
    if (s.training.clock_MHz > 0)
        t["clock_MHz"] = s.training.clock_MHz;
    if (!s.training.stage_clock_MHz.empty())
        t["stage_clock_MHz"] = s.training.stage_clock_MHz;
    if (s.training.power_cap_W > 0)
        t["power_cap_W"] = s.training.power_cap_W;
    if (s.training.inlet_temp_C)
        t["inlet_temp_C"] = *s.training.inlet_temp_C;
    if (s.training.data != DataPipelineSpec {})
        t["data"] = training_data_to_json(s.training.data);
    j["training"] = t;
    j["strategy"] = strategy_to_json(s.strategy, !s.dp_derived);
    if (s.heterogeneous()) {
        for (const char* key : { "tp", "pp", "dp" })
            j["strategy"].erase(key);
        j["strategy"]["stages"] = pipeline_stages_to_json(s.stages);
        if (s.batch_split != BatchSplit::by_speed)
            j["strategy"]["batch_split"] = to_string(s.batch_split);
    }
    if (s.search) {
        json sj;
        if (!s.search->fix.empty()) {
            json fix = json::object();
            for (const auto& [k, v] : s.search->fix) {
                try {
                    fix[k] = json::parse(v);
                } catch (const json::exception&) {
                    fix[k] = v;
                }
            }
            sj["fix"] = fix;
        }
        json limits = json::object();
        if (s.search->min_memory_headroom_fraction)
            limits["memory_headroom"] = *s.search->min_memory_headroom_fraction;
        if (s.search->max_gpus)
            limits["max_gpus"] = *s.search->max_gpus;
        if (s.search->power_budget_kW)
            limits["power_budget_kW"] = *s.search->power_budget_kW;
        if (s.search->max_slowdown)
            limits["max_slowdown"] = *s.search->max_slowdown;
        if (!limits.empty())
            sj["limits"] = limits;
        sj["objective"] = s.search->objective;
        if (const auto& c = s.search->composite)
            sj["composite"]
                = { { "recompute_ranges", c->recompute_ranges }, { "edge_stage_layers", c->edge_stage_layers },
                      { "range_tp", c->range_tp }, { "expert_tp", c->expert_tp },
                      { "max_candidates", c->max_candidates }, { "base_plans", c->base_plans } };
        j["search"] = sj;
    }
    if (s.reliability)
        j["reliability"] = reliability_to_json(*s.reliability);
    return j;
}

void write_text_file_atomically(const std::string& path, const std::string& text)
{
    namespace fs = std::filesystem;
    const fs::path target(path);
    const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
    std::random_device rd;
    const fs::path tmp = dir / ("." + target.filename().string() + ".tmp" + std::to_string(rd()));
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out)
            throw InputError(path, "", "cannot write to the folder " + dir.string());
        out << text;
        out.flush();
        if (!out) {
            std::error_code ec;
            fs::remove(tmp, ec);
            throw InputError(path, "", "writing failed (disk full?); the previous file is untouched");
        }
    }
    std::error_code ec;
    fs::rename(tmp, target, ec);
    if (ec) {
        fs::remove(tmp, ec);
        throw InputError(path, "", "cannot replace the file: " + ec.message());
    }
}

void save_scenario_file(const std::string& path, const Scenario& s)
{
    write_text_file_atomically(path, scenario_to_json(s).dump(2) + "\n");
}

} // namespace parallax

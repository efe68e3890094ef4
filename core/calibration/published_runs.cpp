#include "calibration/published_runs.hpp"

#include "io/hetero_io.hpp"
#include "io/json_reader.hpp"
#include "io/number_format.hpp"
#include "io/scenario_io.hpp"
#include "model/analytic_model.hpp"
#include "model/hetero_model.hpp"
#include "model/model_math.hpp"
#include "spec/input_error.hpp"
#include "spec/layer_ranges.hpp"
#include "spec/strategy_label.hpp"
#include "spec/strategy_rules.hpp"
#include "spec/units.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <numeric>
#include <regex>

namespace parallax {

using nlohmann::json;

namespace {

std::string lower(std::string s)
{
    for (char& c : s)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

bool contains(const std::string& haystack, const char* needle)
{
    return lower(haystack).find(lower(needle)) != std::string::npos;
}

std::optional<double> num(const json& obj, const char* key)
{
    if (!obj.is_object())
        return std::nullopt;
    auto it = obj.find(key);
    if (it == obj.end() || !it->is_number())
        return std::nullopt;
    return it->get<double>();
}

std::string str(const json& obj, const char* key)
{
    if (!obj.is_object())
        return {};
    auto it = obj.find(key);
    if (it == obj.end() || !it->is_string())
        return {};
    return it->get<std::string>();
}

std::optional<bool> boolean(const json& obj, const char* key)
{
    if (!obj.is_object())
        return std::nullopt;
    auto it = obj.find(key);
    if (it == obj.end() || !it->is_boolean())
        return std::nullopt;
    return it->get<bool>();
}

// The GPU preset a row ran on, from its free-text gpu_type.
std::optional<std::string> gpu_preset(const std::string& gpu_type, std::vector<std::string>& assumptions)
{
    if (contains(gpu_type, "tpu"))
        return std::nullopt;
    if (contains(gpu_type, "h200"))
        return std::string("H200-SXM-141GB");
    if (contains(gpu_type, "h800"))
        return std::string("H800-SXM5-80GB");
    if (contains(gpu_type, "h100"))
        return std::string("H100-SXM5-80GB");
    if (contains(gpu_type, "a100")) {
        if (contains(gpu_type, "40gb") && !contains(gpu_type, "80gb"))
            return std::string("A100-SXM4-40GB");
        if (!contains(gpu_type, "80gb"))
            assumptions.push_back("GPU memory size unstated: A100-SXM4-80GB");
        return std::string("A100-SXM4-80GB");
    }
    if (contains(gpu_type, "v100"))
        return std::string("V100-SXM2-32GB");
    if (contains(gpu_type, "b300"))
        return std::string("B300"); // DGX B300 and the GB300 NVL72's GPUs
    if (contains(gpu_type, "b200"))
        return std::string("B200"); // DGX B200 and the GB200 NVL72's GPUs
    if (contains(gpu_type, "mi300x"))
        return std::string("MI300X");
    return std::nullopt;
}

// Dense-FFN activation: gated (SwiGLU) for the Llama family and its descendants.
bool is_swiglu_family(const std::string& name)
{
    for (const char* n : { "llama", "mixtral", "mistral", "qwen", "deepseek" })
        if (contains(name, n))
            return true;
    return false;
}

Recompute parse_recompute(const std::string& text)
{
    if (contains(text, "full"))
        return Recompute::full;
    if (contains(text, "selective"))
        return Recompute::selective;
    return Recompute::none;
}

// "Llama 3.1 405B" and "llama3.1-405b" both normalise to "llama3.1405b".
std::string normalise_name(const std::string& name)
{
    std::string out;
    for (char ch : lower(name))
        if (std::isalnum(static_cast<unsigned char>(ch)) || ch == '.')
            out += ch;
    return out;
}

const PresetEntry* model_preset_for(const std::string& name, const PresetCatalog& catalog)
{
    const std::string key = normalise_name(name);
    for (const PresetEntry* e : catalog.entries(PresetKind::models))
        if (normalise_name(e->name) == key)
            return e;
    return nullptr;
}

// The integer after `phrase` in free text ("local batch size 32" -> 32).
std::optional<long long> number_after(const std::string& text, const char* phrase)
{
    const std::string t = lower(text);
    const auto pos = t.find(phrase);
    if (pos == std::string::npos)
        return std::nullopt;
    std::size_t i = pos + std::string(phrase).size();
    while (i < t.size() && !std::isdigit(static_cast<unsigned char>(t[i])))
        if (t[i++] != ' ')
            return std::nullopt;
    long long v = 0;
    bool any = false;
    while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) {
        v = v * 10 + (t[i++] - '0');
        any = true;
    }
    return any ? std::optional<long long>(v) : std::nullopt;
}

std::string source_group_of(const std::string& id)
{
    const auto pos = id.find('_');
    return pos == std::string::npos ? id : id.substr(0, pos);
}

// Why a row cannot be modelled; nullopt when the step that returns it succeeded.
using SkipReason = std::optional<std::string>;

std::optional<std::pair<int, int>> nemo_container_of(const std::string& source);

// One published row while it becomes a scenario: its JSON sections, what its source says about it,
// and the specs filled so far. Every unstated setting filled by a rule goes into `as`, in order.
struct PublishedRow {
    PublishedRow(const json& row_json, ValidationCase& validation_case)
        : row(row_json)
        , model(row_json.contains("model") ? row_json["model"] : json())
        , hw(row_json.contains("hardware") ? row_json["hardware"] : json())
        , st(row_json.contains("strategy") ? row_json["strategy"] : json())
        , res(row_json.contains("result") ? row_json["result"] : json())
        , year(static_cast<int>(num(row_json, "year").value_or(2024)))
        , c(validation_case)
        , as(validation_case.assumptions)
        , notes(str(row_json, "notes"))
        , source(str(row_json, "source"))
        , torchtitan(validation_case.source_group == "torchtitan")
        // Which documented recipe the row comes from, by what its source says: NVIDIA's NeMo performance
        // tables and Megatron-LM's example scripts; the Llama 3 paper.
        , nvidia_recipe(contains(source, "NVIDIA/NeMo") || contains(source, "NVIDIA-NeMo/Megatron-Bridge")
              || (contains(source, "NVIDIA/Megatron-LM") && contains(source, "examples/") && year >= 2024))
        , llama3_paper(contains(source, "Llama 3 Herd"))
        , container(nemo_container_of(source))
    {
    }

    const json& row;
    const json model;
    const json hw;
    const json st;
    const json res;
    const int year;
    ValidationCase& c;
    std::vector<std::string>& as;
    const std::string notes;
    const std::string source;
    const bool torchtitan;
    const bool nvidia_recipe;
    const bool llama3_paper;
    const std::optional<std::pair<int, int>> container; // the NeMo container the source names, {year, month}

    double n_gpus = 0;
    std::optional<long long> local_batch; // from the notes' "local batch size N"
    ModelSpec m;
    ClusterSpec cl;
    Strategy s;
    TrainingSpec t;
};

// Rows whose workload Parallax does not model at all, whatever their dimensions.
SkipReason unmodelled_workload(const PublishedRow& r, double layers)
{
    if (layers < 2)
        return "per-layer micro-benchmark, not an end-to-end step (checked by a unit test instead)";
    if (contains(r.c.id, "zero3") && r.year <= 2021)
        return "DeepSpeed ZeRO-3 of 2021 without model parallelism: it fetched parameters per tensor, on demand, "
               "which Parallax does not model (it models bucketed, prefetched FSDP/ZeRO-3 collectives); "
               "the measured throughput falls 3x from 384 to 1536 GPUs at a fixed global batch";
    if (contains(r.c.id, "lora"))
        return "LoRA fine-tuning (frozen base weights, no weight gradients or optimizer for them) is not modelled";
    return std::nullopt;
}

void read_moe(PublishedRow& r)
{
    ModelSpec& m = r.m;
    const auto experts = num(r.model, "n_experts");
    if (!experts || *experts <= 1)
        return;
    MoeSpec e = m.moe.value_or(MoeSpec {});
    e.experts = static_cast<int>(*experts);
    if (auto k = num(r.model, "top_k"))
        e.top_k = static_cast<int>(*k);
    if (auto f = num(r.model, "expert_ffn_size"))
        e.expert_ffn_hidden = static_cast<long long>(*f);
    else if (e.expert_ffn_hidden == 0)
        e.expert_ffn_hidden = m.ffn_hidden;
    if (auto sh = num(r.model, "shared_experts"))
        e.shared_experts = static_cast<int>(*sh);
    if (auto cf = num(r.model, "capacity_factor"))
        e.capacity_factor = *cf;
    m.moe = e;
    r.as.push_back("mixture of experts: " + std::to_string(e.experts) + " experts, top-" + std::to_string(e.top_k)
        + ", balanced routing (load unstated)");
}

// The model: the row's dimensions over the preset of the same name, or GPT defaults.
SkipReason read_model(PublishedRow& r, const PresetCatalog& catalog)
{
    const json& model = r.model;
    const auto layers = num(model, "n_layers");
    const auto hidden = num(model, "hidden_size");
    const auto heads = num(model, "n_heads");
    auto seq = num(model, "seq_len");
    if (!seq && r.torchtitan) {
        // torchtitan's llama3 training configs use 8192-token sequences (as the Dec 2024 rows derive).
        seq = 8192.0;
        r.as.push_back("seq_len unstated: 8192 (torchtitan's llama3 configs)");
    }
    if (!layers || !hidden || !heads || !seq)
        return "model dimensions (layers, hidden, heads, seq_len) not stated";
    if (auto why = unmodelled_workload(r, *layers))
        return why;
    r.t.seq_len = static_cast<long long>(*seq);

    ModelSpec& m = r.m;
    m.name = str(model, "name").empty() ? r.c.id : str(model, "name");
    // A model Parallax knows by name fills what the row leaves unstated (vocab, KV heads, activation).
    const PresetEntry* known = model_preset_for(m.name, catalog);
    if (known) {
        m = parse_model(known->json, known->origin, "");
        m.name = str(model, "name");
    }
    m.layers = static_cast<int>(*layers);
    m.hidden = static_cast<long long>(*hidden);
    m.heads = static_cast<int>(*heads);
    if (auto kv = num(model, "n_kv_heads"))
        m.kv_heads = static_cast<int>(*kv);
    else if (!known)
        m.kv_heads = m.heads;
    if (!known)
        m.ffn_act = is_swiglu_family(m.name) ? FfnActivation::swiglu : FfnActivation::gelu;
    if (auto f = num(model, "ffn_hidden_size")) {
        m.ffn_hidden = static_cast<long long>(*f);
    } else if (!known) {
        m.ffn_hidden = 4 * m.hidden;
        r.as.push_back("ffn_hidden unstated: 4*hidden (GPT)");
    }
    if (auto v = num(model, "vocab_size")) {
        m.vocab = static_cast<long long>(*v);
    } else if (!known) {
        m.vocab = 51200;
        r.as.push_back("vocab unstated: 51200 (Megatron's padded GPT-2 vocabulary)");
    }
    read_moe(r);
    if (known)
        r.as.push_back("unstated architecture fields from the " + known->name + " preset");
    else if (m.ffn_act == FfnActivation::swiglu)
        r.as.push_back("SwiGLU MLP (Llama family)");
    r.c.model_name = m.name;
    return std::nullopt;
}

// GPUs per NVLink domain the job uses: all of them, or for a job that does not fill whole domains
// (e.g. 256 GPUs on 72-GPU NVL72 racks) the largest whole number of 4-GPU compute trays per domain
// that divides it (GB200 NVL72: 18 trays x 4).
int gpus_per_node_used(PublishedRow& r)
{
    int gpn = static_cast<int>(num(r.hw, "gpus_per_node").value_or(8));
    if (!num(r.hw, "gpus_per_node"))
        r.as.push_back("8 GPUs per node");
    const auto n_gpus = static_cast<long long>(r.n_gpus);
    if (n_gpus % gpn == 0)
        return gpn;
    int used = 1;
    for (int d = gpn; d >= 1; --d)
        if (n_gpus % d == 0 && (gpn < 8 || d % 4 == 0)) {
            used = d;
            break;
        }
    r.as.push_back(std::to_string(used) + " of the " + std::to_string(gpn) + " GPUs of each NVLink domain used");
    return used;
}

std::string intra_node_fabric_name(const GpuSpec& gpu, const std::string& gpu_name, bool nvl72)
{
    return gpu.architecture == GpuArchitecture::ampere   ? "nvlink3-nvswitch"
        : contains(gpu_name, "H800")                     ? "nvlink4-h800"
        : gpu.architecture == GpuArchitecture::volta     ? "nvlink2"
        : gpu.architecture == GpuArchitecture::blackwell ? (nvl72 ? "nvlink5-nvl72" : "nvlink5-nvswitch")
                                                         : "nvlink4-nvswitch";
}

// The inter-node fabric preset for the row's free-text network; empty for Omni-Path, which has none.
std::string inter_node_fabric_name(const std::string& inter, const GpuSpec& gpu, std::vector<std::string>& as)
{
    if (contains(inter, "omni-path") || contains(inter, "omnipath"))
        return "";
    if (contains(inter, "xdr") || contains(inter, "800 gb"))
        return "ib-xdr";
    if (contains(inter, "roce") || contains(inter, "rdma"))
        return "roce-400g";
    if (contains(inter, "hdr") && !contains(inter, "400"))
        return "ib-hdr";
    if (contains(inter, "400") || contains(inter, "ndr"))
        return "ib-ndr";
    std::string name = gpu.architecture == GpuArchitecture::ampere ? "ib-hdr" : "ib-ndr";
    if (inter.empty())
        as.push_back("network unstated: " + name + " per GPU (the generation's DGX reference design)");
    return name;
}

SkipReason read_fabrics(PublishedRow& r, const PresetCatalog& catalog, const std::string& gpu_name)
{
    ClusterSpec& cl = r.cl;
    const std::string intra = str(r.hw, "intra_node_link");
    const std::string inter = str(r.hw, "inter_node");
    const bool nvl72 = cl.gpus_per_node > 8 || contains(intra, "nvl72");
    const std::string intra_name = intra_node_fabric_name(cl.gpu, gpu_name, nvl72);
    const std::string inter_name = inter_node_fabric_name(inter, cl.gpu, r.as);
    const PresetEntry* intra_entry = catalog.find(PresetKind::fabrics, intra_name);
    if (!intra_entry)
        return "fabric preset " + intra_name + " missing";
    cl.intra_node = parse_fabric(intra_entry->json, intra_entry->origin, "");
    if (inter_name.empty()) {
        // BLOOM's Jean Zay: 4 x 100 Gb/s Omni-Path links per 8-GPU node -> 6.25 GB/s per GPU.
        cl.inter_node.name = "omni-path-4x100g";
        cl.inter_node.kind = FabricKind::ib;
        cl.inter_node.bw_Bps = 4 * 12.5e9 / cl.gpus_per_node;
        cl.inter_node.latency_s = 8e-6;
        r.as.push_back("Omni-Path 4 x 100 Gb/s per node = 6.25 GB/s per GPU");
    } else {
        const PresetEntry* e = catalog.find(PresetKind::fabrics, inter_name);
        if (!e)
            return "fabric preset " + inter_name + " missing";
        cl.inter_node = parse_fabric(e->json, e->origin, "");
    }
    return std::nullopt;
}

// The cluster: the GPU preset the row's gpu_type names, its node shape and its fabrics.
SkipReason read_cluster(PublishedRow& r, const PresetCatalog& catalog)
{
    const std::string gpu_type = str(r.hw, "gpu_type");
    const auto gpu_name = gpu_preset(gpu_type, r.as);
    if (!gpu_name)
        return "GPU '" + gpu_type + "' has no preset";
    r.c.gpu = *gpu_name;
    const auto n_gpus = num(r.hw, "n_gpus");
    if (!n_gpus || *n_gpus < 1)
        return std::string("GPU count not stated");
    r.n_gpus = *n_gpus;
    const int gpn = gpus_per_node_used(r);
    ClusterSpec& cl = r.cl;
    const PresetEntry* gpu_entry = catalog.find(PresetKind::gpus, *gpu_name);
    if (!gpu_entry)
        return "GPU preset " + *gpu_name + " missing";
    cl.gpu = parse_gpu(gpu_entry->json, gpu_entry->origin, "");
    if (contains(gpu_type, "96gb")) {
        // Meta's Grand Teton H100: 96 GB HBM2e at 2.4 TB/s, run at a 500 W limit (torchtitan benchmarks).
        cl.gpu.memory_bytes = 94.0 * units::kGiB;
        cl.gpu.memory_bw_Bps = 2400 * units::kGB;
        cl.gpu.power_limit_W = 500;
        cl.gpu.name = "H100-SXM-96GB (Grand Teton, 500 W)";
        r.as.push_back("H100 96 GB HBM2e variant: H100 SXM compute peaks, 2.4 TB/s, 500 W");
    }
    cl.nodes = static_cast<int>(static_cast<long long>(*n_gpus) / gpn);
    cl.gpus_per_node = gpn;
    if (auto why = read_fabrics(r, catalog, *gpu_name))
        return why;
    cl.name = std::to_string(cl.nodes) + "x" + std::to_string(gpn) + " " + cl.gpu.name;
    return std::nullopt;
}

// A pipeline of `one_layer_chunks` chunks per rank whose first chunk holds only the embedding and whose last
// holds only the loss. Parallax's chunks hold at least one layer, so the nearest layout it expresses has
// half as many chunks of two layers, the first and the last stage one layer short. Returns those chunks.
int two_layer_chunks_with_short_end_stages(PublishedRow& r, int one_layer_chunks, const std::string& why)
{
    const int vp = one_layer_chunks / 2;
    r.s.first_stage_layers = 2 * vp - 1;
    r.s.last_stage_layers = 2 * vp - 1;
    r.as.push_back(why + std::to_string(vp) + " chunks of 2 layers per rank, first and last stage one layer short ("
        + std::to_string(r.s.first_stage_layers) + " layers)");
    return vp;
}

// Pipeline chunks per rank: stated, implied by the row's id, or the Llama 3 paper's layout.
void read_virtual_stages(PublishedRow& r)
{
    Strategy& s = r.s;
    int vp = static_cast<int>(num(r.st, "vp").value_or(1));
    if (vp <= 1 && s.pp > 1 && contains(r.c.id, "interleaved")) {
        vp = 2;
        r.as.push_back(
            "interleaved schedule with unstated stages per rank: 2 (torchtitan's default for looped schedules)");
    }
    if (vp <= 1 && s.pp > 1 && r.llama3_paper && (r.m.layers + 2) % (2 * s.pp) == 0) {
        // Llama 3 paper Sec. 3.3.2: an interleaved schedule (bubble (PP-1)/(V*M)), one layer fewer on
        // the first and the last stage, so that the first chunk holds only the embedding and the last
        // only the output and loss: one layer per chunk, V = (layers + 2) / PP. Parallax's chunks hold
        // at least one layer, so the nearest layout it can express has two layers per chunk.
        vp = two_layer_chunks_with_short_end_stages(
            r, (r.m.layers + 2) / s.pp, "interleaved schedule (Llama 3 paper Sec. 3.3.2): ");
    }
    if (vp > 1 && s.pp > 1 && r.nvidia_recipe && static_cast<long long>(s.pp) * vp == r.m.layers + 2 && vp % 2 == 0) {
        // Megatron's account_for_embedding_in_pipeline_split and account_for_loss_in_pipeline_split (set by
        // Megatron-Bridge's Llama 3.1 405B recipes): the embedding and the loss count as a layer each, so
        // the first chunk holds only the embedding and the last only the loss. As for the Llama 3 paper's
        // layout, the nearest Parallax can express has two layers per chunk and the end stages one short.
        vp = two_layer_chunks_with_short_end_stages(r, vp,
            "pp*vp = layers + 2: the embedding and the loss take a pipeline slot each "
            "(account_for_embedding/loss_in_pipeline_split); modelled as ");
    }
    s.vpp = vp > 1 ? vp : 1;
    s.schedule = s.vpp > 1 ? Schedule::interleaved : Schedule::one_f_one_b;
    if (contains(str(r.st, "schedule"), "dualpipe"))
        s.schedule = Schedule::dualpipe;
}

void read_micro_batch(PublishedRow& r)
{
    Strategy& s = r.s;
    if (auto mbs = num(r.st, "micro_batch_size")) {
        s.micro_batch = static_cast<int>(*mbs);
    } else if (r.torchtitan && s.pp > 1 && r.local_batch
        && *r.local_batch % (static_cast<long long>(s.pp) * s.vpp) == 0) {
        // torchtitan splits the local batch into as many micro-batches as there are pipeline stages
        // unless told otherwise (pipeline_parallel_microbatches, config_manager.py, Dec 2024).
        s.micro_batch = static_cast<int>(*r.local_batch / (static_cast<long long>(s.pp) * s.vpp));
        r.as.push_back("micro-batches: torchtitan's default, one per pipeline stage (" + std::to_string(s.pp * s.vpp)
            + " of " + std::to_string(s.micro_batch) + ")");
    } else {
        s.micro_batch = 1;
        r.as.push_back("micro-batch unstated: 1");
    }
}

// The parallel degrees, the pipeline layout and the micro-batch.
SkipReason read_parallelism(PublishedRow& r)
{
    const auto tp = num(r.st, "tp");
    const auto pp = num(r.st, "pp");
    if (!tp || !pp)
        return std::string("tensor/pipeline degrees not stated");
    Strategy& s = r.s;
    s.tp = static_cast<int>(*tp);
    s.pp = static_cast<int>(*pp);
    s.cp = static_cast<int>(num(r.st, "cp").value_or(1));
    s.ep = static_cast<int>(num(r.st, "ep").value_or(1));
    if (auto etp = num(r.st, "expert_tp")) {
        s.expert_tp = static_cast<int>(*etp);
    } else if (r.m.is_moe() && s.tp > 1 && s.ep > 1) {
        // Megatron-core's MoE recipes decouple the experts' TP from the attention's (MoE parallel folding,
        // Liu et al. 2025) and run the experts without TP.
        s.expert_tp = 1;
        r.as.push_back("expert TP unstated: 1 (MoE parallel folding: EP spans the TP x DP ranks)");
    }
    const long long mp = static_cast<long long>(s.tp) * s.pp * s.cp;
    if (static_cast<long long>(r.n_gpus) % mp != 0)
        return std::string("tp*pp*cp does not divide the GPU count");
    s.dp = static_cast<int>(static_cast<long long>(r.n_gpus) / mp);
    if (auto dp = num(r.st, "dp"); dp && static_cast<int>(*dp) != s.dp)
        r.as.push_back(
            "dp " + format_number("%.0f", *dp) + " as printed does not multiply out; using " + std::to_string(s.dp));
    read_virtual_stages(r);
    if (auto ov = boolean(r.st, "ep_overlap"))
        s.ep_overlap = *ov;
    r.local_batch = number_after(r.notes, "local batch size");
    read_micro_batch(r);
    return std::nullopt;
}

// NeMo's long-sequence performance page: tokens per optimizer step in its B200 table.
constexpr long long kLongSequenceTableTokensPerStep = 4LL * 1024 * 1024;

// The global batch and the framework that ran the step.
SkipReason read_batch_and_framework(PublishedRow& r)
{
    TrainingSpec& t = r.t;
    const Strategy& s = r.s;
    if (auto gb = num(r.st, "global_batch_size")) {
        t.global_batch = static_cast<long long>(*gb);
    } else if (r.local_batch) {
        t.global_batch = *r.local_batch * s.dp;
        r.as.push_back("global batch from the notes' local batch size " + std::to_string(*r.local_batch) + " x dp");
    } else if (contains(r.source, "performance_long_sequence") && t.seq_len > 0) {
        // The document's other table (Llama 3 8B on B200, NeMo 25.04) states its batch: 4M tokens per
        // step at every sequence length (512 x 8K ... 4 x 1M).
        const long long per_rank = static_cast<long long>(s.micro_batch) * s.dp;
        t.global_batch = std::max(per_rank, kLongSequenceTableTokensPerStep / t.seq_len / per_rank * per_rank);
        r.as.push_back("global batch unstated: " + std::to_string(t.global_batch)
            + " sequences (4M tokens per step, the batch column of the same document's B200 table)");
    } else if (s.pp > 1) {
        return std::string("global batch unstated with pipeline parallelism: the bubble cannot be known");
    } else {
        t.global_batch = static_cast<long long>(s.micro_batch) * s.dp;
        r.as.push_back("global batch unstated: one micro-batch per DP rank");
    }
    if (contains(r.source, "deepspeed") || contains(r.source, "bigscience")) {
        if (s.pp > 1) {
            t.framework = Framework::megatron_deepspeed;
            r.as.push_back("framework: Megatron-DeepSpeed (DeepSpeed pipeline engine)");
        }
    }
    if (r.torchtitan) {
        const bool compiled = contains(r.c.id, "compile") || contains(r.notes, "torch.compile");
        t.framework = compiled ? Framework::torchtitan_compile : Framework::torchtitan;
        r.as.push_back(compiled ? "framework: torchtitan with torch.compile" : "framework: torchtitan (eager)");
    }
    return std::nullopt;
}

// The submodules a Megatron recipe recomputes (recompute_modules): selective recomputation of those.
void read_recompute_modules(PublishedRow& r)
{
    if (!r.st.is_object() || !r.st.contains("recompute_modules") || !r.st["recompute_modules"].is_array())
        return;
    unsigned char bits = 0;
    std::string listed;
    for (const json& v : r.st["recompute_modules"]) {
        RecomputeModule m {};
        if (v.is_string() && recompute_module_from_string(v.get<std::string>(), m)) {
            bits |= recompute_module_bit(m);
            listed += (listed.empty() ? "" : ", ") + v.get<std::string>();
        } else {
            r.as.push_back("recompute module " + v.dump() + " not modelled: ignored");
        }
    }
    if (bits == 0)
        return;
    r.s.recompute = Recompute::selective;
    r.s.recompute_modules = bits;
    r.c.recompute_unstated = false;
    r.as.push_back("recompute: selective, modules " + listed + " (the recipe's recompute_modules)");
}

void read_recompute_and_sequence_parallel(PublishedRow& r)
{
    Strategy& s = r.s;
    const std::string rc = str(r.st, "activation_recompute");
    if (!rc.empty()) {
        s.recompute = parse_recompute(rc);
    } else {
        r.c.recompute_unstated = true;
    }
    read_recompute_modules(r);
    const auto sp = boolean(r.st, "sequence_parallel");
    if (sp) {
        s.sequence_parallel = *sp && s.tp > 1;
    } else {
        s.sequence_parallel = s.tp > 1 && r.year >= 2023;
        if (s.tp > 1)
            r.as.push_back(std::string("sequence parallel unstated: ")
                + (r.year >= 2023 ? "on (Megatron-core/NeMo default)" : "off (before 2022)"));
    }
}

void read_optimizer_sharding(PublishedRow& r)
{
    Strategy& s = r.s;
    const std::string zero = str(r.st, "zero_stage_or_fsdp");
    const auto dist_opt = boolean(r.st, "distributed_optimizer");
    if (contains(zero, "fsdp") && s.pp > 1) {
        // With pipeline parallelism FSDP keeps the gathered weights for all micro-batches of a step
        // (torchtitan disables reshard-after-forward under PP). Meta's Llama 3 stack still shards the
        // gradients (Llama 3 paper Sec. 3.3.2): ZeRO-2. torchtitan's schedule also turns gradient sync
        // off until the last micro-batch (FSDP2 set_requires_gradient_sync), so the stage's gradients
        // stay unsharded through the step too: ZeRO-1. Both reduce-scatter and re-gather once per step.
        s.zero = r.torchtitan ? 1 : 2;
        r.as.push_back(r.torchtitan
                ? "FSDP with PP (torchtitan): weights and gradients unsharded through the step, one "
                  "reduce-scatter and all-gather per step = ZeRO-1"
                : "FSDP with PP: weights gathered once per step (no reshard between micro-batches), "
                  "gradients sharded = ZeRO-2");
    } else if (contains(zero, "fsdp") || contains(zero, "zero-3") || contains(zero, "zero3")) {
        s.zero = 3;
    } else if (contains(zero, "zero-2")) {
        s.zero = 2;
    } else if (contains(zero, "zero-1") || (dist_opt && *dist_opt)) {
        s.zero = 1;
    } else if (contains(zero, "none") || (dist_opt && !*dist_opt)) {
        s.zero = 0;
    } else {
        s.zero = r.year >= 2023 ? 1 : 0;
        r.as.push_back(std::string("optimizer sharding unstated: ")
            + (r.year >= 2023 ? "distributed optimizer (ZeRO-1)" : "none"));
    }
}

// The fp8 recipe the precision column names; unnamed: Transformer Engine's default of the run's
// time (DelayedScaling until NVIDIA's 2025 recipes moved to per-tensor current scaling) or torchao's
// tensorwise dynamic scaling.
void read_fp8_scaling(PublishedRow& r, const std::string& prec)
{
    TrainingSpec& t = r.t;
    if (contains(prec, "rowwise") || contains(r.c.id, "rowwise")) {
        t.fp8_scaling = Fp8Scaling::rowwise;
        r.as.push_back("fp8 with rowwise scaling");
    } else if (contains(prec, "mxfp8") || contains(prec, "block scales")) {
        t.fp8_scaling = Fp8Scaling::mxfp8;
        r.as.push_back("fp8: MXFP8 (32-element block scales)");
    } else if (contains(prec, "1x128") || contains(prec, "blockwise")) {
        t.fp8_scaling = Fp8Scaling::blockwise;
        r.as.push_back("fp8: blockwise scaling (1x128 activations, 128x128 weights)");
    } else if (contains(prec, "current")) {
        t.fp8_scaling = Fp8Scaling::tensorwise;
    } else if (contains(prec, "delayed") || (r.nvidia_recipe && r.year < 2025)) {
        t.fp8_scaling = Fp8Scaling::delayed;
        r.as.push_back("fp8 scaling unstated: delayed (Transformer Engine's default recipe before 2025)");
    }
}

void read_precision(PublishedRow& r, const std::string& prec)
{
    TrainingSpec& t = r.t;
    if (contains(prec, "fp4")) {
        t.precision = Precision::fp4;
    } else if (contains(prec, "fp8") || contains(prec, "float8")) {
        t.precision = Precision::fp8;
        read_fp8_scaling(r, prec);
    } else if (contains(prec, "bf16")) {
        t.precision = Precision::bf16;
    } else if (contains(prec, "fp16")) {
        t.precision = Precision::fp16;
    } else {
        t.precision = r.year <= 2022 ? Precision::fp16 : Precision::bf16;
        r.as.push_back(std::string("precision unstated: ") + (r.year <= 2022 ? "fp16" : "bf16"));
    }
}

// The NeMo container a source names ("26.02 NeMo container", "NeMo 24.03.01 container",
// "NeMo25.04.rc2"), as {year, month}; nullopt when it names none. A patch container (26.02.01) ships
// after its base: it counts as the month after.
std::optional<std::pair<int, int>> nemo_container_of(const std::string& source)
{
    static const std::regex after(R"((\d\d)\.(\d\d)(\.\d+)? NeMo container)");
    static const std::regex before(R"(NeMo ?(\d\d)\.(\d\d)(\.\d\d)?)");
    std::smatch m;
    if (!std::regex_search(source, m, after) && !std::regex_search(source, m, before))
        return std::nullopt;
    int year = 2000 + std::stoi(m[1].str());
    int month = std::stoi(m[2].str());
    if (m[3].matched && ++month > 12) {
        month = 1;
        ++year;
    }
    return std::pair { year, month };
}

// The framework release of a row whose source names its NeMo container: the catalogued release, or
// the one before an uncatalogued tag.
void read_release(PublishedRow& r)
{
    TrainingSpec& t = r.t;
    if (!r.container || t.framework != Framework::megatron)
        return;
    const auto [year, month] = *r.container;
    t.software = software_release_at(t.framework, year, month);
    if (!t.software)
        return;
    const bool exact = t.software->year == year && t.software->month == month;
    r.as.push_back("software: " + std::string(t.software->id)
        + (exact ? std::string() : " (the newest catalogued release not newer than the source's container)"));
}

// A GB200/GB300 NVL72 rack: 72 GPUs in one NVLink domain (what the rows' gpus_per_node says of it).
constexpr int kNvl72RackGpus = 72;

// An MoE row of NVIDIA's Megatron-Bridge tables that does not say how its recipe ran the experts gets what
// most of that container's recipes for its GPU do (scripts/performance/configs/*_workload_base_configs.py
// at the release the container shipped, v0.3.0 to v0.5.1; validation/README.md): from 25.11 the Blackwell
// recipes dispatch through HybridEP and the NVL72 racks capture the attention and router in CUDA graphs;
// from 26.06 their MXFP8 recipes capture the whole iteration (sync-free MoE with paged stashing) and
// overlap the expert all-to-all with the other micro-batch's compute (moe_a2a_overlap).
void read_moe_recipe_defaults(PublishedRow& r)
{
    if (!r.m.is_moe() || !contains(r.source, "Megatron-Bridge") || !r.container
        || r.cl.gpu.architecture != GpuArchitecture::blackwell || *r.container < std::pair { 2025, 11 })
        return;
    TrainingSpec& t = r.t;
    if (str(r.st, "moe_dispatcher").empty()) {
        t.moe_dispatcher = MoeDispatcher::deepep;
        r.as.push_back("MoE dispatcher unstated: HybridEP (the container's Blackwell recipes)");
    }
    const bool rack = num(r.hw, "gpus_per_node").value_or(0) >= kNvl72RackGpus;
    if (!rack || !str(r.st, "cuda_graphs").empty())
        return;
    const bool full
        = *r.container >= std::pair { 2026, 6 } && t.precision == Precision::fp8 && t.fp8_scaling == Fp8Scaling::mxfp8;
    t.cuda_graphs = full ? CudaGraphs::full_iteration : CudaGraphs::layers;
    r.as.push_back(full ? "CUDA graphs unstated: whole iteration (the container's MXFP8 recipes for NVL72 racks)"
                        : "CUDA graphs unstated: attention and router per layer (the container's NVL72 recipes)");
    if (full && !boolean(r.st, "ep_overlap")) {
        r.s.ep_overlap = true;
        r.as.push_back("expert all-to-all overlap unstated: on (moe_a2a_overlap in the same recipes)");
    }
}

// A Megatron recipe's activation offload (strategy.activation_offload_layers, or cpu_offloading_num_layers in
// the notes of rows imported before the field): Megatron-Bridge sets model.cpu_offloading with the weights
// kept on the GPU (scripts/performance/utils/overrides.py), and Transformer Engine's offload context takes
// the model's first N layers (get_cpu_offload_context).
std::optional<int> activation_offload_layers(const PublishedRow& r)
{
    if (const auto n = num(r.st, "activation_offload_layers"))
        return static_cast<int>(*n);
    static const std::regex setting(R"(cpu_offloading_num_layers\s*=\s*(\d+))");
    std::smatch m;
    if (std::regex_search(r.notes, m, setting))
        return std::stoi(m[1].str());
    return std::nullopt;
}

void read_activation_offload(PublishedRow& r)
{
    const auto stated = activation_offload_layers(r);
    if (!stated)
        return;
    const int layers = std::min(*stated, r.m.layers);
    if (layers <= 0)
        return;
    LayerRange offloaded;
    offloaded.offload_activations = true;
    r.s.layers = first_layers_range(layers, offloaded);
    r.as.push_back("activations of the first " + std::to_string(layers)
        + " layers offloaded to host memory (the recipe's cpu_offloading_num_layers)");
}

// The software stack: MoE dispatcher, CUDA graphs, fused attention, overlaps.
void read_software(PublishedRow& r, const std::string& prec)
{
    TrainingSpec& t = r.t;
    Strategy& s = r.s;
    read_release(r);
    if (const std::string d = str(r.st, "moe_dispatcher"); contains(d, "deepep") || contains(d, "hybridep")) {
        t.moe_dispatcher = MoeDispatcher::deepep;
        r.as.push_back("MoE dispatcher: " + d + " (one copy per destination node over RDMA)");
    }
    if (const std::string g = str(r.st, "cuda_graphs"); !g.empty()) {
        t.cuda_graphs = contains(g, "full") ? CudaGraphs::full_iteration
            : contains(g, "layer")          ? CudaGraphs::layers
                                            : CudaGraphs::none;
        r.as.push_back("CUDA graphs: " + g);
    }
    read_moe_recipe_defaults(r);
    read_activation_offload(r);
    // Software generation: fused attention and overlapped gradient reduction arrived in 2022-23.
    t.flash_attention = r.year >= 2023;
    s.overlap_grad_reduce = r.year >= 2023;
    s.overlap_param_gather = r.year >= 2023;
    r.as.push_back(std::string("software of ") + std::to_string(r.year) + ": "
        + (r.year >= 2023 ? "flash attention, DP reduction overlapped"
                          : "unfused attention, DP reduction after backward"));
    const std::string lid = lower(r.c.id);
    const bool async_tp
        = contains(prec, "asynctp") || (lid.size() >= 7 && lid.compare(lid.size() - 7, 7, "asynctp") == 0);
    if (async_tp) {
        s.tp_comm_overlap = true;
        r.as.push_back("async TP: TP communication overlapped with GEMMs");
    } else if (r.nvidia_recipe) {
        s.tp_comm_overlap = s.tp > 1;
        if (s.tp > 1)
            r.as.push_back("NeMo performance recipe: TP communication overlap on");
    }
}

// When the source prints both TFLOP/s and throughput, their ratio says whether it counted the
// recomputation's extra forward (8N instead of 6N FLOPs per token): then it recomputed fully.
void infer_recompute_from_flops(PublishedRow& r)
{
    if (!r.c.recompute_unstated)
        return;
    const auto tf = num(r.res, "tflops_per_gpu");
    std::optional<double> per_gpu = num(r.res, "tokens_per_sec_per_gpu");
    if (!per_gpu) {
        if (auto sec = num(r.res, "sec_per_iter"))
            per_gpu = static_cast<double>(r.t.global_batch) * static_cast<double>(r.t.seq_len) / *sec / r.n_gpus;
    }
    if (tf && per_gpu && *per_gpu > 0) {
        const double implied = *tf * units::kTFLOP / *per_gpu;
        const double model_flops = megatron_flops_per_token(r.m, static_cast<double>(r.t.seq_len));
        if (implied > 1.2 * model_flops) {
            r.s.recompute = Recompute::full;
            r.c.recompute_unstated = false;
            r.as.push_back("recompute: full, inferred from the source's TFLOP/s vs throughput ("
                + format_number("%.2f", implied / model_flops) + "x the model FLOPs)");
        }
    }
}

// A documented recipe's rule: what a source's runs did that the row does not state.
struct RecipeRule {
    bool (*applies)(const PublishedRow&);
    void (*apply)(PublishedRow&);
};

// Recipe rules fill what the row's own numbers did not settle, in this order.
const RecipeRule kRecipeRules[] = {
    // Llama 3 paper Sec. 3.3.2: with tensors deallocated as soon as they are dead, "we could
    // pre-train Llama 3 on sequences of 8K tokens without activation checkpointing".
    { [](const PublishedRow& r) { return r.c.recompute_unstated && r.llama3_paper && r.t.seq_len <= 8192; },
        [](PublishedRow& r) {
            r.s.recompute = Recompute::none;
            r.c.recompute_unstated = false;
            r.as.push_back("recompute unstated: none (Llama 3 paper Sec. 3.3.2: 8K pre-training without activation "
                           "checkpointing)");
        } },
    { [](const PublishedRow& r) { return r.llama3_paper; },
        [](PublishedRow& r) {
            // Meta's PyTorch stack pre-trained Llama 3 405B in the first half of 2024, before
            // FlashAttention-3 (Shah et al., July 2024): FlashAttention-2-class attention kernels, as
            // PyTorch's SDPA dispatches to (and as torchtitan, Meta's open stack, runs).
            r.t.attention_kernel = AttentionKernel::flash2;
            r.as.push_back("attention: FlashAttention-2 (Meta's PyTorch stack, trained before FlashAttention-3)");
            // Llama 3 paper Sec. 3.3.2 orders the parallelism dimensions [TP, CP, PP, DP].
            rank_order_from_string("tp-cp-ep-pp-dp", r.s.rank_order);
            r.as.push_back("rank order tp-cp-pp-dp (Llama 3 paper Sec. 3.3.2)");
        } },
    // NeMo 24.07's launcher recipes (conf/training/*/*.yaml) set activations_checkpoint_granularity
    // to null, or to 'selective' with 0 checkpointed layers for GPT-3 (the core attention is
    // re-run); Megatron-LM's llama example scripts pass no --recompute flag. Their runs never
    // recompute whole layers, whatever a memory estimate says.
    { [](const PublishedRow& r) { return r.c.recompute_unstated && r.nvidia_recipe; },
        [](PublishedRow& r) {
            // GPT-3 is dense: GPT-OSS's recipes name their own recompute modules.
            r.s.recompute = contains(r.m.name, "gpt") && !r.m.is_moe() ? Recompute::selective : Recompute::none;
            r.c.recompute_unstated = false;
            r.as.push_back(std::string("recompute unstated: ")
                + (r.s.recompute == Recompute::selective ? "selective (NeMo's GPT-3 recipes)"
                                                         : "none (NeMo / Megatron-LM performance recipes)"));
        } },
    // Every Megatron-Bridge performance recipe keeps Megatron's gradient buffers in bf16 and reduces them
    // so (scripts/performance/configs/*/*_llm_pretrain.py: ddp.grad_reduce_in_fp32 = False, v0.2.0-v0.5.1).
    { [](const PublishedRow& r) {
         return contains(r.source, "Megatron-Bridge") && r.t.framework == Framework::megatron
             && !is_full_precision(r.t.precision) && !r.t.grad_reduce_in_fp32;
     },
        [](PublishedRow& r) {
            r.t.grad_reduce_in_bf16 = true;
            r.as.push_back("gradients: bf16 buffers and reduction (the recipes' ddp.grad_reduce_in_fp32 = False)");
        } },
};

// The measurement, converted to tokens/s per GPU.
SkipReason read_measurement(PublishedRow& r)
{
    ValidationCase& c = r.c;
    // A number its own source calls a regression of the software it ran (a footnote citing the bug) is not
    // what that stack runs at: kept in the file, left out of the errors.
    if (const std::string regression = str(r.res, "known_regression"); !regression.empty())
        return "the source footnotes this number as a known performance regression (" + regression
            + "), not what the stack runs at";
    if (auto mem = num(r.res, "peak_memory_gib"); mem && *mem > 0)
        c.measured_peak_memory_bytes = *mem * units::kGiB;
    const double tokens_per_step = static_cast<double>(r.t.global_batch) * static_cast<double>(r.t.seq_len);
    if (auto v = num(r.res, "tokens_per_sec_per_gpu")) {
        c.measured_tokens_per_s_per_gpu = *v;
        c.measured_from = "tokens_per_sec_per_gpu";
    } else if (auto v2 = num(r.res, "tokens_per_sec")) {
        c.measured_tokens_per_s_per_gpu = *v2 / r.n_gpus;
        c.measured_from = "tokens_per_sec";
    } else if (auto v3 = num(r.res, "sec_per_iter")) {
        c.measured_tokens_per_s_per_gpu = tokens_per_step / *v3 / r.n_gpus;
        c.measured_from = "sec_per_iter";
    } else if (auto v4 = num(r.res, "tflops_per_gpu")) {
        // Convert with the source's own FLOP formula.
        double per_token;
        if (c.source_group == "narayanan21") {
            const bool full = c.recompute_unstated ? true : r.s.recompute == Recompute::full;
            per_token = narayanan_flops_per_token(r.m, static_cast<double>(r.t.seq_len), full);
            c.measured_from
                = std::string("tflops_per_gpu via Narayanan eq. 3") + (full ? " with recompute (96)" : " (72)");
        } else {
            per_token = megatron_flops_per_token(r.m, static_cast<double>(r.t.seq_len));
            c.measured_from = "tflops_per_gpu via the Megatron-LM FLOP formula";
        }
        c.measured_tokens_per_s_per_gpu = *v4 * units::kTFLOP / per_token;
    } else {
        return std::string("no throughput measurement (tokens/s, s/iteration or TFLOP/s)");
    }
    return std::nullopt;
}

// The scenario the row describes, unless its published configuration breaks a validity rule.
SkipReason build_scenario(PublishedRow& r)
{
    Scenario sc;
    sc.model = r.m;
    sc.cluster = r.cl;
    sc.training = r.t;
    sc.strategy = r.s;
    sc.description = r.c.id;
    const PlanInputs in { sc.model, sc.training, sc.cluster.gpu, sc.cluster.total_gpus() };
    const Rule rule = check_strategy(in, r.s);
    if (rule != Rule::ok)
        return "published configuration fails a validity rule: " + std::string(rule_key(rule, r.s)) + ": "
            + explain(rule, in, r.s);
    r.c.scenario = sc;
    return std::nullopt;
}

// One row of the file to a case, every unstated setting filled by a stated rule.
SkipReason read_row(PublishedRow& r, const PresetCatalog& catalog)
{
    if (auto why = read_model(r, catalog))
        return why;
    if (auto why = read_cluster(r, catalog))
        return why;
    if (auto why = read_parallelism(r))
        return why;
    if (auto why = read_batch_and_framework(r))
        return why;
    read_recompute_and_sequence_parallel(r);
    read_optimizer_sharding(r);
    const std::string prec = str(r.st, "precision");
    read_precision(r, prec);
    read_software(r, prec);
    infer_recompute_from_flops(r);
    for (const RecipeRule& rule : kRecipeRules)
        if (rule.applies(r))
            rule.apply(r);
    if (auto why = read_measurement(r))
        return why;
    return build_scenario(r);
}

} // namespace

std::vector<ValidationCase> read_published_runs(
    const json& runs, const std::string& file, const PresetCatalog& catalog, std::vector<SkippedRow>& skipped)
{
    if (!runs.is_array())
        throw InputError(
            file, "(top level)", "a published-runs file is a JSON array of runs, found " + json_type_name(runs));
    std::vector<ValidationCase> cases;
    int index = 0;
    for (const json& row : runs) {
        const std::string fallback_id = "row " + std::to_string(index++);
        if (!row.is_object()) {
            skipped.push_back({ fallback_id, "not a JSON object" });
            continue;
        }
        ValidationCase c;
        c.id = str(row, "id").empty() ? fallback_id : str(row, "id");
        c.source_group = source_group_of(c.id);
        PublishedRow reader(row, c);
        if (auto why = read_row(reader, catalog)) {
            skipped.push_back({ c.id, *why });
            continue;
        }
        cases.push_back(std::move(c));
    }
    return cases;
}

double spearman_rank_correlation(const std::vector<double>& a, const std::vector<double>& b)
{
    const std::size_t n = a.size();
    if (n < 2 || b.size() != n)
        return 0;
    auto ranks = [n](const std::vector<double>& v) {
        std::vector<std::size_t> idx(n);
        std::iota(idx.begin(), idx.end(), 0);
        std::sort(idx.begin(), idx.end(), [&](std::size_t i, std::size_t j) { return v[i] < v[j]; });
        std::vector<double> r(n);
        for (std::size_t i = 0; i < n;) {
            std::size_t j = i;
            while (j + 1 < n && v[idx[j + 1]] == v[idx[i]])
                ++j;
            const double avg = (static_cast<double>(i) + static_cast<double>(j)) / 2.0 + 1.0;
            for (std::size_t k = i; k <= j; ++k)
                r[idx[k]] = avg;
            i = j + 1;
        }
        return r;
    };
    const auto ra = ranks(a), rb = ranks(b);
    const double ma = std::accumulate(ra.begin(), ra.end(), 0.0) / n;
    const double mb = std::accumulate(rb.begin(), rb.end(), 0.0) / n;
    double cov = 0, va = 0, vb = 0;
    for (std::size_t i = 0; i < n; ++i) {
        cov += (ra[i] - ma) * (rb[i] - mb);
        va += (ra[i] - ma) * (ra[i] - ma);
        vb += (rb[i] - mb) * (rb[i] - mb);
    }
    if (va <= 0 || vb <= 0)
        return 0;
    return cov / std::sqrt(va * vb);
}

namespace {

GroupSummary summarize_rows(const std::vector<const ValidationRow*>& rows)
{
    GroupSummary g;
    g.rows = static_cast<int>(rows.size());
    if (rows.empty())
        return g;
    std::vector<double> abs_err, measured, predicted;
    double step_time_err = 0;
    for (const auto* r : rows) {
        abs_err.push_back(std::fabs(r->error));
        step_time_err += std::fabs(1 / (1 + r->error) - 1); // the same tokens per step: time ratio = 1 / rate ratio
        measured.push_back(r->c.measured_tokens_per_s_per_gpu);
        predicted.push_back(r->predicted_tokens_per_s_per_gpu);
    }
    g.mape = std::accumulate(abs_err.begin(), abs_err.end(), 0.0) / abs_err.size();
    g.step_time_mape = step_time_err / abs_err.size();
    std::vector<double> sorted = abs_err;
    std::sort(sorted.begin(), sorted.end());
    const std::size_t n = sorted.size();
    g.median = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
    g.worst = sorted.back();
    if (n >= 3)
        g.spearman = spearman_rank_correlation(measured, predicted);
    return g;
}

// The prediction's figures and errors on a row: throughput per GPU of the plan, memory, feasibility.
void record_prediction(ValidationRow& row, bool feasible, double tokens_per_s_per_gpu, double peak_memory_bytes)
{
    const ValidationCase& c = row.c;
    row.feasible = feasible;
    if (!feasible)
        row.c.assumptions.push_back("predicted out of memory ("
            + format_number("%.1f GiB", peak_memory_bytes / units::kGiB) + "); throughput reported anyway");
    row.predicted_tokens_per_s_per_gpu = tokens_per_s_per_gpu;
    row.predicted_peak_memory_bytes = peak_memory_bytes;
    if (c.measured_peak_memory_bytes)
        row.memory_error = (peak_memory_bytes - *c.measured_peak_memory_bytes) / *c.measured_peak_memory_bytes;
    row.error = (tokens_per_s_per_gpu - c.measured_tokens_per_s_per_gpu) / c.measured_tokens_per_s_per_gpu;
}

// A row on a mixed cluster: the heterogeneous model, throughput per GPU the replicas hold.
ValidationRow heterogeneous_row(const ValidationCase& c, const Calibration& calibration)
{
    ValidationRow row;
    row.c = c;
    const HeteroPrediction h = predict_heterogeneous(c.scenario, calibration);
    const Prediction& p = h.prediction;
    record_prediction(
        row, p.feasible, p.tokens_per_s / static_cast<double>(std::max(1LL, h.gpus_used)), p.peak_memory_bytes);
    return row;
}

} // namespace

ValidationReport run_validation(
    const std::vector<ValidationCase>& cases, std::vector<SkippedRow> skipped, const Calibration& calibration)
{
    ValidationReport report;
    report.skipped = std::move(skipped);
    for (const ValidationCase& c : cases) {
        ValidationRow row;
        row.c = c;
        if (c.scenario.heterogeneous()) {
            report.rows.push_back(heterogeneous_row(c, calibration));
            continue;
        }
        Strategy s = c.scenario.strategy;
        const PlanContext ctx(c.scenario.model, c.scenario.training, c.scenario.cluster, calibration);
        const AnalyticModel model(ctx);
        AnalyticResult r;
        if (c.recompute_unstated) {
            // The run fitted in memory: the cheapest recomputation that fits is what its authors would use.
            const Recompute order[] = { Recompute::none, Recompute::selective, Recompute::full };
            for (Recompute rc : order) {
                s.recompute = rc;
                model.evaluate(s, r);
                if (r.feasible)
                    break;
            }
            row.c.assumptions.push_back("recompute unstated: " + std::string(to_string(s.recompute))
                + ", the least recomputation that fits in memory");
            row.c.scenario.strategy = s;
        } else {
            model.evaluate(s, r);
        }
        record_prediction(row, r.feasible, r.tokens_per_s / static_cast<double>(s.total_gpus()), r.peak_memory_bytes);
        report.rows.push_back(std::move(row));
    }
    std::vector<const ValidationRow*> all;
    std::map<std::string, std::vector<const ValidationRow*>> by_source, by_gpu, by_source_model, by_workload;
    for (const auto& r : report.rows) {
        all.push_back(&r);
        const Scenario& sc = r.c.scenario;
        by_workload[sc.model.is_moe() ? "mixture of experts" : "dense"].push_back(&r);
        if (sc.training.seq_len >= 32768 || sc.strategy.cp > 1)
            by_workload["long context (>= 32k or CP)"].push_back(&r);
        by_source[r.c.source_group].push_back(&r);
        by_gpu[r.c.gpu].push_back(&r);
        by_source_model[r.c.source_group + " / " + r.c.model_name].push_back(&r);
    }
    report.overall = summarize_rows(all);
    {
        std::vector<double> e;
        for (const auto& r : report.rows)
            if (r.memory_error)
                e.push_back(std::fabs(*r.memory_error));
        report.memory.rows = static_cast<int>(e.size());
        if (!e.empty()) {
            std::sort(e.begin(), e.end());
            report.memory.mape = std::accumulate(e.begin(), e.end(), 0.0) / e.size();
            const std::size_t n = e.size();
            report.memory.median = n % 2 ? e[n / 2] : 0.5 * (e[n / 2 - 1] + e[n / 2]);
            report.memory.worst = e.back();
        }
    }
    for (const auto& [k, v] : by_source)
        report.by_source[k] = summarize_rows(v);
    for (const auto& [k, v] : by_gpu)
        report.by_gpu[k] = summarize_rows(v);
    for (const auto& [k, v] : by_workload)
        report.by_workload[k] = summarize_rows(v);
    for (const auto& [k, v] : by_source_model)
        if (v.size() >= 3)
            report.by_source_model[k] = summarize_rows(v);
    return report;
}

namespace {

json group_json(const GroupSummary& g)
{
    json j { { "rows", g.rows }, { "mape", g.mape }, { "median", g.median }, { "worst", g.worst },
        { "step_time_mape", g.step_time_mape } };
    if (g.spearman)
        j["spearman"] = *g.spearman;
    return j;
}

} // namespace

json validation_report_to_json(const ValidationReport& r)
{
    json j;
    j["schema"] = 1;
    json rows = json::array();
    for (const auto& row : r.rows) {
        rows.push_back({ { "id", row.c.id }, { "source", row.c.source_group }, { "gpu", row.c.gpu },
            { "measured_tokens_per_s_per_gpu", row.c.measured_tokens_per_s_per_gpu },
            { "predicted_tokens_per_s_per_gpu", row.predicted_tokens_per_s_per_gpu }, { "error", row.error },
            { "measured_from", row.c.measured_from }, { "feasible", row.feasible },
            { "label", strategy_label(row.c.scenario.strategy) },
            { "strategy", strategy_to_json(row.c.scenario.strategy) }, { "assumptions", row.c.assumptions },
            { "predicted_peak_memory_GiB", row.predicted_peak_memory_bytes / units::kGiB } });
        if (row.c.scenario.heterogeneous())
            rows.back()["stages"] = pipeline_stages_to_json(row.c.scenario.stages);
        if (row.c.measured_step_time_s)
            rows.back()["measured_step_time_s"] = *row.c.measured_step_time_s;
        if (row.memory_error) {
            rows.back()["measured_peak_memory_GiB"] = *row.c.measured_peak_memory_bytes / units::kGiB;
            rows.back()["memory_error"] = *row.memory_error;
        }
    }
    j["rows"] = rows;
    json skipped = json::array();
    for (const auto& s : r.skipped)
        skipped.push_back({ { "id", s.id }, { "reason", s.reason } });
    j["skipped"] = skipped;
    json summary = group_json(r.overall);
    summary["skipped"] = static_cast<int>(r.skipped.size());
    json by_source = json::object(), by_gpu = json::object(), by_model = json::object();
    for (const auto& [k, g] : r.by_source)
        by_source[k] = group_json(g);
    for (const auto& [k, g] : r.by_gpu)
        by_gpu[k] = group_json(g);
    for (const auto& [k, g] : r.by_source_model)
        by_model[k] = group_json(g);
    summary["memory"] = { { "rows", r.memory.rows }, { "mape", r.memory.mape }, { "median", r.memory.median },
        { "worst", r.memory.worst } };
    summary["by_source"] = by_source;
    summary["by_gpu"] = by_gpu;
    summary["by_source_model"] = by_model;
    json by_workload = json::object();
    for (const auto& [k, g] : r.by_workload)
        by_workload[k] = group_json(g);
    summary["by_workload"] = by_workload;
    j["summary"] = summary;
    return j;
}

std::string validation_report_to_markdown(const ValidationReport& r)
{
    std::string out;
    out += "| run | GPU | measured tok/s/GPU | predicted | error |\n|---|---|---:|---:|---:|\n";
    for (const auto& row : r.rows)
        out += "| " + row.c.id + " | " + row.c.gpu + " | " + format_number("%.1f", row.c.measured_tokens_per_s_per_gpu)
            + " | " + format_number("%.1f", row.predicted_tokens_per_s_per_gpu) + " | "
            + format_number("%+.1f%%", 100 * row.error) + " |\n";
    // Sources that state step times (rather than throughput) are also judged on step time.
    const bool with_time = std::any_of(
        r.rows.begin(), r.rows.end(), [](const ValidationRow& row) { return row.c.measured_step_time_s.has_value(); });
    auto group_table = [&](const char* title, const std::map<std::string, GroupSummary>& groups) {
        out += std::string("\n| ") + title + " | rows | MAPE | median | worst | Spearman |"
            + (with_time ? " step-time MAPE |\n|---|---:|---:|---:|---:|---:|---:|\n"
                         : "\n|---|---:|---:|---:|---:|---:|\n");
        for (const auto& [k, g] : groups)
            out += "| " + k + " | " + std::to_string(g.rows) + " | " + format_number("%.1f%%", 100 * g.mape) + " | "
                + format_number("%.1f%%", 100 * g.median) + " | " + format_number("%.1f%%", 100 * g.worst) + " | "
                + (g.spearman ? format_number("%.2f", *g.spearman) : std::string("-")) + " |"
                + (with_time ? " " + format_number("%.1f%%", 100 * g.step_time_mape) + " |\n" : "\n");
    };
    group_table("source", r.by_source);
    group_table("GPU", r.by_gpu);
    group_table("workload", r.by_workload);
    out += "\n**All rows: " + std::to_string(r.overall.rows) + ", MAPE " + format_number("%.1f%%", 100 * r.overall.mape)
        + ", median " + format_number("%.1f%%", 100 * r.overall.median) + ", worst "
        + format_number("%.1f%%", 100 * r.overall.worst) + "; skipped " + std::to_string(r.skipped.size()) + ".**\n";
    if (r.memory.rows > 0) {
        out += "\nPeak memory per GPU where the source states it (allocator reserved, GiB):\n\n"
               "| run | measured | predicted | error |\n|---|---:|---:|---:|\n";
        for (const auto& row : r.rows)
            if (row.memory_error)
                out += "| " + row.c.id + " | " + format_number("%.1f", *row.c.measured_peak_memory_bytes / units::kGiB)
                    + " | " + format_number("%.1f", row.predicted_peak_memory_bytes / units::kGiB) + " | "
                    + format_number("%+.1f%%", 100 * *row.memory_error) + " |\n";
        out += "\n**Memory: " + std::to_string(r.memory.rows) + " rows, MAPE "
            + format_number("%.1f%%", 100 * r.memory.mape) + ", median "
            + format_number("%.1f%%", 100 * r.memory.median) + ", worst "
            + format_number("%.1f%%", 100 * r.memory.worst) + ".**\n";
    }
    if (!r.skipped.empty()) {
        out += "\nSkipped rows:\n\n";
        for (const auto& s : r.skipped)
            out += "- " + s.id + ": " + s.reason + "\n";
    }
    return out;
}

} // namespace parallax

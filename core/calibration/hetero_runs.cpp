#include "calibration/hetero_runs.hpp"

#include "io/input_limits.hpp"
#include "io/scenario_io.hpp"
#include "spec/input_error.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

namespace parallax {

using nlohmann::json;

namespace {

// The sources' GPU names -> GPU presets.
const std::map<std::string, std::string>& gpu_presets()
{
    static const std::map<std::string, std::string> m {
        { "RTX-3090", "RTX-3090" },
        // Sailor's MIT "RTX-2080" cards hold 11 GB (its simulations/constants.py GPU_MEMORY_GB and FlashFlex's
        // machine_amounts.json): the RTX 2080 Ti, the only Turing GeForce with 11 GB (the RTX 2080 has 8).
        { "RTX-2080", "RTX-2080-Ti" },
        { "Titan-RTX", "Titan-RTX" },
        { "GH-96", "GH200-96GB" },
        { "V100-16GB", "V100-SXM2-16GB" },
        { "T4-16GB", "T4" },
    };
    return m;
}

// A node's NIC bandwidth shared by its GPUs: the fabric's bandwidth is per GPU (fabric_spec.hpp).
json fabric(const std::string& name, const char* kind, double node_GBps, int gpus_sharing, double latency_us,
    const std::string& source)
{
    return { { "name", name }, { "kind", kind }, { "bw_GBps", node_GBps / std::max(1, gpus_sharing) },
        { "latency_us", latency_us }, { "source", source } };
}

// NCCL per-step latencies (src/graph/tuning.cc, Simple protocol): PCIe 5.7 us, network 14 us; NVLink 3.4 us.
constexpr double kPcieLatencyUs = 5.7;
constexpr double kNetworkLatencyUs = 14;
constexpr double kNvlinkLatencyUs = 3.4;

// ---- Sailor (eth-easl/sailor@cf2c8e3, SOSP'25 artifact) ----------------------------------------------------

constexpr const char* kSailorNetworkSource
    = "eth-easl/sailor@cf2c8e3 sailor/providers/network_coeffs_all_homo.json: bandwidth the artifact measured "
      "(the fit's asymptote, bytes/s)";

// All-reduce bandwidth Sailor measured inside one node, by GPU type and GPUs taking part (GB/s). The MIT
// nodes' figures disagree with the same artifact's Aceso profile of those nodes (docs/heterogeneous.md,
// "Validation"): kept until the fp32 layer's compute on them is explained.
std::optional<double> sailor_intra_GBps(const std::string& gpu, int gpus)
{
    static const std::map<std::string, std::map<int, double>> m {
        { "GH-96", { { 2, 125.46 }, { 4, 250.56 } } },
        { "RTX-2080", { { 2, 10.76 }, { 4, 22.67 }, { 8, 24.55 } } },
        { "Titan-RTX", { { 2, 10.82 }, { 4, 12.33 }, { 8, 24.30 } } },
        { "RTX-3090", { { 2, 49.77 }, { 4, 7.86 }, { 8, 5.33 } } },
    };
    const auto g = m.find(gpu);
    if (g == m.end())
        return std::nullopt;
    const auto it = g->second.lower_bound(gpus);
    return it == g->second.end() ? g->second.rbegin()->second : it->second;
}

// Between nodes, per node (all its GPUs sending; GB/s).
std::optional<double> sailor_inter_node_GBps(const std::string& gpu)
{
    static const std::map<std::string, double> m {
        { "GH-96", 92.55 }, // 4 GPUs per node, one 200 Gb/s Slingshot NIC each
        { "RTX-2080", 2.858 },
        { "Titan-RTX", 2.857 },
        { "RTX-3090", 0.1149 },
    };
    const auto it = m.find(gpu);
    return it == m.end() ? std::nullopt : std::optional<double>(it->second);
}

// The README's clusters: the MIT nodes hold 8 GPUs of one type, Clariden's GH200 nodes 4.
int sailor_gpus_per_node(const std::string& gpu)
{
    return gpu == "GH-96" ? 4 : 8;
}

// Shapes the Sailor rows leave out (its sailor/Planner/llm_info.json counts units, not shapes). Sailor's
// Megatron-DeepSpeed models apply no dropout to the attention probabilities (megatron/model/opt_model.py
// OPTParallelAttention and gpt_neo_model.py feed the softmax output straight to the context bmm; OPT's
// hidden dropouts are commented out): the softmax output is the only s x s tensor each layer keeps.
std::optional<json> sailor_model(const json& m, std::string& reason)
{
    const std::string name = m.value("name", "");
    if (name == "OPT-350M") // Hugging Face facebook/opt-350m config.json
        return json { { "name", "OPT-350M" }, { "layers", m.value("n_layers", 24) },
            { "hidden", m.value("hidden_size", 1024) }, { "heads", m.value("n_heads", 16) },
            { "ffn_hidden", 4 * m.value("hidden_size", 1024) }, { "vocab", m.value("vocab_size", 50272) },
            { "ffn_act", "gelu" }, { "tied_embeddings", true }, { "dropout", false } };
    // Hugging Face EleutherAI/gpt-neo-2.7B config.json. Its local layers (window 256) are not windowed
    // here: Sailor's gpt_neo_model.py builds the local mask as a buffer but scores every layer over the whole
    // sequence (baddbmm over all keys, the causal mask, the context bmm), so each layer costs full attention.
    if (name == "GPT-Neo-2.7B")
        return json { { "name", "GPT-Neo-2.7B" }, { "layers", 32 }, { "hidden", 2560 }, { "heads", 20 },
            { "ffn_hidden", 10240 }, { "vocab", 50257 }, { "ffn_act", "gelu" }, { "tied_embeddings", true },
            { "dropout", false } };
    reason = "model " + quoted_for_message(name) + " has no known shape";
    return std::nullopt;
}

struct RowScenario {
    json doc;
    std::string source_group;
    std::string gpu_label;
    std::vector<std::string> assumptions;
};

std::string join_gpus(const json& gpus_by_type)
{
    std::string out;
    for (const auto& [name, count] : gpus_by_type.items()) {
        const auto it = gpu_presets().find(name);
        out += (out.empty() ? "" : " + ") + (it == gpu_presets().end() ? name : it->second);
    }
    return out;
}

std::optional<RowScenario> sailor_scenario(const json& row, std::string& reason)
{
    const json& st = row.at("strategy");
    const json& gpus = row.at("cluster").at("gpus_by_type");
    RowScenario out;
    out.source_group = row.value("id", "").rfind("sailor-mit", 0) == 0 ? "sailor-mit" : "sailor-clariden";
    out.gpu_label = join_gpus(gpus);
    auto model = sailor_model(row.at("model"), reason);
    if (!model)
        return std::nullopt;
    // Each group's nodes reach the others over their own NICs (a pair of nodes moves at the slower one's
    // rate: the artifact's multizone_bandwidths_het.json gives every pair with an RTX 3090 node its
    // 115 MB/s); the fabric between them is taken as the fastest NIC, so it limits nothing.
    json groups = json::array();
    double fastest_nic_per_gpu = 0;
    json inter;
    for (const auto& [name, count_j] : gpus.items()) {
        const int count = count_j.get<int>();
        const int per_node = std::min(sailor_gpus_per_node(name), count);
        const auto intra = sailor_intra_GBps(name, per_node);
        const auto nic = sailor_inter_node_GBps(name);
        if (!intra || !nic || !gpu_presets().count(name)) {
            reason = "no measured network for GPU " + quoted_for_message(name);
            return std::nullopt;
        }
        const int nodes = (count + per_node - 1) / per_node;
        const bool nvlink = name == "GH-96" || (name == "RTX-3090" && per_node == 2);
        const json node_nic = fabric(name + "-nic", "roce", *nic, per_node, kNetworkLatencyUs, kSailorNetworkSource);
        groups.push_back(
            { { "name", name }, { "gpu", gpu_presets().at(name) }, { "nodes", nodes }, { "gpus_per_node", per_node },
                { "intra_node",
                    fabric(name + "-intra", nvlink ? "nvlink" : "pcie", *intra, 1,
                        nvlink ? kNvlinkLatencyUs : kPcieLatencyUs, kSailorNetworkSource) },
                { "inter_node", node_nic } });
        if (*nic / per_node > fastest_nic_per_gpu) {
            fastest_nic_per_gpu = *nic / per_node;
            inter = node_nic;
        }
    }
    json stages = json::array();
    const json& plan = st.at("stages");
    for (std::size_t k = 0; k < plan.size(); ++k) {
        // Sailor's units: the embedding, the decoder layers, the head; the first and last stage hold those.
        int layers = plan[k].at("n_layer_units").get<int>() - (k == 0 ? 1 : 0) - (k + 1 == plan.size() ? 1 : 0);
        json replicas = json::array();
        for (const json& r : plan[k].at("replicas"))
            replicas.push_back({ { "group", r.at("gpu_type") }, { "tp", r.at("tp") } });
        stages.push_back({ { "layers", layers }, { "replicas", replicas } });
    }
    // Sailor's image (its Dockerfile: FROM nvcr.io/nvidia/pytorch:24.10-py3) sets
    // TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1, so cuBLAS runs fp32 GEMMs on TF32 tensor cores where a GPU has them:
    // the GH200s. Turing has no TF32, and GeForce Ampere's TF32 rate equals its fp32 rate: fp32 there.
    const bool tf32 = gpus.size() == 1 && gpus.contains("GH-96");
    out.doc = { { "schema", 1 }, { "description", row.value("id", "") }, { "model", *model },
        { "cluster", { { "groups", groups }, { "inter_node", inter } } },
        { "training",
            { { "global_batch", st.at("global_batch_size") }, { "seq_len", row.at("model").value("seq_len", 2048) },
                { "precision", tf32 ? "tf32" : "fp32" }, { "flash_attention", false },
                { "framework", "megatron-deepspeed" } } },
        { "strategy",
            { { "micro_batch", st.at("micro_batch_size") }, { "recompute", "none" }, { "zero", 0 },
                { "schedule", "1f1b" }, { "overlap_grad_reduce", false }, { "batch_split", "even" },
                { "stages", stages } } } };
    out.assumptions = { "fp32 training: Sailor's profiles (sailor/Planner/llm_info.json) count 4 bytes per "
                        "parameter and activation; on GH200 the GEMMs on TF32 tensor cores (NGC PyTorch 24.10 image, "
                        "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1)",
        "no fused attention (fp32); DeepSpeed's pipeline engine, which reduces gradients after the pipeline "
        "flush (deepspeed/runtime/pipe/schedule.py: ReduceGrads ends TrainSchedule); no recomputation; every "
        "data-parallel replica of a stage gets the same micro-batches",
        "fabrics: the bandwidths the artifact measured, a node's NIC shared by its GPUs; between groups the "
        "slowest group's NIC" };
    return out;
}

// ---- AMP (DachengLi1/AMP@72eeea4, NeurIPS'22 artifact) ------------------------------------------------------

// AMP's layer list for GPT-2 (30 entries): embed2h, noop, 24 transformer layers (entries 2-25), noop, noop,
// embed2v, noop; stage k holds the entries [b_k, b_{k+1}).
constexpr int kAmpFirstLayerEntry = 2;
constexpr int kAmpLastLayerEntry = 25;

constexpr const char* kAmpNetworkSource
    = "DachengLi1/AMP@72eeea4 het_cluster.py / homogeneous.py cluster_info: p3.8xlarge 10 Gb/s between nodes and "
      "170 Gb/s NVLink inside, g4dn.12xlarge 50 Gb/s both (AWS instance specifications); Ethernet without EFA "
      "(p3.8xlarge has none, the artifact sets up no OFI plugin: .deepspeed_env sets only NCCL_ALGO): NCCL's socket "
      "transport";
constexpr double kP3NicGBps = 10.0 / 8;
constexpr double kP3NvlinkGBps = 170.0 / 8;
constexpr double kG4NicGBps = 50.0 / 8;
constexpr int kAwsGpusPerNode = 4;

std::optional<RowScenario> amp_scenario(const json& row, std::string& reason)
{
    const json& st = row.at("strategy");
    const json& m = row.at("model");
    const bool het = row.value("heterogeneous", false);
    const int tp = st.at("tp"), pp = st.at("pp"), dp = st.at("dp");
    const std::vector<int> bounds = st.at("layer_partition_boundaries").get<std::vector<int>>();
    if (static_cast<int>(bounds.size()) != pp + 1) {
        reason = "layer_partition_boundaries does not have pp + 1 entries";
        return std::nullopt;
    }
    RowScenario out;
    out.source_group = het ? "amp-hetero" : "amp-homogeneous";
    out.gpu_label = join_gpus(row.at("cluster").at("gpus_by_type"));
    const json t4_group
        = { { "name", "t4" }, { "gpu", "T4" }, { "nodes", het ? 1 : 4 }, { "gpus_per_node", kAwsGpusPerNode },
              { "intra_node", fabric("g4dn-pcie", "pcie", kG4NicGBps, 1, kPcieLatencyUs, kAmpNetworkSource) } };
    json groups = json::array();
    if (het)
        groups.push_back({ { "name", "v100" }, { "gpu", "V100-SXM2-16GB" }, { "nodes", 3 },
            { "gpus_per_node", kAwsGpusPerNode },
            { "intra_node", fabric("p3-nvlink", "nvlink", kP3NvlinkGBps, 1, kNvlinkLatencyUs, kAmpNetworkSource) } });
    groups.push_back(t4_group);
    const json inter = het
        ? fabric("p3-nic", "tcp", kP3NicGBps, kAwsGpusPerNode, kNetworkLatencyUs, kAmpNetworkSource)
        : fabric("g4dn-nic", "tcp", kG4NicGBps, kAwsGpusPerNode, kNetworkLatencyUs, kAmpNetworkSource);
    json stages = json::array();
    for (int k = 0; k < pp; ++k) {
        const int first = std::max(bounds[k], kAmpFirstLayerEntry);
        const int last = std::min(bounds[k + 1] - 1, kAmpLastLayerEntry);
        json replicas = json::array();
        for (int d = 0; d < dp; ++d) {
            // DeepSpeed's PipeModelDataParallelTopology: rank = (stage * dp + replica) * tp + tp_rank; the
            // artifact's hostfile puts ranks 4i..4i+3 on node i, and the T4 node is the last.
            const int node = (k * dp + d) * tp / kAwsGpusPerNode;
            replicas.push_back({ { "group", het && node < 3 ? "v100" : "t4" }, { "tp", tp } });
        }
        stages.push_back({ { "layers", std::max(0, last - first + 1) }, { "replicas", replicas } });
    }
    const json model = { { "name", "GPT-2 medium (AMP)" }, { "layers", m.value("n_layers", 24) },
        { "hidden", m.value("hidden_size", 1024) }, { "heads", 16 }, { "ffn_hidden", 4 * m.value("hidden_size", 1024) },
        { "vocab", m.value("vocab_size", 52256) }, { "ffn_act", "gelu" }, { "tied_embeddings", true } };
    out.doc = { { "schema", 1 }, { "description", row.value("id", "") }, { "model", model },
        { "cluster", { { "groups", groups }, { "inter_node", inter } } },
        { "training",
            { { "global_batch", st.at("global_batch_size") }, { "seq_len", m.value("seq_len", 1024) },
                { "precision", "fp16" }, { "flash_attention", false }, { "framework", "megatron-deepspeed" },
                { "software", "deepspeed-0.3" }, { "grad_reduce_in_fp32", true } } },
        { "strategy",
            { { "micro_batch", st.at("micro_batch_size") }, { "recompute", "none" }, { "zero", 0 },
                { "schedule", "1f1b" }, { "overlap_grad_reduce", false }, { "batch_split", "even" },
                { "stages", stages } } } };
    out.assumptions = { "fp16 with the gradients reduced in fp32 (examples/ds_config.json: \"fp32_allreduce\": true), "
                        "16 heads (examples/ds_pretrain_gpt2_pipe.sh)",
        "Megatron-LM 1.1.5 without fused attention; DeepSpeed 0.3.13's pipeline engine (the artifact's fork), which "
        "reduces gradients after the pipeline flush, sends every TP rank the whole activation gradient and the "
        "fp16 attention mask with every stage output; no recomputation; every data-parallel replica gets the "
        "same micro-batches",
        "fabrics: the bandwidths AMP's planner uses, a node's NIC shared by its 4 GPUs" };
    return out;
}

std::optional<RowScenario> row_scenario(const json& row, std::string& reason)
{
    const std::string id = row.value("id", "");
    const json& st = row.value("strategy", json::object());
    if (id.rfind("sailor-", 0) == 0 && st.contains("stages"))
        return sailor_scenario(row, reason);
    if (id.rfind("amp-", 0) == 0 && st.contains("layer_partition_boundaries"))
        return amp_scenario(row, reason);
    reason = "the plan is not published (the source gives an MFU only)";
    return std::nullopt;
}

double gpus_used(const Scenario& s)
{
    double n = 0;
    for (const PipelineStageSpec& st : s.stages)
        for (const StageReplica& r : st.replicas)
            n += r.tp;
    return n;
}

} // namespace

bool is_hetero_runs_file(const json& j)
{
    if (!j.is_object() || !j.contains("rows") || !j["rows"].is_array() || j["rows"].empty())
        return false;
    const json& first = j["rows"].front();
    return first.is_object() && first.contains("cluster") && first["cluster"].is_object()
        && first["cluster"].contains("gpus_by_type");
}

std::vector<ValidationCase> read_hetero_runs(
    const json& doc, const std::string& file, const PresetCatalog& catalog, std::vector<SkippedRow>& skipped)
{
    if (!is_hetero_runs_file(doc))
        throw InputError(file, "rows", "must be a list of measured runs with cluster.gpus_by_type");
    std::vector<ValidationCase> cases;
    for (const json& row : doc.at("rows")) {
        const std::string id = row.value("id", "");
        const json result = row.value("result", json::object());
        if (result.value("failed", false)) {
            skipped.push_back({ id, "the run failed in the source (out of memory or crashed): nothing measured" });
            continue;
        }
        std::string reason;
        std::optional<RowScenario> rs;
        try {
            rs = row_scenario(row, reason);
        } catch (const json::exception& e) {
            reason = std::string("row not in the expected shape: ") + e.what();
        }
        if (!rs) {
            skipped.push_back({ id, reason });
            continue;
        }
        const auto step_s = result.find("sec_per_iter");
        if (step_s == result.end() || !step_s->is_number() || step_s->get<double>() <= 0) {
            skipped.push_back({ id, "no measured step time (sec_per_iter)" });
            continue;
        }
        ValidationCase c;
        c.id = id;
        c.source_group = rs->source_group;
        c.gpu = rs->gpu_label;
        c.model_name = rs->doc["model"].value("name", "");
        try {
            c.scenario = parse_scenario(rs->doc, file + " row " + quoted_for_message(id), catalog);
        } catch (const InputError& e) {
            skipped.push_back({ id, std::string("cannot be modelled: ") + e.what() });
            continue;
        }
        const double tokens = static_cast<double>(c.scenario.training.global_batch) * c.scenario.training.seq_len;
        c.measured_step_time_s = step_s->get<double>();
        c.measured_tokens_per_s_per_gpu = tokens / gpus_used(c.scenario) / *c.measured_step_time_s;
        c.measured_from = "result.sec_per_iter";
        if (const auto mem = result.find("peak_memory_bytes"); mem != result.end() && mem->is_number())
            c.measured_peak_memory_bytes = mem->get<double>();
        c.assumptions = rs->assumptions;
        cases.push_back(std::move(c));
    }
    return cases;
}

} // namespace parallax

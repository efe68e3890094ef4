#include "io/serving_runs.hpp"

#include "io/number_format.hpp"
#include "io/serving_io.hpp"
#include "io/serving_load_check.hpp"
#include "serving/engine_traits.hpp"
#include "serving/serving_model.hpp"
#include "spec/input_error.hpp"

#include <algorithm>
#include <cmath>
#include <set>

namespace parallax {

using nlohmann::json;

namespace {

struct GpuMapping {
    const char* row_name;
    const char* preset;
    const char* intra_node;
    const char* inter_node;
    int domain_gpus; // GPUs one NVLink domain joins: a DGX/HGX node, or a whole NVL72 rack
};
constexpr int kBenchmarkRounds = 5;
constexpr int kDgxGpus = 8; // DGX/HGX: eight GPUs on one NVSwitch
constexpr int kNvl72Gpus = 72; // GB200/GB300 NVL72: 72 GPUs in one NVLink 5 domain (NVIDIA GB200 NVL72 datasheet)

// The rows' GPU names and the presets, NVLink generations and NICs of those machines: ConnectX-7
// (400 Gb/s) per GPU in DGX H100/H200/B200 and GB200 compute trays, ConnectX-8 (800 Gb/s) in DGX B300
// and GB300 (NVIDIA reference architectures, validation/hardware-specs.json).
constexpr GpuMapping kGpus[] = {
    { "H100 SXM", "H100-SXM5-80GB", "nvlink4-nvswitch", "ib-ndr", kDgxGpus },
    { "H200 SXM", "H200-SXM-141GB", "nvlink4-nvswitch", "ib-ndr", kDgxGpus },
    { "B200 SXM", "B200", "nvlink5-nvswitch", "ib-ndr", kDgxGpus },
    { "B300 SXM", "B300", "nvlink5-nvswitch", "ib-xdr", kDgxGpus },
    { "GB200", "GB200", "nvlink5-nvl72", "ib-ndr", kNvl72Gpus },
    { "GB300", "GB300", "nvlink5-nvl72", "ib-xdr", kNvl72Gpus },
    { "A100 80GB (DGX-A100)", "A100-SXM4-80GB", "nvlink3-nvswitch", "ib-hdr", kDgxGpus },
    { "H100 80GB (DGX-H100)", "H100-SXM5-80GB", "nvlink4-nvswitch", "ib-ndr", kDgxGpus },
    // Eight RTX PRO 6000 Blackwell Server Edition boards talk over PCIe 5.0 (GB202 has no NVLink).
    { "RTX PRO 6000 Blackwell Server", "RTX-PRO-6000-Blackwell-Server", "pcie5", "roce-400g", kDgxGpus },
};

// Rows whose model has a preset; DeepSeek-R1 is DeepSeek-V3's architecture with other weights, and
// Kimi-K2.5 serves its language model (the vision encoder is not modelled).
const std::map<std::string, std::string> kModelPresets = {
    { "Llama 3.1 70B", "llama3.1-70b" },
    { "Llama 3.3 70B", "llama3.1-70b" }, // Llama 3.1 70B's architecture, other weights (its config.json)
    { "Llama 3.1 405B", "llama3.1-405b" },
    { "Qwen3-30B-A3B", "qwen3-30b-a3b" },
    { "Llama 3.1 8B", "llama3.1-8b" },
    { "Llama 2 70B", "llama2-70b" },
    { "Qwen3-235B-A22B", "qwen3-235b-a22b" },
    { "gpt-oss-120b", "gpt-oss-120b" },
    { "DeepSeek-V3", "deepseek-v3" },
    { "DeepSeek-R1", "deepseek-v3" },
    { "Kimi-K2.5", "kimi-k2.5" },
    { "Llama 4 Scout", "llama4-scout" },
    { "Llama 4 Maverick", "llama4-maverick" },
};

std::optional<double> number_at(const json& j, const char* key)
{
    if (!j.is_object() || !j.contains(key))
        return std::nullopt;
    const json& v = j.at(key);
    if (v.is_number())
        return v.get<double>();
    if (v.is_object())
        for (const char* stat : { "mean", "unspecified_stat", "median" })
            if (v.contains(stat) && v.at(stat).is_number())
                return v.at(stat).get<double>();
    return std::nullopt;
}

int int_or(const json& j, const char* key, int fallback)
{
    return j.contains(key) && j.at(key).is_number_integer() && j.at(key).get<int>() > 0 ? j.at(key).get<int>()
                                                                                        : fallback;
}

// A model the row describes in full (GQA, SwiGLU; every layer MoE when it has experts).
json inline_model(const json& m)
{
    for (const char* k : { "n_layers", "hidden_size", "n_heads", "n_kv_heads", "vocab_size" })
        if (!m.contains(k) || !m.at(k).is_number_integer())
            throw std::runtime_error(std::string("no preset for the model and the row lacks ") + k);
    if (m.value("attention", std::string("GQA")) != "GQA")
        throw std::runtime_error("no preset for the model, and its attention is not GQA");
    json j = { { "name", m.value("key", m.value("name", std::string("model"))) }, { "layers", m["n_layers"] },
        { "hidden", m["hidden_size"] }, { "heads", m["n_heads"] }, { "kv_heads", m["n_kv_heads"] },
        { "vocab", m["vocab_size"] }, { "ffn_act", "swiglu" } };
    if (m.contains("head_dim") && m.at("head_dim").is_number_integer())
        j["head_dim"] = m["head_dim"];
    const bool moe = m.contains("n_experts") && m.at("n_experts").is_number_integer();
    if (moe) {
        j["moe"]
            = { { "experts", m["n_experts"] }, { "top_k", m["top_k"] }, { "expert_ffn_hidden", m["expert_ffn_size"] } };
        j["ffn_hidden"] = m["expert_ffn_size"];
    } else if (m.contains("ffn_hidden_size") && m.at("ffn_hidden_size").is_number_integer()) {
        j["ffn_hidden"] = m["ffn_hidden_size"];
    } else {
        throw std::runtime_error("no preset for the model and the row gives no FFN size");
    }
    return j;
}

std::string short_source(const std::string& s)
{
    if (s.rfind("AIConfigurator", 0) == 0)
        return "aiconfigurator";
    if (s.rfind("SplitwiseSim", 0) == 0)
        return "splitwise";
    if (s.rfind("TensorRT-LLM performance overview", 0) == 0)
        return "trtllm-perf-overview";
    return s.substr(0, 24);
}

const GpuMapping& row_gpu(const json& row)
{
    const std::string gpu = row.at("hardware").value("gpu_type", std::string());
    for (const auto& m : kGpus)
        if (gpu == m.row_name)
            return m;
    throw std::runtime_error("no preset for the GPU \"" + gpu + "\"");
}

// One instance's degrees as the deployment reads them. AIConfigurator's `moe_tp` x `ep` is always
// `tp` x `attention_dp`, which is how the model splits the experts (ep ways, and the rest inside each
// expert), so `moe_tp` needs no key of its own.
json row_layout(const json& par, const GpuMapping& g, ServingRun& run)
{
    int tp = int_or(par, "tp", 1);
    int adp = int_or(par, "attention_dp", 1);
    const int pp = int_or(par, "pp", 1), ep = int_or(par, "ep", 1);
    const int moe_tp = int_or(par, "moe_tp", 0);
    if (tp > g.domain_gpus && moe_tp > 0 && tp == moe_tp * ep && ep > 1) {
        // A few AIConfigurator rows give tp as moe_tp x ep (64 for DeepSeek and GPT-OSS on one node of 8):
        // attention over 64 GPUs on 8 nodes could not decode in the 5-9 ms they measure, so the row is
        // read as one node, attention TP moe_tp with the experts split ep ways.
        run.assumptions.push_back("tp " + std::to_string(tp) + " read as moe_tp x ep: tp " + std::to_string(moe_tp)
            + ", ep " + std::to_string(ep) + " on one node");
        tp = moe_tp;
    }
    if (adp > g.domain_gpus && tp == 1 && moe_tp > 0 && adp == moe_tp * ep && ep > 1) {
        // The same rows with attention data parallelism: attention_dp 64 = moe_tp x ep, their ids say
        // tp8_ep8 as the tp-64 rows' do; read as one node, attention DP moe_tp, the experts split ep ways.
        run.assumptions.push_back("attention_dp " + std::to_string(adp) + " read as moe_tp x ep: attention_dp "
            + std::to_string(moe_tp) + ", ep " + std::to_string(ep) + " on one node");
        adp = moe_tp;
    }
    if (adp > 1 && ep > 1)
        run.assumptions.push_back("attention DP " + std::to_string(adp) + " with EP " + std::to_string(ep)
            + ": an all-to-all MoE exchange, as wide-EP deployments run it (the row names no backend)");
    return { { "tp", tp }, { "pp", pp }, { "ep", ep }, { "attention_dp", adp } };
}

int layout_gpus(const json& l)
{
    return l.at("tp").get<int>() * l.at("pp").get<int>() * l.at("attention_dp").get<int>();
}

// A disaggregated row's pools. Without the number of workers of each the deployment is unknown: the
// decode batch, and so TPOT and whether prefill queues, depend on it.
json disaggregated_deployment(const json& par, const GpuMapping& g, ServingRun& run, int& gpus)
{
    json d;
    gpus = 0;
    for (const char* pool : { "prefill", "decode" }) {
        const json& p = par.at(pool);
        json l = row_layout(p, g, run);
        const int workers = int_or(p, "num_workers", 0);
        if (workers == 0)
            throw std::runtime_error(std::string("disaggregated row without the number of ") + pool + " workers");
        l["workers"] = workers;
        gpus += layout_gpus(l) * l["workers"].get<int>();
        d[pool] = l;
    }
    return { { "disaggregated", d } };
}

json row_model(const json& m)
{
    if (auto it = kModelPresets.find(m.value("name", std::string())); it != kModelPresets.end())
        return it->second;
    return inline_model(m);
}

json row_precision(const json& prec, ServingRun& run)
{
    std::string weights = prec.contains("weights") && prec.at("weights").is_string()
        ? prec.at("weights").get<std::string>()
        : std::string();
    if (weights.empty()) {
        weights = "bf16";
        run.assumptions.push_back("weights bf16 (the row states none)");
    }
    if (weights == "int4")
        throw std::runtime_error("int4 weight-only quantisation is not a serving precision Parallax reads");
    json precision = { { "weights", weights } };
    const std::string quant = prec.value("notes", std::string());
    if (prec.contains("kv_cache") && prec.at("kv_cache").is_string()) {
        precision["kv_cache"] = prec["kv_cache"];
    } else if (quant.find("gemm=fp8,") != std::string::npos || quant.find("gemm=nvfp4") != std::string::npos) {
        // NVIDIA's ModelOpt FP8 and NVFP4 checkpoints (per-tensor fp8 or nvfp4 GEMMs, as opposed to
        // DeepSeek's native fp8_block) quantise the KV cache to fp8 too (kv_cache_quant_algo in
        // hf_quant_config.json), and the engines use it when the cache dtype is left to the checkpoint.
        precision["kv_cache"] = "fp8";
        run.assumptions.push_back("KV cache fp8, as the row's ModelOpt checkpoint quantises it (the row states none)");
    } else {
        run.assumptions.push_back("KV cache in the default precision (the row states none)");
    }
    return precision;
}

bool offline_row(const json& wl)
{
    return wl.contains("max_throughput") && wl.at("max_throughput").is_boolean() && wl.at("max_throughput").get<bool>();
}

json row_workload(const json& wl, bool static_batch, ServingRun& run)
{
    json workload = { { "isl", wl.at("isl") }, { "osl", wl.at("osl") } };
    if (offline_row(wl)) {
        workload["max_throughput"] = true;
        return workload;
    }
    if (static_batch) {
        workload["batch_size"] = wl.at("batch_size");
        return workload;
    }
    workload["concurrency"] = wl.at("concurrency");
    // NVIDIA's benchmark harnesses send a few rounds per slot (num_prompts = concurrency x
    // multi_round, 5); the rows do not say. Among 2, 3, 5, 10 and unbounded, 5 is what each
    // leave-one-engine, -model or -GPU-out choice picked, and 3 reads the same (docs/serving.md).
    workload["rounds"] = kBenchmarkRounds;
    run.assumptions.push_back("a closed-loop benchmark of " + std::to_string(kBenchmarkRounds)
        + " requests per concurrency slot (the row states none)");
    return workload;
}

// AIConfigurator's `batch_size` is the batch of one attention-DP rank of one worker and its concurrency the
// whole deployment's: every disaggregated row with worker counts has concurrency = decode batch_size x
// attention_dp x decode workers. An aggregated row whose concurrency is k times batch_size x attention_dp
// ran k replicas (the Qwen3-32B NVFP4 rows at 15,000 tokens: 32 x TP2, the 64 GPUs of the same job's
// disaggregated rows), each holding batch_size x attention_dp requests. Where the row leaves attention_dp
// out, the multiple may be the attention-DP ranks instead (in every such row it equals tp), so the row
// stays one instance.
int row_replicas(const json& wl, const json& par, ServingRun& run)
{
    if (int_or(par, "attention_dp", 0) == 0)
        return 1;
    const int concurrency = int_or(wl, "concurrency", 0);
    const int per_instance = int_or(wl, "batch_size", 0) * int_or(par, "attention_dp", 1);
    if (concurrency <= 0 || per_instance <= 0 || concurrency <= per_instance || concurrency % per_instance != 0)
        return 1;
    const int replicas = concurrency / per_instance;
    run.assumptions.push_back(std::to_string(replicas) + " replicas: concurrency " + std::to_string(concurrency)
        + " over a batch of " + std::to_string(per_instance) + " per instance");
    return replicas;
}

// The scenario a row describes: one instance (or one pair of pools) on as many NVLink domains as it needs.
json row_scenario(const json& row, ServingRun& run)
{
    const GpuMapping& g = row_gpu(row);
    const json& par = row.at("parallelism");
    const std::string mode = par.value("mode", std::string());
    run.mode = mode.rfind("disaggregated", 0) == 0 ? "disaggregated" : mode;
    if (run.mode != "aggregated" && run.mode != "static batch" && run.mode != "disaggregated")
        throw std::runtime_error("mode \"" + mode + "\": not a deployment Parallax models");
    if (offline_row(row.at("workload")) && run.mode == "aggregated")
        run.mode = "offline";
    int gpus = 0;
    json deployment;
    if (run.mode == "disaggregated") {
        deployment = disaggregated_deployment(par, g, run, gpus);
    } else {
        deployment = row_layout(par, g, run);
        deployment["replicas"] = run.mode == "aggregated" ? row_replicas(row.at("workload"), par, run) : 1;
        gpus = layout_gpus(deployment) * deployment["replicas"].get<int>();
    }
    json serving = { { "precision", row_precision(row.at("precision"), run) },
        { "workload", row_workload(row.at("workload"), run.mode == "static batch", run) } };
    if (const auto spec = row.find("speculative"); spec != row.end() && spec->is_object()) {
        serving["speculative"] = *spec;
        run.assumptions.push_back("speculative decoding as the row states it");
    }
    const json& engine = row.at("engine");
    if (engine.contains("name") && engine.at("name").is_string())
        serving["engine"] = engine["name"];
    else
        run.assumptions.push_back("engine vllm (the row names none)");
    if (const auto mixed = row.find("mixed_chunk"); mixed != row.end() && mixed->is_boolean()) {
        serving["mixed_chunk"] = *mixed;
        run.assumptions.push_back(mixed->get<bool>() ? "prompts batched with decodes (the row's mixed_chunk)"
                                                     : "prompts prefilled apart from decodes (the row's mixed_chunk)");
    }
    const int nodes = (gpus + g.domain_gpus - 1) / g.domain_gpus;
    return { { "schema", 1 }, { "model", row_model(row.at("model")) },
        { "cluster",
            { { "gpu", g.preset }, { "nodes", nodes },
                { "gpus_per_node", nodes > 1 ? g.domain_gpus : std::max(gpus, 1) }, { "intra_node", g.intra_node },
                { "inter_node", g.inter_node } } },
        { "serving", serving }, { "deployment", deployment } };
}

double median(std::vector<double> v)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

ServingErrorSummary summarise(const std::vector<const ServingRunResult*>& rows)
{
    ServingErrorSummary s;
    std::vector<double> ttft, tpot;
    double tp_sum = 0;
    for (const auto* r : rows) {
        tp_sum += std::fabs(r->throughput_error);
        if (!r->run->latencies_measured)
            continue;
        ttft.push_back(std::fabs(r->ttft_error));
        tpot.push_back(std::fabs(r->tpot_error));
        s.ttft_mape += std::fabs(r->ttft_error);
        s.tpot_mape += std::fabs(r->tpot_error);
    }
    s.rows = static_cast<int>(rows.size());
    s.latency_rows = static_cast<int>(ttft.size());
    if (s.latency_rows > 0) {
        s.ttft_mape /= s.latency_rows;
        s.tpot_mape /= s.latency_rows;
    }
    if (s.rows > 0)
        s.throughput_mape = tp_sum / s.rows;
    s.ttft_median = median(ttft);
    s.tpot_median = median(tpot);
    return s;
}

int deployment_gpus(const Deployment& d)
{
    if (!d.disaggregated)
        return d.instance.gpus() * std::max(1, d.replicas.value_or(1));
    return d.disaggregated->prefill.layout.gpus() * d.disaggregated->prefill.workers
        + d.disaggregated->decode.layout.gpus() * d.disaggregated->decode.workers;
}

json summary_json(const ServingErrorSummary& s)
{
    return { { "rows", s.rows }, { "latency_rows", s.latency_rows }, { "ttft_mape", s.ttft_mape },
        { "tpot_mape", s.tpot_mape }, { "throughput_mape", s.throughput_mape }, { "ttft_median", s.ttft_median },
        { "tpot_median", s.tpot_median } };
}

// The rows one source file measured of one model on one GPU with one engine: they share how the file's
// columns are to be read.
std::string row_batch_key(const json& row)
{
    if (!row.is_object())
        return {};
    const std::string notes = row.value("notes", std::string());
    const auto at = notes.find("source_file=");
    if (at == std::string::npos)
        return {};
    const std::string file = notes.substr(at, notes.find(';', at) - at);
    const auto text = [&](const char* section, const char* key) {
        const auto s = row.find(section);
        return s != row.end() && s->is_object() ? s->value(key, std::string()) : std::string();
    };
    return file + "|" + text("model", "name") + "|" + text("hardware", "gpu_type") + "|" + text("engine", "name");
}

// Where a file's tp column gives, for one model and engine, degrees that no tensor-parallel layout of that
// model can take (28 or 36 GPUs for 128 heads), the column counts the GPUs of a worker laid out some other
// way, and its other rows' tp is no TP degree either: those rows are skipped too, not read as pure TP.
void skip_batches_without_tp(const json& rows, std::vector<ServingRun>& runs, std::vector<ServingSkip>& skipped)
{
    // The rows the reader refused for their TP degree, looked up once rather than per row.
    std::set<std::string> tp_refused;
    for (const ServingSkip& k : skipped)
        if (k.reason.find("(deployment.tp)") != std::string::npos)
            tp_refused.insert(k.id);
    std::map<std::string, std::vector<int>> impossible;
    std::map<std::string, std::string> key_of;
    for (const json& row : rows) {
        const std::string key = row_batch_key(row);
        if (key.empty())
            continue;
        const std::string id = row.value("id", std::string());
        key_of[id] = key;
        if (tp_refused.count(id))
            impossible[key].push_back(int_or(row.value("parallelism", json::object()), "tp", 0));
    }
    std::vector<ServingRun> kept;
    for (ServingRun& run : runs) {
        const auto key = key_of.find(run.id);
        const auto bad = key == key_of.end() ? impossible.end() : impossible.find(key->second);
        if (bad == impossible.end()) {
            kept.push_back(std::move(run));
            continue;
        }
        std::vector<int> tps = bad->second;
        std::sort(tps.begin(), tps.end());
        tps.erase(std::unique(tps.begin(), tps.end()), tps.end());
        std::string list;
        for (int tp : tps)
            list += (list.empty() ? "" : ", ") + std::to_string(tp);
        skipped.push_back({ run.id,
            "the layout is not stated: the same source file gives this model and engine tp " + list
                + ", which no tensor-parallel layout of the model can take, so its tp column counts a worker's GPUs "
                  "(deployment.tp)" });
    }
    runs = std::move(kept);
}

} // namespace

bool is_serving_runs_file(const json& j)
{
    return j.is_array() && !j.empty() && j.front().is_object() && j.front().contains("workload")
        && j.front().contains("result");
}

std::vector<ServingRun> read_serving_runs(
    const json& rows, const std::string& file, const PresetCatalog& catalog, std::vector<ServingSkip>& skipped)
{
    if (!rows.is_array())
        throw InputError(file, "(top level)", "must be an array of measured serving rows");
    std::vector<ServingRun> runs;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const json& row = rows[i];
        const std::string id
            = row.is_object() ? row.value("id", "row " + std::to_string(i)) : "row " + std::to_string(i);
        try {
            ServingRun run;
            run.id = id;
            run.source = short_source(row.value("source", std::string()));
            const json& res = row.at("result");
            const auto ttft
                = number_at(res, "ttft_ms") ? number_at(res, "ttft_ms") : number_at(res, "prefill_latency_ms");
            const auto tpot = number_at(res, "tpot_ms") ? number_at(res, "tpot_ms") : number_at(res, "decode_step_ms");
            const auto offline_tokens = number_at(res, "output_tokens_per_s_per_gpu");
            run.latencies_measured = ttft && tpot && *ttft > 0 && *tpot > 0;
            if (!run.latencies_measured && !(offline_row(row.at("workload")) && offline_tokens && *offline_tokens > 0))
                throw std::runtime_error("no measured TTFT and TPOT");
            run.ttft_ms = run.latencies_measured ? *ttft : 0;
            run.tpot_ms = run.latencies_measured ? *tpot : 0;
            const json scenario = row_scenario(row, run);
            run.scenario = parse_serving_scenario(scenario, file + " [" + id + "]", catalog);
            run.engine = std::string(to_string(run.scenario.serving.engine));
            const ServingSpec& sv = run.scenario.serving;
            if (sv.precision.weights == Precision::fp4 && run.scenario.model.is_moe()
                && engine_traits(sv.engine, run.scenario.deployment.instance, run.scenario.cluster.gpu)
                       .nvfp4_moe_at_fp8_rate)
                run.assumptions.push_back("TensorRT-LLM's default MoE backend (CUTLASS), whose NVFP4 experts run at "
                                          "its FP8 rate (the row names none)");
            run.gpu = run.scenario.cluster.gpu.name;
            run.model = row.at("model").value("name", std::string());
            const ServingWorkload& w = run.scenario.serving.workload;
            const double in_flight = w.load == LoadKind::batch_size ? static_cast<double>(w.batch_size)
                                                                    : static_cast<double>(w.concurrency);
            const double e2e_s = (run.ttft_ms + static_cast<double>(w.osl - 1) * run.tpot_ms) * 1e-3;
            run.gpus = deployment_gpus(run.scenario.deployment);
            run.tokens_per_s_per_gpu
                = run.latencies_measured ? in_flight * static_cast<double>(w.osl) / e2e_s / run.gpus : *offline_tokens;
            runs.push_back(std::move(run));
        } catch (const InputError& e) {
            skipped.push_back({ id, e.rule() + " (" + e.key() + ")" });
        } catch (const std::exception& e) {
            skipped.push_back({ id, e.what() });
        }
    }
    skip_batches_without_tp(rows, runs, skipped);
    skip_loads_that_missed_the_engine(runs, skipped);
    return runs;
}

ServingValidationReport run_serving_validation(const std::vector<ServingRun>& runs, std::vector<ServingSkip> skipped)
{
    ServingValidationReport r;
    r.skipped = std::move(skipped);
    for (const ServingRun& run : runs) {
        const ServingPrediction p = predict_serving(run.scenario);
        if (!p.feasible) {
            r.skipped.push_back(
                { run.id, "predicted infeasible: " + (p.warnings.empty() ? std::string() : p.warnings.front()) });
            continue;
        }
        ServingRunResult x;
        x.run = &run;
        x.feasible = p.feasible;
        x.ttft_ms = p.ttft_ms;
        x.tpot_ms = p.tpot_ms;
        x.tokens_per_s_per_gpu = p.output_tokens_per_s_per_gpu;
        x.ttft_error = run.latencies_measured ? p.ttft_ms / run.ttft_ms - 1.0 : 0.0;
        x.tpot_error = run.latencies_measured ? p.tpot_ms / run.tpot_ms - 1.0 : 0.0;
        x.throughput_error = p.output_tokens_per_s_per_gpu / run.tokens_per_s_per_gpu - 1.0;
        x.running_batch = p.running_batch;
        x.max_batch_by_memory = p.max_batch_by_memory;
        x.queued_requests = p.queued_requests;
        r.rows.push_back(x);
    }
    std::vector<const ServingRunResult*> all;
    std::map<std::string, std::vector<const ServingRunResult*>> src, eng, gpu, model, mode;
    for (const auto& x : r.rows) {
        all.push_back(&x);
        src[x.run->source].push_back(&x);
        eng[x.run->engine].push_back(&x);
        gpu[x.run->gpu].push_back(&x);
        model[x.run->model].push_back(&x);
        mode[x.run->mode].push_back(&x);
    }
    r.overall = summarise(all);
    for (const auto& [k, v] : src)
        r.by_source[k] = summarise(v);
    for (const auto& [k, v] : eng)
        r.by_engine[k] = summarise(v);
    for (const auto& [k, v] : gpu)
        r.by_gpu[k] = summarise(v);
    for (const auto& [k, v] : model)
        r.by_model[k] = summarise(v);
    for (const auto& [k, v] : mode)
        r.by_mode[k] = summarise(v);
    return r;
}

json serving_validation_to_json(const ServingValidationReport& r)
{
    json rows = json::array();
    for (const auto& x : r.rows) {
        const bool lat = x.run->latencies_measured;
        const auto measured = [lat](double v) { return lat ? json(v) : json(nullptr); };
        rows.push_back({ { "id", x.run->id }, { "measured_ttft_ms", measured(x.run->ttft_ms) },
            { "predicted_ttft_ms", x.ttft_ms }, { "measured_tpot_ms", measured(x.run->tpot_ms) },
            { "predicted_tpot_ms", x.tpot_ms }, { "measured_tokens_per_s_per_gpu", x.run->tokens_per_s_per_gpu },
            { "predicted_tokens_per_s_per_gpu", x.tokens_per_s_per_gpu }, { "ttft_error", measured(x.ttft_error) },
            { "tpot_error", measured(x.tpot_error) }, { "throughput_error", x.throughput_error },
            { "predicted_running_batch", x.running_batch }, { "max_batch_by_memory", x.max_batch_by_memory },
            { "predicted_queued_requests", x.queued_requests }, { "mode", x.run->mode }, { "gpus", x.run->gpus },
            { "assumptions", x.run->assumptions } });
    }
    json skipped = json::array();
    for (const auto& s : r.skipped)
        skipped.push_back({ { "id", s.id }, { "reason", s.reason } });
    auto groups = [](const std::map<std::string, ServingErrorSummary>& m) {
        json g = json::object();
        for (const auto& [k, v] : m)
            g[k] = summary_json(v);
        return g;
    };
    json summary = summary_json(r.overall);
    summary["skipped"] = r.skipped.size();
    summary["by_source"] = groups(r.by_source);
    summary["by_engine"] = groups(r.by_engine);
    summary["by_gpu"] = groups(r.by_gpu);
    summary["by_model"] = groups(r.by_model);
    summary["by_mode"] = groups(r.by_mode);
    return { { "schema", 1 }, { "mode", "serve" }, { "rows", rows }, { "skipped", skipped }, { "summary", summary } };
}

std::string serving_validation_to_markdown(const ServingValidationReport& r)
{
    auto pct = [](double v) { return format_number("%.1f%%", 100 * v); };
    auto table = [&](const char* title, const std::map<std::string, ServingErrorSummary>& m) {
        std::string s = std::string("| ") + title
            + " | rows | TTFT MAPE | TPOT MAPE | tokens/s/GPU MAPE |\n|---|---:|---:|---:|---:|\n";
        for (const auto& [k, v] : m) {
            const bool lat = v.latency_rows > 0;
            s += "| " + k + " | " + std::to_string(v.rows) + " | " + (lat ? pct(v.ttft_mape) : "–") + " | "
                + (lat ? pct(v.tpot_mape) : "–") + " | " + pct(v.throughput_mape) + " |\n";
        }
        return s + "\n";
    };
    const ServingErrorSummary& o = r.overall;
    std::string latencies = "no measured latencies";
    if (o.latency_rows > 0)
        latencies = "TTFT MAPE"
            + (o.latency_rows < o.rows ? " over the " + std::to_string(o.latency_rows) + " rows that measure it"
                                       : std::string())
            + " " + pct(o.ttft_mape) + " (median " + pct(o.ttft_median) + "), TPOT MAPE " + pct(o.tpot_mape)
            + " (median " + pct(o.tpot_median) + ")";
    std::string s = "All " + std::to_string(o.rows) + " rows: " + latencies + ", output tokens/s per GPU MAPE "
        + pct(o.throughput_mape) + "; " + std::to_string(r.skipped.size()) + " rows skipped.\n\n";
    s += table("source", r.by_source);
    s += table("engine", r.by_engine);
    s += table("GPU", r.by_gpu);
    s += table("model", r.by_model);
    s += table("mode", r.by_mode);
    return s;
}

} // namespace parallax

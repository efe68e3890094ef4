#include "io/export/serving_launch.hpp"

#include "io/export/launch_text.hpp"
#include "serving/engine_traits.hpp"
#include "serving/serving_step.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <sstream>

namespace parallax {

namespace {

// The shipped model presets' instruct checkpoints on the Hugging Face hub (their model cards).
struct Checkpoint {
    std::string_view preset;
    std::string_view repo;
};
constexpr std::array<Checkpoint, 15> kCheckpoints = { {
    { "llama2-7b", "meta-llama/Llama-2-7b-chat-hf" },
    { "llama2-13b", "meta-llama/Llama-2-13b-chat-hf" },
    { "llama2-70b", "meta-llama/Llama-2-70b-chat-hf" },
    { "llama3-8b", "meta-llama/Meta-Llama-3-8B-Instruct" },
    { "llama3-70b", "meta-llama/Meta-Llama-3-70B-Instruct" },
    { "llama3.1-8b", "meta-llama/Llama-3.1-8B-Instruct" },
    { "llama3.1-70b", "meta-llama/Llama-3.1-70B-Instruct" },
    { "llama3.1-405b", "meta-llama/Llama-3.1-405B-Instruct" },
    { "deepseek-v3", "deepseek-ai/DeepSeek-V3" },
    { "gpt-oss-120b", "openai/gpt-oss-120b" },
    { "qwen3-30b-a3b", "Qwen/Qwen3-30B-A3B" },
    { "qwen3-235b-a22b", "Qwen/Qwen3-235B-A22B" },
    { "mixtral-8x7b", "mistralai/Mixtral-8x7B-Instruct-v0.1" },
    { "llama4-scout", "meta-llama/Llama-4-Scout-17B-16E-Instruct" },
    { "llama4-maverick", "meta-llama/Llama-4-Maverick-17B-128E-Instruct" },
} };

constexpr int kBasePort = 8000;

using launch_text::num;

// Engine flags take fractions with two decimals ("0.90").
std::string two_decimals(double v)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", v);
    return buf;
}

// One process of the deployment: an aggregated replica, or a prefill or decode worker.
struct Worker {
    std::string role; // "replica", "prefill", "decode"
    InstanceLayout layout;
    int node = 0;
    int first_gpu = 0;
    int port = kBasePort;
};

// Workers in order, each on consecutive GPUs of one node when it fits in a node (a new node when the
// current one has too few left), else from the start of its own nodes.
std::vector<Worker> place_workers(const ServingScenario& s)
{
    std::vector<std::pair<std::string, DisaggregatedPool>> pools;
    if (s.deployment.disaggregated) {
        pools.push_back({ "prefill", s.deployment.disaggregated->prefill });
        pools.push_back({ "decode", s.deployment.disaggregated->decode });
    } else {
        pools.push_back({ "replica", DisaggregatedPool { s.deployment.instance, s.replicas() } });
    }
    const int per_node = s.cluster.gpus_per_node;
    std::vector<Worker> out;
    int node = 0, gpu = 0;
    std::vector<int> port_of_node(static_cast<std::size_t>(s.cluster.nodes + 1), kBasePort);
    for (const auto& [role, pool] : pools)
        for (int w = 0; w < pool.workers; ++w) {
            const int g = pool.layout.gpus();
            if (gpu > 0 && (g > per_node || gpu + g > per_node)) {
                ++node;
                gpu = 0;
            }
            const auto n = static_cast<std::size_t>(std::min(node, s.cluster.nodes));
            out.push_back(Worker { role, pool.layout, node, gpu, port_of_node[n]++ });
            gpu += g;
            node += gpu / per_node;
            gpu %= per_node;
        }
    return out;
}

void add(std::vector<std::string>& w, std::initializer_list<std::string> words)
{
    w.insert(w.end(), words.begin(), words.end());
}

// Whether the engine runs its MoE all-to-all for this layout, by the rule the step model charges.
bool runs_all_to_all(const ServingScenario& s, const EngineTraits& t, const InstanceLayout& l)
{
    return s.model.is_moe() && moe_all_to_all(t, l, *s.model.moe);
}

// GB200/GB300 NVL72: an NVLink domain larger than one baseboard of 8, where TensorRT-LLM's MNNVL all-to-all runs.
bool multi_node_nvlink(const ClusterSpec& c)
{
    constexpr int kBaseboardGpus = 8;
    return c.gpus_per_node > kBaseboardGpus;
}

std::vector<std::string> vllm_words(const ServingScenario& s, const Worker& wk, std::vector<std::string>& notes)
{
    const InstanceLayout& l = wk.layout;
    const EngineTraits t = engine_traits(ServingEngine::vllm, l, s.cluster.gpu, s.serving.speculative.has_value());
    std::vector<std::string> w
        = { "vllm", "serve", "\"$MODEL\"", "--tensor-parallel-size", num(l.tp), "--pipeline-parallel-size", num(l.pp) };
    if (l.attention_dp > 1)
        add(w, { "--data-parallel-size", num(l.attention_dp) });
    if (s.model.is_moe() && l.ep > 1) {
        add(w, { "--enable-expert-parallel" });
        if (l.ep != l.tp * l.attention_dp)
            notes.push_back("vLLM's expert parallelism spans all tp x data-parallel ranks ("
                + num(l.tp * l.attention_dp) + "); the deployment's ep " + num(l.ep)
                + " is not expressible and runs as ep " + num(l.tp * l.attention_dp));
    }
    if (s.serving.precision.kv_cache == Precision::fp8)
        add(w, { "--kv-cache-dtype", "fp8" });
    // vllm/config/parallel.py all2all_backend: DeepEP's high-throughput kernels for prefill, its CUDA-graph-able
    // low-latency ones for decoding; allgather_reducescatter (the default) gathers.
    if (runs_all_to_all(s, t, l))
        add(w, { "--all2all-backend", wk.role == "prefill" ? "deepep_high_throughput" : "deepep_low_latency" });
    add(w,
        { "--gpu-memory-utilization", two_decimals(t.memory_fraction), "--max-num-seqs", num(t.max_running_requests),
            "--max-num-batched-tokens", num(t.max_batched_tokens), "--max-model-len",
            num(s.serving.workload.isl + s.serving.workload.osl), "--port", num(wk.port) });
    if (wk.role != "replica")
        add(w, { "--kv-transfer-config", "'{\"kv_connector\":\"NixlConnector\",\"kv_role\":\"kv_both\"}'" });
    if (const auto& d = s.serving.speculative) {
        // vllm/config/speculative.py: "mtp" runs the checkpoint's own MTP layers, "eagle3" a separate draft.
        const std::string k = num(d->draft_tokens);
        add(w,
            { "--speculative-config",
                d->draft == DraftKind::mtp ? "'{\"method\":\"mtp\",\"num_speculative_tokens\":" + k + "}'"
                                           : "\"{\\\"method\\\":\\\"eagle3\\\",\\\"model\\\":\\\"$DRAFT_MODEL\\\","
                                             "\\\"num_speculative_tokens\\\":"
                        + k + "}\"" });
    }
    return w;
}

std::vector<std::string> sglang_words(const ServingScenario& s, const Worker& wk)
{
    const InstanceLayout& l = wk.layout;
    const EngineTraits t = engine_traits(ServingEngine::sglang, l, s.cluster.gpu, s.serving.speculative.has_value());
    // SGLang's --tp-size counts every GPU of the instance; --dp-size splits attention among them.
    std::vector<std::string> w = { "python3", "-m", "sglang.launch_server", "--model-path", "\"$MODEL\"", "--tp-size",
        num(l.tp * l.attention_dp) };
    if (l.pp > 1)
        add(w, { "--pp-size", num(l.pp) });
    if (l.attention_dp > 1)
        add(w, { "--dp-size", num(l.attention_dp), "--enable-dp-attention" });
    if (s.model.is_moe() && l.ep > 1)
        add(w, { "--ep-size", num(l.ep) });
    if (runs_all_to_all(s, t, l))
        add(w, { "--moe-a2a-backend", "deepep", "--deepep-mode", "auto" });
    if (s.serving.precision.kv_cache == Precision::fp8)
        add(w, { "--kv-cache-dtype", "fp8_e4m3" });
    // With DP attention SGLang divides both limits among the ranks (server_args.py
    // _handle_data_parallelism), so it is given the instance's.
    add(w,
        { "--mem-fraction-static", two_decimals(t.memory_fraction), "--max-running-requests",
            num(static_cast<long long>(t.max_running_requests) * l.attention_dp), "--chunked-prefill-size",
            num(t.max_batched_tokens * l.attention_dp), "--context-length",
            num(s.serving.workload.isl + s.serving.workload.osl), "--port", num(wk.port) });
    if (wk.role != "replica")
        add(w, { "--disaggregation-mode", wk.role, "--disaggregation-transfer-backend", "nixl" });
    if (const auto& d = s.serving.speculative) {
        // SGLang runs a checkpoint's MTP (NextN) layers through its EAGLE worker with a chain of draft tokens.
        add(w, { "--speculative-algorithm", d->draft == DraftKind::mtp ? "EAGLE" : "EAGLE3" });
        if (d->draft == DraftKind::eagle)
            add(w, { "--speculative-draft-model-path", "\"$DRAFT_MODEL\"" });
        add(w,
            { "--speculative-num-steps", num(d->draft_tokens), "--speculative-eagle-topk", "1",
                "--speculative-num-draft-tokens", num(d->draft_tokens + 1) });
    }
    return w;
}

std::string trtllm_options_name(const Worker& wk)
{
    return wk.role == "replica" ? "llm-api-options.yaml" : wk.role + "-llm-api-options.yaml";
}

std::vector<std::string> trtllm_words(const ServingScenario& s, const Worker& wk)
{
    const InstanceLayout& l = wk.layout;
    const EngineTraits t = engine_traits(ServingEngine::trtllm, l, s.cluster.gpu, s.serving.speculative.has_value());
    std::vector<std::string> w;
    // CutlassFusedMoE.select_alltoall_method_type: MNNVL all-to-all by itself on multi-node NVLink, DeepEP when
    // TRTLLM_CAN_USE_DEEP_EP is set, neither unless ep > top_k; TRTLLM_MOE_DISABLE_ALLTOALLV turns it off.
    if (runs_all_to_all(s, t, l) && !multi_node_nvlink(s.cluster))
        add(w, { "env", "TRTLLM_CAN_USE_DEEP_EP=1" });
    else if (s.model.is_moe() && l.exchanges_moe_tokens() && l.ep > s.model.moe->top_k
        && l.moe_exchange == MoeExchange::gather && multi_node_nvlink(s.cluster))
        add(w, { "env", "TRTLLM_MOE_DISABLE_ALLTOALLV=1" });
    add(w, { "trtllm-serve", "\"$MODEL\"", "--tp_size", num(l.tp * l.attention_dp), "--pp_size", num(l.pp) });
    if (s.model.is_moe())
        add(w, { "--ep_size", num(l.ep) });
    add(w,
        { "--max_batch_size", num(t.max_running_requests), "--max_num_tokens", num(t.max_batched_tokens),
            "--max_seq_len", num(s.serving.workload.isl + s.serving.workload.osl),
            "--kv_cache_free_gpu_memory_fraction", two_decimals(t.memory_fraction), "--extra_llm_api_options",
            trtllm_options_name(wk), "--port", num(wk.port) });
    return w;
}

std::string trtllm_options(const ServingScenario& s, const Worker& wk)
{
    std::ostringstream y;
    y << "# TensorRT-LLM LLM-API options of the " << wk.role << " workers (written by parallax-cli export)\n";
    y << "enable_attention_dp: " << (wk.layout.attention_dp > 1 ? "true" : "false") << "\n";
    y << "kv_cache_config:\n  dtype: " << (s.serving.precision.kv_cache == Precision::fp8 ? "fp8" : "auto") << "\n";
    if (wk.role != "replica")
        y << "cache_transceiver_config:\n  backend: DEFAULT\n";
    if (const auto& d = s.serving.speculative) {
        if (d->draft == DraftKind::mtp)
            y << "speculative_config:\n  decoding_type: MTP\n  num_nextn_predict_layers: " << d->draft_tokens << "\n";
        else
            y << "speculative_config:\n  decoding_type: Eagle\n  max_draft_len: " << d->draft_tokens
              << "\n  speculative_model_dir: DRAFT_MODEL # the EAGLE-3 draft checkpoint's directory\n";
    }
    return y.str();
}

std::string command_line(const std::vector<std::string>& words)
{
    std::string out = "    ";
    for (std::size_t i = 0; i < words.size(); ++i) {
        const bool flag = words[i].rfind("--", 0) == 0;
        out += (i == 0 ? "" : flag ? " \\\n        " : " ") + words[i];
    }
    return out;
}

void precision_notes(const ServingScenario& s, ServingEngine e, std::vector<std::string>& notes)
{
    const Precision wgt = s.serving.precision.weights;
    if (wgt == Precision::fp8 || wgt == Precision::fp4)
        notes.push_back(std::string(to_string(wgt)) + " weights: point MODEL at a checkpoint quantised to "
            + std::string(to_string(wgt)) + " (e.g. NVIDIA ModelOpt's " + (wgt == Precision::fp8 ? "FP8" : "NVFP4")
            + " release of the model); " + std::string(to_string(e)) + " reads the quantisation from it");
}

// What the MoE exchange needs from the engine's environment, or what the engine will do instead.
void exchange_notes(
    const ServingScenario& s, ServingEngine e, const std::vector<Worker>& workers, std::vector<std::string>& notes)
{
    for (const Worker& wk : workers) {
        const InstanceLayout& l = wk.layout;
        if (!s.model.is_moe() || !l.exchanges_moe_tokens() || l.moe_exchange != MoeExchange::all_to_all)
            continue;
        if (!runs_all_to_all(s, engine_traits(e, l, s.cluster.gpu), l)) {
            notes.push_back("TensorRT-LLM runs its MoE all-to-all only when ep exceeds the experts a token picks ("
                + num(s.model.moe->top_k) + "); at ep " + num(l.ep)
                + " it gathers every rank's tokens, and Parallax predicts it so");
            return;
        }
        if (e == ServingEngine::trtllm && multi_node_nvlink(s.cluster))
            return;
        notes.push_back("the MoE all-to-all runs on DeepEP: install it in the engine's environment (deep_ep), or set "
                        "the deployment's moe_exchange to \"gather\" for the engine's stock path");
        return;
    }
}

} // namespace

std::optional<ServingEngine> serving_launch_format_from_string(std::string_view s)
{
    return serving_engine_from_string(s);
}

std::string serving_checkpoint(const ModelSpec& m)
{
    for (const Checkpoint& c : kCheckpoints)
        if (c.preset == m.name)
            return std::string(c.repo);
    return {};
}

LaunchConfig export_serving_launch(const ServingScenario& s, ServingEngine engine)
{
    LaunchConfig out;
    const std::vector<Worker> workers = place_workers(s);
    std::ostringstream sh;
    const std::string repo = serving_checkpoint(s.model);
    sh << "#!/usr/bin/env bash\n# " << s.model.name << " served by " << to_string(engine) << " on " << s.cluster.nodes
       << " x " << s.cluster.gpus_per_node << " " << s.cluster.gpu.name << " (written by parallax-cli export)\n"
       << "# Run on every node with NODE_RANK set (0 .. " << s.cluster.nodes - 1
       << "); each worker gets its own GPUs and port.\nset -euo pipefail\n"
       << "MODEL=\"${MODEL:-" << (repo.empty() ? std::string() : repo) << "}\"\n"
       << ": \"${MODEL:?set MODEL to the checkpoint of " << s.model.name << "}\"\nNODE_RANK=\"${NODE_RANK:-0}\"\n";
    if (s.serving.speculative && s.serving.speculative->draft == DraftKind::eagle && engine != ServingEngine::trtllm)
        sh << ": \"${DRAFT_MODEL:?set DRAFT_MODEL to the EAGLE-3 draft checkpoint of " << s.model.name << "}\"\n";
    sh << "\n";
    sh << "start() { # role, first GPU, GPUs, command...\n    local role=$1 first=$2 count=$3\n"
       << "    shift 3\n    echo \"starting $role on GPUs $first..$((first + count - 1))\"\n"
       << "    CUDA_VISIBLE_DEVICES=$(seq -s, \"$first\" $((first + count - 1))) \"$@\" &\n}\n\n";
    sh << "case \"$NODE_RANK\" in\n";
    int node = -1;
    std::vector<std::string> done_options;
    for (const Worker& wk : workers) {
        if (wk.node != node) {
            sh << (node >= 0 ? "    ;;\n" : "") << wk.node << ")\n";
            node = wk.node;
        }
        std::vector<std::string> words = engine == ServingEngine::vllm ? vllm_words(s, wk, out.notes)
            : engine == ServingEngine::sglang                          ? sglang_words(s, wk)
                                                                       : trtllm_words(s, wk);
        words.insert(words.begin(), { "start", wk.role, num(wk.first_gpu), num(wk.layout.gpus()) });
        sh << command_line(words) << "\n";
        if (engine == ServingEngine::trtllm
            && std::find(done_options.begin(), done_options.end(), trtllm_options_name(wk)) == done_options.end()) {
            done_options.push_back(trtllm_options_name(wk));
            out.files.push_back(LaunchFile { trtllm_options_name(wk), trtllm_options(s, wk) });
        }
    }
    sh << "    ;;\n*) echo \"NODE_RANK $NODE_RANK has no workers\" ;;\nesac\nwait\n";
    out.files.insert(out.files.begin(), LaunchFile { "serve.sh", sh.str(), 0755 });
    if (engine != s.serving.engine)
        out.notes.push_back("the scenario predicts " + std::string(to_string(s.serving.engine)) + "; this script runs "
            + std::string(to_string(engine)) + ", whose limits and kernels differ");
    precision_notes(s, engine, out.notes);
    if (const auto& d = s.serving.speculative) {
        if (d->draft == DraftKind::mtp)
            out.notes.push_back("speculative decoding with the checkpoint's MTP layers: MODEL must carry them "
                                "(DeepSeek-V3/R1, GLM-4.5, Qwen3-Next, MiMo publish them)");
        else
            out.notes.push_back(engine == ServingEngine::trtllm
                    ? "EAGLE-3 draft: replace DRAFT_MODEL in the options file by the draft checkpoint's directory"
                    : "EAGLE-3 draft: set DRAFT_MODEL to the draft checkpoint trained for MODEL");
    }
    exchange_notes(s, engine, workers, out.notes);
    if (s.deployment.disaggregated)
        out.notes.push_back("disaggregated: put a prefill/decode router in front of the workers (NVIDIA Dynamo, "
                            "SGLang's sglang_router --pd-disaggregation, vLLM's P/D proxy or trtllm-serve "
                            "disaggregated), listing the prefill and decode URLs this script starts");
    for (const Worker& wk : workers)
        if (wk.layout.gpus() > s.cluster.gpus_per_node) {
            out.notes.push_back("an instance of " + num(wk.layout.gpus())
                + " GPUs spans nodes: start it with the "
                  "engine's multi-node launcher (vLLM on a Ray cluster, SGLang's "
                  "--nnodes/--node-rank/--dist-init-addr, "
                  "TensorRT-LLM under mpirun or srun)");
            break;
        }
    return out;
}

} // namespace parallax

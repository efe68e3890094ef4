#pragma once
// The values of a serving scenario (docs/serving.md): what runs (precision of weights and KV cache,
// engine), what arrives (the workload and its latency objectives) and how one model instance is
// laid out (the deployment). Plain values; the rules are in serving_rules.hpp.
#include "spec/cluster_spec.hpp"
#include "spec/model_spec.hpp"
#include "spec/precision.hpp"
#include "spec/scenario.hpp"

#include <optional>
#include <string>

namespace parallax {

// The serving engine selects batching limits, memory reservation and per-step overhead (engine_traits.hpp).
enum class ServingEngine : unsigned char { vllm, sglang, trtllm };
std::string_view to_string(ServingEngine e);
std::optional<ServingEngine> serving_engine_from_string(std::string_view s);

struct ServingPrecision {
    Precision weights = Precision::bf16; // the matmuls' precision and the weights' storage
    Precision kv_cache = Precision::bf16;
};

// How requests arrive. Exactly one of the four load kinds is set.
enum class LoadKind : unsigned char { concurrency, request_rate, batch_size, max_throughput };

struct ServingWorkload {
    long long isl = 0; // input tokens per request
    long long osl = 0; // output tokens per request
    LoadKind load = LoadKind::concurrency;
    long long concurrency = 0; // requests in flight, closed loop
    // Requests each closed-loop slot sends (a benchmark's num_prompts / concurrency): the first round
    // starts in phase, the others staggered; 0 for an unbounded loop (the steady state only).
    long long rounds = 0;
    double request_rate_qps = 0; // Poisson arrivals over the whole deployment
    long long batch_size = 0; // static batches (no continuous batching)
};

struct ServingSlo {
    std::optional<double> ttft_ms;
    std::optional<double> tpot_ms;
};

// Speculative decoding: each step a small draft proposes `draft_tokens` tokens per decoding request, the
// model verifies them all in one pass and keeps the accepted prefix plus one token of its own.
enum class DraftKind : unsigned char {
    mtp, // the model's own multi-token-prediction layer (DeepSeek-V3 Sec. 2.2), reused for each draft token
    eagle, // a one-layer dense draft head on the model's features (EAGLE, Li et al. 2024)
};
std::string_view to_string(DraftKind k);
std::optional<DraftKind> draft_kind_from_string(std::string_view s);

struct SpeculativeDecoding {
    DraftKind draft = DraftKind::mtp;
    int draft_tokens = 1;
    // Exactly one is set: the chance that each draft token is accepted given the ones before it were, or
    // the mean tokens a request gains per step (vLLM's and TensorRT-LLM's "acceptance length", 1 to
    // draft_tokens + 1).
    std::optional<double> acceptance_rate;
    std::optional<double> acceptance_length;
    // Mean tokens per request per step: the acceptance length, or from the rate (Leviathan et al. 2023,
    // Eq. 1: (1 - a^(k+1)) / (1 - a) for i.i.d. acceptance a and k draft tokens).
    double tokens_per_step() const;
};

struct ServingSpec {
    ServingPrecision precision;
    ServingEngine engine = ServingEngine::vllm;
    ServingWorkload workload;
    ServingSlo slo;
    std::optional<SpeculativeDecoding> speculative;
    // SGLang's --enable-mixed-chunk: whether a step carries prompt chunks and decodes together (unset: the
    // engine's default, off for SGLang; vLLM and TensorRT-LLM always batch them together).
    std::optional<bool> mixed_chunk;
};

// How an MoE layer moves tokens between attention-DP ranks whose experts are split by EP: all-to-all
// dispatch and combine of each token's routed rows (DeepEP, pplx, TensorRT-LLM's MNNVL kernels), or every
// rank gathering all ranks' tokens and reduce-scattering the outputs (the engines' stock path: vLLM's
// allgather_reducescatter backend, SGLang's DP gather, TensorRT-LLM's all-gather/reduce-scatter).
enum class MoeExchange : unsigned char { all_to_all, gather };
std::string_view to_string(MoeExchange e);
std::optional<MoeExchange> moe_exchange_from_string(std::string_view s);

// One model instance: `tp` x `pp` GPUs per attention data-parallel rank, `attention_dp` such ranks
// sharing the MoE layers, whose experts are split `ep` ways (and tp*attention_dp/ep ways inside an expert).
struct InstanceLayout {
    int tp = 1;
    int pp = 1;
    int ep = 1;
    int attention_dp = 1;
    MoeExchange moe_exchange = MoeExchange::all_to_all; // matters where exchanges_moe_tokens()
    int gpus() const { return tp * pp * attention_dp; }
    // Whether an MoE layer moves tokens between attention-DP ranks whose experts are split by EP, the case
    // `moe_exchange` decides (without attention DP every rank holds the step's tokens and all-reduces).
    bool exchanges_moe_tokens() const { return attention_dp > 1 && ep > 1; }
    int expert_tp() const { return ep > 0 ? tp * attention_dp / ep : 1; }
};

// Disaggregated prefill/decode: `workers` instances of each layout.
struct DisaggregatedPool {
    InstanceLayout layout;
    int workers = 1;
};
struct DisaggregatedDeployment {
    DisaggregatedPool prefill;
    DisaggregatedPool decode;
};

struct Deployment {
    InstanceLayout instance;
    std::optional<int> replicas; // unset = as many instances as the cluster holds
    std::optional<DisaggregatedDeployment> disaggregated;
};

struct ServingScenario {
    int schema = 1;
    std::string description;
    ModelSpec model;
    ClusterSpec cluster;
    ServingSpec serving;
    Deployment deployment;
    ScenarioRefs refs;

    // Instances the deployment runs (aggregated form).
    int replicas() const
    {
        if (deployment.replicas)
            return *deployment.replicas;
        const long long per = deployment.instance.gpus();
        return per > 0 ? static_cast<int>(cluster.total_gpus() / per) : 0;
    }
};

} // namespace parallax

#include "io/import/megatron_flags.hpp"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <utility>

namespace parallax {

namespace {

// Optimiser hyper-parameters, schedules, data, tokenizer files, logging, checkpoints, profiling,
// initialisation, numerics of the loss scaler and of fp8 scaling (the same kernels run either way).
constexpr std::string_view kNoEffectPrefixes[]
    = { "--lr", "--min-lr", "--log", "--save", "--load", "--eval", "--tensorboard", "--wandb", "--data-", "--profile",
          "--ckpt", "--exit-", "--adam-", "--train-", "--rotary-", "--rope-", "--init-method", "--no-load-",
          "--no-save-", "--decoupled-", "--tiktoken", "--timing-", "--distributed-", "--rerun-", "--fp8-amax-",
          "--moe-router-", "--moe-aux-loss", "--moe-z-loss", "--moe-input-jitter", "--moe-per-layer-logging",
          "--loss-scale", "--initial-loss-scale", "--min-loss-scale", "--one-logger", "--dist-ckpt", "--non-persistent",
          "--use-checkpoint-", "--override-opt", "--start-weight-decay", "--end-weight-decay", "--weight-decay",
          "--clip-grad", "--num-dataset-builder", "--mid-level-dataset", "--object-storage", "--tokenizer-prompt",
          "--vocab-extra-ids", "--sgd-", "--check-for-", "--no-check-for-", "--async-save", "--straggler" };

constexpr std::string_view kNoEffectFlags[] = { "--seed", "--split", "--mock-data", "--num-workers",
    "--dataloader-type", "--use-mcore-models", "--use-legacy-models", "--max-position-embeddings",
    "--use-pytorch-profiler", "--no-mmap-bin-files", "--no-create-attention-mask-in-dataloader", "--manual-gc",
    "--manual-gc-interval", "--calculate-per-token-loss", "--norm-epsilon", "--layernorm-epsilon", "--fp8-margin",
    "--fp8-interval", "--use-rotary-position-embeddings", "--no-position-embedding", "--apply-query-key-layer-scaling",
    "--attention-softmax-in-fp32", "--hysteresis", "--no-initialization", "--use-cpu-initialization",
    "--reset-position-ids", "--reset-attention-mask", "--eod-mask-loss", "--skip-train", "--finetune",
    "--pretrained-checkpoint", "--apply-layernorm-1p", "--auto-detect-ckpt-format", "--fp8-wgrad", "--no-fp8-wgrad",
    "--moe-token-drop-policy", "--moe-pad-expert-input-to-capacity", "--bert-no-binary-head", "--vocab-file",
    "--merge-file" };

using Reason = std::pair<std::string_view, std::string_view>;

constexpr Reason kNotModelled[] = {
    { "--normalization", "the norm's kind: every norm is costed alike" },
    { "--disable-bias-linear", "biases are not costed (either way)" },
    { "--add-bias-linear", "biases are not costed" },
    { "--add-qkv-bias", "biases are not costed" },
    { "--qk-layernorm", "the extra query/key norms are not costed" },
    { "--no-gradient-accumulation-fusion", "Parallax costs the fused weight-gradient accumulation" },
    { "--cross-entropy-loss-fusion", "the loss is costed as Megatron's unfused fp32 cross-entropy" },
    { "--cross-entropy-fusion-impl", "the loss is costed as Megatron's unfused fp32 cross-entropy" },
    { "--grad-reduce-in-bf16", "gradients are reduced at the precision Parallax assumes for each stack" },
    { "--fp8-param-gather", "parameters are all-gathered in bf16" },
    { "--fp8-param", "parameters are kept in bf16" },
    { "--empty-unused-memory-level", "the caching allocator's release policy is not modelled" },
    { "--moe-grouped-gemm", "expert GEMMs are costed as the framework issues them by default" },
    { "--moe-permute-fusion", "token permutation kernels are not costed separately" },
    { "--moe-router-fusion", "the router's kernels are not costed separately" },
    { "--moe-layer-recompute", "recomputation of MoE layers alone" },
    { "--no-async-tensor-model-parallel-allreduce", "TP's backward all-reduce overlap is the framework's default" },
    { "--use-contiguous-parameters-in-local-ddp", "local DDP's buffer layout" },
    { "--no-masked-softmax-fusion", "kernel fusion switch" },
    { "--no-bias-gelu-fusion", "kernel fusion switch" },
    { "--no-bias-swiglu-fusion", "kernel fusion switch" },
    { "--no-bias-dropout-fusion", "kernel fusion switch" },
    { "--no-rope-fusion", "kernel fusion switch" },
    { "--no-persist-layer-norm", "kernel fusion switch" },
    { "--rampup-batch-size", "the batch ramp-up: the prediction is of a step at the full global batch" },
    { "--step-batch-size-schedule", "the batch-size schedule: the prediction is of a step at the full global batch" },
    { "--deterministic-mode", "deterministic kernels" },
    { "--num-distributed-optimizer-instances", "several distributed-optimizer instances" },
    { "--mtp-num-layers", "the multi-token-prediction layers" },
    { "--recompute-modules", "Parallax's selective recompute recomputes the core attention" },
    { "--cpu-offloading", "activation and weight offloading to the CPU" },
    { "--cpu-offloading-num-layers", "activation and weight offloading to the CPU" },
    { "--defer-embedding-wgrad-compute", "deferring the embedding's weight gradient" },
    { "--wgrad-deferral-limit", "deferring the embedding's weight gradient" },
    { "--overlap-p2p-comm", "pipeline sends are costed as the schedule issues them" },
    { "--batch-p2p-comm", "pipeline sends are costed as the schedule issues them" },
    { "--align-param-gather", "bucket alignment of the parameter all-gather" },
    { "--align-grad-reduce", "bucket alignment of the gradient reduce" },
    { "--ddp-bucket-size", "DDP's bucket size" },
    { "--ddp-average-in-collective", "where gradients are averaged" },
    { "--account-for-embedding-in-pipeline-split", "the embedding as a pipeline layer" },
    { "--account-for-loss-in-pipeline-split", "the loss as a pipeline layer" },
    { "--pipeline-model-parallel-layout", "an explicit layer layout; give first_stage_layers/last_stage_layers" },
    { "--use-precision-aware-optimizer", "optimizer states kept below fp32" },
};

// Substrings (lower case) of tokenizer and model names -> the model's config.json vocab_size.
struct KnownTokenizer {
    std::string_view name_part;
    long long vocab;
};
constexpr KnownTokenizer kTokenizers[] = { { "llama-3", 128256 }, { "llama3", 128256 }, { "llama-2", 32000 },
    { "llama2", 32000 }, { "mixtral", 32000 }, { "mistral-7b", 32000 }, { "qwen3", 151936 }, { "deepseek-v3", 129280 },
    { "deepseek-r1", 129280 }, { "gpt-oss", 201088 } };

} // namespace

std::optional<long long> known_tokenizer_vocab(std::string_view name)
{
    std::string lower(name);
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    for (const KnownTokenizer& t : kTokenizers)
        if (lower.find(t.name_part) != std::string::npos)
            return t.vocab;
    return std::nullopt;
}

bool megatron_flag_has_no_effect(std::string_view flag)
{
    if (std::find(std::begin(kNoEffectFlags), std::end(kNoEffectFlags), flag) != std::end(kNoEffectFlags))
        return true;
    return std::any_of(std::begin(kNoEffectPrefixes), std::end(kNoEffectPrefixes),
        [&](std::string_view prefix) { return flag.substr(0, prefix.size()) == prefix; });
}

std::optional<std::string> megatron_flag_not_modelled(std::string_view flag)
{
    for (const Reason& r : kNotModelled)
        if (r.first == flag)
            return std::string(r.second);
    return std::nullopt;
}

} // namespace parallax

// Megatron-LM and Megatron-DeepSpeed pretrain_gpt.py flags, and DeepSpeed's ds_config.json, in the groups
// of Megatron's example scripts. Flag names checked against Megatron-LM main of 2026-08
// (megatron/training/arguments.py and the TransformerConfig / ModelParallelConfig fields) and
// Megatron-DeepSpeed main of 2025-07 (megatron/arguments.py).
#include "io/export/launch_config.hpp"
#include "io/export/launch_plan.hpp"
#include "io/export/launch_text.hpp"
#include "spec/strategy_rules.hpp"

#include <algorithm>

namespace parallax {

namespace {

using launch_plan::data_sharded;
using launch_plan::etp_of;
using launch_plan::every_layer_moe;
using launch_plan::megatron_split;
using launch_plan::MegatronSplit;
using launch_plan::moe_layer_pattern;
using launch_text::add;
using launch_text::decimal;
using launch_text::num;

using Words = std::vector<std::string>;

// The transformer's shape in the argument names Megatron-LM and Megatron-DeepSpeed share.
void add_transformer_shape(Words& words, const ModelSpec& m, const TrainingSpec& t)
{
    add(words,
        { "--num-layers", num(m.layers), "--hidden-size", num(m.hidden), "--num-attention-heads", num(m.heads),
            "--ffn-hidden-size", num(m.ffn_hidden), "--seq-length", num(t.seq_len), "--max-position-embeddings",
            num(t.seq_len) });
}

// ------------------------------------------------------------------------------------------------
// Megatron-LM

Words megatron_model_words(const ModelSpec& m, const TrainingSpec& t)
{
    Words w;
    add_transformer_shape(w, m, t);
    if (m.kv_heads != m.heads && !m.mla)
        add(w, { "--group-query-attention", "--num-query-groups", num(m.kv_heads) });
    if (m.head_dim_override && !m.mla)
        add(w, { "--kv-channels", num(*m.head_dim_override) });
    if (m.ffn_act == FfnActivation::swiglu)
        add(w,
            { "--swiglu", "--normalization", "RMSNorm", "--position-embedding-type", "rope", "--disable-bias-linear" });
    if (!m.tied_embeddings)
        add(w, { "--untie-embeddings-and-output-weights" });
    if (!m.has_dropout())
        add(w, { "--attention-dropout", "0.0", "--hidden-dropout", "0.0" });
    if (m.mla) {
        // megatron/training/arguments.py _add_mla_args; --multi-latent-attention is TransformerConfig's field.
        add(w, { "--multi-latent-attention" });
        if (m.mla->q_lora_rank > 0)
            add(w, { "--q-lora-rank", num(m.mla->q_lora_rank) });
        add(w,
            { "--kv-lora-rank", num(m.mla->kv_lora_rank), "--qk-head-dim", num(m.mla->qk_nope_head_dim),
                "--qk-pos-emb-head-dim", num(m.mla->qk_rope_head_dim), "--v-head-dim", num(m.mla->v_head_dim) });
    }
    if (m.sliding_window > 0) {
        add(w, { "--window-size", num(m.sliding_window) + ",0" });
        if (m.full_attention_every > 0)
            add(w, { "--window-attn-skip-freq", num(m.full_attention_every) });
    }
    if (m.attention_sinks)
        add(w, { "--softmax-type", "learnable" });
    return w;
}

void add_megatron_moe(Words& w, const ModelSpec& m, const TrainingSpec& t)
{
    add(w,
        { "--num-experts", num(m.moe->experts), "--moe-router-topk", num(m.moe->top_k), "--moe-ffn-hidden-size",
            num(m.moe->expert_ffn_hidden), "--moe-grouped-gemm" });
    if (t.moe_dispatcher == MoeDispatcher::deepep)
        add(w, { "--moe-token-dispatcher-type", "flex", "--moe-flex-dispatcher-backend", "deepep" });
    else
        add(w, { "--moe-token-dispatcher-type", "alltoall" });
    if (m.moe->shared_experts > 0)
        add(w, { "--moe-shared-expert-intermediate-size", num(m.moe->shared_experts * m.moe->expert_ffn_hidden) });
    if (m.moe->capacity_factor)
        add(w, { "--moe-expert-capacity-factor", decimal(*m.moe->capacity_factor) });
    if (!every_layer_moe(m))
        add(w, { "--moe-layer-freq", moe_layer_pattern(m) });
}

Words megatron_parallel_words(const Scenario& sc)
{
    const ModelSpec& m = sc.model;
    const Strategy& st = sc.strategy;
    Words w;
    add(w, { "--tensor-model-parallel-size", num(st.tp), "--pipeline-model-parallel-size", num(st.pp) });
    const MegatronSplit split = megatron_split(sc);
    if (!split.layout.empty())
        add(w, { "--pipeline-model-parallel-layout", split.layout });
    else {
        if (split.first > 0)
            add(w, { "--decoder-first-pipeline-num-layers", num(split.first) });
        if (split.last > 0)
            add(w, { "--decoder-last-pipeline-num-layers", num(split.last) });
        if (st.vpp > 1)
            add(w, { "--num-layers-per-virtual-pipeline-stage", num(m.layers / (st.pp * st.vpp)) });
    }
    if (st.cp > 1)
        add(w, { "--context-parallel-size", num(st.cp), "--cp-comm-type", st.cp_kind == CpKind::ring ? "p2p" : "a2a" });
    if (m.is_moe()) {
        if (st.ep > 1)
            add(w, { "--expert-model-parallel-size", num(st.ep) });
        if (etp_of(st) != st.tp)
            add(w, { "--expert-tensor-parallel-size", num(etp_of(st)) });
    }
    if (st.sequence_parallel && st.tp > 1)
        add(w, { "--sequence-parallel" });
    if (st.rank_order != RankOrder {})
        add(w, { "--use-tp-pp-dp-mapping" });
    // Data parallelism: distributed optimizer (ZeRO 1) or Megatron-FSDP (ZeRO 2/3).
    if (st.zero >= 1)
        add(w, { "--use-distributed-optimizer" });
    if (st.zero >= 2)
        add(w,
            { "--use-megatron-fsdp", "--data-parallel-sharding-strategy",
                st.zero == 2 ? "optim_grads" : "optim_grads_params" });
    if (st.overlap_grad_reduce && data_sharded(st))
        add(w, { "--overlap-grad-reduce" });
    if (st.overlap_param_gather && st.overlap_grad_reduce && st.zero >= 1 && data_sharded(st))
        add(w, { "--overlap-param-gather" });
    if (st.tp_comm_overlap && st.tp > 1)
        add(w, { "--tp-comm-overlap" });
    if (st.ep_overlap)
        add(w, { "--overlap-moe-expert-parallel-comm" });
    return w;
}

void add_megatron_precision(Words& w, const TrainingSpec& t)
{
    switch (t.precision) {
    case Precision::fp16:
        add(w, { "--fp16" });
        break;
    case Precision::fp8:
        // --fp8-recipe names the scenario's training.fp8_scaling (tensorwise = Transformer Engine's
        // Float8CurrentScaling); rowwise is refused before (framework_support).
        add(w,
            { "--bf16", "--fp8-format", t.fp8_scaling == Fp8Scaling::mxfp8 ? "e4m3" : "hybrid", "--fp8-recipe",
                std::string(to_string(t.fp8_scaling)) });
        break;
    case Precision::fp4:
        add(w, { "--bf16", "--fp4-format", "e2m1", "--fp4-recipe", "nvfp4" });
        break;
    case Precision::fp32:
    case Precision::tf32:
        break; // without --bf16/--fp16 Megatron keeps params_dtype float32
    default:
        add(w, { "--bf16" });
        break;
    }
    if (t.grad_reduce_in_fp32 && !is_full_precision(t.precision))
        add(w, { "--accumulate-allreduce-grads-in-fp32" });
    // Megatron-LM turns fp32 main gradients on for --bf16 unless told otherwise (arguments.py).
    if (t.grad_reduce_in_bf16)
        add(w, { "--grad-reduce-in-bf16" });
}

Words megatron_training_words(const Scenario& sc, const LaunchSettings& o)
{
    const Strategy& st = sc.strategy;
    const TrainingSpec& t = sc.training;
    Words w;
    add(w, { "--micro-batch-size", num(st.micro_batch), "--global-batch-size", num(t.global_batch) });
    if (st.recompute == Recompute::selective && st.recompute_modules != kDefaultRecomputeModules) {
        add(w, { "--recompute-granularity", "selective", "--recompute-modules" });
        for (std::string_view name : recompute_module_names(st.recompute_modules))
            add(w, { std::string(name) });
    } else if (st.recompute == Recompute::selective) {
        add(w, { "--recompute-activations" });
    } else if (st.recompute == Recompute::full) {
        add(w, { "--recompute-granularity", "full", "--recompute-method", "uniform", "--recompute-num-layers", "1" });
    }
    add_megatron_precision(w, t);
    if (st.optimizer == Optimizer::sgd || st.optimizer == Optimizer::lion)
        add(w, { "--optimizer", std::string(to_string(st.optimizer)) });
    if (st.offload_optimizer)
        add(w, { "--optimizer-cpu-offload", "--use-precision-aware-optimizer" });
    // Megatron offloads at most num_layers - 1 layers (transformer_config.py): the last layer's backward
    // follows its forward at once, nothing to hide its copies under.
    if (st.offload_activations)
        add(w, { "--cpu-offloading", "--cpu-offloading-num-layers", num(sc.model.layers - 1) });
    if (t.cuda_graphs == CudaGraphs::layers)
        add(w, { "--cuda-graph-impl", "transformer_engine" });
    else if (t.cuda_graphs == CudaGraphs::full_iteration)
        add(w, { "--cuda-graph-impl", "full_iteration" });
    if (!t.flash_attention)
        add(w, { "--attention-backend", "unfused" });
    add(w,
        { "--train-iters", num(o.steps), "--lr", "1.0e-4", "--min-lr", "1.0e-5", "--lr-decay-style", "cosine",
            "--weight-decay", "0.1", "--clip-grad", "1.0", "--init-method-std", "0.02", "--transformer-impl",
            "transformer_engine" });
    return w;
}

} // namespace

std::vector<ArgGroup> megatron_arg_groups(const Scenario& sc, const LaunchSettings& o, std::vector<std::string>& notes)
{
    const ModelSpec& m = sc.model;
    ArgGroup model { "MODEL_ARGS", megatron_model_words(m, sc.training) };
    if (m.is_moe())
        add_megatron_moe(model.words, m, sc.training);
    ArgGroup par { "MODEL_PARALLEL_ARGS", megatron_parallel_words(sc) };
    ArgGroup train { "TRAINING_ARGS", megatron_training_words(sc, o) };
    ArgGroup data { "DATA_ARGS", {} };
    // Mock data and a null tokenizer: a throughput run needs no dataset (swap in --data-path and a tokenizer
    // for real training).
    add(data.words, { "--mock-data", "--tokenizer-type", "NullTokenizer", "--vocab-size", num(m.vocab) });

    ArgGroup logging { "EVAL_AND_LOGGING_ARGS", {} };
    add(logging.words,
        { "--log-interval", "1", "--log-throughput", "--eval-iters", "0", "--eval-interval", num(o.steps + 1),
            "--distributed-timeout-minutes", "30" });
    (void)notes;
    return { model, par, train, data, logging };
}

// ------------------------------------------------------------------------------------------------
// Megatron-DeepSpeed + DeepSpeed

namespace {

Words megatron_deepspeed_model_words(const ModelSpec& m, const TrainingSpec& t)
{
    Words w;
    add_transformer_shape(w, m, t);
    if (m.kv_heads != m.heads)
        add(w, { "--num-key-value-heads", num(m.kv_heads) });
    if (m.head_dim_override)
        add(w, { "--kv-channels", num(*m.head_dim_override) });
    if (m.ffn_act == FfnActivation::swiglu)
        add(w,
            { "--swiglu", "--normalization", "rmsnorm", "--use-rotary-position-embeddings", "--no-position-embedding",
                "--disable-bias-linear" });
    if (!m.tied_embeddings)
        add(w, { "--untie-embeddings-and-output-weights" });
    if (!m.has_dropout())
        add(w, { "--attention-dropout", "0", "--hidden-dropout", "0" });
    if (t.flash_attention)
        add(w, { "--use-flash-attn-v2" });
    if (m.is_moe()) {
        add(w,
            { "--num-experts", num(m.moe->experts), "--topk", num(m.moe->top_k), "--expert-interval",
                num(m.moe->moe_layer_freq) });
        if (m.moe->capacity_factor)
            add(w, { "--moe-train-capacity-factor", decimal(*m.moe->capacity_factor) });
        else
            add(w, { "--disable-moe-token-dropping" });
    }
    return w;
}

Words megatron_deepspeed_parallel_words(const Scenario& sc, std::vector<std::string>& notes)
{
    const ModelSpec& m = sc.model;
    const Strategy& st = sc.strategy;
    Words w;
    add(w, { "--tensor-model-parallel-size", num(st.tp), "--pipeline-model-parallel-size", num(st.pp) });
    if (st.pp == 1)
        add(w, { "--no-pipeline-parallel" });
    if (st.pp > 1 && st.schedule == Schedule::zb_h1)
        add(w, { "--enable-zbh1-pipeline" });
    if (st.vpp > 1)
        notes.push_back(
            "DeepSpeed's pipeline engine has no interleaved schedule; vpp " + num(st.vpp) + " is not applied");
    if (st.pp > 1 && st.schedule != Schedule::one_f_one_b && st.schedule != Schedule::zb_h1
        && st.schedule != Schedule::interleaved)
        notes.push_back("DeepSpeed's pipeline engine runs 1F1B; the plan's " + std::string(to_string(st.schedule))
            + " schedule is not available in it");
    if (st.cp > 1) {
        if (st.cp_kind == CpKind::all_to_all && !(st.sequence_parallel && st.tp > 1))
            add(w, { "--ds-sequence-parallel-size", num(st.cp) });
        else
            notes.push_back("Megatron-DeepSpeed has no context parallelism of the plan's kind (its DeepSpeed-Ulysses "
                            "--ds-sequence-parallel-size is the all-to-all kind, without Megatron sequence "
                            "parallelism); the plan's cp "
                + num(st.cp) + " is not applied");
    }
    if (st.sequence_parallel && st.tp > 1 && !(st.pp > 1 && st.schedule == Schedule::zb_h1))
        add(w, { "--sequence-parallel" });
    if (m.is_moe()) {
        if (st.ep > 1)
            add(w, { "--moe-expert-parallel-size", num(st.ep) });
        if (st.tp > 1 && etp_of(st) == st.tp)
            add(w, { "--enable-expert-tensor-parallelism" });
        if (st.zero >= 1)
            add(w, { "--create-moe-param-group" }); // "necessary for techniques like ZeRO" (arguments.py)
    }
    const int zero = st.pp > 1 ? std::min(st.zero, 1) : st.zero;
    if (zero != st.zero)
        notes.push_back(
            "DeepSpeed allows ZeRO 2/3 only without pipeline parallelism; stage " + num(zero) + " is used with pp > 1");
    add(w, { "--zero-stage", num(zero) });
    return w;
}

Words megatron_deepspeed_training_words(const Scenario& sc, const LaunchSettings& o, std::vector<std::string>& notes)
{
    const Strategy& st = sc.strategy;
    const TrainingSpec& t = sc.training;
    Words w;
    add(w, { "--micro-batch-size", num(st.micro_batch), "--global-batch-size", num(t.global_batch) });
    if (st.recompute == Recompute::selective)
        add(w, { "--recompute-granularity", "selective" });
    else if (st.recompute == Recompute::full)
        add(w, { "--checkpoint-activations", "--deepspeed-activation-checkpointing" });
    if (!is_full_precision(t.precision)) // neither flag: fp32 (DeepSpeed's fp16/bf16 engines off)
        add(w, { t.precision == Precision::fp16 ? "--fp16" : "--bf16" });
    if (t.precision == Precision::fp8 || t.precision == Precision::fp4)
        notes.push_back("Megatron-DeepSpeed's pipeline model has no " + std::string(to_string(t.precision))
            + " matmuls; this runs bf16");
    if (st.optimizer == Optimizer::sgd)
        add(w, { "--optimizer", "sgd" });
    add(w,
        { "--train-iters", num(o.steps), "--lr", "1.0e-4", "--min-lr", "1.0e-5", "--lr-decay-style", "cosine",
            "--weight-decay", "0.1", "--clip-grad", "1.0", "--deepspeed" });
    return w;
}

} // namespace

std::vector<ArgGroup> megatron_deepspeed_arg_groups(
    const Scenario& sc, const LaunchSettings& o, std::vector<std::string>& notes)
{
    const ModelSpec& m = sc.model;
    ArgGroup model { "MODEL_ARGS", megatron_deepspeed_model_words(m, sc.training) };
    ArgGroup par { "MODEL_PARALLEL_ARGS", megatron_deepspeed_parallel_words(sc, notes) };
    ArgGroup train { "TRAINING_ARGS", megatron_deepspeed_training_words(sc, o, notes) };
    // Megatron-DeepSpeed reads a preprocessed dataset; its tokenizer must be named (build_tokenizer raises on
    // none). GPT-2 BPE goes with the VOCAB_FILE / MERGE_FILE the script asks for.
    ArgGroup tokenizer { "TOKENIZER_ARGS", { "--tokenizer-type", "GPT2BPETokenizer" } };
    constexpr long long kGpt2Vocab = 50257; // GPT-2 BPE (gpt2-vocab.json)
    if (m.vocab != kGpt2Vocab)
        notes.push_back("Megatron-DeepSpeed takes the vocabulary from its tokenizer: GPT-2 BPE has 50,257 tokens, the "
                        "model "
            + num(m.vocab)
            + "; for the model's own, preprocess the data with its tokenizer and pass --tokenizer-type HFTokenizer "
              "--tokenizer-model <its Hugging Face folder>");
    ArgGroup logging { "EVAL_AND_LOGGING_ARGS", {} };
    add(logging.words, { "--log-interval", "1", "--eval-iters", "0", "--eval-interval", num(o.steps + 1) });
    return { model, par, train, tokenizer, logging };
}

nlohmann::ordered_json deepspeed_config(const Scenario& sc, std::vector<std::string>& notes)
{
    const Strategy& st = sc.strategy;
    nlohmann::ordered_json ds;
    ds["train_batch_size"] = sc.training.global_batch;
    ds["train_micro_batch_size_per_gpu"] = st.micro_batch;
    ds["gradient_accumulation_steps"] = microbatch_count(sc.training, st);
    ds["steps_per_print"] = 1; // DeepSpeed's throughput lines (RunningAvgSamplesPerSec) need it
    ds["gradient_clipping"] = 1.0;
    const int zero = st.pp > 1 ? std::min(st.zero, 1) : st.zero;
    ds["zero_optimization"] = { { "stage", zero } };
    if (st.offload_optimizer || st.offload_params)
        ds["zero_optimization"]["offload_optimizer"] = { { "device", "cpu" } };
    if (st.offload_params)
        ds["zero_optimization"]["offload_param"] = { { "device", "cpu" } };
    if (st.offload_activations)
        ds["activation_checkpointing"] = { { "cpu_checkpointing", true } };
    ds["bf16"]
        = { { "enabled", sc.training.precision != Precision::fp16 && !is_full_precision(sc.training.precision) } };
    ds["fp16"] = { { "enabled", sc.training.precision == Precision::fp16 } };
    if (sc.training.grad_reduce_in_fp32 && zero == 0)
        ds["fp32_allreduce"] = true;
    ds["wall_clock_breakdown"] = false;
    ds["flops_profiler"] = { { "enabled", false } };
    (void)notes;
    return ds;
}

} // namespace parallax

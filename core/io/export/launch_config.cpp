// The launch files of a plan, per framework. Flag and key names were checked against the frameworks'
// sources: Megatron-LM main of 2026-08 (megatron/training/arguments.py and the TransformerConfig /
// ModelParallelConfig fields its ArgumentGroupFactory turns into --flags), torchtitan v0.2.2
// (torchtitan/config/job_config.py, the last release configured by TOML; later ones take Python config
// registries), Megatron-Bridge main of 2026-08 (src/megatron/bridge/training/config.py ConfigContainer,
// mixed_precision.py recipe names) and Megatron-DeepSpeed main of 2025-07 (megatron/arguments.py).
#include "io/export/launch_config.hpp"

#include "io/export/hetero_launch.hpp"

#include "io/export/shell_script.hpp"
#include "ir/schedule_program.hpp"
#include "model/stage_layout.hpp"
#include "spec/input_error.hpp"
#include "spec/strategy_rules.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace parallax {

namespace {

std::string num(long long v)
{
    return std::to_string(v);
}

// A decimal without trailing zeros ("1.25", "0.0").
std::string decimal(double v)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    std::string s = buf;
    if (s.find_first_of(".e") == std::string::npos)
        s += ".0";
    return s;
}

void add(std::vector<std::string>& w, std::initializer_list<std::string> words)
{
    w.insert(w.end(), words.begin(), words.end());
}

int etp_of(const Strategy& st)
{
    return st.effective_expert_tp();
}

bool data_sharded(const Strategy& st)
{
    return static_cast<long long>(st.dp) * st.cp > 1;
}

StageLayout layout_of(const Scenario& s)
{
    const Strategy& st = s.strategy;
    return StageLayout { s.model.layers, st.pp, st.vpp, st.first_stage_layers, st.last_stage_layers };
}

std::vector<int> chunk_layer_counts(const Scenario& s)
{
    const StageLayout l = layout_of(s);
    std::vector<int> out;
    for (int c = 0; c < l.chunks(); ++c)
        out.push_back(l.chunk_layers(c));
    return out;
}

// Megatron-LM's --pipeline-model-parallel-layout (megatron/core/transformer/pipeline_parallel_layer_layout.py):
// one "|"-separated entry per virtual stage in model order, E the embedding, t*N N decoder layers, L the loss.
std::string megatron_layout(const std::vector<int>& chunks)
{
    std::string out;
    for (std::size_t c = 0; c < chunks.size(); ++c) {
        if (c > 0)
            out += "|";
        if (c == 0)
            out += "E";
        if (chunks[c] == 1)
            out += "t";
        else if (chunks[c] > 1)
            out += "t*" + num(chunks[c]);
        if (c + 1 == chunks.size())
            out += "L";
    }
    return out;
}

// How the pipeline's layers are told to Megatron: nothing (even), first/last stage counts (vpp 1, the
// middle stages even), or the full layout.
struct MegatronSplit {
    bool even = true;
    int first = 0; // --decoder-first-pipeline-num-layers (0 = not given)
    int last = 0;
    std::string layout; // --pipeline-model-parallel-layout ("" = not needed)
};

MegatronSplit megatron_split(const Scenario& s)
{
    MegatronSplit out;
    const Strategy& st = s.strategy;
    if (st.pp <= 1)
        return out;
    const std::vector<int> chunks = chunk_layer_counts(s);
    const bool all_equal = std::all_of(chunks.begin(), chunks.end(), [&](int c) { return c == chunks.front(); });
    if (all_equal && st.first_stage_layers <= 0 && st.last_stage_layers <= 0)
        return out;
    out.even = false;
    if (st.vpp == 1) {
        const int mid = st.pp > 2 ? chunks[1] : -1;
        const bool middle_even
            = st.pp <= 2 || std::all_of(chunks.begin() + 1, chunks.end() - 1, [&](int c) { return c == mid; });
        if (middle_even && st.pp > 2) {
            out.first = chunks.front() != mid ? chunks.front() : 0;
            out.last = chunks.back() != mid ? chunks.back() : 0;
            return out;
        }
        if (st.pp == 2) {
            out.first = chunks.front();
            return out;
        }
    }
    out.layout = megatron_layout(chunks);
    return out;
}

// Megatron's --moe-layer-freq as a Python list expression ("([0]*3+[1]*58)") when not every layer is an
// MoE layer: exact for any first-dense / frequency pattern.
std::string moe_layer_pattern(const ModelSpec& m)
{
    std::string out;
    int run = 0;
    int value = -1;
    auto flush = [&] {
        if (run > 0)
            out += (out.empty() ? "" : "+") + std::string("[") + num(value) + "]*" + num(run);
    };
    for (int l = 0; l < m.layers; ++l) {
        const int v = m.is_moe_layer(l) ? 1 : 0;
        if (v != value) {
            flush();
            value = v;
            run = 0;
        }
        ++run;
    }
    flush();
    return "(" + out + ")";
}

bool every_layer_moe(const ModelSpec& m)
{
    return m.is_moe() && m.moe_layer_count() == m.layers;
}

std::string recompute_text(Recompute r)
{
    return std::string(to_string(r));
}

std::string toml_string(const std::string& v)
{
    std::string out = "\"";
    for (char c : v) {
        switch (c) {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\r':
            out += "\\r";
            break;
        case '\t':
            out += "\\t";
            break;
        default:
            if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) { // TOML forbids both raw in strings
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
                out += buf;
            } else {
                out += c;
            }
        }
    }
    return out + "\"";
}

// YAML double-quoted scalars escape like JSON strings.
std::string yaml_string(const std::string& v)
{
    return nlohmann::json(v).dump();
}

std::string boolean(bool b)
{
    return b ? "true" : "false";
}

// The lines of a user string as comment text. TOML and YAML forbid control characters in comments (a parser
// rejects the file), and YAML 1.1 readers (PyYAML, under OmegaConf) also end a line at NEL, U+2028 and U+2029:
// every one of those starts a new comment line, every other control character becomes '?'.
std::vector<std::string> comment_safe_lines(const std::string& text)
{
    std::vector<std::string> lines(1);
    for (std::size_t i = 0; i < text.size(); ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        const bool nel = c == 0xC2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) == 0x85;
        const bool ls_ps = c == 0xE2 && i + 2 < text.size() && static_cast<unsigned char>(text[i + 1]) == 0x80
            && (static_cast<unsigned char>(text[i + 2]) == 0xA8 || static_cast<unsigned char>(text[i + 2]) == 0xA9);
        if (c == '\n' || c == '\r' || nel || ls_ps) {
            i += nel ? 1 : ls_ps ? 2 : 0;
            lines.emplace_back();
        } else if ((c < 0x20 && c != '\t') || c == 0x7F) {
            lines.back() += '?';
        } else {
            lines.back() += static_cast<char>(c);
        }
    }
    return lines;
}

// A comment block: every line of `text` behind `prefix` ("# "), so that no user string can end the comment.
std::string comment_lines(const std::string& text, const std::string& prefix = "# ")
{
    std::string out;
    for (const std::string& line : comment_safe_lines(text))
        out += prefix + line + "\n";
    return out;
}

} // namespace

// ------------------------------------------------------------------------------------------------

std::string_view to_string(LaunchFormat f)
{
    switch (f) {
    case LaunchFormat::megatron:
        return "megatron";
    case LaunchFormat::torchtitan:
        return "torchtitan";
    case LaunchFormat::nemo:
        return "nemo";
    case LaunchFormat::deepspeed:
        return "deepspeed";
    }
    return "megatron";
}

std::optional<LaunchFormat> launch_format_from_string(std::string_view s)
{
    for (LaunchFormat f :
        { LaunchFormat::megatron, LaunchFormat::torchtitan, LaunchFormat::nemo, LaunchFormat::deepspeed })
        if (to_string(f) == s)
            return f;
    return std::nullopt;
}

Framework launch_framework(LaunchFormat f, const Scenario& s)
{
    switch (f) {
    case LaunchFormat::megatron:
    case LaunchFormat::nemo:
        return Framework::megatron;
    case LaunchFormat::torchtitan:
        return s.training.framework == Framework::torchtitan_compile ? Framework::torchtitan_compile
                                                                     : Framework::torchtitan;
    case LaunchFormat::deepspeed:
        return Framework::megatron_deepspeed;
    }
    return Framework::megatron;
}

const LaunchFile* LaunchConfig::find(std::string_view name) const
{
    for (const auto& f : files)
        if (f.name == name)
            return &f;
    return nullptr;
}

std::string plan_summary(const Scenario& s)
{
    const Strategy& st = s.strategy;
    std::string out = s.model.name + ": tp " + num(st.tp) + " pp " + num(st.pp) + " dp " + num(st.dp) + " cp "
        + num(st.cp) + " ep " + num(st.ep) + " vpp " + num(st.vpp) + ", micro-batch " + num(st.micro_batch)
        + ", global batch " + num(s.training.global_batch) + ", seq " + num(s.training.seq_len) + ", "
        + std::string(to_string(s.training.precision)) + ", " + std::string(to_string(st.schedule)) + ", recompute "
        + std::string(to_string(st.recompute)) + ", zero " + num(st.zero) + (st.sequence_parallel ? ", SP" : "");
    return out;
}

// ------------------------------------------------------------------------------------------------
// What a format cannot say

std::vector<Unsupported> launch_unsupported(LaunchFormat f, const Scenario& s)
{
    const Framework fw = launch_framework(f, s);
    std::vector<Unsupported> out = unsupported_plan_features(fw, s.strategy, s.model);
    for (auto& u : unsupported_settings(fw, s.training, s.model))
        out.push_back(std::move(u));
    const ModelSpec& m = s.model;
    if (f == LaunchFormat::deepspeed && m.is_moe() && m.moe->expert_ffn_hidden != m.ffn_hidden)
        out.push_back({ "model.moe.expert_ffn_hidden", "experts of another width than the dense MLP",
            "Megatron-DeepSpeed's experts are copies of the dense MLP (--ffn-hidden-size); it has no expert width "
            "of their own" });
    // Per-range settings have no single launch flag in these generators (Megatron's per-layer recompute
    // counts and specs are not emitted): exporting the plain strategy would run another plan.
    if (s.strategy.layers)
        out.push_back({ "strategy.layers", "settings by layer range",
            "the exported launch files set one value per key for the whole model (docs/composite-strategies.md)" });
    if ((f == LaunchFormat::torchtitan) && m.is_moe() && m.moe->capacity_factor)
        out.push_back({ "model.moe.capacity_factor", "a token-dropping capacity factor",
            "torchtitan's MoE is dropless (torchtitan/models/moe)" });
    return out;
}

namespace {

// The transformer's shape in the argument names Megatron-LM and Megatron-DeepSpeed share.
void add_transformer_shape(std::vector<std::string>& words, const ModelSpec& m, const TrainingSpec& t)
{
    add(words,
        { "--num-layers", num(m.layers), "--hidden-size", num(m.hidden), "--num-attention-heads", num(m.heads),
            "--ffn-hidden-size", num(m.ffn_hidden), "--seq-length", num(t.seq_len), "--max-position-embeddings",
            num(t.seq_len) });
}

} // namespace

// ------------------------------------------------------------------------------------------------
// Megatron-LM

std::vector<ArgGroup> megatron_arg_groups(const Scenario& sc, const LaunchSettings& o, std::vector<std::string>& notes)
{
    const ModelSpec& m = sc.model;
    const Strategy& st = sc.strategy;
    const TrainingSpec& t = sc.training;
    ArgGroup model { "MODEL_ARGS", {} };
    auto& mw = model.words;
    add_transformer_shape(mw, m, t);
    if (m.kv_heads != m.heads && !m.mla)
        add(mw, { "--group-query-attention", "--num-query-groups", num(m.kv_heads) });
    if (m.head_dim_override && !m.mla)
        add(mw, { "--kv-channels", num(*m.head_dim_override) });
    if (m.ffn_act == FfnActivation::swiglu)
        add(mw,
            { "--swiglu", "--normalization", "RMSNorm", "--position-embedding-type", "rope", "--disable-bias-linear" });
    if (!m.tied_embeddings)
        add(mw, { "--untie-embeddings-and-output-weights" });
    if (!m.has_dropout())
        add(mw, { "--attention-dropout", "0.0", "--hidden-dropout", "0.0" });
    if (m.mla) {
        // megatron/training/arguments.py _add_mla_args; --multi-latent-attention is TransformerConfig's field.
        add(mw, { "--multi-latent-attention" });
        if (m.mla->q_lora_rank > 0)
            add(mw, { "--q-lora-rank", num(m.mla->q_lora_rank) });
        add(mw,
            { "--kv-lora-rank", num(m.mla->kv_lora_rank), "--qk-head-dim", num(m.mla->qk_nope_head_dim),
                "--qk-pos-emb-head-dim", num(m.mla->qk_rope_head_dim), "--v-head-dim", num(m.mla->v_head_dim) });
    }
    if (m.sliding_window > 0) {
        add(mw, { "--window-size", num(m.sliding_window) + ",0" });
        if (m.full_attention_every > 0)
            add(mw, { "--window-attn-skip-freq", num(m.full_attention_every) });
    }
    if (m.attention_sinks)
        add(mw, { "--softmax-type", "learnable" });
    if (m.is_moe()) {
        add(mw,
            { "--num-experts", num(m.moe->experts), "--moe-router-topk", num(m.moe->top_k), "--moe-ffn-hidden-size",
                num(m.moe->expert_ffn_hidden), "--moe-grouped-gemm" });
        if (t.moe_dispatcher == MoeDispatcher::deepep)
            add(mw, { "--moe-token-dispatcher-type", "flex", "--moe-flex-dispatcher-backend", "deepep" });
        else
            add(mw, { "--moe-token-dispatcher-type", "alltoall" });
        if (m.moe->shared_experts > 0)
            add(mw, { "--moe-shared-expert-intermediate-size", num(m.moe->shared_experts * m.moe->expert_ffn_hidden) });
        if (m.moe->capacity_factor)
            add(mw, { "--moe-expert-capacity-factor", decimal(*m.moe->capacity_factor) });
        if (!every_layer_moe(m))
            add(mw, { "--moe-layer-freq", moe_layer_pattern(m) });
    }

    ArgGroup par { "MODEL_PARALLEL_ARGS", {} };
    auto& pw = par.words;
    add(pw, { "--tensor-model-parallel-size", num(st.tp), "--pipeline-model-parallel-size", num(st.pp) });
    const MegatronSplit split = megatron_split(sc);
    if (!split.layout.empty())
        add(pw, { "--pipeline-model-parallel-layout", split.layout });
    else {
        if (split.first > 0)
            add(pw, { "--decoder-first-pipeline-num-layers", num(split.first) });
        if (split.last > 0)
            add(pw, { "--decoder-last-pipeline-num-layers", num(split.last) });
        if (st.vpp > 1)
            add(pw, { "--num-layers-per-virtual-pipeline-stage", num(m.layers / (st.pp * st.vpp)) });
    }
    if (st.cp > 1)
        add(pw,
            { "--context-parallel-size", num(st.cp), "--cp-comm-type", st.cp_kind == CpKind::ring ? "p2p" : "a2a" });
    if (m.is_moe()) {
        if (st.ep > 1)
            add(pw, { "--expert-model-parallel-size", num(st.ep) });
        if (etp_of(st) != st.tp)
            add(pw, { "--expert-tensor-parallel-size", num(etp_of(st)) });
    }
    if (st.sequence_parallel && st.tp > 1)
        add(pw, { "--sequence-parallel" });
    if (st.rank_order != RankOrder {})
        add(pw, { "--use-tp-pp-dp-mapping" });
    // Data parallelism: distributed optimizer (ZeRO 1) or Megatron-FSDP (ZeRO 2/3).
    if (st.zero >= 1)
        add(pw, { "--use-distributed-optimizer" });
    if (st.zero >= 2)
        add(pw,
            { "--use-megatron-fsdp", "--data-parallel-sharding-strategy",
                st.zero == 2 ? "optim_grads" : "optim_grads_params" });
    if (st.overlap_grad_reduce && data_sharded(st))
        add(pw, { "--overlap-grad-reduce" });
    if (st.overlap_param_gather && st.overlap_grad_reduce && st.zero >= 1 && data_sharded(st))
        add(pw, { "--overlap-param-gather" });
    if (st.tp_comm_overlap && st.tp > 1)
        add(pw, { "--tp-comm-overlap" });
    if (st.ep_overlap)
        add(pw, { "--overlap-moe-expert-parallel-comm" });

    ArgGroup train { "TRAINING_ARGS", {} };
    auto& tw = train.words;
    add(tw, { "--micro-batch-size", num(st.micro_batch), "--global-batch-size", num(t.global_batch) });
    if (st.recompute == Recompute::selective)
        add(tw, { "--recompute-activations" });
    else if (st.recompute == Recompute::full)
        add(tw, { "--recompute-granularity", "full", "--recompute-method", "uniform", "--recompute-num-layers", "1" });
    switch (t.precision) {
    case Precision::fp16:
        add(tw, { "--fp16" });
        break;
    case Precision::fp8:
        // --fp8-recipe names the scenario's training.fp8_scaling (tensorwise = Transformer Engine's
        // Float8CurrentScaling); rowwise is refused before (framework_support).
        add(tw,
            { "--bf16", "--fp8-format", t.fp8_scaling == Fp8Scaling::mxfp8 ? "e4m3" : "hybrid", "--fp8-recipe",
                std::string(to_string(t.fp8_scaling)) });
        break;
    case Precision::fp4:
        add(tw, { "--bf16", "--fp4-format", "e2m1", "--fp4-recipe", "nvfp4" });
        break;
    case Precision::fp32:
    case Precision::tf32:
        break; // without --bf16/--fp16 Megatron keeps params_dtype float32
    default:
        add(tw, { "--bf16" });
        break;
    }
    if (st.optimizer == Optimizer::sgd || st.optimizer == Optimizer::lion)
        add(tw, { "--optimizer", std::string(to_string(st.optimizer)) });
    if (st.offload_optimizer)
        add(tw, { "--optimizer-cpu-offload", "--use-precision-aware-optimizer" });
    // Megatron offloads at most num_layers - 1 layers (transformer_config.py): the last layer's backward
    // follows its forward at once, nothing to hide its copies under.
    if (st.offload_activations)
        add(tw, { "--cpu-offloading", "--cpu-offloading-num-layers", num(sc.model.layers - 1) });
    if (t.cuda_graphs == CudaGraphs::layers)
        add(tw, { "--cuda-graph-impl", "transformer_engine" });
    else if (t.cuda_graphs == CudaGraphs::full_iteration)
        add(tw, { "--cuda-graph-impl", "full_iteration" });
    if (!t.flash_attention)
        add(tw, { "--attention-backend", "unfused" });
    add(tw,
        { "--train-iters", num(o.steps), "--lr", "1.0e-4", "--min-lr", "1.0e-5", "--lr-decay-style", "cosine",
            "--weight-decay", "0.1", "--clip-grad", "1.0", "--init-method-std", "0.02", "--transformer-impl",
            "transformer_engine" });

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

std::vector<ArgGroup> megatron_deepspeed_arg_groups(
    const Scenario& sc, const LaunchSettings& o, std::vector<std::string>& notes)
{
    const ModelSpec& m = sc.model;
    const Strategy& st = sc.strategy;
    const TrainingSpec& t = sc.training;
    ArgGroup model { "MODEL_ARGS", {} };
    auto& mw = model.words;
    add_transformer_shape(mw, m, t);
    if (m.kv_heads != m.heads)
        add(mw, { "--num-key-value-heads", num(m.kv_heads) });
    if (m.head_dim_override)
        add(mw, { "--kv-channels", num(*m.head_dim_override) });
    if (m.ffn_act == FfnActivation::swiglu)
        add(mw,
            { "--swiglu", "--normalization", "rmsnorm", "--use-rotary-position-embeddings", "--no-position-embedding",
                "--disable-bias-linear" });
    if (!m.tied_embeddings)
        add(mw, { "--untie-embeddings-and-output-weights" });
    if (!m.has_dropout())
        add(mw, { "--attention-dropout", "0", "--hidden-dropout", "0" });
    if (t.flash_attention)
        add(mw, { "--use-flash-attn-v2" });
    if (m.is_moe()) {
        add(mw,
            { "--num-experts", num(m.moe->experts), "--topk", num(m.moe->top_k), "--expert-interval",
                num(m.moe->moe_layer_freq) });
        if (m.moe->capacity_factor)
            add(mw, { "--moe-train-capacity-factor", decimal(*m.moe->capacity_factor) });
        else
            add(mw, { "--disable-moe-token-dropping" });
    }

    ArgGroup par { "MODEL_PARALLEL_ARGS", {} };
    auto& pw = par.words;
    add(pw, { "--tensor-model-parallel-size", num(st.tp), "--pipeline-model-parallel-size", num(st.pp) });
    if (st.pp == 1)
        add(pw, { "--no-pipeline-parallel" });
    if (st.pp > 1 && st.schedule == Schedule::zb_h1)
        add(pw, { "--enable-zbh1-pipeline" });
    if (st.vpp > 1)
        notes.push_back(
            "DeepSpeed's pipeline engine has no interleaved schedule; vpp " + num(st.vpp) + " is not applied");
    if (st.pp > 1 && st.schedule != Schedule::one_f_one_b && st.schedule != Schedule::zb_h1
        && st.schedule != Schedule::interleaved)
        notes.push_back("DeepSpeed's pipeline engine runs 1F1B; the plan's " + std::string(to_string(st.schedule))
            + " schedule is not available in it");
    if (st.cp > 1) {
        if (st.cp_kind == CpKind::all_to_all && !(st.sequence_parallel && st.tp > 1))
            add(pw, { "--ds-sequence-parallel-size", num(st.cp) });
        else
            notes.push_back("Megatron-DeepSpeed has no context parallelism of the plan's kind (its DeepSpeed-Ulysses "
                            "--ds-sequence-parallel-size is the all-to-all kind, without Megatron sequence "
                            "parallelism); the plan's cp "
                + num(st.cp) + " is not applied");
    }
    if (st.sequence_parallel && st.tp > 1 && !(st.pp > 1 && st.schedule == Schedule::zb_h1))
        add(pw, { "--sequence-parallel" });
    if (m.is_moe()) {
        if (st.ep > 1)
            add(pw, { "--moe-expert-parallel-size", num(st.ep) });
        if (st.tp > 1 && etp_of(st) == st.tp)
            add(pw, { "--enable-expert-tensor-parallelism" });
        if (st.zero >= 1)
            add(pw, { "--create-moe-param-group" }); // "necessary for techniques like ZeRO" (arguments.py)
    }
    const int zero = st.pp > 1 ? std::min(st.zero, 1) : st.zero;
    if (zero != st.zero)
        notes.push_back(
            "DeepSpeed allows ZeRO 2/3 only without pipeline parallelism; stage " + num(zero) + " is used with pp > 1");
    add(pw, { "--zero-stage", num(zero) });

    ArgGroup train { "TRAINING_ARGS", {} };
    auto& tw = train.words;
    add(tw, { "--micro-batch-size", num(st.micro_batch), "--global-batch-size", num(t.global_batch) });
    if (st.recompute == Recompute::selective)
        add(tw, { "--recompute-granularity", "selective" });
    else if (st.recompute == Recompute::full)
        add(tw, { "--checkpoint-activations", "--deepspeed-activation-checkpointing" });
    if (!is_full_precision(t.precision)) // neither flag: fp32 (DeepSpeed's fp16/bf16 engines off)
        add(tw, { t.precision == Precision::fp16 ? "--fp16" : "--bf16" });
    if (t.precision == Precision::fp8 || t.precision == Precision::fp4)
        notes.push_back("Megatron-DeepSpeed's pipeline model has no " + std::string(to_string(t.precision))
            + " matmuls; this runs bf16");
    if (st.optimizer == Optimizer::sgd)
        add(tw, { "--optimizer", "sgd" });
    add(tw,
        { "--train-iters", num(o.steps), "--lr", "1.0e-4", "--min-lr", "1.0e-5", "--lr-decay-style", "cosine",
            "--weight-decay", "0.1", "--clip-grad", "1.0", "--deepspeed" });

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
    ds["wall_clock_breakdown"] = false;
    ds["flops_profiler"] = { { "enabled", false } };
    (void)notes;
    return ds;
}

// ------------------------------------------------------------------------------------------------
// torchtitan

namespace {

// torchtitan v0.2.2's registered flavours with the shapes they build (torchtitan/models/*/__init__.py; llama3's
// FFN width follows from ffn_dim_multiplier 1.3 and multiple_of) and the Hugging Face repo of their tokenizer
// (the models' READMEs: scripts/download_hf_assets.py --repo_id ... --assets tokenizer).
struct Flavor {
    const char* name;
    const char* flavor;
    const char* hf_repo;
    int layers;
    long long hidden;
    int heads;
    int kv_heads; // 0 = MLA
    long long ffn;
    long long vocab;
    int experts;
    int top_k;
    long long expert_ffn;
    int shared;
    int first_dense;
};
constexpr Flavor kFlavors[] = {
    { "llama3", "8B", "meta-llama/Llama-3.1-8B", 32, 4096, 32, 8, 14336, 128256, 0, 0, 0, 0, 0 },
    { "llama3", "70B", "meta-llama/Llama-3.1-70B", 80, 8192, 64, 8, 28672, 128256, 0, 0, 0, 0, 0 },
    { "llama3", "405B", "meta-llama/Llama-3.1-405B", 126, 16384, 128, 8, 53248, 128256, 0, 0, 0, 0, 0 },
    { "qwen3", "0.6B", "Qwen/Qwen3-0.6B", 28, 1024, 16, 8, 3072, 151936, 0, 0, 0, 0, 0 },
    { "qwen3", "1.7B", "Qwen/Qwen3-1.7B", 28, 2048, 16, 8, 6144, 151936, 0, 0, 0, 0, 0 },
    { "qwen3", "4B", "Qwen/Qwen3-4B", 36, 2560, 32, 8, 9728, 151936, 0, 0, 0, 0, 0 },
    { "qwen3", "8B", "Qwen/Qwen3-8B", 36, 4096, 32, 8, 12288, 151936, 0, 0, 0, 0, 0 },
    { "qwen3", "14B", "Qwen/Qwen3-14B", 40, 5120, 40, 8, 17408, 151936, 0, 0, 0, 0, 0 },
    { "qwen3", "32B", "Qwen/Qwen3-32B", 64, 5120, 64, 8, 25600, 151936, 0, 0, 0, 0, 0 },
    { "qwen3", "30B-A3B", "Qwen/Qwen3-30B-A3B", 48, 2048, 32, 4, 6144, 151936, 128, 8, 768, 0, 0 },
    { "qwen3", "235B-A22B", "Qwen/Qwen3-235B-A22B", 94, 4096, 64, 4, 12288, 151936, 128, 8, 1536, 0, 0 },
    { "deepseek_v3", "16B", "deepseek-ai/deepseek-moe-16b-base", 27, 2048, 16, 0, 10944, 102400, 64, 6, 1408, 2, 1 },
    { "deepseek_v3", "236B", "deepseek-ai/DeepSeek-V2", 60, 5120, 128, 0, 12288, 102400, 160, 6, 1536, 2, 1 },
    { "deepseek_v3", "671B", "deepseek-ai/DeepSeek-V3.1-Base", 61, 7168, 128, 0, 18432, 129280, 256, 8, 2048, 1, 3 },
    { "gpt_oss", "20b", "openai/gpt-oss-20b", 24, 2880, 64, 8, 2880, 201088, 32, 4, 2880, 0, 0 },
    { "gpt_oss", "120b", "openai/gpt-oss-120b", 36, 2880, 64, 8, 2880, 201088, 128, 4, 2880, 0, 0 },
};

bool matches(const Flavor& f, const ModelSpec& m)
{
    if (f.layers != m.layers || f.hidden != m.hidden || f.heads != m.heads || f.vocab != m.vocab)
        return false;
    if ((f.kv_heads == 0) != m.mla.has_value())
        return false;
    if (f.kv_heads != 0 && f.kv_heads != m.kv_heads)
        return false;
    if (f.experts == 0)
        return !m.is_moe() && f.ffn == m.ffn_hidden;
    if (!m.is_moe())
        return false;
    const MoeSpec& e = *m.moe;
    return e.experts == f.experts && e.top_k == f.top_k && e.expert_ffn_hidden == f.expert_ffn
        && e.shared_experts == f.shared && e.first_dense_layers == f.first_dense && e.moe_layer_freq == 1
        && (f.first_dense == 0 || m.ffn_hidden == f.ffn);
}

// ffn_dim_multiplier and multiple_of that make torchtitan's Llama MLP width rule give `width` for `dim`:
// hidden = int(2 * 4 * dim / 3), then int(ffn_dim_multiplier * hidden), rounded up to multiple_of
// (torchtitan/models/llama3/model/model.py FeedForward).
std::string llama_ffn_args(long long dim, long long width)
{
    const long long base = 8 * dim / 3;
    if (base <= 0 || width <= 0)
        return "ffn width " + num(width);
    for (long long mo : { 4096LL, 2048LL, 1024LL, 512LL, 256LL, 128LL, 64LL, 32LL, 16LL, 8LL, 4LL, 2LL, 1LL }) {
        if (width % mo != 0)
            continue;
        char text[32];
        std::snprintf(text, sizeof text, "%.4f", static_cast<double>(width) / static_cast<double>(base));
        const double mult = std::strtod(text, nullptr);
        long long h = static_cast<long long>(mult * static_cast<double>(base));
        h = mo * ((h + mo - 1) / mo);
        if (h == width)
            return std::string("ffn_dim_multiplier=") + text + ", multiple_of=" + num(mo);
    }
    return "ffn width " + num(width) + " (no ffn_dim_multiplier / multiple_of gives it exactly)";
}

std::string folder_of(const std::string& hf_repo)
{
    const auto slash = hf_repo.rfind('/');
    return slash == std::string::npos ? hf_repo : hf_repo.substr(slash + 1);
}

} // namespace

TorchtitanModel torchtitan_model(const ModelSpec& m)
{
    TorchtitanModel out;
    for (const Flavor& f : kFlavors)
        if (matches(f, m)) {
            out.name = f.name;
            out.flavor = f.flavor;
            out.hf_repo = f.hf_repo;
            out.registered = true;
            return out;
        }
    // No registered flavour has these shapes: name the family that can build it and what to register.
    out.flavor = m.name.empty() ? std::string("custom") : m.name;
    std::ostringstream args;
    if (m.mla && m.is_moe()) {
        out.name = "deepseek_v3";
        args << "DeepSeekV3ModelArgs(vocab_size=" << m.vocab << ", dim=" << m.hidden << ", inter_dim=" << m.ffn_hidden
             << ", moe_inter_dim=" << m.moe->expert_ffn_hidden << ", n_layers=" << m.layers
             << ", n_dense_layers=" << m.moe->first_dense_layers << ", n_heads=" << m.heads
             << ", moe_args=MoEArgs(num_experts=" << m.moe->experts << ", num_shared_experts=" << m.moe->shared_experts
             << ", top_k=" << m.moe->top_k << "), q_lora_rank=" << m.mla->q_lora_rank
             << ", kv_lora_rank=" << m.mla->kv_lora_rank << ", qk_nope_head_dim=" << m.mla->qk_nope_head_dim
             << ", qk_rope_head_dim=" << m.mla->qk_rope_head_dim << ", v_head_dim=" << m.mla->v_head_dim << ")";
    } else if (m.sliding_window > 0 || m.attention_sinks) {
        out.name = "gpt_oss";
        args << "GptOssModelArgs(n_layers=" << m.layers << ", dim=" << m.hidden << ", n_heads=" << m.heads
             << ", n_kv_heads=" << m.kv_heads << ", head_dim=" << m.head_dim() << ", vocab_size=" << m.vocab
             << ", sliding_window_size=" << m.sliding_window;
        if (m.is_moe())
            args << ", moe_inter_dim=" << m.moe->expert_ffn_hidden
                 << ", moe_args=MoEArgs(num_experts=" << m.moe->experts
                 << ", num_shared_experts=" << m.moe->shared_experts << ", top_k=" << m.moe->top_k << ")";
        args << ")";
    } else if (m.is_moe()) {
        // llama4's TransformerModelArgs takes routed and shared experts and an MoE-layer step; with
        // auto_scale_hidden_dim off, ffn_dim_multiplier / multiple_of must give the expert width below.
        out.name = "llama4";
        args << "TransformerModelArgs(dim=" << m.hidden << ", n_layers=" << m.layers << ", n_heads=" << m.heads
             << ", n_kv_heads=" << m.kv_heads << ", vocab_size=" << m.vocab
             << ", moe_args=MoEArgs(num_experts=" << m.moe->experts << ", num_shared_experts=" << m.moe->shared_experts
             << ", top_k=" << m.moe->top_k
             << ", score_func=\"softmax\", route_norm=True), interleave_moe_layer_step=" << m.moe->moe_layer_freq
             << ", auto_scale_hidden_dim=False, " << llama_ffn_args(m.hidden, m.moe->expert_ffn_hidden) << ")";
        if (m.moe->moe_layer_freq > 1)
            args << " (llama4 makes layers N-1, 2N-1, ... MoE layers for a step N; the model's MoE layers start at "
                    "layer "
                 << m.moe->first_dense_layers << ")";
        if (m.moe->first_dense_layers > 0)
            args << "; llama4 has no dense first layers (the model has " << m.moe->first_dense_layers << ")";
        if (m.ffn_hidden != m.moe->expert_ffn_hidden && m.moe_layer_count() < m.layers)
            args << "; its dense layers' MLP width " << m.ffn_hidden << " differs from the experts'";
    } else {
        out.name = "llama3";
        args << "TransformerModelArgs(dim=" << m.hidden << ", n_layers=" << m.layers << ", n_heads=" << m.heads
             << ", n_kv_heads=" << m.kv_heads << ", vocab_size=" << m.vocab << ", "
             << llama_ffn_args(m.hidden, m.ffn_hidden) << ", rope_theta=500000)";
    }
    out.custom_note = "torchtitan v0.2.2 has no flavour with the shapes of " + m.name + " (" + num(m.layers)
        + " layers, hidden " + num(m.hidden) + ", " + num(m.heads) + " heads, " + num(m.kv_heads) + " KV heads, FFN "
        + num(m.ffn_hidden) + ", vocab " + num(m.vocab)
        + (m.is_moe() ? ", " + num(m.moe->experts) + " experts top-" + num(m.moe->top_k) + " of width "
                    + num(m.moe->expert_ffn_hidden)
                      : std::string())
        + "). Register flavour \"" + out.flavor + "\" in torchtitan/models/" + out.name + "/__init__.py (" + out.name
        + "_args) before running this file: \"" + out.flavor + "\": " + args.str()
        + ". hf_assets_path must hold the model's own tokenizer (scripts/download_hf_assets.py --repo_id <its Hugging "
          "Face repo> --assets tokenizer).";
    return out;
}

// A schedule program goes to torchtitan as the schedule CSV beside its TOML.
constexpr const char* kScheduleCsv = "pipeline_schedule.csv";
bool has_torchtitan_csv(const Strategy& st)
{
    return st.pp > 1 && st.schedule == Schedule::custom && st.program && st.program->layout == ChunkLayout::interleaved;
}

std::string torchtitan_toml(
    const Scenario& sc, const LaunchSettings& o, const std::string& assets_root, std::vector<std::string>& notes)
{
    const ModelSpec& m = sc.model;
    const Strategy& st = sc.strategy;
    const TrainingSpec& t = sc.training;
    const TorchtitanModel tm = torchtitan_model(m);
    if (!tm.registered)
        notes.push_back(tm.custom_note);

    // Data parallelism: DDP (data_parallel_replicate) for ZeRO 0, FSDP2 (data_parallel_shard) for ZeRO 2/3 and,
    // adapted, 1 (torchtitan has no optimizer-only sharding).
    const bool fsdp = st.zero >= 1;
    if (st.zero == 1 && data_sharded(st))
        notes.push_back("ZeRO 1 runs as FSDP (ZeRO 3): torchtitan has no optimizer-only sharding");
    if (st.zero == 0 && data_sharded(st) && !(st.tp == 1 && st.pp == 1 && st.cp == 1))
        notes.push_back("torchtitan's DDP runs only as the only parallelism; ZeRO 0 runs as FSDP here");
    const bool shard = fsdp || (st.dp > 1 && !(st.tp == 1 && st.pp == 1 && st.cp == 1));
    std::string schedule = "1F1B";
    if (st.schedule == Schedule::gpipe)
        schedule = "GPipe";
    else if (st.schedule == Schedule::interleaved)
        schedule = "Interleaved1F1B";
    else if (st.pp > 1 && (st.schedule == Schedule::zb_h1 || st.schedule == Schedule::dualpipe))
        notes.push_back("torchtitan has no one-stage " + std::string(to_string(st.schedule))
            + " schedule (its ZB and DualPipeV schedules need two stages per rank); this config asks for 1F1B");
    else if (has_torchtitan_csv(st))
        schedule = "PipelineScheduleMulti"; // runs pipeline_parallel_schedule_csv (torchtitan's pp_custom_csv test)
    else if (st.schedule == Schedule::custom)
        notes.push_back("a DualPipe-layout schedule program has no looped torchtitan CSV; this config asks for 1F1B");
    if (!st.sequence_parallel && st.tp > 1)
        notes.push_back("torchtitan's tensor parallelism always shards the sequence in norms (sequence parallel on)");
    if (st.tp_comm_overlap && st.tp > 1 && t.framework != Framework::torchtitan_compile)
        notes.push_back("async TP needs torch.compile in torchtitan; enable_async_tensor_parallel is left off");
    if (st.offload_optimizer)
        notes.push_back("optimizer offload alone does not exist in torchtitan (training.enable_cpu_offload offloads "
                        "parameters and gradients too); not applied");
    if (st.cp > 1 && st.cp_kind == CpKind::all_to_all)
        notes.push_back("torchtitan's context parallelism is ring attention; the plan's all-to-all cp runs as a ring");

    std::ostringstream x;
    x << comment_lines(
        "torchtitan config written by Parallax" + (o.run_label.empty() ? std::string() : " for " + o.run_label) + ".");
    x << comment_lines("Plan: " + plan_summary(sc));
    x << "# torchtitan v0.2.x JobConfig keys (torchtitan/config/job_config.py); later torchtitan releases configure "
         "runs\n# with Python config registries (--module/--config) instead of TOML files.\n";
    x << "# Run: torchrun --nproc_per_node " << std::min<long long>(sc.cluster.gpus_per_node, st.total_gpus())
      << " [--nnodes N --rdzv_endpoint HOST:PORT] -m torchtitan.train --job.config_file THIS_FILE\n";
    for (const auto& n : notes)
        x << comment_lines("NOTE: " + n);
    x << "\n[job]\ndump_folder = \"./outputs\"\ndescription = "
      << toml_string("Parallax plan" + (o.run_label.empty() ? std::string() : " " + o.run_label) + ": " + m.name)
      << "\n\n";
    x << "[metrics]\nlog_freq = 1\nenable_tensorboard = false\n\n";
    x << "[model]\nname = " << toml_string(tm.name) << "\nflavor = " << toml_string(tm.flavor) << "\n";
    const std::string root = assets_root.empty() ? std::string("./assets/hf") : assets_root;
    const std::string folder = tm.hf_repo.empty() ? m.name : folder_of(tm.hf_repo);
    x << "# the tokenizer: python scripts/download_hf_assets.py --repo_id "
      << (tm.hf_repo.empty() ? std::string("<the model's Hugging Face repo>") : tm.hf_repo) << " --assets tokenizer\n";
    x << "hf_assets_path = " << toml_string(root + "/" + folder) << "\n";
    if (t.precision == Precision::fp8)
        x << "converters = [\"quantize.linear.float8\"" << (m.is_moe() ? ", \"quantize.grouped_mm.float8\"" : "")
          << "]\n";
    x << "\n[optimizer]\nname = \"AdamW\"\nlr = 8e-4\n";
    if (st.gradient_release)
        x << "early_step_in_backward = true\n";
    x << "\n[lr_scheduler]\nwarmup_steps = 2\n\n";
    // torchtitan: local_batch_size per data-parallel rank; with PP it is cut into micro-batches of
    // pipeline_parallel_microbatch_size, without PP gradients accumulate over global / (local * dp) steps.
    const long long local = st.pp > 1 ? t.global_batch / std::max(1, st.dp) : st.micro_batch;
    x << "[training]\nlocal_batch_size = " << local << "\nglobal_batch_size = " << t.global_batch
      << "\nseq_len = " << t.seq_len << "\nsteps = " << o.steps << "\nmax_norm = 1.0"
      << "\ndataset = \"c4_test\"\nmixed_precision_param = \"bfloat16\"\n"
      << (st.offload_params ? "enable_cpu_offload = true\n" : "") << "\n";
    x << "[parallelism]\ndata_parallel_replicate_degree = " << (shard ? 1 : st.dp)
      << "\ndata_parallel_shard_degree = " << (shard ? st.dp : 1) << "\n";
    if (shard)
        x << "fsdp_reshard_after_forward = " << (st.zero == 2 ? "\"never\"" : "\"always\"") << "\n";
    x << "tensor_parallel_degree = " << st.tp << "\nenable_async_tensor_parallel = "
      << boolean(st.tp_comm_overlap && st.tp > 1 && t.framework == Framework::torchtitan_compile) << "\n";
    x << "pipeline_parallel_degree = " << st.pp << "\n";
    if (st.pp > 1) {
        x << "pipeline_parallel_schedule = " << toml_string(schedule)
          << "\npipeline_parallel_microbatch_size = " << st.micro_batch << "\n";
        if (has_torchtitan_csv(st))
            x << "pipeline_parallel_schedule_csv = " << toml_string(kScheduleCsv) << "\n";
        const std::vector<int> chunks = chunk_layer_counts(sc);
        const bool even = std::all_of(chunks.begin(), chunks.end(), [&](int c) { return c == chunks.front(); });
        if (even) {
            // Embedding and output count as no layer: exactly pp * vpp stages of equal size.
            x << "pipeline_parallel_layers_per_stage = " << chunks.front()
              << "\npipeline_parallel_first_stage_less_layers = 0\npipeline_parallel_last_stage_less_layers = 0\n";
        } else {
            x << "# the plan's stages, in model order (" << chunks.size() << " = pp " << st.pp << " x vpp " << st.vpp
              << ")\nmodule_fqns_per_model_part = [\n";
            int layer = 0;
            for (std::size_t c = 0; c < chunks.size(); ++c) {
                x << "  [";
                std::string sep;
                if (c == 0) {
                    x << "\"tok_embeddings\"";
                    sep = ", ";
                }
                for (int i = 0; i < chunks[c]; ++i, ++layer) {
                    x << sep << "\"layers." << layer << "\"";
                    sep = ", ";
                }
                if (c + 1 == chunks.size())
                    x << sep << "\"norm\", \"output\"";
                x << "]" << (c + 1 == chunks.size() ? "" : ",") << "\n";
            }
            x << "]\n";
        }
    }
    x << "context_parallel_degree = " << st.cp << "\n";
    if (st.cp > 1)
        x << "context_parallel_rotate_method = \"allgather\"\n";
    if (m.is_moe()) {
        x << "expert_parallel_degree = " << st.ep
          << "\nexpert_tensor_parallel_degree = " << (st.ep > 1 ? etp_of(st) : 1) << "\nexpert_parallel_comm_backend = "
          << (t.moe_dispatcher == MoeDispatcher::deepep ? "\"deepep\"" : "\"standard\"") << "\n";
    }
    x << "\n[activation_checkpoint]\nmode = " << toml_string(recompute_text(st.recompute)) << "\n";
    if (st.recompute == Recompute::selective)
        x << "selective_ac_option = \"op\"\n";
    x << "\n[compile]\nenable = " << boolean(t.framework == Framework::torchtitan_compile)
      << "\ncomponents = [\"model\", \"loss\"]\n";
    if (t.precision == Precision::fp8) {
        x << "\n[quantize.linear.float8]\nrecipe_name = "
          << (t.fp8_scaling == Fp8Scaling::rowwise ? "\"rowwise\"" : "\"tensorwise\"") << "\n";
        if (m.is_moe())
            x << "\n[quantize.grouped_mm.float8]\nfqns = [\"experts\"]\n";
    }
    x << "\n[checkpoint]\nenable = false\n";
    return x.str();
}

// ------------------------------------------------------------------------------------------------
// NeMo: Megatron-Bridge's ConfigContainer

namespace {

struct Yaml {
    std::ostringstream out;
    void section(const std::string& name) { out << "\n" << name << ":\n"; }
    void kv(const std::string& k, const std::string& v) { out << "  " << k << ": " << v << "\n"; }
    void kv(const std::string& k, long long v) { kv(k, num(v)); }
};

} // namespace

std::string nemo_yaml(const Scenario& sc, const LaunchSettings& o, std::vector<std::string>& notes)
{
    const ModelSpec& m = sc.model;
    const Strategy& st = sc.strategy;
    const TrainingSpec& t = sc.training;
    Yaml y;
    y.out << comment_lines("NeMo / Megatron-Bridge overrides written by Parallax"
        + (o.run_label.empty() ? std::string() : " for " + o.run_label) + ".");
    y.out << comment_lines("Plan: " + plan_summary(sc));
    y.out << "# The ConfigContainer's sections (megatron.bridge.training.config): merge it over a GPT pretraining "
             "recipe\n# (OmegaConf.merge, as Megatron-Bridge's example scripts do with --config-file), e.g.\n"
             "#   python examples/.../pretrain_<model>.py --config-file THIS_FILE\n"
             "# model: holds the whole architecture, so any GPT recipe becomes this model.\n";
    for (const auto& n : notes)
        y.out << comment_lines("NOTE: " + n);
    y.section("model");
    y.kv("num_layers", m.layers);
    y.kv("hidden_size", m.hidden);
    y.kv("ffn_hidden_size", m.ffn_hidden);
    y.kv("num_attention_heads", m.heads);
    if (!m.mla)
        y.kv("num_query_groups", m.kv_heads);
    if (m.head_dim_override && !m.mla)
        y.kv("kv_channels", *m.head_dim_override);
    y.kv("vocab_size", m.vocab);
    y.kv("seq_length", t.seq_len);
    if (m.ffn_act == FfnActivation::swiglu) {
        y.kv("normalization", "RMSNorm");
        y.kv("gated_linear_unit", "true");
        y.kv("position_embedding_type", "rope");
        y.kv("add_bias_linear", "false");
    }
    y.kv("share_embeddings_and_output_weights", boolean(m.tied_embeddings));
    if (!m.has_dropout()) {
        y.kv("attention_dropout", "0.0");
        y.kv("hidden_dropout", "0.0");
    }
    if (m.mla) {
        y.kv("multi_latent_attention", "true");
        if (m.mla->q_lora_rank > 0)
            y.kv("q_lora_rank", m.mla->q_lora_rank);
        y.kv("kv_lora_rank", m.mla->kv_lora_rank);
        y.kv("qk_head_dim", m.mla->qk_nope_head_dim);
        y.kv("qk_pos_emb_head_dim", m.mla->qk_rope_head_dim);
        y.kv("v_head_dim", m.mla->v_head_dim);
    }
    if (m.sliding_window > 0) {
        y.kv("window_size", "[" + num(m.sliding_window) + ", 0]");
        if (m.full_attention_every > 0)
            y.kv("window_attn_skip_freq", m.full_attention_every);
    }
    if (m.attention_sinks)
        y.kv("softmax_type", "learnable");
    if (m.is_moe()) {
        y.kv("num_moe_experts", m.moe->experts);
        y.kv("moe_router_topk", m.moe->top_k);
        y.kv("moe_ffn_hidden_size", m.moe->expert_ffn_hidden);
        y.kv("moe_grouped_gemm", "true");
        if (t.moe_dispatcher == MoeDispatcher::deepep) {
            y.kv("moe_token_dispatcher_type", "flex");
            y.kv("moe_flex_dispatcher_backend", "deepep");
        } else {
            y.kv("moe_token_dispatcher_type", "alltoall");
        }
        if (m.moe->shared_experts > 0)
            y.kv("moe_shared_expert_intermediate_size", m.moe->shared_experts * m.moe->expert_ffn_hidden);
        if (m.moe->capacity_factor)
            y.kv("moe_expert_capacity_factor", decimal(*m.moe->capacity_factor));
        if (!every_layer_moe(m)) {
            std::string list;
            for (int l = 0; l < m.layers; ++l)
                list += (l ? ", " : "") + num(m.is_moe_layer(l) ? 1 : 0);
            y.kv("moe_layer_freq", "[" + list + "]");
        }
    }
    y.kv("tensor_model_parallel_size", st.tp);
    y.kv("pipeline_model_parallel_size", st.pp);
    const MegatronSplit split = megatron_split(sc);
    if (!split.layout.empty()) {
        y.kv("pipeline_model_parallel_layout", yaml_string(split.layout));
    } else {
        y.kv("virtual_pipeline_model_parallel_size", st.vpp > 1 ? num(st.vpp) : std::string("null"));
        if (split.first > 0)
            y.kv("num_layers_in_first_pipeline_stage", split.first);
        if (split.last > 0)
            y.kv("num_layers_in_last_pipeline_stage", split.last);
    }
    y.kv("context_parallel_size", st.cp);
    if (st.cp > 1)
        y.kv("cp_comm_type", st.cp_kind == CpKind::ring ? "p2p" : "a2a");
    if (m.is_moe()) {
        y.kv("expert_model_parallel_size", st.ep);
        y.kv("expert_tensor_parallel_size", etp_of(st));
    }
    y.kv("sequence_parallel", boolean(st.sequence_parallel && st.tp > 1));
    if (st.recompute == Recompute::selective) {
        y.kv("recompute_granularity", "selective");
    } else if (st.recompute == Recompute::full) {
        y.kv("recompute_granularity", "full");
        y.kv("recompute_method", "uniform");
        y.kv("recompute_num_layers", 1);
    } else {
        y.kv("recompute_granularity", "null");
    }
    if (t.cuda_graphs != CudaGraphs::none)
        y.kv("cuda_graph_impl", t.cuda_graphs == CudaGraphs::layers ? "transformer_engine" : "full_iteration");

    y.section("train");
    y.kv("micro_batch_size", st.micro_batch);
    y.kv("global_batch_size", t.global_batch);
    y.kv("train_iters", o.steps);
    y.section("dataset");
    y.kv("seq_length", t.seq_len);

    y.section("optimizer");
    y.kv("optimizer", std::string(to_string(st.optimizer)));
    y.kv("lr", "1.0e-4");
    y.kv("min_lr", "1.0e-5");
    y.kv("use_distributed_optimizer", boolean(st.zero >= 1));
    if (st.offload_optimizer) {
        y.kv("optimizer_cpu_offload", "true");
        y.kv("use_precision_aware_optimizer", "true");
    }
    y.section("ddp");
    y.kv("use_distributed_optimizer", boolean(st.zero >= 1));
    y.kv("overlap_grad_reduce", boolean(st.overlap_grad_reduce && data_sharded(st)));
    y.kv("overlap_param_gather",
        boolean(st.overlap_param_gather && st.overlap_grad_reduce && st.zero >= 1 && data_sharded(st)));
    y.kv("use_megatron_fsdp", boolean(st.zero >= 2));
    if (st.zero >= 2)
        y.kv("data_parallel_sharding_strategy", st.zero == 2 ? "optim_grads" : "optim_grads_params");
    if (st.rank_order != RankOrder {}) {
        y.section("dist");
        y.kv("use_tp_pp_dp_mapping", "true");
    }
    // Megatron-Bridge's registered recipes (megatron/bridge/training/mixed_precision.py).
    std::string mp = "bf16_mixed";
    if (t.precision == Precision::fp16)
        mp = "fp16_mixed";
    else if (t.precision == Precision::fp8)
        mp = t.fp8_scaling == Fp8Scaling::mxfp8      ? "bf16_with_mxfp8_mixed"
            : t.fp8_scaling == Fp8Scaling::delayed   ? "bf16_with_fp8_delayed_scaling_mixed"
            : t.fp8_scaling == Fp8Scaling::blockwise ? "bf16_with_fp8_subchannel_scaling_mixed"
                                                     : "bf16_with_fp8_current_scaling_mixed";
    else if (t.precision == Precision::fp4)
        mp = "bf16_with_nvfp4_mixed";
    if (!is_full_precision(t.precision)) // no recipe: Megatron-Bridge then trains in fp32
        y.out << "\nmixed_precision: " << mp << "\n";
    y.section("comm_overlap");
    y.kv("tp_comm_overlap", boolean(st.tp_comm_overlap && st.tp > 1));
    if (st.ep_overlap)
        y.kv("overlap_moe_expert_parallel_comm", "true");
    y.section("logger");
    y.kv("log_interval", 1);
    y.kv("log_throughput", "true");
    return y.out.str();
}

// ------------------------------------------------------------------------------------------------
// export: the standalone files

namespace {

std::string megatron_script(const Scenario& sc, const LaunchSettings& o, const std::string& file,
    const std::vector<ArgGroup>& groups, const std::vector<std::string>& notes, bool deepspeed)
{
    const Strategy& st = sc.strategy;
    const long long world = st.total_gpus();
    const long long per_node = std::min<long long>(sc.cluster.gpus_per_node, world);
    const long long nodes = std::max<long long>(1, world / std::max<long long>(1, per_node));
    BashScript s;
    s.comment(std::string(deepspeed ? "Megatron-DeepSpeed" : "Megatron-LM") + " pretrain_gpt.py for " + sc.model.name
        + ", written by parallax-cli export from " + file + ".");
    s.comment("Plan: " + plan_summary(sc));
    s.comment(std::to_string(world) + " GPUs: run this script once per node (" + std::to_string(nodes) + " node"
        + (nodes == 1 ? "" : "s") + " of " + std::to_string(per_node)
        + "); torchrun starts this node's ranks. Set NNODES, NODE_RANK, MASTER_ADDR and MASTER_PORT (srun sets "
          "SLURM_NNODES and SLURM_NODEID, used when they are not).");
    if (deepspeed) {
        s.comment("Megatron-DeepSpeed reads a preprocessed dataset: set DATA_PATH (prefix of the .bin/.idx files),");
        s.comment("VOCAB_FILE and MERGE_FILE (GPT-2 BPE). ds_config.json lies next to this script.");
    }
    for (const auto& n : notes)
        s.comment("NOTE: " + n);
    s.raw("set -euo pipefail");
    const std::string var = deepspeed ? "MEGATRON_DEEPSPEED" : "MEGATRON_LM";
    if (!o.framework_path.empty())
        s.raw(var + "=\"${" + var + ":-" + o.framework_path + "}\"");
    s.raw(var + "=\"${" + var + ":?set " + var + " to your " + (deepspeed ? "Megatron-DeepSpeed" : "Megatron-LM")
        + " checkout}\"");
    if (deepspeed) {
        s.raw(": \"${DATA_PATH:?set DATA_PATH to a Megatron dataset prefix}\"");
        s.raw(": \"${VOCAB_FILE:?set VOCAB_FILE (gpt2-vocab.json)}\" \"${MERGE_FILE:?set MERGE_FILE "
              "(gpt2-merges.txt)}\"");
        s.raw("HERE=\"$(cd \"$(dirname \"${BASH_SOURCE[0]}\")\" && pwd)\"");
    }
    if (st.zero < 2)
        s.raw("export CUDA_DEVICE_MAX_CONNECTIONS=1 # the order of TP/SP communication and compute kernels");
    s.blank();
    s.flag_array("DISTRIBUTED_ARGS",
        { "--nproc_per_node", std::to_string(per_node), "--nnodes",
            "${NNODES:-${SLURM_NNODES:-" + std::to_string(nodes) + "}}", "--node_rank",
            "${NODE_RANK:-${SLURM_NODEID:-0}}", "--master_addr", "${MASTER_ADDR:-localhost}", "--master_port",
            "${MASTER_PORT:-6000}" });
    for (const ArgGroup& g : groups) {
        s.blank();
        s.flag_array(g.name, g.words);
    }
    if (deepspeed) {
        s.blank();
        s.raw(
            "DATA_ARGS=(\n    --deepspeed_config \"$HERE/ds_config.json\"\n    --data-path \"$DATA_PATH\" --vocab-file "
            "\"$VOCAB_FILE\" --merge-file \"$MERGE_FILE\"\n)");
    }
    s.blank();
    std::string launch = "torchrun \"${DISTRIBUTED_ARGS[@]}\" \"$" + var + "/pretrain_gpt.py\"";
    for (const ArgGroup& g : groups)
        launch += " \\\n    \"${" + g.name + "[@]}\"";
    if (deepspeed)
        launch += " \\\n    \"${DATA_ARGS[@]}\"";
    s.raw(launch);
    return s.text();
}

std::string fix_shell_defaults(std::string text)
{
    // flag_array quotes "${NNODES:-...}" words (they hold $ and braces): keep them expandable.
    const std::string quoted[] = { "'${NNODES:-${SLURM_NNODES:-", "'${NODE_RANK:-${SLURM_NODEID:-0}}'",
        "'${MASTER_ADDR:-localhost}'", "'${MASTER_PORT:-6000}'" };
    for (const std::string& q : quoted) {
        std::size_t pos = 0;
        while ((pos = text.find(q, pos)) != std::string::npos) {
            const std::size_t end = text.find('\'', pos + 1);
            if (end == std::string::npos)
                break;
            text[pos] = '"';
            text[end] = '"';
            pos = end + 1;
        }
    }
    return text;
}

} // namespace

LaunchConfig export_launch_config(LaunchFormat f, const Scenario& sc, const LaunchSettings& o, const std::string& file)
{
    if (sc.heterogeneous()) // mixed-GPU stages: their own rules and host lists
        return export_hetero_launch_config(f, sc, o, file);
    const std::vector<Unsupported> missing = launch_unsupported(f, sc);
    if (!missing.empty()) {
        const std::string fw(to_string(launch_framework(f, sc)));
        std::string rule = (f == LaunchFormat::nemo ? "NeMo (Megatron-Bridge) runs Megatron-LM's core, and " : "") + fw
            + " cannot run " + missing.front().feature + ": " + missing.front().reason;
        for (std::size_t i = 1; i < missing.size(); ++i)
            rule += "; nor " + missing[i].feature + " (" + missing[i].key + "): " + missing[i].reason;
        throw InputError(file, missing.front().key, rule);
    }
    LaunchConfig out;
    switch (f) {
    case LaunchFormat::megatron: {
        const auto groups = megatron_arg_groups(sc, o, out.notes);
        out.files.push_back(
            { "train_megatron.sh", fix_shell_defaults(megatron_script(sc, o, file, groups, out.notes, false)), 0755 });
        break;
    }
    case LaunchFormat::torchtitan:
        out.files.push_back({ "torchtitan.toml", torchtitan_toml(sc, o, "", out.notes), 0644 });
        if (has_torchtitan_csv(sc.strategy)) {
            out.files.push_back({ kScheduleCsv, torchtitan_schedule_csv(*sc.strategy.program), 0644 });
            out.notes.push_back("the schedule program is in " + std::string(kScheduleCsv)
                + " (WAIT and A2A directives, and W~ floating, have no CSV form)");
        }
        break;
    case LaunchFormat::nemo:
        out.files.push_back({ "nemo_megatron_bridge.yaml", nemo_yaml(sc, o, out.notes), 0644 });
        break;
    case LaunchFormat::deepspeed: {
        const auto groups = megatron_deepspeed_arg_groups(sc, o, out.notes);
        out.files.push_back({ "ds_config.json", deepspeed_config(sc, out.notes).dump(2) + "\n", 0644 });
        out.files.push_back({ "train_megatron_deepspeed.sh",
            fix_shell_defaults(megatron_script(sc, o, file, groups, out.notes, true)), 0755 });
        break;
    }
    }
    return out;
}

} // namespace parallax

#include "io/import/nemo_yaml.hpp"

#include "io/import/megatron_flags.hpp"
#include "spec/input_error.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <map>
#include <optional>

namespace parallax {

namespace {

// Sections (first key) that hold nothing the step's cost depends on: run bookkeeping, logging,
// checkpoints, schedules, data loading, fault tolerance, profiling.
constexpr std::string_view kNoEffectSections[] = { "_target_", "defaults", "hydra", "run", "exp_manager", "checkpoint",
    "logger", "dist", "rng", "scheduler", "profiling", "ft", "nvrx_straggler", "inprocess_restart",
    "rerun_state_machine", "straggler", "tensor_inspect", "validation", "tokenizer", "peft",
    "optimizer_config_override_provider", "dataset", "train", "trainer" };

// Model keys (NeMo's and Megatron-core TransformerConfig's names) whose integer is a scenario key.
struct IntKey {
    std::string_view key;
    std::string_view target;
};
constexpr IntKey kIntKeys[] = { { "tensor_model_parallel_size", "strategy.tp" },
    { "pipeline_model_parallel_size", "strategy.pp" }, { "context_parallel_size", "strategy.cp" },
    { "expert_model_parallel_size", "strategy.ep" }, { "expert_tensor_parallel_size", "strategy.expert_tp" },
    { "virtual_pipeline_model_parallel_size", "strategy.vpp" }, { "micro_batch_size", "strategy.micro_batch" },
    { "global_batch_size", "training.global_batch" }, { "encoder_seq_length", "training.seq_len" },
    { "seq_length", "training.seq_len" }, { "num_layers", "model.layers" }, { "hidden_size", "model.hidden" },
    { "ffn_hidden_size", "model.ffn_hidden" }, { "num_attention_heads", "model.heads" },
    { "num_query_groups", "model.kv_heads" }, { "num_moe_experts", "model.moe.experts" },
    { "moe_router_topk", "model.moe.top_k" }, { "moe_ffn_hidden_size", "model.moe.expert_ffn_hidden" },
    { "q_lora_rank", "model.attention.q_lora_rank" }, { "kv_lora_rank", "model.attention.kv_lora_rank" },
    { "qk_head_dim", "model.attention.qk_nope_head_dim" },
    { "qk_pos_emb_head_dim", "model.attention.qk_rope_head_dim" }, { "v_head_dim", "model.attention.v_head_dim" },
    { "num_layers_in_first_pipeline_stage", "strategy.first_stage_layers" },
    { "num_layers_in_last_pipeline_stage", "strategy.last_stage_layers" },
    { "window_attn_skip_freq", "model.full_attention_every" }, { "vocab_size", "model.vocab" } };

// Model keys whose boolean is a scenario key (the value as it is).
constexpr IntKey kBoolKeys[] = { { "sequence_parallel", "strategy.sequence_parallel" },
    { "share_embeddings_and_output_weights", "model.tied_embeddings" },
    { "overlap_moe_expert_parallel_comm", "strategy.ep_overlap" }, { "ub_tp_comm_overlap", "strategy.tp_comm_overlap" },
    { "tp_comm_overlap", "strategy.tp_comm_overlap" }, { "use_flash_attention", "training.flash_attention" },
    { "overlap_grad_reduce", "strategy.overlap_grad_reduce" }, { "overlap_grad_sync", "strategy.overlap_grad_reduce" },
    { "overlap_param_gather", "strategy.overlap_param_gather" },
    { "overlap_param_sync", "strategy.overlap_param_gather" },
    { "optimizer_cpu_offload", "strategy.offload_optimizer" } };

struct Leaf {
    std::string key; // "model.tensor_model_parallel_size"
    YAML::Node node;
};

void flatten(const YAML::Node& n, const std::string& prefix, std::vector<Leaf>& out)
{
    if (n.IsMap() && n.size() > 0) {
        for (const auto& kv : n)
            flatten(kv.second, prefix.empty() ? kv.first.as<std::string>() : prefix + "." + kv.first.as<std::string>(),
                out);
        return;
    }
    out.push_back({ prefix, n });
}

std::string text_of(const YAML::Node& n)
{
    if (!n.IsDefined() || n.IsNull())
        return "null";
    if (n.IsScalar())
        return n.Scalar();
    if (n.IsSequence()) {
        if (n.size() > 8)
            return "[" + std::to_string(n.size()) + " items]";
        std::string out = "[";
        for (std::size_t i = 0; i < n.size(); ++i)
            out += (i ? ", " : "") + text_of(n[i]);
        return out + "]";
    }
    return n.size() == 0 ? "{}" : "{...}";
}

bool is_off(const YAML::Node& n)
{
    if (!n.IsDefined() || n.IsNull())
        return true;
    if (n.IsScalar()) {
        const std::string& s = n.Scalar();
        return s.empty() || s == "false" || s == "False" || s == "null" || s == "None";
    }
    return n.size() == 0;
}

// The last part of "model.optim.overlap_grad_sync".
std::string leaf_name(const std::string& key)
{
    const std::size_t dot = key.rfind('.');
    return dot == std::string::npos ? key : key.substr(dot + 1);
}

std::string section_of(const std::string& key)
{
    return key.substr(0, key.find('.'));
}

class NemoReader {
public:
    NemoReader(ImportDraft& d, bool bridge)
        : m_d(d)
        , m_bridge(bridge)
    {
    }
    void read(const Leaf& l);
    void finish();

private:
    const std::string& file() const { return m_d.report.file; }
    long long integer(const Leaf& l, long long min) const;
    double number(const Leaf& l) const;
    bool boolean(const Leaf& l) const;
    bool table_key(const Leaf& l, const std::string& name);
    bool launcher_key(const Leaf& l);
    bool bridge_key(const Leaf& l);
    void take_named_recipe();
    bool model_key(const Leaf& l, const std::string& name);
    bool moe_key(const Leaf& l, const std::string& name);
    bool numerics_key(const Leaf& l, const std::string& name);
    void fallback(const Leaf& l, const std::string& name);
    void finish_activation();
    void finish_dropout_and_embeddings();
    void finish_attention();
    void finish_precision();
    void finish_recompute();
    void finish_optimizer();
    void finish_runtime();
    void finish_vocab();
    void finish_moe();
    const Leaf* held(const std::string& key) const
    {
        const auto it = m_held.find(key);
        return it == m_held.end() || !it->second.node.IsDefined() || it->second.node.IsNull() ? nullptr : &it->second;
    }
    // Reports a held key that finish() does not otherwise report.
    void settle(const std::string& key, const std::string& note)
    {
        const auto it = m_held.find(key);
        if (it != m_held.end())
            m_d.report.no_effect(it->second.key, text_of(it->second.node), note);
    }

    ImportDraft& m_d;
    bool m_bridge = false;
    std::string m_named_precision; // set by a `mixed_precision: NAME` recipe
    std::map<std::string, Leaf> m_held; // values decided in finish(), by leaf name
};

long long NemoReader::integer(const Leaf& l, long long min) const
{
    try {
        const long long v = l.node.as<long long>();
        if (v >= min)
            return v;
    } catch (const YAML::Exception&) {
    }
    throw InputError(file(), l.key, "must be an integer >= " + std::to_string(min) + ", found " + text_of(l.node));
}

double NemoReader::number(const Leaf& l) const
{
    try {
        return l.node.as<double>();
    } catch (const YAML::Exception&) {
        throw InputError(file(), l.key, "must be a number, found " + text_of(l.node));
    }
}

bool NemoReader::boolean(const Leaf& l) const
{
    try {
        return l.node.as<bool>();
    } catch (const YAML::Exception&) {
        throw InputError(file(), l.key, "must be true or false, found " + text_of(l.node));
    }
}

// The keys whose value maps as it is; a null leaves the scenario's default.
bool NemoReader::table_key(const Leaf& l, const std::string& name)
{
    for (const IntKey& k : kIntKeys) {
        if (k.key != name)
            continue;
        if (is_off(l.node))
            m_d.report.no_effect(l.key, text_of(l.node), "not set");
        else
            m_d.set(k.target, integer(l, name == "q_lora_rank" || name == "qk_pos_emb_head_dim" ? 0 : 1), l.key,
                text_of(l.node));
        return true;
    }
    for (const IntKey& k : kBoolKeys) {
        if (k.key != name)
            continue;
        if (!l.node.IsDefined() || l.node.IsNull())
            m_d.report.no_effect(l.key, "null", "not set");
        else
            m_d.set(k.target, boolean(l), l.key, text_of(l.node));
        return true;
    }
    return false;
}

// NeMo-Framework-Launcher: trainer.*, model.optim.*, model.data.*, model.tokenizer.*.
bool NemoReader::launcher_key(const Leaf& l)
{
    const std::string name = leaf_name(l.key);
    if (l.key == "trainer.num_nodes" || l.key == "trainer.devices") {
        const long long n = integer(l, 1);
        (l.key == "trainer.num_nodes" ? m_d.nodes : m_d.gpus_per_node) = n;
        m_d.report.mapped(
            l.key, text_of(l.node), l.key == "trainer.num_nodes" ? "cluster.nodes" : "cluster.gpus_per_node");
    } else if (l.key == "trainer.precision" || l.key == "model.optim.name" || l.key == "model.tokenizer.type"
        || l.key == "model.data.seq_length") {
        m_held[l.key] = l;
    } else if (l.key.rfind("model.optim.overlap_", 0) == 0) {
        table_key(l, name);
    } else if (l.key.rfind("model.optim.", 0) == 0 || l.key.rfind("model.data.", 0) == 0
        || l.key.rfind("model.tokenizer.", 0) == 0 || l.key.rfind("model.nsys_profile.", 0) == 0
        || l.key.rfind("model.ub_tp_comm_overlap_cfg", 0) == 0 || section_of(l.key) == "trainer") {
        if (name == "bucket_cap_mb")
            m_d.report.not_modelled(l.key, text_of(l.node), "gradient bucket sizes are not modelled");
        else
            m_d.report.no_effect(l.key, text_of(l.node));
    } else {
        return false;
    }
    return true;
}

// Megatron-Bridge's sections besides model: train, ddp, optimizer, mixed_precision, comm_overlap, dataset.
bool NemoReader::bridge_key(const Leaf& l)
{
    const std::string section = section_of(l.key);
    const std::string name = leaf_name(l.key);
    if (section == "train" && (name == "global_batch_size" || name == "micro_batch_size"))
        return table_key(l, name);
    if (l.key == "mixed_precision" && l.node.IsScalar()) { // a registered recipe by name
        m_held[l.key] = l;
        return true;
    }
    if (section == "ddp" && (name == "overlap_grad_reduce" || name == "overlap_param_gather"))
        return table_key(l, name);
    if (name == "grad_reduce_in_fp32" && (section == "ddp" || section == "mixed_precision")) {
        // Megatron's gradient buffers take the parameters' dtype when this is off (param_and_grad_buffer.py).
        if (section == "mixed_precision")
            m_d.report.no_effect(l.key, text_of(l.node), "a copy of ddp.grad_reduce_in_fp32");
        else if (is_off(l.node))
            m_d.set("training.grad_reduce_in_bf16", true, l.key, text_of(l.node));
        else
            m_d.report.no_effect(l.key, text_of(l.node), "Megatron's main gradients are fp32 already");
        return true;
    }
    if ((section == "ddp"
            && (name == "use_distributed_optimizer" || name == "use_megatron_fsdp" || name == "use_custom_fsdp"
                || name == "data_parallel_sharding_strategy"))
        || section == "mixed_precision" || l.key == "dataset.sequence_length" || l.key == "optimizer.optimizer") {
        if (section == "mixed_precision" && name != "bf16" && name != "fp16" && name != "fp8" && name != "fp8_recipe"
            && name != "fp4")
            return false;
        m_held[l.key] = l;
        return true;
    }
    if (section == "comm_overlap"
        && (name == "tp_comm_overlap" || name == "overlap_grad_reduce" || name == "overlap_param_gather"
            || name == "overlap_moe_expert_parallel_comm")) {
        if (is_off(l.node) && name != "tp_comm_overlap")
            m_d.report.no_effect(l.key, text_of(l.node), "not set here: ddp's value holds");
        else
            table_key(l, name);
        return true;
    }
    if (section == "optimizer" && name == "optimizer_cpu_offload")
        return table_key(l, name);
    if (section == "optimizer"
        && (name == "use_distributed_optimizer" || name == "overlap_param_gather" || name == "bf16"
            || name == "fp16")) {
        m_d.report.no_effect(l.key, text_of(l.node), "a copy of the ddp / mixed_precision setting");
        return true;
    }
    return false;
}

// Keys decided together in finish(): activation, dropout, head width, MLA, recompute, precision, vocabulary.
constexpr std::string_view kHeldModelKeys[] = { "activation", "gated_linear_unit", "hidden_dropout",
    "attention_dropout", "ffn_dropout", "kv_channels", "multi_latent_attention", "recompute_granularity",
    "activations_checkpoint_granularity", "recompute_method", "activations_checkpoint_method", "recompute_num_layers",
    "activations_checkpoint_num_layers", "fp8", "fp8_hybrid", "fp8_e4m3", "make_vocab_size_divisible_by",
    "should_pad_vocab", "hf_model_id", "moe_shared_expert_intermediate_size", "moe_layer_freq",
    "moe_token_dispatcher_type", "moe_flex_dispatcher_backend", "moe_enable_deepep", "cuda_graph_impl",
    "cuda_graph_scope", "enable_cuda_graph" };

bool NemoReader::model_key(const Leaf& l, const std::string& name)
{
    if (m_bridge && (name == "fp8" || name == "fp8_hybrid" || name == "fp8_e4m3")) {
        m_d.report.no_effect(l.key, text_of(l.node), "mixed_precision sets the precision");
        return true;
    }
    if (table_key(l, name))
        return true;
    if (std::find(std::begin(kHeldModelKeys), std::end(kHeldModelKeys), name) != std::end(kHeldModelKeys)) {
        m_held[name] = l;
        return true;
    }
    return moe_key(l, name) || numerics_key(l, name);
}

bool NemoReader::moe_key(const Leaf& l, const std::string& name)
{
    const std::string v = text_of(l.node);
    if (name == "moe_expert_capacity_factor") {
        if (is_off(l.node))
            m_d.report.no_effect(l.key, v, "dropless");
        else
            m_d.set("model.moe.capacity_factor", number(l), l.key, v);
    } else if (name == "cp_comm_type") {
        if (is_off(l.node) || v == "p2p")
            m_d.set("strategy.cp_kind", "ring", l.key, v, is_off(l.node) ? "the default p2p ring" : "");
        else if (v == "a2a")
            m_d.set("strategy.cp_kind", "all-to-all", l.key, v);
        else
            m_d.report.not_modelled(l.key, v, "costed as ring attention (p2p)");
    } else if (name == "window_size") {
        if (is_off(l.node))
            m_d.report.no_effect(l.key, v, "no sliding window");
        else if (l.node.IsSequence() && l.node.size() >= 1)
            m_d.set("model.sliding_window", l.node[0].as<long long>(), l.key, v, "the left window");
        else
            throw InputError(file(), l.key, "must be [left, right], found " + v);
    } else if (name == "softmax_type") {
        if (v == "learnable")
            m_d.set("model.attention_sinks", true, l.key, v);
        else if (v == "vanilla" || is_off(l.node))
            m_d.report.no_effect(l.key, v);
        else
            m_d.report.not_modelled(l.key, v, "only learnable sinks are modelled");
    } else if (name == "position_embedding_type") {
        if (v == "learned_absolute")
            m_d.report.not_modelled(l.key, v, "learned position embeddings are not costed");
        else
            m_d.report.no_effect(l.key, v, "rotary or none: no parameters");
    } else {
        return false;
    }
    return true;
}

bool NemoReader::numerics_key(const Leaf& l, const std::string& name)
{
    if ((name == "bf16" || name == "fp16" || name == "fp8_recipe" || name == "fp4" || name == "fp8_param")
        && m_bridge) {
        m_d.report.no_effect(l.key, text_of(l.node), "mixed_precision sets the precision");
        return true;
    }
    if (name == "transformer_engine" || name == "transformer_impl") {
        const std::string v = text_of(l.node);
        if (v == "true" || v == "True" || v == "transformer_engine")
            m_d.report.no_effect(l.key, v, "Transformer Engine is the stack the megatron framework models");
        else
            m_d.report.not_modelled(l.key, v, "the local (non-TE) layers are costed as Transformer Engine's");
        return true;
    }
    return false;
}

// Keys of NeMo's and Megatron-core's configs (leaf names, prefixes) that do not change the step's time or
// memory: initialisation, numerics, RoPE scaling, other architectures' settings (Mamba, linear attention,
// muP), inference, logging, and class references of the config dumps.
constexpr std::string_view kNoEffectNamePrefixes[] = { "_target_", "_call_", "_partial_", "_args_", "_name_",
    "inference_", "mamba_", "mup_", "linear_", "yarn_", "kitchen_", "qk_clip", "beta_fast", "beta_slow", "mscale",
    "original_max_position", "rotary_", "rope_", "native_amp", "apex_", "layernorm_epsilon", "init_method", "seed",
    "resume_", "onnx", "gc_interval", "mtp_loss", "barrier_", "perform_initialization", "parallel_output",
    "use_cpu_initialization", "clone_scatter_output", "cuda_graph_warmup", "mcore_gpt", "use_scaled_init_method",
    "pre_process", "post_process", "transformer_block_type", "normalize_attention_scores", "attention_type",
    "headscale", "openai_gelu", "do_layer_norm_weight_decay", "gradient_as_bucket_view", "sync_batch_comm",
    "megatron_amp_O2", "hysteresis", "fp16_lm_cross_entropy", "apply_query_key_layer_scaling", "fp4_recipe",
    "min_offloaded_tensor_size", "mlp_chunks_for_prefill", "flash_decode", "test_mode", "config_logger_dir", "timers",
    "glu_linear_offset", "tp_comm_bootstrap_backend", "check_for_", "log_", "grad_allreduce_chunk_size_mb", "muon_",
    "lion_", "use_mamba", "store_param_remainders" };

bool ends_with(const std::string& s, std::string_view suffix)
{
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void NemoReader::fallback(const Leaf& l, const std::string& name)
{
    const std::string v = text_of(l.node);
    std::string flag = "--" + name;
    std::replace(flag.begin(), flag.end(), '_', '-');
    const auto starts = [&](std::string_view p) { return name.rfind(p, 0) == 0; };
    if (std::any_of(std::begin(kNoEffectNamePrefixes), std::end(kNoEffectNamePrefixes), starts)
        || megatron_flag_has_no_effect(flag))
        m_d.report.no_effect(l.key, v);
    else if (ends_with(name, "_fusion") || name == "persist_layer_norm")
        is_off(l.node) ? m_d.report.not_modelled(l.key, v, "kernel fusion off: costed fused")
                       : m_d.report.no_effect(l.key, v, "fused, as costed");
    else if (is_off(l.node) || v == "0" || v == "0.0")
        m_d.report.no_effect(l.key, v, "off or not set");
    else if (name.rfind("tp_comm_", 0) == 0)
        m_d.get("strategy.tp_comm_overlap") && *m_d.get("strategy.tp_comm_overlap") == true
            ? m_d.report.not_modelled(
                l.key, v, "userbuffers settings: TP overlap is costed as Transformer Engine's default")
            : m_d.report.no_effect(l.key, v, "TP communication overlap is off");
    else if (name.rfind("pin_cpu_", 0) == 0 || name == "cpu_offloading_activations" || name == "cpu_offloading_weights")
        m_d.report.no_effect(l.key, v, "only with CPU offloading");
    else if (name.rfind("num_layers_at_", 0) == 0)
        m_d.report.not_modelled(l.key, v, "layers kept in bf16 under fp8 are costed in fp8");
    else if (ends_with(name, "_sms"))
        m_d.report.not_modelled(l.key, v, "SMs reserved for communication kernels");
    else if (const auto why = megatron_flag_not_modelled(flag))
        m_d.report.not_modelled(l.key, v, *why);
    else
        m_d.report.not_modelled(l.key, v, "not known to the importer");
}

void NemoReader::read(const Leaf& l)
{
    if ((!m_bridge && launcher_key(l)) || (m_bridge && bridge_key(l)))
        return;
    const std::string section = section_of(l.key);
    const std::string name = leaf_name(l.key);
    const bool direct_model_key = section == "model" && l.key.find('.', 6) == std::string::npos;
    if (direct_model_key && !model_key(l, name))
        fallback(l, name);
    else if (direct_model_key)
        return;
    else if (l.key.rfind("model.activation_func", 0) == 0)
        m_held["activation_func"] = l;
    else if (section == "model")
        m_d.report.no_effect(l.key, text_of(l.node), "a Python object reference");
    else if (std::find(std::begin(kNoEffectSections), std::end(kNoEffectSections), section)
        != std::end(kNoEffectSections))
        m_d.report.no_effect(l.key, text_of(l.node));
    else if (section == "ddp" || section == "optimizer" || section == "mixed_precision" || section == "comm_overlap")
        fallback(l, name);
    else
        m_d.report.not_modelled(l.key, text_of(l.node), "not known to the importer");
}

// The MLP's activation: NeMo's "activation", or Megatron-core's gated_linear_unit with activation_func.
void NemoReader::finish_activation()
{
    ImportDraft& d = m_d;
    if (const Leaf* act = held("activation")) {
        const std::string v = text_of(act->node);
        const bool glu = v.find("glu") != std::string::npos;
        d.set("model.ffn_act", glu ? "swiglu" : "gelu", act->key, v,
            glu && v.find("swiglu") == std::string::npos ? "a GLU has SwiGLU's GEMM shapes" : "");
    } else if (const Leaf* gated = held("gated_linear_unit")) {
        const bool on = boolean(*gated);
        d.set("model.ffn_act", on ? "swiglu" : "gelu", gated->key, text_of(gated->node));
        if (const Leaf* f = held("activation_func"))
            d.report.mapped(f->key, text_of(f->node), "model.ffn_act", "with gated_linear_unit");
    } else if (d.has("model.layers")) {
        d.report.assumed("model.ffn_act", "gelu", "no activation: NeMo's default GELU");
    }
    if (!held("gated_linear_unit"))
        settle("activation_func", "without gated_linear_unit");
}

// The MLP width, dropout and embeddings, with NeMo's defaults for what is not given.
void NemoReader::finish_dropout_and_embeddings()
{
    ImportDraft& d = m_d;
    if (d.has("model.hidden") && !d.has("model.ffn_hidden")) {
        d.put("model.ffn_hidden", 4 * d.get_int("model.hidden", 1));
        d.report.assumed(
            "model.ffn_hidden", std::to_string(4 * d.get_int("model.hidden", 1)), "no ffn_hidden_size: 4h");
    }
    bool any_dropout = false;
    bool dropout_on = false;
    for (const char* key : { "hidden_dropout", "attention_dropout", "ffn_dropout" }) {
        if (const Leaf* l = held(key)) {
            any_dropout = true;
            dropout_on = dropout_on || number(*l) > 0;
            d.report.mapped(l->key, text_of(l->node), "model.dropout");
        }
    }
    if (d.has("model.layers")) {
        d.put("model.dropout", any_dropout ? dropout_on : true);
        if (!any_dropout)
            d.report.assumed("model.dropout", "true", "no dropout keys: NeMo's default 0.1");
        if (!d.has("model.tied_embeddings")) {
            d.put("model.tied_embeddings", true);
            d.report.assumed("model.tied_embeddings", "true", "NeMo's default share_embeddings_and_output_weights");
        }
    }
}

// Multi-latent attention and the head width (kv_channels).
void NemoReader::finish_attention()
{
    ImportDraft& d = m_d;
    const bool mla = held("multi_latent_attention") && boolean(*held("multi_latent_attention"));
    if (const Leaf* mla_key = held("multi_latent_attention")) {
        if (mla) {
            d.set("model.attention.kind", "mla", mla_key->key, text_of(mla_key->node));
            if (!d.has("model.attention.q_lora_rank"))
                d.put("model.attention.q_lora_rank", 0);
        } else {
            d.report.no_effect(mla_key->key, text_of(mla_key->node));
        }
    }
    if (const Leaf* kc = held("kv_channels")) {
        const long long heads = d.get_int("model.heads", 0);
        const long long width = integer(*kc, 1);
        if (mla)
            d.report.no_effect(
                kc->key, text_of(kc->node), "multi-latent attention's widths come from qk_head_dim / v_head_dim");
        else if (heads > 0 && width * heads != d.get_int("model.hidden", 0))
            d.set("model.head_dim", width, kc->key, text_of(kc->node), "heads x kv_channels differs from hidden");
        else
            d.report.mapped(kc->key, text_of(kc->node), "model.head_dim", "= hidden / heads");
    } else {
        settle("kv_channels", "= hidden / heads");
    }
}

void NemoReader::finish_moe()
{
    ImportDraft& d = m_d;
    if (!d.has("model.moe.experts")) {
        for (const char* key : { "moe_shared_expert_intermediate_size", "moe_layer_freq", "moe_token_dispatcher_type",
                 "moe_flex_dispatcher_backend", "moe_enable_deepep" })
            settle(key, "no experts");
        return;
    }
    if (!d.has("model.moe.expert_ffn_hidden"))
        d.put("model.moe.expert_ffn_hidden", d.get_int("model.ffn_hidden", 1));
    if (!d.has("model.moe.top_k")) {
        d.put("model.moe.top_k", 2);
        d.report.assumed("model.moe.top_k", "2", "Megatron's default moe_router_topk");
    }
    if (const Leaf* shared = held("moe_shared_expert_intermediate_size"))
        d.set("model.moe.shared_experts", integer(*shared, 1) / d.get_int("model.moe.expert_ffn_hidden", 1),
            shared->key, text_of(shared->node), "in units of the expert width");
    else
        settle("moe_shared_expert_intermediate_size", "no shared expert");
    if (const Leaf* freq = held("moe_layer_freq")) {
        if (freq->node.IsScalar()) {
            d.set("model.moe.moe_layer_freq", integer(*freq, 1), freq->key, text_of(freq->node));
        } else {
            long long dense = 0;
            while (dense < static_cast<long long>(freq->node.size()) && freq->node[dense].as<int>() == 0)
                ++dense;
            bool rest_moe = true;
            for (std::size_t i = static_cast<std::size_t>(dense); i < freq->node.size(); ++i)
                rest_moe = rest_moe && freq->node[i].as<int>() == 1;
            if (rest_moe)
                d.set("model.moe.first_dense_layers", dense, freq->key, text_of(freq->node),
                    "dense layers first, then every layer MoE");
            else
                d.report.not_modelled(
                    freq->key, text_of(freq->node), "a layer pattern other than dense-first then every layer MoE");
        }
    }
    const Leaf* type = held("moe_token_dispatcher_type");
    const Leaf* backend = held("moe_flex_dispatcher_backend");
    const Leaf* deepep = held("moe_enable_deepep");
    const bool flex_deepep = type && text_of(type->node) == "flex" && backend
        && (text_of(backend->node) == "deepep" || text_of(backend->node) == "hybridep");
    const bool on = flex_deepep || (deepep && boolean(*deepep));
    d.put("training.moe_dispatcher", on ? "deepep" : "all-to-all");
    for (const Leaf* l : { type, backend, deepep })
        if (l)
            d.report.mapped(l->key, text_of(l->node), "training.moe_dispatcher");
}

void NemoReader::finish_vocab()
{
    ImportDraft& d = m_d;
    const Leaf* pad = held("make_vocab_size_divisible_by");
    const Leaf* should_pad = held("should_pad_vocab");
    const bool padding = !should_pad || boolean(*should_pad);
    d.vocab_pad_multiple = padding ? static_cast<int>(pad ? integer(*pad, 1) : 128) : 0;
    for (const Leaf* l : { pad, should_pad })
        if (l)
            d.report.mapped(
                l->key, text_of(l->node), "model.vocab", padding ? "padded to a multiple of it x TP" : "no padding");
    const Leaf* hf = held("hf_model_id");
    const Leaf* tokenizer = m_held.count("model.tokenizer.type") ? &m_held.at("model.tokenizer.type") : nullptr;
    for (const Leaf* l : { hf, tokenizer }) {
        if (!l)
            continue;
        const auto known = known_tokenizer_vocab(text_of(l->node));
        if (!d.has("model.vocab") && known)
            d.set("model.vocab", *known, l->key, text_of(l->node), "that model's vocabulary");
        else
            d.report.no_effect(l->key, text_of(l->node),
                d.has("model.vocab") ? "the vocabulary is given"
                                     : "a tokenizer the importer does not know the size of");
    }
    d.vocab_key = tokenizer ? "model.tokenizer.type" : "model.vocab_size";
}

// NeMo: trainer.precision and model.fp8; Megatron-Bridge: mixed_precision.fp4 / fp8 / bf16 / fp16.
// Megatron-Bridge's registered mixed-precision recipes (megatron/bridge/training/mixed_precision.py
// MIXED_PRECISION_RECIPES), as `mixed_precision: NAME`: the matmul precision and the fp8 scaling.
struct NamedMixedPrecision {
    std::string_view name;
    std::string_view precision;
    std::string_view fp8_scaling; // empty: not fp8
};
constexpr NamedMixedPrecision kNamedMixedPrecision[] = {
    { "bf16_mixed", "bf16", "" },
    { "fp16_mixed", "fp16", "" },
    { "bf16_with_fp8_delayed_scaling_mixed", "fp8", "delayed" },
    { "fp16_with_fp8_delayed_scaling_mixed", "fp8", "delayed" },
    { "bf16_with_fp8_current_scaling_mixed", "fp8", "tensorwise" },
    { "fp16_with_fp8_current_scaling_mixed", "fp8", "tensorwise" },
    { "bf16_with_mxfp8_mixed", "fp8", "mxfp8" },
    { "fp16_with_mxfp8_mixed", "fp8", "mxfp8" },
    { "bf16_with_fp8_subchannel_scaling_mixed", "fp8", "blockwise" },
    { "fp16_with_fp8_subchannel_scaling_mixed", "fp8", "blockwise" },
    { "bf16_with_nvfp4_mixed", "fp4", "" },
};

void NemoReader::take_named_recipe()
{
    const auto it = m_held.find("mixed_precision");
    if (it == m_held.end())
        return;
    const Leaf& l = it->second;
    const std::string v = text_of(l.node);
    for (const NamedMixedPrecision& r : kNamedMixedPrecision) {
        if (r.name != v)
            continue;
        m_d.set("training.precision", std::string(r.precision), l.key, v);
        if (!r.fp8_scaling.empty())
            m_d.put("training.fp8_scaling", std::string(r.fp8_scaling));
        m_named_precision = r.precision;
        return;
    }
    m_d.report.not_modelled(l.key, v, "not a recipe Megatron-Bridge registers: costed from the other keys");
}

void NemoReader::finish_precision()
{
    ImportDraft& d = m_d;
    std::string precision;
    std::string source;
    const auto take = [&](const std::string& key, const std::string& value) {
        if (const auto it = m_held.find(key); it != m_held.end() && precision.empty() && !is_off(it->second.node)) {
            precision = value;
            source = key;
        }
    };
    if (m_bridge) {
        take_named_recipe();
        take("mixed_precision.fp4", "fp4");
        take("mixed_precision.fp8", "fp8");
        take("mixed_precision.bf16", "bf16");
        take("mixed_precision.fp16", "fp16");
    } else {
        take("fp8", "fp8");
        if (const auto it = m_held.find("trainer.precision"); it != m_held.end() && precision.empty()) {
            const std::string v = text_of(it->second.node);
            precision = v.rfind("bf16", 0) == 0 ? "bf16" : v.rfind("16", 0) == 0 ? "fp16" : "";
            source = "trainer.precision";
            if (precision.empty())
                d.report.not_modelled("trainer.precision", v, "fp32 training is not modelled: costed as bf16");
        }
    }
    for (const char* key :
        { "mixed_precision.fp4", "mixed_precision.fp8", "mixed_precision.bf16", "mixed_precision.fp16", "fp8",
            "trainer.precision", "fp8_hybrid", "fp8_e4m3", "mixed_precision.fp8_recipe" }) {
        const auto it = m_held.find(key);
        if (it == m_held.end() || (key == source && precision.empty()))
            continue;
        const std::string v = text_of(it->second.node);
        if (std::string(key) == "mixed_precision.fp8_recipe") {
            if (precision == "fp8" && (v == "delayed" || v == "tensorwise" || v == "mxfp8" || v == "blockwise")) {
                d.set("training.fp8_scaling", v, it->second.key, v);
            } else if (precision != "fp8")
                d.report.mapped(it->second.key, v, "training.fp8_scaling", "fp8 is off");
            else
                d.report.not_modelled(it->second.key, v, "costed as tensor-wise fp8 scaling");
            continue;
        }
        if (key == source)
            d.report.mapped(it->second.key, v, "training.precision");
        else if (is_off(it->second.node))
            d.report.no_effect(it->second.key, v, "off");
        else
            d.report.mapped(it->second.key, v, "training.precision",
                "the matmuls run in " + (precision.empty() ? std::string("bf16") : precision));
    }
    if (precision.empty() && !m_named_precision.empty())
        return; // the named recipe set it
    if (precision.empty()) {
        precision = "bf16";
        d.report.assumed("training.precision", "bf16", "no mixed precision set: costed as bf16");
    }
    d.put("training.precision", precision);
}

// Recompute: NeMo's activations_checkpoint_* or Megatron-core's recompute_* keys.
void NemoReader::finish_recompute()
{
    ImportDraft& d = m_d;
    const Leaf* granularity
        = held("recompute_granularity") ? held("recompute_granularity") : held("activations_checkpoint_granularity");
    for (const char* key : { "recompute_granularity", "activations_checkpoint_granularity" })
        if (m_held.count(key) && !held(key))
            d.set("strategy.recompute", "none", m_held.at(key).key, "null");
    if (granularity) {
        const std::string v = text_of(granularity->node);
        if (v != "full" && v != "selective")
            throw InputError(file(), granularity->key, "must be full, selective or null, found \"" + v + "\"");
        d.set("strategy.recompute", v, granularity->key, v);
    }
    for (const char* key : { "recompute_method", "activations_checkpoint_method", "recompute_num_layers",
             "activations_checkpoint_num_layers" })
        if (const auto it = m_held.find(key); it != m_held.end()) {
            if (is_off(it->second.node))
                d.report.no_effect(it->second.key, text_of(it->second.node), "not set");
            else
                d.report.mapped(it->second.key, text_of(it->second.node), "strategy.recompute",
                    "full recompute is costed for every layer");
        }
}

// The distributed optimizer, FSDP and the optimizer itself.
void NemoReader::finish_optimizer()
{
    ImportDraft& d = m_d;
    if (const auto it = m_held.find("model.optim.name"); it != m_held.end()) {
        const std::string v = text_of(it->second.node);
        const bool distributed = v.find("distributed") != std::string::npos;
        d.set("strategy.zero", distributed ? 1 : 0, it->second.key, v, distributed ? "the distributed optimizer" : "");
    }
    const Leaf* fsdp = held("ddp.use_megatron_fsdp") ? held("ddp.use_megatron_fsdp") : held("ddp.use_custom_fsdp");
    if (const Leaf* dist = held("ddp.use_distributed_optimizer"); dist && !(fsdp && boolean(*fsdp)))
        d.set("strategy.zero", boolean(*dist) ? 1 : 0, dist->key, text_of(dist->node));
    if (fsdp && boolean(*fsdp)) {
        const Leaf* sharding = held("ddp.data_parallel_sharding_strategy");
        const std::string v = sharding ? text_of(sharding->node) : "optim_grads_params";
        d.set("strategy.zero",
            v == "no_shard"          ? 0
                : v == "optim"       ? 1
                : v == "optim_grads" ? 2
                                     : 3,
            fsdp->key, "true", "FSDP: " + v);
    }
    for (const char* key : { "ddp.use_megatron_fsdp", "ddp.use_custom_fsdp", "ddp.data_parallel_sharding_strategy",
             "ddp.use_distributed_optimizer" })
        if (m_held.count(key) && (!fsdp || !boolean(*fsdp)) && std::string(key) != "ddp.use_distributed_optimizer")
            d.report.no_effect(m_held.at(key).key, text_of(m_held.at(key).node), "no FSDP");
    if (const Leaf* opt = held("optimizer.optimizer")) {
        const std::string v = text_of(opt->node);
        if (v == "adam" || v == "sgd")
            d.set("strategy.optimizer", v, opt->key, v);
        else
            d.report.not_modelled(opt->key, v, "costed as Adam");
    }
}

// CUDA graphs, the sequence length of the data section, the framework.
void NemoReader::finish_runtime()
{
    ImportDraft& d = m_d;
    const Leaf* impl = held("cuda_graph_impl");
    const Leaf* scope = held("cuda_graph_scope");
    const Leaf* enable = held("enable_cuda_graph");
    const bool graphs = (impl && text_of(impl->node) != "none") || (enable && boolean(*enable));
    const bool full = graphs && scope && text_of(scope->node) == "full_iteration";
    d.put("training.cuda_graphs", graphs ? (full ? "full-iteration" : "layers") : "none");
    for (const Leaf* l : { impl, scope, enable })
        if (l)
            d.report.mapped(l->key, text_of(l->node), "training.cuda_graphs");
    for (const char* key : { "model.data.seq_length", "dataset.sequence_length" }) {
        if (const auto it = m_held.find(key); it != m_held.end()) {
            if (d.has("training.seq_len"))
                d.report.no_effect(it->second.key, text_of(it->second.node), "the model's sequence length is given");
            else
                d.set("training.seq_len", integer(it->second, 1), it->second.key, text_of(it->second.node));
        }
    }
    d.put("training.framework", "megatron");
    d.report.assumed(
        "training.framework", "megatron", m_bridge ? "Megatron-Bridge runs Megatron-core" : "NeMo runs Megatron-core");
}

void NemoReader::finish()
{
    finish_activation();
    finish_dropout_and_embeddings();
    finish_attention();
    finish_moe();
    finish_vocab();
    finish_precision();
    finish_recompute();
    finish_optimizer();
    finish_runtime();
}

} // namespace

bool looks_like_nemo_yaml(const std::string& text)
{
    return text.find("tensor_model_parallel_size") != std::string::npos
        || text.find("megatron.bridge.training.config.ConfigContainer") != std::string::npos;
}

namespace {

ImportDraft read_root(const YAML::Node& root, const std::string& file)
{
    if (!root.IsMap())
        throw InputError(file, "", "a NeMo or Megatron-Bridge config is a YAML mapping");
    ImportDraft d;
    d.report.format = "nemo-yaml";
    d.report.file = file;
    d.model_key = "model.num_layers";
    d.seq_len_key = root["train"] ? "model.seq_length" : "model.encoder_seq_length";
    // A Megatron-Bridge ConfigContainer: dumped whole it names its class; an override file (what recipes
    // take with --config-file, and what `export` writes) has Bridge's own `train` section and no NeMo
    // launcher `trainer`.
    const bool bridge
        = (root["_target_"] && root["_target_"].as<std::string>().find("ConfigContainer") != std::string::npos)
        || (root["train"] && root["train"].IsMap() && root["model"] && !root["trainer"]);
    std::vector<Leaf> leaves;
    flatten(root, "", leaves);
    NemoReader reader(d, bridge);
    for (const Leaf& l : leaves)
        reader.read(l);
    reader.finish();
    if (d.has("model.layers"))
        d.put("model.name", std::filesystem::path(file).stem().string());
    return d;
}

} // namespace

// A value of the wrong type deep in a reader (a list where a number belongs) is the file's error too.
ImportDraft read_nemo_yaml(const std::string& text, const std::string& file)
{
    try {
        return read_root(YAML::Load(text), file);
    } catch (const YAML::Exception& e) {
        if (e.mark.is_null())
            throw InputError(file, "", "unexpected value: " + e.msg);
        throw InputError(file, "line " + std::to_string(e.mark.line + 1), e.msg);
    }
}

} // namespace parallax

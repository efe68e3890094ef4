#include "io/import/hf_config.hpp"

#include "spec/input_error.hpp"

#include <algorithm>
#include <array>
#include <filesystem>
#include <iterator>
#include <set>
#include <string_view>

namespace parallax {

using nlohmann::json;

namespace {

// Keys that describe the checkpoint, the tokenizer, numerics or inference, not the training step's cost.
constexpr std::string_view kNoEffectKeys[] = { "architectures", "model_type", "_name_or_path", "auto_map",
    "bos_token_id", "eos_token_id", "pad_token_id", "torch_dtype", "dtype", "transformers_version", "use_cache",
    "initializer_range", "rms_norm_eps", "layer_norm_eps", "layer_norm_epsilon", "rope_theta", "rope_scaling",
    "rope_parameters", "max_position_embeddings", "initial_context_length", "pretraining_tp", "quantization_config",
    "output_router_logits", "router_aux_loss_coef", "router_jitter_noise", "norm_topk_prob", "scoring_func",
    "topk_method", "n_group", "topk_group", "routed_scaling_factor", "aux_loss_alpha", "seq_aux", "ep_size",
    "swiglu_limit", "max_window_layers", "use_sliding_window" };

// Model families whose MLP is gated (gate_proj * act(up_proj)): their SiLU or GELU is a GLU.
constexpr std::string_view kGatedFamilies[]
    = { "llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "deepseek", "deepseek_v2",
          "deepseek_v3", "gemma", "gemma2", "gemma3_text", "gpt_oss", "phi3", "olmo", "olmo2", "granite", "cohere" };

std::string value_text(const json& v)
{
    return v.is_string() ? v.get<std::string>() : v.dump();
}

// Reads keys of one config object and remembers which it used; the rest are reported at the end.
class HfReader {
public:
    HfReader(const json& config, const std::string& file, ImportDraft& draft)
        : m_config(config)
        , m_file(file)
        , m_draft(draft)
    {
    }

    // The value of `key`, marked as read; nullptr (and not marked) when absent or null.
    const json* raw(const std::string& key)
    {
        const json* v = raw_const(key);
        if (v)
            m_used.insert(key);
        return v;
    }
    void mark(const std::string& key) { m_used.insert(key); }
    bool present(const std::string& key) const { return raw_const(key) != nullptr; }
    long long positive(const std::string& key)
    {
        const json* v = raw(key);
        if (!v)
            throw InputError(m_file, key, "missing: a Hugging Face model config gives it");
        if (!v->is_number_integer() || v->get<long long>() < 1)
            throw InputError(m_file, key, "must be a positive integer, found " + value_text(*v));
        return v->get<long long>();
    }
    long long map_int(const std::string& key, std::string_view target, std::string note = {})
    {
        const long long n = positive(key);
        m_draft.set(target, n, key, std::to_string(n), std::move(note));
        return n;
    }
    void no_effect(const std::string& key, std::string note = {})
    {
        if (const auto it = m_config.find(key); it != m_config.end() && !used(key))
            m_draft.report.no_effect(key, value_text(*it), std::move(note));
        m_used.insert(key);
    }
    void not_modelled(const std::string& key, std::string why)
    {
        if (const auto it = m_config.find(key); it != m_config.end() && !used(key))
            m_draft.report.not_modelled(key, value_text(*it), std::move(why));
        m_used.insert(key);
    }
    bool used(const std::string& key) const { return m_used.count(key) > 0; }
    const json& config() const { return m_config; }
    const std::string& file() const { return m_file; }
    ImportDraft& draft() { return m_draft; }

private:
    const json* raw_const(const std::string& key) const
    {
        const auto it = m_config.find(key);
        return it == m_config.end() || it->is_null() ? nullptr : &*it;
    }

    const json& m_config;
    const std::string& m_file;
    ImportDraft& m_draft;
    std::set<std::string> m_used;
};

std::string model_type(const json& config)
{
    const auto it = config.find("model_type");
    return it != config.end() && it->is_string() ? it->get<std::string>() : std::string();
}

bool gated_family(const std::string& type)
{
    return std::find(std::begin(kGatedFamilies), std::end(kGatedFamilies), type) != std::end(kGatedFamilies);
}

// hidden_act: a gated family's SiLU/GELU is a GLU, costed as SwiGLU (the same three GEMMs).
void read_activation(HfReader& r, const std::string& type)
{
    const std::string key = r.config().contains("activation_function") ? "activation_function" : "hidden_act";
    const json* act = r.raw(key);
    const std::string name = act && act->is_string() ? act->get<std::string>() : std::string();
    const bool gated = gated_family(type) || name == "silu" || name == "swish";
    if (!act) {
        r.draft().put("model.ffn_act", gated ? "swiglu" : "gelu");
        r.draft().report.assumed("model.ffn_act", gated ? "swiglu" : "gelu",
            "the config gives no hidden_act; " + (type.empty() ? std::string("GELU") : type + "'s MLP"));
        return;
    }
    std::string note;
    if (gated && name != "silu" && name != "swish")
        note = "a gated " + name + " MLP (GeGLU) has SwiGLU's GEMM shapes";
    r.draft().set("model.ffn_act", gated ? "swiglu" : "gelu", key, name, note);
}

// Layers, widths, heads, vocabulary, head size, embeddings.
void read_shape(HfReader& r)
{
    ImportDraft& d = r.draft();
    r.map_int("num_hidden_layers", "model.layers");
    const long long hidden = r.map_int("hidden_size", "model.hidden");
    const long long heads = r.map_int("num_attention_heads", "model.heads");
    if (r.present("num_key_value_heads"))
        r.map_int("num_key_value_heads", "model.kv_heads");
    else
        d.report.assumed("model.kv_heads", std::to_string(heads), "no num_key_value_heads: multi-head attention");
    r.map_int("intermediate_size", "model.ffn_hidden");
    r.map_int("vocab_size", "model.vocab");
    if (r.present("head_dim")) {
        const long long head_dim = r.positive("head_dim");
        if (head_dim * heads != hidden)
            d.set("model.head_dim", head_dim, "head_dim", std::to_string(head_dim),
                "heads x head_dim = " + std::to_string(head_dim * heads) + " differs from hidden_size");
        else
            d.report.mapped("head_dim", std::to_string(head_dim), "model.head_dim", "= hidden_size / heads");
    }
    if (const json* tie = r.raw("tie_word_embeddings"); tie && tie->is_boolean())
        d.set("model.tied_embeddings", tie->get<bool>(), "tie_word_embeddings", tie->dump());
    else {
        d.put("model.tied_embeddings", true);
        d.report.assumed("model.tied_embeddings", "true", "no tie_word_embeddings: transformers' default ties them");
    }
}

// Dropout: off when every dropout probability the config gives is 0.
void read_dropout(HfReader& r)
{
    static constexpr std::array<const char*, 6> kKeys
        = { "attention_dropout", "hidden_dropout", "resid_pdrop", "attn_pdrop", "embd_pdrop", "dropout" };
    bool any_given = false;
    bool any_on = false;
    for (const char* key : kKeys) {
        const json* v = r.raw(key);
        if (!v || !v->is_number())
            continue;
        any_given = true;
        any_on = any_on || v->get<double>() > 0;
        r.draft().set("model.dropout", any_on, key, v->dump());
    }
    if (!any_given)
        return;
    r.draft().put("model.dropout", any_on);
}

// Multi-head latent attention (DeepSeek-V2/V3): the latent ranks and the per-head widths.
void read_mla(HfReader& r)
{
    if (!r.present("kv_lora_rank"))
        return;
    ImportDraft& d = r.draft();
    d.put("model.attention.kind", "mla");
    if (r.present("q_lora_rank"))
        r.map_int("q_lora_rank", "model.attention.q_lora_rank");
    else {
        r.mark("q_lora_rank");
        d.set("model.attention.q_lora_rank", 0, "q_lora_rank", "null", "no query compression");
    }
    r.map_int("kv_lora_rank", "model.attention.kv_lora_rank");
    r.map_int("qk_nope_head_dim", "model.attention.qk_nope_head_dim");
    r.map_int("qk_rope_head_dim", "model.attention.qk_rope_head_dim");
    r.map_int("v_head_dim", "model.attention.v_head_dim");
}

// The number of routed experts under the family's key name, or 0 for a dense model.
std::string experts_key(const json& config)
{
    for (const char* key : { "n_routed_experts", "num_local_experts", "num_experts" }) {
        const auto it = config.find(key);
        if (it != config.end() && it->is_number_integer() && it->get<long long>() > 0)
            return key;
    }
    return {};
}

// Which layers are MoE: DeepSeek's first_k_dense_replace / moe_layer_freq, Qwen's decoder_sparse_step /
// mlp_only_layers.
void read_moe_layers(HfReader& r)
{
    ImportDraft& d = r.draft();
    if (const json* v = r.raw("first_k_dense_replace")) {
        if (!v->is_number_integer() || v->get<long long>() < 0)
            throw InputError(r.file(), "first_k_dense_replace", "must be a non-negative integer, found " + v->dump());
        d.set("model.moe.first_dense_layers", v->get<long long>(), "first_k_dense_replace", v->dump());
    }
    if (r.present("moe_layer_freq"))
        r.map_int("moe_layer_freq", "model.moe.moe_layer_freq");
    if (const json* step = r.raw("decoder_sparse_step")) {
        if (step->is_number_integer() && step->get<long long>() == 1)
            d.set("model.moe.moe_layer_freq", 1, "decoder_sparse_step", "1", "every layer sparse");
        else
            r.not_modelled("decoder_sparse_step",
                "Qwen counts sparse layers from the step's end ((i+1) % step == 0); Parallax's moe_layer_freq counts "
                "from "
                "the first layer");
    }
    if (const json* dense = r.raw("mlp_only_layers")) {
        if (dense->is_array() && dense->empty())
            d.report.mapped("mlp_only_layers", "[]", "model.moe.first_dense_layers", "no dense layers");
        else
            r.not_modelled("mlp_only_layers", "an arbitrary list of dense layers; Parallax places them first only");
    }
}

// Experts, top-k, expert width and shared experts.
void read_moe(HfReader& r)
{
    const std::string key = experts_key(r.config());
    if (key.empty())
        return;
    ImportDraft& d = r.draft();
    r.map_int(key, "model.moe.experts");
    const std::string topk = r.present("num_experts_per_tok") ? "num_experts_per_tok" : "experts_per_token";
    r.map_int(topk, "model.moe.top_k");
    if (topk == "num_experts_per_tok" && r.present("experts_per_token"))
        r.no_effect("experts_per_token", "repeats num_experts_per_tok");
    long long expert_width = 0;
    if (r.present("moe_intermediate_size"))
        expert_width = r.map_int("moe_intermediate_size", "model.moe.expert_ffn_hidden");
    else {
        expert_width = d.get_int("model.ffn_hidden", 0);
        d.put("model.moe.expert_ffn_hidden", expert_width);
        d.report.assumed("model.moe.expert_ffn_hidden", std::to_string(expert_width),
            "no moe_intermediate_size: each expert is an MLP of intermediate_size (Mixtral, GPT-OSS)");
    }
    if (r.present("n_shared_experts"))
        r.map_int("n_shared_experts", "model.moe.shared_experts");
    if (const json* shared = r.raw("shared_expert_intermediate_size"); shared && shared->is_number_integer()) {
        const long long n = expert_width > 0 ? shared->get<long long>() / expert_width : 0;
        d.set("model.moe.shared_experts", n, "shared_expert_intermediate_size", shared->dump(),
            "in units of moe_intermediate_size");
    }
    read_moe_layers(r);
}

// Sliding-window attention: a window on every layer (Mistral) or alternating with full layers (GPT-OSS
// layer_types), as "every k-th layer attends fully".
void read_window(HfReader& r)
{
    ImportDraft& d = r.draft();
    const json* window = r.raw("sliding_window");
    const auto use = r.config().find("use_sliding_window"); // reported with the keys that have no effect
    const json* types = r.raw("layer_types");
    if (!window || !window->is_number_integer()
        || (use != r.config().end() && use->is_boolean() && !use->get<bool>())) {
        r.mark("sliding_window");
        r.draft().report.no_effect("sliding_window", window ? window->dump() : "null", "no sliding window in use");
        if (types)
            r.draft().report.not_modelled("layer_types", "[...]", "layer kinds without a sliding window");
        return;
    }
    d.set("model.sliding_window", window->get<long long>(), "sliding_window", window->dump());
    if (!types) {
        d.put("model.full_attention_every", 0);
        return;
    }
    int every = 0;
    bool regular = types->is_array() && !types->empty();
    for (std::size_t i = 0; regular && i < types->size(); ++i) {
        const bool full = (*types)[i] == "full_attention";
        if (full && every == 0)
            every = static_cast<int>(i + 1);
        regular = every == 0 ? !full : full == ((i + 1) % static_cast<std::size_t>(every) == 0);
    }
    if (!regular)
        throw InputError(r.file(), "layer_types",
            "the full-attention layers must recur every k-th layer (as in GPT-OSS) for Parallax to model them");
    d.set("model.full_attention_every", every, "layer_types", "[" + std::to_string(types->size()) + " layer kinds]",
        every == 0 ? "every layer windowed" : "every " + std::to_string(every) + "th layer attends fully");
}

// What the family implies beyond the keys: GPT-OSS's learned attention sinks (OpenAI gpt-oss model card)
// and its YaRN rotary embeddings (HF config rope_scaling).
void read_family(HfReader& r, const std::string& type)
{
    if (type == "gpt_oss") {
        r.draft().set(
            "model.attention_sinks", true, "model_type", type, "gpt-oss has learned per-head attention sinks");
        r.draft().set("model.yarn_rope", true, "model_type", type,
            "gpt-oss uses YaRN rotary embeddings (rope_scaling rope_type yarn), which Megatron runs unfused");
        r.draft().set("model.expert_bias", true, "model_type", type,
            "gpt-oss's experts carry biases (gate_up_proj_bias, down_proj_bias), which Megatron adds eagerly");
        r.not_modelled("attention_bias", "the attention projections' biases are not costed");
    }
}

// Every key not read above: known to be irrelevant, or not modelled.
void report_remaining(HfReader& r)
{
    for (const auto& [key, value] : r.config().items()) {
        if (r.used(key))
            continue;
        if (std::find(std::begin(kNoEffectKeys), std::end(kNoEffectKeys), key) != std::end(kNoEffectKeys))
            r.no_effect(key);
        else if (key == "num_nextn_predict_layers")
            r.not_modelled(key, "the multi-token-prediction module is not part of the modelled step");
        else if (key == "attention_bias" || key == "mlp_bias" || key == "qkv_bias")
            r.not_modelled(key,
                value.is_boolean() && !value.get<bool>() ? "no biases (not costed either way)"
                                                         : "biases are not costed");
        else if (key == "text_config" || key == "vision_config")
            r.not_modelled(key, "multimodal parts are not modelled; import the language model's own config");
        else
            r.not_modelled(key, "not known to the importer");
    }
}

std::string model_name(const json& config, const std::string& file)
{
    if (const auto it = config.find("_name_or_path"); it != config.end() && it->is_string() && !it->empty())
        return std::filesystem::path(it->get<std::string>()).filename().string();
    const std::string stem = std::filesystem::path(file).stem().string();
    if (!stem.empty() && stem != "config" && stem != "-")
        return stem;
    const std::string type = model_type(config);
    return type.empty() ? std::string("imported-model") : type;
}

} // namespace

bool looks_like_hf_config(const json& j)
{
    return j.is_object() && j.contains("num_hidden_layers") && j.contains("hidden_size")
        && (j.contains("architectures") || j.contains("model_type") || j.contains("num_attention_heads"));
}

ImportDraft read_hf_config(const json& config, const std::string& file)
{
    if (!config.is_object())
        throw InputError(file, "", "a Hugging Face config.json is a JSON object");
    ImportDraft d;
    d.report.format = "hf-config";
    d.report.file = file;
    d.model_only = true;
    d.model_key = "config.json";
    d.put("model.name", model_name(config, file));
    HfReader r(config, file, d);
    const std::string type = model_type(config);
    read_shape(r);
    read_activation(r, type);
    read_dropout(r);
    read_mla(r);
    read_moe(r);
    read_window(r);
    read_family(r, type);
    report_remaining(r);
    return d;
}

} // namespace parallax

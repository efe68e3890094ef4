#include "io/import/import_model.hpp"

#include "io/import/hf_config.hpp"
#include "io/json_reader.hpp"
#include "io/scenario_io.hpp"
#include "spec/input_error.hpp"

#include <filesystem>

namespace parallax {

using nlohmann::json;

namespace {

bool same_mla(const std::optional<MlaSpec>& a, const std::optional<MlaSpec>& b)
{
    if (a.has_value() != b.has_value())
        return false;
    return !a
        || (a->q_lora_rank == b->q_lora_rank && a->kv_lora_rank == b->kv_lora_rank
            && a->qk_nope_head_dim == b->qk_nope_head_dim && a->qk_rope_head_dim == b->qk_rope_head_dim
            && a->v_head_dim == b->v_head_dim);
}

bool same_moe(const ModelSpec& a, const ModelSpec& b)
{
    if (a.is_moe() != b.is_moe())
        return false;
    if (!a.is_moe())
        return true;
    const MoeSpec& x = *a.moe;
    const MoeSpec& y = *b.moe;
    return x.experts == y.experts && x.top_k == y.top_k && x.expert_ffn_hidden == y.expert_ffn_hidden
        && x.shared_experts == y.shared_experts && x.moe_layer_freq == y.moe_layer_freq
        && x.first_dense_layers == y.first_dense_layers && x.capacity_factor == y.capacity_factor;
}

// Everything that sets the cost, except the vocabulary.
bool same_shape(const ModelSpec& a, const ModelSpec& b)
{
    return a.layers == b.layers && a.hidden == b.hidden && a.heads == b.heads && a.kv_heads == b.kv_heads
        && a.ffn_hidden == b.ffn_hidden && a.ffn_act == b.ffn_act && a.tied_embeddings == b.tied_embeddings
        && a.has_dropout() == b.has_dropout() && a.head_dim() == b.head_dim() && a.sliding_window == b.sliding_window
        && a.full_attention_every == b.full_attention_every && a.attention_sinks == b.attention_sinks
        && a.yarn_rope == b.yarn_rope && a.expert_bias == b.expert_bias && same_mla(a.mla, b.mla) && same_moe(a, b);
}

// The scenario key of a model-section error ("model.moe.top_k") back to the input key that set it.
[[noreturn]] void rethrow_with_input_key(const InputError& e, const ImportDraft& draft, const std::string& file)
{
    const std::string source = draft.report.source_of(e.key());
    throw InputError(file, source.empty() ? e.key() : source + " (" + e.key() + ")", e.rule());
}

ModelSpec parse_draft_model(const json& model, const ImportDraft& draft, const std::string& file)
{
    try {
        return parse_model(model, file, "model");
    } catch (const InputError& e) {
        rethrow_with_input_key(e, draft, file);
    }
}

// --model: a preset name, or a Hugging Face config.json whose model replaces the file's.
json model_from_option(ImportDraft& draft, const std::string& option, const PresetCatalog& catalog)
{
    if (catalog.find(PresetKind::models, option)) {
        draft.report.assumed("model", option, "--model names this preset");
        return option;
    }
    std::error_code ec;
    if (!std::filesystem::is_regular_file(option, ec)) {
        std::string rule = "neither a model preset nor a readable Hugging Face config.json";
        const std::string guess = closest_match(option, catalog.names(PresetKind::models));
        if (!guess.empty())
            rule += " (did you mean \"" + guess + "\"?)";
        throw InputError(option, "--model", rule + "; `parallax-cli presets models` lists the presets");
    }
    ImportDraft hf = read_hf_config(parse_json_text(read_text_file(option), option), option);
    const std::string label = std::filesystem::path(option).filename().string();
    for (ImportEntry e : hf.report.entries()) {
        e.key = label + ": " + e.key;
        if (e.outcome == ImportOutcome::assumed)
            draft.report.assumed(e.target, e.value, e.note);
        else if (e.outcome == ImportOutcome::mapped)
            draft.report.mapped(e.key, e.value, e.target, e.note);
        else if (e.outcome == ImportOutcome::no_effect)
            draft.report.no_effect(e.key, e.value, e.note);
        else
            draft.report.not_modelled(e.key, e.value, e.note);
    }
    draft.parts["model"] = hf.parts["model"];
    return json();
}

} // namespace

json finish_import_model(ImportDraft& draft, const ImportOptions& options, const PresetCatalog& catalog)
{
    const std::string& file = draft.report.file;
    if (!options.model.empty()) {
        json named = model_from_option(draft, options.model, catalog);
        if (!named.is_null())
            return named;
    } else if (!draft.model_preset.empty()) {
        return draft.model_preset;
    } else if (!draft.model_preset_candidate.empty()
        && catalog.find(PresetKind::models, draft.model_preset_candidate) != nullptr) {
        draft.report.assumed("model", draft.model_preset_candidate,
            "the file's model is named like this Parallax preset (a flavour registered under its name)");
        return draft.model_preset_candidate;
    }
    json& model = draft.parts["model"];
    if (!model.contains("layers"))
        throw InputError(file, draft.model_key.empty() ? std::string("model") : draft.model_key,
            "the file does not describe the model: give --model PRESET (`parallax-cli presets models`) or --model "
            "config.json (a Hugging Face config)");
    const long long pad = draft.vocab_pad_multiple * draft.get_int("strategy.tp", 1);
    const bool vocab_known = model.contains("vocab");
    json probe = model;
    if (!vocab_known)
        probe["vocab"] = 1;
    const ModelSpec m = parse_draft_model(probe, draft, file);
    if (const PresetEntry* p = matching_model_preset(m, pad, !vocab_known, catalog)) {
        std::string why = "the imported model has this preset's shape (layers, widths, heads, attention, MoE)";
        const long long preset_vocab = p->json.value("vocab", 0LL);
        if (!vocab_known)
            why += "; the vocabulary (" + std::to_string(preset_vocab) + ") is the preset's: the file does not give it";
        else if (preset_vocab != m.vocab)
            why += "; the preset's vocabulary " + std::to_string(preset_vocab) + " is " + std::to_string(m.vocab)
                + " padded to a multiple of " + std::to_string(pad) + " as Megatron-LM pads it";
        draft.report.assumed("model", p->name, why);
        return p->name;
    }
    if (!vocab_known)
        throw InputError(file, draft.vocab_key.empty() ? std::string("vocab") : draft.vocab_key,
            "the vocabulary size is unknown and no model preset has this shape: give the vocabulary size in the file "
            "(e.g. --vocab-size) or the model with --model");
    if (pad > 0 && padded_vocab(m.vocab, pad) != m.vocab) {
        model["vocab"] = padded_vocab(m.vocab, pad);
        draft.report.assumed("model.vocab", std::to_string(padded_vocab(m.vocab, pad)),
            std::to_string(m.vocab) + " padded to a multiple of " + std::to_string(pad)
                + " (--make-vocab-size-divisible-by x TP), as Megatron-LM pads it");
    }
    return model;
}

long long padded_vocab(long long vocab, long long multiple)
{
    return multiple > 0 ? (vocab + multiple - 1) / multiple * multiple : vocab;
}

const PresetEntry* matching_model_preset(
    const ModelSpec& m, long long vocab_pad, bool ignore_vocab, const PresetCatalog& catalog)
{
    for (const PresetEntry* e : catalog.entries(PresetKind::models)) {
        ModelSpec p;
        try {
            p = parse_model(e->json, e->origin, "");
        } catch (const InputError&) {
            continue; // a broken user preset matches nothing
        }
        const bool vocab_ok = ignore_vocab || p.vocab == m.vocab || p.vocab == padded_vocab(m.vocab, vocab_pad);
        if (vocab_ok && same_shape(p, m))
            return e;
    }
    return nullptr;
}

} // namespace parallax

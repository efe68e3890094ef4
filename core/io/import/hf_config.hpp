#pragma once
// Hugging Face config.json -> the model section (Llama, Mistral/Mixtral, Qwen2/3 dense and MoE,
// DeepSeek-V2/V3 with MLA, GPT-OSS with sliding-window alternation and attention sinks, GPT-2-style).
#include "io/import/import_draft.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace parallax {

// Fills draft.parts["model"] and reports every key of the config. Throws InputError naming the file
// and the key when the config lacks the shape or contradicts itself.
ImportDraft read_hf_config(const nlohmann::json& config, const std::string& file);
// True when `j` looks like a Hugging Face model config (the detector's rule).
bool looks_like_hf_config(const nlohmann::json& j);

} // namespace parallax

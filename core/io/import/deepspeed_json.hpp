#pragma once
// A DeepSpeed config JSON (ds_config.json): batch arithmetic, ZeRO stage and offload, precision, and the
// tensor/sequence/pipeline degrees where the config gives them. It holds no model: --model gives it.
#include "io/import/import_draft.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace parallax {

ImportDraft read_deepspeed_json(const nlohmann::json& config, const std::string& file);
bool looks_like_deepspeed_json(const nlohmann::json& j);

} // namespace parallax

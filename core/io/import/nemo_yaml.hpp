#pragma once
// NeMo YAML training configs: NeMo 1.x / NeMo-Framework-Launcher (trainer: nodes and devices, model:
// Megatron's settings under NeMo's names) and Megatron-Bridge's ConfigContainer dumps (model, train,
// ddp, optimizer, mixed_precision, comm_overlap, dataset sections).
#include "io/import/import_draft.hpp"

#include <string>

namespace parallax {

ImportDraft read_nemo_yaml(const std::string& text, const std::string& file);
bool looks_like_nemo_yaml(const std::string& text);

} // namespace parallax

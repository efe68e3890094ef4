#pragma once
// The imported model as the scenario names it: a preset (named by the input, by --model, or because the
// input's shape equals a preset's) or an inline model object.
#include "io/import/import_draft.hpp"
#include "io/preset_catalog.hpp"
#include "spec/model_spec.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace parallax {

// The scenario's "model" value for `draft` (a preset name or an inline object). Reports the choice; throws
// InputError naming the file and the input key when the model is missing or incomplete.
nlohmann::json finish_import_model(ImportDraft& draft, const ImportOptions& options, const PresetCatalog& catalog);

// A model preset with `m`'s shape (layers, widths, heads, attention, MoE, dropout): its vocabulary equal
// to `m`'s or to `m`'s padded to a multiple of `vocab_pad` (Megatron's padding; 0 = none), or any when
// `ignore_vocab`. nullptr when none.
const PresetEntry* matching_model_preset(
    const ModelSpec& m, long long vocab_pad, bool ignore_vocab, const PresetCatalog& catalog);

// Megatron-LM's padded vocabulary: a multiple of `multiple` (--make-vocab-size-divisible-by x TP).
long long padded_vocab(long long vocab, long long multiple);

} // namespace parallax

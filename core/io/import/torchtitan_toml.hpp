#pragma once
// A torchtitan job config (train_configs/*.toml): [model] name/flavor as a model preset, [training]
// batch and sequence, [parallelism] degrees and schedule, [activation_checkpoint], [compile], [float8].
#include "io/import/import_draft.hpp"

#include <string>

namespace parallax {

// Reports every key of every table. Throws InputError naming the file and the key (or the line of a
// TOML syntax error).
ImportDraft read_torchtitan_toml(const std::string& text, const std::string& file);
bool looks_like_torchtitan_toml(const std::string& text);

} // namespace parallax

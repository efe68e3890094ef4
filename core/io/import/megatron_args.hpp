#pragma once
// A Megatron-LM pretraining command line, or the shell script that builds and runs it (Megatron-LM's
// examples/: variables, arrays, conditionals; see shell_script.hpp), with its launcher (torchrun
// --nnodes/--nproc-per-node gives the cluster size).
#include "io/import/import_draft.hpp"

#include <string>

namespace parallax {

// Reports every flag of the launch command: mapped, without effect on the prediction, or not modelled.
// Throws InputError naming the file and the flag.
ImportDraft read_megatron_args(const std::string& text, const std::string& file);
// True when `text` holds Megatron-LM flags (the detector's rule).
bool looks_like_megatron_args(const std::string& text);

} // namespace parallax

#pragma once
// The Megatron-LM flags the importer knows, by what they do to a prediction: flags that map onto the
// scenario (handled in megatron_args.cpp), flags that do not affect it (learning rate, data, logging,
// checkpoints, numerics), and flags whose effect is not modelled (with the reason).
#include <optional>
#include <string>
#include <string_view>

namespace parallax {

// True for a flag that does not change the step's time or memory (exact names and prefixes).
bool megatron_flag_has_no_effect(std::string_view flag);
// The reason a flag's effect is not modelled, or nullopt when the flag is not in that list.
std::optional<std::string> megatron_flag_not_modelled(std::string_view flag);
// The vocabulary of a Hugging Face tokenizer or model named like "meta-llama/Meta-Llama-3-70B" (its
// config.json vocab_size), or nullopt when the importer does not know it.
std::optional<long long> known_tokenizer_vocab(std::string_view name);

} // namespace parallax

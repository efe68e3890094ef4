#pragma once
// Expert load imbalance: how many tokens the busiest expert-parallel rank receives compared with a
// perfectly balanced router, after the capacity factor drops the overflow. The busiest rank sets
// the pace of every MoE layer (the others wait for it at the combine all-to-all).
#include "spec/model_spec.hpp"
#include "spec/training_spec.hpp"

namespace parallax {

struct MoeLoad {
    double straggler_ratio = 1; // tokens on the busiest EP rank / mean tokens per EP rank (>= 1)
    double dropped_fraction = 0; // routed token-expert assignments dropped at the capacity factor
    double hottest_expert_ratio = 1; // busiest expert / mean expert
};

// From training.moe_expert_load (a measured per-expert histogram; experts are laid out contiguously
// over the EP ranks, as in Megatron) or training.moe_imbalance (the busiest rank's load over the
// mean); balanced when neither is set.
MoeLoad moe_load(const ModelSpec& m, const TrainingSpec& t, int ep) noexcept;

} // namespace parallax

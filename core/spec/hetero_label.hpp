#pragma once
// The notation of a heterogeneous plan (strategy.stages) for titles and text: each stage's layers and
// replicas, then the settings every stage shares, as strategy_label writes them:
// "stages 16 | 16 layers: h100 TP4 + a100 TP4 | h100 TP4 + a100 TP4, mb 1, 1f1b, ZeRO 1, selective recompute".
#include "spec/scenario.hpp"

#include <string>

namespace parallax {

// A GPU preset's name as a narrow label shows it: its first word, with the next when the first has no
// digit ("H100-SXM5-80GB" -> "H100", "RTX-3090" -> "RTX-3090", "T4" -> "T4").
std::string gpu_short_name(const std::string& gpu);
// One stage's replicas: "h100 TP4 + a100 TP4".
std::string stage_replicas_label(const PipelineStageSpec& stage);
std::string hetero_plan_label(const Scenario& s);

} // namespace parallax

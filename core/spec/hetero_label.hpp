#pragma once
// The notation of a heterogeneous plan (strategy.stages) for titles and text: each stage's layers and
// replicas, then the settings every stage shares, as strategy_label writes them:
// "stages 16 | 16 layers: h100 TP4 + a100 TP4 | h100 TP4 + a100 TP4, mb 1, 1f1b, ZeRO 1, selective recompute".
#include "spec/scenario.hpp"

#include <string>

namespace parallax {

// One stage's replicas: "h100 TP4 + a100 TP4".
std::string stage_replicas_label(const PipelineStageSpec& stage);
std::string hetero_plan_label(const Scenario& s);

} // namespace parallax

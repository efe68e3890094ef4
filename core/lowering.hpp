#pragma once
// Lowers a plan (context + strategy) to the execution DAG of one training step: the schedule's
// program per device becomes compute ops with the chunk costs of strategy_costs.hpp, linked by
// pipeline sends, followed by the data-parallel tail (gradient reduction per chunk, a global
// barrier for the gradient norm, the optimizer step, parameter gathers), plus ZeRO-3 gathers.
#include "execution_graph.hpp"
#include "plan_context.hpp"
#include "strategy.hpp"
#include "strategy_costs.hpp"

#include <vector>

namespace parallax {

struct LoweredPlan {
    ExecutionGraph graph;
    std::vector<ChunkTiming> chunk_timing; // per IR chunk
    std::vector<int> chunk_device; // per IR chunk
    std::vector<double> chunk_activation_bytes; // per IR chunk, one micro-batch
};

LoweredPlan lower_plan(const PlanContext& ctx, const Strategy& s);

} // namespace parallax

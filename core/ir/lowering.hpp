#pragma once
// Lowers a plan (context + strategy) to the execution DAG of one training step: the schedule's
// program per device becomes compute ops with the chunk costs of strategy_costs.hpp, linked by
// pipeline sends, followed by the data-parallel tail (gradient reduction per chunk, a global
// barrier for the gradient norm, the optimizer step, parameter gathers), plus ZeRO-3 gathers.
#include "ir/execution_graph.hpp"
#include "model/plan_context.hpp"
#include "model/stage_power.hpp"
#include "model/strategy_costs.hpp"
#include "spec/strategy.hpp"

#include <span>
#include <vector>

namespace parallax {

struct LoweredPlan {
    ExecutionGraph graph;
    std::vector<ChunkTiming> chunk_timing; // per IR chunk, at its device's clock
    std::vector<int> chunk_device; // per IR chunk
    std::vector<double> chunk_activation_bytes; // per IR chunk, one micro-batch
    // Power (power_model.hpp), per op: for compute-stream ops the device's power while the op runs;
    // for communication ops what they add on top of the compute stream's power; 0 for barriers.
    std::vector<float> op_power_W;
    std::vector<double> device_clock; // per device (pipeline stage), fraction of the nominal clock
    std::vector<double> device_wait_W; // awake-idle power of each device at its clock
    std::vector<ChunkPower> chunk_power; // per IR chunk: its kernels' time and energy
};

// `clock_ceiling` > 0 caps every stage's clock (the analytic model's thermal limit). `microbatches` > 0
// lowers that many micro-batches instead of the plan's (a window of a very long step).
LoweredPlan lower_plan(const PlanContext& ctx, const Strategy& s, double clock_ceiling = 0, long long microbatches = 0);

// A pipeline stage as the lowering costs it: the context, strategy and costs of the rank that stands
// for it (stage d of the costs' layout), the clock it runs at, its step tail, and where its traffic goes.
struct LoweringStage {
    const PlanContext* ctx = nullptr;
    const Strategy* strategy = nullptr;
    const StrategyCosts* costs = nullptr;
    double clock = 1; // fraction of the nominal clock
    // Every pass's time (and energy) times this: a stage that runs a different share of the step than
    // one micro-batch per lowered micro-batch (a heterogeneous stage's replicas split the batch by speed).
    double time_scale = 1;
    StageTail tail;
    bool pp_link_across_nodes = false; // its pipeline sends cross the inter-node fabric
    bool dp_link_across_nodes = false; // its gradient reductions do
};

// Lowers a pipeline whose stages differ (a heterogeneous plan, ir/hetero_lowering.hpp): `s` holds what
// every stage shares (pp, schedule, ZeRO, overlap flags), `stages` one entry per pipeline stage.
LoweredPlan lower_stages(const Strategy& s, std::span<const LoweringStage> stages, long long microbatches);

} // namespace parallax

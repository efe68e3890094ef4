#pragma once
// Clock, time and energy of a plan's chunks and stages: the power curves of power_curves.hpp summed
// over a chunk's layers, applied to the chunk timings of strategy_costs.hpp. Shared by the analytic
// model, the IR lowering (per-op power of the timeline) and the clock planner, so all agree.
#include "model/strategy_costs.hpp"

namespace parallax {

// One chunk's compute kernels at clock x, one micro-batch.
struct ChunkPower {
    PassEnergy pass[kPassKinds]; // time and energy of the forward, B, W and recompute kernels
    double nominal_s[kPassKinds] = {}; // the same kernels at the nominal clock, unthrottled
    double comm_busy_s = 0; // TP/CP/EP collectives (clock-independent; they add comm_W while they run)
    bool throttled = false; // some kernel runs below the set clock because of the power cap
    double throttle_s = 0; // time the cap adds to the kernels
    bool unchanged = true; // x = 1 and nothing throttled: the nominal timing holds exactly
    double kernel_s() const;
    double kernel_J() const;
};
ChunkPower chunk_power(const PlanContext& ctx, const StrategyCosts& c, const ChunkTiming& t, double x) noexcept;
// The chunk's passes with their kernels at the clock (exposed communication unchanged).
void apply_clock(ChunkTiming& t, const ChunkPower& p) noexcept;

// One stage (all its chunks) at clock x, one micro-batch: timing as stage_timing_of, plus energy.
struct StagePower {
    StageTiming timing;
    double kernel_s = 0; // compute kernels per micro-batch (incl. recompute)
    double kernel_J = 0;
    double comm_busy_s = 0; // TP/CP/EP collectives and the pipeline sends per micro-batch
    double peak_W = 0; // highest pass power (kernels + their communication) at this clock
    bool throttled = false;
    double throttle_s = 0; // time the power cap adds to the kernels, per micro-batch
};
StagePower stage_power(const PlanContext& ctx, const Strategy& s, const StrategyCosts& c, int stage, double x) noexcept;

// Energy of a stage over one step, given how long the step takes and what the stage did in it.
struct StageEnergyInputs {
    double step_s = 0;
    double microbatches = 0;
    double optimizer_s = 0; // HBM-bound optimizer step (and ZeRO-Offload copies)
    double dp_comm_s = 0; // gradient reduction, parameter gathers, ZeRO-3 collectives
    double clock = 1;
};
double stage_step_energy_J(const PowerModel& pm, const StagePower& sp, const StageEnergyInputs& in) noexcept;

} // namespace parallax

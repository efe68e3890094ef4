#pragma once
// The TP/CP/EP collectives that run under one compute pass. The IR keeps them inside the pass's
// duration (their exposed part is already in it), so they are not ops of their own; the Chrome trace
// and the timeline view draw them as "companion" bars on their own tracks from the chunk's timing.
#include "ir/lowering.hpp"

#include <cstdint>

namespace parallax {

struct CommCompanion {
    IrOpType type = IrOpType::tp_comm; // tp_comm, cp_comm or ep_comm
    IrStream stream = IrStream::tp;
    const char* label = "TP";
    double busy_s = 0; // busy time of that traffic during the pass, at most the pass's duration
    double exposed_s = 0; // the part of it that is not hidden under compute, at most busy_s
};

inline constexpr int kMaxCommCompanions = 3;

// Fills `out` with the companions of op `op` (forward and backward-input passes of a chunk; others
// have none) and returns how many. The forward carries a third of a chunk's per-micro-batch traffic
// and the backward-input two thirds (the backward runs the forward's collectives twice: dgrad and
// the recomputed/transposed ones), as the chunk timing of strategy_costs.hpp sums them.
int comm_companions(const LoweredPlan& plan, std::uint32_t op, CommCompanion (&out)[kMaxCommCompanions]);

} // namespace parallax

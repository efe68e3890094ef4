#pragma once
// Pipeline schedules as generators of each device's compute program: the order in which a stage
// runs the forward (F), backward-input (B) and backward-weight (W) passes of its chunks for each
// micro-batch. The IR lowering turns these programs into the execution DAG.
#include "spec/strategy.hpp"

#include <cstdint>
#include <vector>

namespace parallax {

enum class PassKind : std::uint8_t { forward, backward_input, backward_weight };

struct ScheduledPass {
    PassKind kind = PassKind::forward;
    std::int16_t local_chunk = 0; // 0..vpp-1 (the device's chunk v is model chunk v*pp + device);
                                  // DualPipe: 0 = the "down" pipeline's stage, 1 = the "up" one's
    std::int32_t microbatch = 0;
    // Zero-bubble W passes fill idle time instead of holding their program position.
    bool filler = false;
};

// The device's program for one step. `microbatches` is the count per step.
std::vector<ScheduledPass> device_program(Schedule schedule, int device, int pp, int vpp, long long microbatches);

// Warm-up depth: forward passes (counted in chunk passes) a device runs before its first backward.
long long warmup_passes(Schedule schedule, int device, int pp, int vpp, long long microbatches);

} // namespace parallax

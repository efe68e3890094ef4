#pragma once
// Clock curves of a layer's compute kernels: for each pass (forward, B, W, recompute) the time and
// energy of its kernels at a ladder of application clocks, every kernel throttled on its own to the
// power cap (the GPU's power limiter acts within milliseconds, shorter than a GEMM of a training
// layer). Built once per layer-cost entry from the kernel list at the nominal clock and the same list
// at a low reference clock (which tells each kernel's clock-bound part from its memory-bound part),
// then read by interpolation, so the analytic model stays allocation-free and O(stages) with DVFS,
// per-stage clocks, power caps and thermal limits.
#include "model/layer_ops.hpp"
#include "model/power_model.hpp"

namespace parallax {

inline constexpr int kClockLevels = 20;
inline constexpr int kPassKinds = 4; // OpPhase: forward, backward_input, backward_weight, recompute

// Which levels of the ladder a curve holds: every one, or the nominal clock's alone (what an
// evaluation at nominal clocks reads; the rest is built when some evaluation asks for another clock).
enum class ClockLevels { nominal, ladder };

// Clock levels lo + k * step for k < count; level `nominal` is exactly x = 1.
struct ClockLadder {
    double lo = 0.3;
    double step = 0.05;
    int count = 15;
    int nominal = 14;
    double hi = 1.0; // clocks above are clamped (the GPU's boost clock)
    static ClockLadder of(const PowerModel& pm);
    double level(int k) const { return lo + step * k; }
};

struct PassCurve {
    float time_s[kClockLevels] = {};
    float energy_J[kClockLevels] = {};
    float free_s[kClockLevels] = {}; // the same kernels without the cap
    double nominal_s = 0; // sum of the kernels' times at the nominal clock, unthrottled
    bool throttled_at_nominal = false; // some kernel needs more than the cap at the nominal clock
    double throttle_clock
        = 1e9; // the lowest clock at which some kernel reaches the cap (above 1 only with the whole ladder)
    double peak_W = 0; // the highest kernel power at the nominal clock (after the cap)
};

struct OpGroupCurves {
    PassCurve pass[kPassKinds];
};

// Curves of the op groups a chunk is made of.
struct LayerCurves {
    OpGroupCurves dense, moe, embedding, output;
    bool throttled_at_nominal = false; // some kernel of some group needs more than the cap at x = 1
    ClockLevels levels = ClockLevels::ladder; // with `nominal` only level ClockLadder::nominal is filled
};

// Time and energy of one pass at clock x.
struct PassEnergy {
    double time_s = 0;
    double energy_J = 0;
    double free_s = 0; // time without the power cap
};
PassEnergy pass_at(const PassCurve& c, const ClockLadder& l, double x) noexcept;

// One layer kind's kernels, built four times: with the calibrated device (times) and the physical,
// uncalibrated one (power), each at the nominal clock and at the reference clock.
struct KernelLists {
    const LayerOps* nominal = nullptr;
    const LayerOps* at_ref = nullptr;
    const LayerOps* physical = nullptr;
    const LayerOps* physical_at_ref = nullptr;
};
// The kernels as per-pass curves over the ladder's clocks, each throttled to the cap. `lists.at_ref`
// may be null with ClockLevels::nominal while no kernel reaches the cap at x = 1; false when it was
// needed (the caller builds it and calls again).
bool build_group_curves(const PowerModel& pm, const ClockLadder& ladder, const ComputeDevice& dev,
    const ComputeDevice& physical, Precision precision, const KernelLists& lists, double ref_clock, ClockLevels levels,
    OpGroupCurves& out) noexcept;

// Clock-bound / fixed split of one kernel from its time at the nominal clock and at `ref_clock`
// (t(x) = c / x + m through both points). With `occupancy_ceiling` > 0 (occupancy_ceiling(dev)) also a
// GEMM's SM occupancy (only the power model needs it); 0 skips it.
KernelWork kernel_work(const ComputeDevice& dev, Precision precision, const LayerOp& nominal, const LayerOp& at_ref,
    double ref_clock, double occupancy_ceiling) noexcept;
// The wave efficiency of a GEMM made of whole waves of the device's best tile: the full occupancy a
// GEMM's own wave efficiency is measured against.
double occupancy_ceiling(const ComputeDevice& dev) noexcept;

} // namespace parallax

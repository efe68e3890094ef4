#include "model/power_curves.hpp"

#include <algorithm>
#include <cmath>

namespace parallax {

namespace {

// Spacing of the clock ladder: 5% of the nominal clock (NVIDIA's application clocks come in ~15 MHz
// steps; 5% keeps interpolation error under 0.1% of a pass's time).
constexpr double kLadderStep = 0.05;

bool is_tensor_kernel(OpKind k)
{
    switch (k) {
    case OpKind::qkv_proj:
    case OpKind::attention:
    case OpKind::out_proj:
    case OpKind::mlp_up:
    case OpKind::mlp_down:
    case OpKind::router:
    case OpKind::expert_up:
    case OpKind::expert_down:
    case OpKind::logits:
        return true;
    default:
        return false;
    }
}

// The precision a kernel's FLOPs run at, as layer_ops' builder chooses it: fp8/fp4 recipes keep the
// output layer and attention in bf16.
Precision kernel_precision(OpKind k, Precision training)
{
    const bool low = training == Precision::fp8 || training == Precision::fp4;
    if (k == OpKind::attention) // fused attention is 16-bit; fp32 training runs it unfused in fp32
        return is_full_precision(training) ? training : Precision::bf16;
    if (low && k == OpKind::logits)
        return Precision::bf16;
    return training;
}

// Whole waves of the best tile: the GEMM shape without partial waves the occupancy is measured against.
constexpr double kCeilingWaves = 64;

double peak_for(const GpuSpec& gpu, Precision p)
{
    for (Precision q : { p, Precision::bf16, Precision::fp16 })
        if (gpu.peak(q) > 0)
            return gpu.peak(q);
    return 0;
}

} // namespace

ClockLadder ClockLadder::of(const PowerModel& pm)
{
    ClockLadder l;
    l.step = kLadderStep;
    l.nominal = static_cast<int>(std::lround((1.0 - std::min(pm.min_clock, 1.0)) / l.step));
    l.lo = 1.0 - l.step * l.nominal;
    l.hi = std::max(1.0, pm.max_clock);
    const int above = static_cast<int>(std::ceil((l.hi - 1.0) / l.step - 1e-9));
    l.count = std::min(kClockLevels, l.nominal + 1 + above);
    l.hi = std::min(l.hi, l.level(l.count - 1));
    return l;
}

PassEnergy pass_at(const PassCurve& c, const ClockLadder& l, double x) noexcept
{
    if (l.count <= 1)
        return { c.time_s[0], c.energy_J[0], c.free_s[0] };
    const double f = std::clamp((x - l.lo) / l.step, 0.0, static_cast<double>(l.count - 1));
    const int k = std::min(static_cast<int>(f), l.count - 2);
    const double w = f - k;
    PassEnergy e;
    e.time_s = c.time_s[k] + (c.time_s[k + 1] - c.time_s[k]) * w;
    e.energy_J = c.energy_J[k] + (c.energy_J[k + 1] - c.energy_J[k]) * w;
    e.free_s = c.free_s[k] + (c.free_s[k + 1] - c.free_s[k]) * w;
    return e;
}

double occupancy_ceiling(const ComputeDevice& dev) noexcept
{
    double best = 0;
    for (const GemmTile& t : dev.gen->tiles)
        best = std::max(best, gemm_wave_efficiency(dev, static_cast<double>(t.m) * dev.sm_count, t.n * kCeilingWaves));
    return best;
}

KernelWork kernel_work(const ComputeDevice& dev, Precision precision, const LayerOp& nominal, const LayerOp& at_ref,
    double ref_clock, double ceiling) noexcept
{
    KernelWork w;
    const double t1 = nominal.time_s;
    const double tr = at_ref.time_s;
    // t(x) = c / x + m through (1, t1) and (ref, tr).
    const double c = ref_clock < 1 ? std::max(0.0, tr - t1) / (1.0 / ref_clock - 1.0) : 0.0;
    w.clock_s = std::min(c, t1);
    w.fixed_s = t1 - w.clock_s;
    w.bytes = nominal.bytes;
    if (nominal.flops > 0 && is_tensor_kernel(nominal.kind)) {
        const Precision p = kernel_precision(nominal.kind, precision);
        const double peak = peak_for(*dev.gpu, p);
        w.tensor_s = peak > 0 ? nominal.flops / peak : 0;
        if (ceiling > 0 && nominal.m > 0 && nominal.n > 0 && nominal.k > 0) {
            // A GEMM keeps only the SMs of its (last, partial) waves busy: its share of the compute
            // model's best GEMM efficiency (wave quantisation, partial tiles). The K loop's and the
            // precision's factors of gemm_efficiency are the same for both and cancel.
            w.occupancy = std::clamp(gemm_wave_efficiency(dev, nominal.m, nominal.n) / ceiling, 0.0, 1.0);
        }
    }
    return w;
}

bool build_group_curves(const PowerModel& pm, const ClockLadder& ladder, const ComputeDevice& dev,
    const ComputeDevice& physical, Precision precision, const KernelLists& lists, double ref_clock, ClockLevels levels,
    OpGroupCurves& out) noexcept
{
    out = OpGroupCurves {};
    if (!lists.at_ref && levels == ClockLevels::ladder)
        return false;
    double time[kPassKinds][kClockLevels] = {};
    double energy[kPassKinds][kClockLevels] = {};
    double free[kPassKinds][kClockLevels] = {};
    const int n = std::min({ lists.nominal->count, lists.at_ref ? lists.at_ref->count : lists.nominal->count,
        lists.physical->count, lists.physical_at_ref->count });
    // The levels built: the whole ladder, or the nominal clock alone (a search at nominal clocks).
    const bool all = levels == ClockLevels::ladder;
    const int k_begin = all ? 0 : ladder.nominal;
    const int k_end = all ? ladder.count : ladder.nominal + 1;
    // Per clock level: the awake chip's power, f V^2 and V^2 (shared by every kernel).
    double base_W[kClockLevels] = {}, scale[kClockLevels] = {}, v2[kClockLevels] = {};
    for (int k = k_begin; k < k_end; ++k) {
        const double x = ladder.level(k);
        const double v = pm.voltage(x);
        scale[k] = pm.clock_scale(x);
        v2[k] = v * v;
        base_W[k] = pm.wait_power(x) + pm.dynamic_W * pm.sm_activity * scale[k];
    }
    const double ceiling = occupancy_ceiling(physical);
    for (int i = 0; i < n; ++i) {
        const LayerOp& o = lists.nominal->op[i];
        if (o.stream != OpStream::compute || o.time_s <= 0)
            continue;
        const int pass = static_cast<int>(o.phase);
        PassCurve& pc = out.pass[pass];
        // Time from the calibrated kernel list (what the compute model predicts); power and the power
        // limiter's clock from the physical one (calibration corrects how long kernels take, not what
        // they draw), so calibration scales stay plain factors on time, capped or not.
        const KernelWork p
            = kernel_work(physical, precision, lists.physical->op[i], lists.physical_at_ref->op[i], ref_clock, ceiling);
        pc.nominal_s += o.time_s;
        // The highest clock at which this kernel stays within the cap (the limiter's operating point):
        // first up to the nominal clock (the same answer whichever levels are built), then above it.
        double top = pm.capped_clock(p, 1.0, pm.cap_W);
        if (top < 1.0)
            pc.throttled_at_nominal = true;
        else if (all && ladder.hi > 1.0)
            top = pm.capped_clock(p, ladder.hi, pm.cap_W);
        // The calibrated kernel's clock-bound part is needed at any clock but the nominal one, where its
        // time is the list's own (the split cancels); without the list at the reference clock, say so.
        if (!lists.at_ref && top < 1.0)
            return false;
        const KernelWork w = lists.at_ref ? kernel_work(dev, precision, o, lists.at_ref->op[i], ref_clock, 0.0)
                                          : kernel_work(dev, precision, o, o, 1.0, 0.0);
        // Only the nominal level built: a kernel within the cap at x = 1 stays "unthrottled" (no level above).
        const double top_limit = all ? ladder.hi : 1.0;
        if (top < top_limit)
            pc.throttle_clock = std::min(pc.throttle_clock, top);
        const double x_nom = std::min(1.0, top);
        pc.peak_W = std::max(pc.peak_W, pm.demand_W(p, x_nom));
        const double busy
            = pm.dynamic_W * (pm.pipeline_activity * p.occupancy * p.clock_s + pm.tensor_activity * p.tensor_s);
        const double hbm = pm.hbm_J_per_byte * p.bytes;
        for (int k = k_begin; k < k_end; ++k) {
            const double level = ladder.level(k);
            if (level <= top) {
                // Unthrottled: power_model.cpp's energy_J with the level's shared factors.
                const double tp = p.time_s(level);
                const double demand = tp > 0 ? base_W[k] + (busy * v2[k] + hbm) / tp : base_W[k];
                const double t = w.time_s(level);
                time[pass][k] += t;
                free[pass][k] += t;
                energy[pass][k] += demand * t;
            } else {
                const double t = w.time_s(top);
                time[pass][k] += t;
                free[pass][k] += w.time_s(level);
                energy[pass][k] += pm.demand_W(p, top) * t;
            }
        }
    }
    for (int p = 0; p < kPassKinds; ++p)
        for (int k = k_begin; k < k_end; ++k) {
            out.pass[p].time_s[k] = static_cast<float>(time[p][k]);
            out.pass[p].energy_J[k] = static_cast<float>(energy[p][k]);
            out.pass[p].free_s[k] = static_cast<float>(free[p][k]);
        }
    return true;
}

} // namespace parallax

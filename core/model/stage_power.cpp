#include "model/stage_power.hpp"

#include "ir/schedule_program.hpp"

#include <algorithm>

namespace parallax {

namespace {

constexpr int kForward = static_cast<int>(OpPhase::forward);
constexpr int kBackwardInput = static_cast<int>(OpPhase::backward_input);
constexpr int kBackwardWeight = static_cast<int>(OpPhase::backward_weight);
constexpr int kRecompute = static_cast<int>(OpPhase::recompute);

} // namespace

double ChunkPower::kernel_s() const
{
    double t = 0;
    for (const PassEnergy& e : pass)
        t += e.time_s;
    return t;
}

double ChunkPower::kernel_J() const
{
    double j = 0;
    for (const PassEnergy& e : pass)
        j += e.energy_J;
    return j;
}

ChunkPower chunk_power(const PlanContext& ctx, const StrategyCosts& c, const ChunkTiming& t, double x) noexcept
{
    ChunkPower p;
    if (!c.curves)
        return p;
    const LayerCurves& lc = c.curves_at(ctx, x);
    bool throttled_at_nominal = false;
    double throttle_clock = 1e9;
    // At the nominal clock the ladder has a level: read it (the common case in a search).
    const int level = x == 1.0 ? ctx.clocks.nominal : -1;
    auto add = [&](const OpGroupCurves& g, double count) {
        if (count <= 0)
            return;
        for (int k = 0; k < kPassKinds; ++k) {
            const PassCurve& pc = g.pass[k];
            const PassEnergy e = level >= 0 ? PassEnergy { pc.time_s[level], pc.energy_J[level], pc.free_s[level] }
                                            : pass_at(pc, ctx.clocks, x);
            p.pass[k].time_s += count * e.time_s;
            p.pass[k].energy_J += count * e.energy_J;
            p.pass[k].free_s += count * e.free_s;
            p.nominal_s[k] += count * pc.nominal_s;
            throttled_at_nominal = throttled_at_nominal || pc.throttled_at_nominal;
            throttle_clock = std::min(throttle_clock, pc.throttle_clock);
        }
    };
    if (!c.ranges) {
        add(lc.dense, t.layers - t.moe_layers);
        add(lc.moe, t.moe_layers);
        if (t.has_embedding)
            add(lc.embedding, 1);
        if (t.has_output)
            add(lc.output, 1);
    } else {
        // A composite plan: each layer with the curves of its range's settings.
        auto curves = [&](LayerEntry& e) -> const LayerCurves& { return x == 1.0 ? e.curves : e.ladder(ctx); };
        const LayerMix mix = layer_mix(ctx.model, c, t.first_layer, t.layers);
        for (int v = 0; v < c.variants.count; ++v) {
            add(curves(*c.by_variant[v]).dense, mix.dense[v]);
            add(curves(*c.by_variant[v]).moe, mix.moe[v]);
        }
        if (t.has_embedding)
            add(curves(c.entry_of_layer(0)).embedding, 1);
        if (t.has_output)
            add(curves(c.entry_of_layer(ctx.model.layers - 1)).output, 1);
    }
    for (int i = 0; i < kOpStreamCount; ++i)
        if (i != kComputeStream && i != kPpStream && i != kDpStream)
            p.comm_busy_s += t.comm_busy_s[i];
    p.throttled = x > throttle_clock;
    for (const PassEnergy& e : p.pass)
        p.throttle_s += std::max(0.0, e.time_s - e.free_s);
    p.unchanged = x == 1.0 && !throttled_at_nominal;
    return p;
}

void apply_clock(ChunkTiming& t, const ChunkPower& p) noexcept
{
    if (p.unchanged)
        return;
    const double df = p.pass[kForward].time_s - p.nominal_s[kForward];
    const double db = p.pass[kBackwardInput].time_s - p.nominal_s[kBackwardInput];
    const double dw = p.pass[kBackwardWeight].time_s - p.nominal_s[kBackwardWeight];
    const double dr = p.pass[kRecompute].time_s - p.nominal_s[kRecompute];
    t.forward_s = std::max(0.0, t.forward_s + df);
    t.backward_input_s = std::max(0.0, t.backward_input_s + db);
    t.weight_s = std::max(0.0, t.weight_s + dw);
    t.recompute_s = std::max(0.0, t.recompute_s + dr);
    t.compute_s = std::max(0.0, t.compute_s + df + db + dw);
}

namespace {

// The nominal clock with no kernel at the cap (the search's common case): the timing is the cost
// model's own, and the energy follows from the stage's layer counts (no walk over its chunks).
StagePower stage_power_nominal(const PlanContext& ctx, const Strategy& s, const StrategyCosts& c, int stage) noexcept
{
    StagePower sp;
    sp.timing = stage_timing_of(ctx, s, c, stage);
    const StageInfo& info = c.layout->stage[stage];
    const LayerCurves& lc = *c.curves;
    const int level = ctx.clocks.nominal;
    double pass_s[kPassKinds] = {}, pass_J[kPassKinds] = {};
    auto add = [&](const OpGroupCurves& g, const LayerTotals& t, double count) {
        if (count <= 0)
            return;
        for (int k = 0; k < kPassKinds; ++k) {
            pass_s[k] += count * g.pass[k].time_s[level];
            pass_J[k] += count * g.pass[k].energy_J[level];
        }
        for (int i = 0; i < kOpStreamCount; ++i)
            if (i != kComputeStream && i != kPpStream && i != kDpStream)
                sp.comm_busy_s += count * t.comm_busy_s[i];
    };
    if (!c.ranges) {
        add(lc.dense, c.layer.dense, info.layers - info.moe_layers);
        add(lc.moe, c.layer.moe, info.moe_layers);
        if (info.has_embedding)
            add(lc.embedding, c.layer.embedding, 1);
        if (info.has_output)
            add(lc.output, c.layer.output, 1);
    } else {
        // A composite plan: the stage's layers by their range's settings (no DualPipe here: see stage_power).
        LayerMix mix;
        for (int v = 0; v < s.vpp; ++v) {
            const ChunkInfo& ci = c.layout->chunk[v * s.pp + stage];
            const LayerMix m = layer_mix(ctx.model, c, ci.first_layer, ci.layers);
            for (int k = 0; k < c.variants.count; ++k) {
                mix.dense[k] += m.dense[k];
                mix.moe[k] += m.moe[k];
            }
        }
        for (int k = 0; k < c.variants.count; ++k) {
            const LayerEntry* e = c.by_variant[k];
            add(e->curves.dense, e->costs.dense, mix.dense[k]);
            add(e->curves.moe, e->costs.moe, mix.moe[k]);
        }
        if (info.has_embedding) {
            const LayerEntry& e = c.entry_of_layer(0);
            add(e.curves.embedding, e.costs.embedding, 1);
        }
        if (info.has_output) {
            const LayerEntry& e = c.entry_of_layer(ctx.model.layers - 1);
            add(e.curves.output, e.costs.output, 1);
        }
    }
    const PowerModel& pm = ctx.power;
    for (int k = 0; k < kPassKinds; ++k) {
        sp.kernel_s += pass_s[k];
        sp.kernel_J += pass_J[k];
    }
    const double comm_W = sp.kernel_s > 0 ? pm.comm_W * std::min(1.0, sp.comm_busy_s / sp.kernel_s) : 0.0;
    for (int k = 0; k < kPassKinds; ++k)
        if (pass_s[k] > 0) {
            const double w = pass_J[k] / pass_s[k];
            sp.peak_W = std::max(sp.peak_W, std::min(std::max(pm.cap_W, w), w + comm_W));
        }
    sp.comm_busy_s += 2 * p2p_per_direction_s(s, c, stage) * s.vpp;
    return sp;
}

} // namespace

StagePower stage_power(const PlanContext& ctx, const Strategy& s, const StrategyCosts& c, int stage, double x) noexcept
{
    // DualPipe's layout mirrors stages (a device's chunks are not its StageInfo's): walk the chunks.
    if (x == 1.0 && c.curves && !throttled_at_nominal(c) && !runs_dualpipe(s))
        return stage_power_nominal(ctx, s, c, stage);
    StagePower sp;
    StageTiming& st = sp.timing;
    const PowerModel& pm = ctx.power;
    // Interleaved stages hold vpp chunks, all alike but the first and last of the model: reuse the
    // kernels' power of the previous chunk when it has the same layers.
    ChunkPower cp;
    bool have = false;
    int last_layers = -1, last_moe = -1;
    bool last_emb = false, last_out = false;
    for (int v = 0; v < s.vpp; ++v) {
        ChunkTiming ct = chunk_timing(ctx, s, c, v * s.pp + stage);
        if (!have || c.ranges || ct.layers != last_layers || ct.moe_layers != last_moe || ct.has_embedding != last_emb
            || ct.has_output != last_out) {
            cp = chunk_power(ctx, c, ct, x);
            have = true;
            last_layers = ct.layers;
            last_moe = ct.moe_layers;
            last_emb = ct.has_embedding;
            last_out = ct.has_output;
        } else {
            // Same kernels; the chunk's collectives may differ (DualPipe's hidden all-to-all): recount.
            cp.comm_busy_s = 0;
            for (int i = 0; i < kOpStreamCount; ++i)
                if (i != kComputeStream && i != kPpStream && i != kDpStream)
                    cp.comm_busy_s += ct.comm_busy_s[i];
        }
        apply_clock(ct, cp);
        st.forward_s += ct.forward_s;
        st.backward_s += ct.backward_input_s + ct.weight_s + ct.recompute_s;
        st.weight_grad_s += ct.weight_s;
        st.compute_s += ct.compute_s;
        st.recompute_s += ct.recompute_s;
        for (int i = 0; i < kOpStreamCount; ++i)
            st.exposed_s[i] += ct.exposed_s[i];
        const double ks = cp.kernel_s();
        sp.kernel_s += ks;
        sp.kernel_J += cp.kernel_J();
        sp.comm_busy_s += cp.comm_busy_s;
        sp.throttled = sp.throttled || cp.throttled;
        sp.throttle_s += cp.throttle_s;
        // A pass's power: its kernels plus its share of the chunk's collectives, which the power
        // limiter keeps within the cap together.
        const double comm_W = ks > 0 ? pm.comm_W * std::min(1.0, cp.comm_busy_s / ks) : 0.0;
        for (const PassEnergy& e : cp.pass)
            if (e.time_s > 0)
                sp.peak_W = std::max(
                    sp.peak_W, std::min(std::max(pm.cap_W, e.energy_J / e.time_s), e.energy_J / e.time_s + comm_W));
    }
    const double p2p = p2p_per_direction_s(s, c, stage) * s.vpp;
    st.forward_s += p2p;
    st.backward_s += p2p;
    st.exposed_s[kPpStream] += 2 * p2p;
    sp.comm_busy_s += 2 * p2p;
    return sp;
}

double stage_step_energy_J(const PowerModel& pm, const StagePower& sp, const StageEnergyInputs& in) noexcept
{
    const double m = in.microbatches;
    const double kernels = sp.kernel_s * m;
    const double waiting = std::max(0.0, in.step_s - kernels - in.optimizer_s);
    // Kernels at their (capped) power; communication adds its power while it runs. Under the kernels
    // the power limiter keeps both within the cap (the extra clock reduction that costs is neglected);
    // alone it runs on top of the awake-idle power.
    const double overlapped = std::min(sp.comm_busy_s, sp.kernel_s);
    const double busy_J = std::min(sp.kernel_J + pm.comm_W * overlapped, std::max(pm.cap_W * sp.kernel_s, sp.kernel_J));
    const double e = busy_J * m + pm.comm_W * (sp.comm_busy_s - overlapped) * m
        + pm.memory_bound_W(in.clock) * in.optimizer_s + pm.wait_power(in.clock) * waiting + pm.comm_W * in.dp_comm_s;
    // Over the step the board never averages above its cap.
    return std::min(e, std::max(pm.cap_W * in.step_s, sp.kernel_J * m));
}

} // namespace parallax

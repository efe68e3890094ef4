#include "sim/simulated_model.hpp"

#include "model/analytic_model.hpp"
#include "model/data_path.hpp"
#include "spec/strategy_rules.hpp"
#include "spec/units.hpp"

#include <algorithm>

namespace parallax {

long long simulated_microbatches(long long step_microbatches, int pp)
{
    if (step_microbatches <= kMaxSimulatedMicrobatches)
        return step_microbatches;
    const long long round = 2 * std::max(1, pp);
    return std::max(2 * round, kMaxSimulatedMicrobatches / round * round);
}

SimulatedPlan simulate_plan(const PlanContext& ctx, const Strategy& s, const CancelToken* cancel)
{
    SimulatedPlan p;
    // The thermal limit is a property of the step's average power: take it from the analytic model.
    AnalyticResult a;
    AnalyticModel(ctx).evaluate(s, a);
    const long long step_mb = microbatch_count(ctx.training, s);
    // A schedule program names every micro-batch: it runs whole.
    const long long window = s.schedule == Schedule::custom ? step_mb : simulated_microbatches(step_mb, s.pp);
    p.window.step_microbatches = step_mb;
    p.window.simulated_microbatches = window;
    p.lowered = lower_plan(ctx, s, a.power.thermal_clock, window);
    if (cancel)
        throw_if_cancelled(*cancel);
    p.result = simulate(p.lowered.graph, cancel);
    if (window < step_mb) {
        // Past the pipeline's fill every micro-batch adds the same time: the slope between a window
        // and half of it (both whole rounds of 2 x pp) extends the step to all its micro-batches.
        const long long round = 2 * std::max(1, s.pp);
        const long long half = std::max(round, window / round / 2 * round);
        const LoweredPlan shorter = lower_plan(ctx, s, a.power.thermal_clock, half);
        const double half_s = simulate(shorter.graph, cancel).makespan_s;
        const double per_microbatch_s
            = std::max(0.0, (p.result.makespan_s - half_s) / static_cast<double>(window - half));
        p.window.extra_s = per_microbatch_s * static_cast<double>(step_mb - window);
    }
    if (cancel)
        throw_if_cancelled(*cancel);
    p.power = power_trace(ctx, s, p.lowered, p.result);
    return p;
}

TimeBreakdown simulated_time(const TimeBreakdown& a, double pipeline_end_s, double gpu_step_s, double data_stall_s)
{
    TimeBreakdown t = a;
    t.data_stall_s = data_stall_s;
    const double tail = std::max(0.0, gpu_step_s - pipeline_end_s);
    t.optimizer_s = std::min(a.optimizer_s + a.offload_s, tail);
    t.offload_s = 0;
    t.exposed_dp_s = std::max(0.0, tail - t.optimizer_s);
    const double per_microbatch_parts = a.compute_s + a.recompute_s + a.exposed_tp_s + a.exposed_cp_s + a.exposed_ep_s
        + a.exposed_pp_s + a.host_copy_s;
    t.bubble_s = std::max(0.0, pipeline_end_s - per_microbatch_parts);
    if (a.offload_s > 0) {
        t.offload_s = t.optimizer_s;
        t.optimizer_s = 0;
    }
    return t;
}

double simulated_pipeline_end_s(const SimulatedPlan& sim)
{
    double pipeline_end = 0;
    for (double t : sim.result.compute_last_s)
        pipeline_end = std::max(pipeline_end, t);
    return pipeline_end + sim.window.extra_s;
}

Prediction prediction_from_simulation(const PlanContext& ctx, const Strategy& s, const SimulatedPlan& sim)
{
    // Memory, power scaffolding and the per-micro-batch parts come from the shared cost model; the
    // timeline decides the step time, the bubble and the exposed tail.
    Prediction p = AnalyticModel(ctx).predict(s);
    // The matmuls' peak the analytic MFU was taken against (a composite plan's ranges may mix precisions).
    const double peak = !s.layers ? ctx.cluster.gpu.peak(ctx.training.precision)
        : p.mfu > 0               ? p.tflops_per_gpu * units::kTFLOP / p.mfu
                                  : 0.0;
    const SimulationResult& r = sim.result;
    p.fidelity = Fidelity::simulated;
    // A windowed simulation: the micro-batches beyond the window lengthen the pipeline part.
    const double pipeline_end = simulated_pipeline_end_s(sim);
    const double gpu_step = r.makespan_s + sim.window.extra_s;
    // The loader runs beside the simulated GPUs; what it cannot prepare in time stalls the step.
    const double stall_s = data_path_cost(ctx, s, gpu_step, p.time.offload_s).stall_s;
    const TimeBreakdown t = simulated_time(p.time, pipeline_end, gpu_step, stall_s);
    const double step = gpu_step + t.data_stall_s;
    p.time = t;
    p.step_time_s = step;
    const double tokens = static_cast<double>(ctx.training.global_batch) * static_cast<double>(ctx.training.seq_len);
    p.tokens_per_s = tokens / step;
    const double gpus = static_cast<double>(s.total_gpus());
    p.tflops_per_gpu = ctx.model_flops_per_token * p.tokens_per_s / gpus / units::kTFLOP;
    p.mfu = peak > 0 ? p.tflops_per_gpu * units::kTFLOP / peak : 0;
    p.hfu *= p.step_time_s > 0 ? (AnalyticModel(ctx).predict(s).step_time_s / p.step_time_s) : 0.0;
    p.bubble_fraction = t.bubble_s / step;
    p.interval = prediction_interval(ctx.band, p.tokens_per_s, p.step_time_s, p.mfu);
    add_memory_interval(p.interval, ctx.memory_band, p.peak_memory_bytes);
    p.communication_s.exposed = t.exposed_tp_s + t.exposed_cp_s + t.exposed_ep_s + t.exposed_pp_s + t.exposed_dp_s;
    {
        // Power from the simulated timeline: every op's power where the simulator placed it.
        PowerTrace computed;
        if (sim.power.devices.empty() && !sim.lowered.op_power_W.empty())
            computed = power_trace(ctx, s, sim.lowered, sim.result);
        const PowerTrace& tr = sim.power.devices.empty() ? computed : sim.power;
        PowerEstimate& w = p.power;
        w.avg_W_per_gpu = tr.avg_W_per_gpu;
        w.peak_W_per_gpu = std::max(tr.peak_W_per_gpu, tr.avg_W_per_gpu);
        w.energy_J_per_step_per_gpu = w.avg_W_per_gpu * step;
        w.energy_J_per_step = w.energy_J_per_step_per_gpu * gpus;
        w.energy_J_per_token = w.avg_W_per_gpu * gpus / p.tokens_per_s;
        const double gpn = w.nodes > 0 ? gpus / w.nodes : gpus;
        w.avg_W_per_node = gpn * w.avg_W_per_gpu + w.node_overhead_W;
        w.peak_W_per_node = gpn * w.peak_W_per_gpu + w.node_overhead_W;
        w.rack_avg_kW = w.nodes_per_rack * w.avg_W_per_node / 1000;
        w.rack_peak_kW = w.nodes_per_rack * w.peak_W_per_node / 1000;
        w.cluster_avg_kW = (w.avg_W_per_gpu * gpus + tr.cluster_overhead_W) / 1000;
        w.cluster_peak_kW = tr.cluster_peak_W / 1000;
        w.rack_avg_kW = std::min(w.rack_avg_kW, w.cluster_avg_kW);
        w.rack_peak_kW = std::min(w.rack_peak_kW, w.cluster_peak_kW);
        double busy = 0;
        for (double b : r.compute_busy_s)
            busy += b;
        w.busy_fraction = r.compute_busy_s.empty() || r.makespan_s <= 0 // the simulated window's share
            ? 0
            : std::min(1.0, busy / r.compute_busy_s.size() / r.makespan_s);
        for (std::size_t d = 0; d < p.stages.size() && d < tr.devices.size(); ++d) {
            p.stages[d].avg_W = tr.devices[d].avg_W;
            p.stages[d].peak_W = tr.devices[d].peak_W;
        }
    }
    p.assumptions.erase(p.assumptions.begin());
    p.assumptions.insert(p.assumptions.begin(),
        "fidelity: simulated (event simulation of " + std::to_string(sim.lowered.graph.size()) + " ops on "
            + std::to_string(sim.lowered.graph.devices) + " pipeline stages)");
    if (sim.window.extrapolated())
        p.assumptions.insert(p.assumptions.begin() + 1,
            "simulated a steady-state window of " + std::to_string(sim.window.simulated_microbatches)
                + " of the step's " + std::to_string(sim.window.step_microbatches)
                + " micro-batches and extrapolated the step time linearly (the simulator's limit is "
                + std::to_string(kMaxSimulatedMicrobatches) + " micro-batches)");
    return p;
}

Prediction predict_simulated(const PlanContext& ctx, const Strategy& s)
{
    const SimulatedPlan sim = simulate_plan(ctx, s);
    return prediction_from_simulation(ctx, s, sim);
}

} // namespace parallax

#include "sim/hetero_simulation.hpp"

#include "ir/hetero_lowering.hpp"
#include "model/data_path.hpp"

#include <algorithm>

namespace parallax {

SimulatedPlan simulate_heterogeneous(const HeteroModel& h, const CancelToken* cancel)
{
    SimulatedPlan p;
    const std::vector<HeteroStageSource> sources = h.stage_sources();
    const int pp = static_cast<int>(sources.size());
    const long long step_mb = hetero_microbatches(h);
    const long long window = simulated_microbatches(step_mb, pp);
    p.window.step_microbatches = step_mb;
    p.window.simulated_microbatches = window;
    p.lowered = lower_heterogeneous(h, window);
    if (cancel)
        throw_if_cancelled(*cancel);
    p.result = simulate(p.lowered.graph, cancel);
    if (window < step_mb) {
        // As simulate_plan: past the fill every micro-batch adds the same time.
        const long long round = 2 * std::max(1, pp);
        const long long half = std::max(round, window / round / 2 * round);
        const double half_s = simulate(lower_heterogeneous(h, half).graph, cancel).makespan_s;
        const double per_microbatch_s
            = std::max(0.0, (p.result.makespan_s - half_s) / static_cast<double>(window - half));
        p.window.extra_s = per_microbatch_s * static_cast<double>(step_mb - window);
    }
    if (cancel)
        throw_if_cancelled(*cancel);
    // Each op already carries its own stage's power; the pacing stage's context gives the node overhead.
    const HeteroStageSource& pace = sources[static_cast<std::size_t>(h.prediction().critical_stage)];
    p.power = power_trace(*pace.ctx, *pace.strategy, p.lowered, p.result);
    for (const HeteroStageSource& src : sources) {
        p.device_labels.push_back(src.label);
        p.device_gpu_types.push_back(src.gpu_types);
        p.device_gpus.push_back(src.gpus);
    }
    return p;
}

Prediction hetero_prediction_from_simulation(const HeteroModel& h, const SimulatedPlan& sim)
{
    // Memory, power and the per-micro-batch parts from the hetero model; the timeline decides the step
    // time, the bubble and the exposed tail, as prediction_from_simulation does for a plain plan.
    Prediction p = h.prediction().prediction;
    const HeteroStageSource pace = h.stage_sources()[static_cast<std::size_t>(h.prediction().critical_stage)];
    const double analytic_step_s = p.step_time_s;
    const double gpu_step = sim.result.makespan_s + sim.window.extra_s;
    const double stall_s = data_path_cost(*pace.ctx, *pace.strategy, gpu_step, p.time.offload_s).stall_s;
    p.time = simulated_time(p.time, simulated_pipeline_end_s(sim), gpu_step, stall_s);
    p.fidelity = Fidelity::simulated;
    p.step_time_s = gpu_step + stall_s;
    // Throughput, MFU and HFU are the work of the step over its time.
    const double speedup = analytic_step_s / p.step_time_s;
    p.tokens_per_s *= speedup;
    p.tflops_per_gpu *= speedup;
    p.mfu *= speedup;
    p.hfu *= speedup;
    p.bubble_fraction = p.time.bubble_s / p.step_time_s;
    p.communication_s.exposed
        = p.time.exposed_tp_s + p.time.exposed_cp_s + p.time.exposed_ep_s + p.time.exposed_pp_s + p.time.exposed_dp_s;
    PowerEstimate& w = p.power;
    w.energy_J_per_step_per_gpu = w.avg_W_per_gpu * p.step_time_s;
    w.energy_J_per_step = w.energy_J_per_step_per_gpu * w.gpus;
    w.energy_J_per_token = w.avg_W_per_gpu * w.gpus / p.tokens_per_s;
    p.interval = prediction_interval(pace.ctx->band, p.tokens_per_s, p.step_time_s, p.mfu);
    add_memory_interval(p.interval, pace.ctx->memory_band, p.peak_memory_bytes);
    p.assumptions.erase(p.assumptions.begin());
    p.assumptions.insert(p.assumptions.begin(),
        "fidelity: simulated, heterogeneous (event simulation of " + std::to_string(sim.lowered.graph.size())
            + " ops on " + std::to_string(sim.lowered.graph.devices)
            + " pipeline stages, each its slowest replica's passes on its own GPU, stretched to the stage's "
              "share of the step)");
    if (sim.window.extrapolated())
        p.assumptions.insert(p.assumptions.begin() + 1,
            "simulated a steady-state window of " + std::to_string(sim.window.simulated_microbatches) + " of the "
                + std::to_string(sim.window.step_microbatches) + " micro-batches and extrapolated the step time");
    return p;
}

Prediction predict_heterogeneous_simulated(const Scenario& s, const Calibration& cal)
{
    const HeteroModel h(s, cal);
    return hetero_prediction_from_simulation(h, simulate_heterogeneous(h));
}

} // namespace parallax

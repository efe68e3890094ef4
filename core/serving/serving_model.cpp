#include "serving/serving_model.hpp"

#include "calibration/serving_error_band.hpp"
#include "io/number_format.hpp"

#include "serving/disaggregated_model.hpp"
#include "serving/fixed_point.hpp"
#include "serving/host_bound_note.hpp"
#include "serving/serving_context.hpp"
#include "serving/serving_rules.hpp"
#include "serving/steady_state.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

namespace parallax {

namespace {

// The running batch of a Poisson load is settled to this share of itself: far below what any output shows.
constexpr double kRunningTolerance = 1e-9;

// Four significant digits, as the warnings quote rates, latencies and sizes.
std::string fmt(double v)
{
    return format_number("%.4g", v);
}

void fill_latencies(ServingPrediction& p, const SteadyState& s, const ServingWorkload& w, double queue_wait_s,
    const EngineTraits& engine)
{
    // An overlap scheduler hands every token to the client a step late, the first one included.
    queue_wait_s += engine.output_delay_steps * s.decode_step.time_s;
    p.running_batch = s.running;
    p.prefill_steps = s.prefill_steps;
    p.decode_step = s.decode_step;
    p.prefill_step = s.prefill_step;
    p.ttft_ms = (s.ttft_s + queue_wait_s) * 1e3;
    p.tpot_ms = s.tpot_s * 1e3;
    p.e2e_latency_ms = (s.e2e_s + queue_wait_s) * 1e3;
    p.requests_per_s = s.requests_per_s * p.replicas;
    p.output_tokens_per_s = p.requests_per_s * static_cast<double>(w.osl);
    p.output_tokens_per_s_per_gpu = p.gpus > 0 ? p.output_tokens_per_s / static_cast<double>(p.gpus) : 0;
    p.output_tokens_per_s_per_user = s.tpot_s > 0 ? 1.0 / s.tpot_s : 0;
}

void fill_power(ServingPrediction& p, const ServingContext& ctx, const SteadyState& s)
{
    const double pre_time = (1.0 - s.decode_share) * s.prefill_step.time_s;
    const double dec_time = s.decode_share * s.decode_step.time_s;
    const double energy = (1.0 - s.decode_share) * step_energy_J(ctx, s.prefill_step)
        + s.decode_share * step_energy_J(ctx, s.decode_step);
    p.avg_W_per_gpu = pre_time + dec_time > 0 ? energy / (pre_time + dec_time) : 0;
    p.energy_J_per_token
        = p.output_tokens_per_s > 0 ? p.avg_W_per_gpu * static_cast<double>(p.gpus) / p.output_tokens_per_s : 0;
}

// Closed loop of `concurrency` requests per instance, all of the same length (closed_loop). Beyond the
// running batch they queue, and by Little's law the time in the system is concurrency / throughput. An
// engine that prefills apart from its decodes keeps the loop in phase: the whole running batch finishes in
// the same step, its replacements arrive together and are prefilled before any of them decodes, so every
// round is a cohort.
void predict_concurrency(
    ServingPrediction& p, const ServingContext& ctx, const ServingWorkload& w, double concurrency, double max_running)
{
    const double running = std::min(concurrency, max_running);
    const bool mixes = ctx.engine.mixes_prompts_with_decodes;
    SteadyState s = mixes ? closed_loop(ctx, w, running) : cohort(ctx, w, running);
    if (mixes && w.rounds > 0) {
        // A benchmark of `rounds` requests per slot: its first round starts together, in phase.
        const SteadyState first = cohort(ctx, w, running);
        const double first_share = 1.0 / static_cast<double>(w.rounds);
        s.ttft_s = first_share * first.ttft_s + (1.0 - first_share) * s.ttft_s;
        s.tpot_s = first_share * first.tpot_s + (1.0 - first_share) * s.tpot_s;
        s.e2e_s = s.ttft_s + static_cast<double>(w.osl - 1) * s.tpot_s;
        s.requests_per_s = s.running / s.e2e_s;
    }
    double wait = 0;
    if (concurrency > running) {
        wait = std::max(0.0, concurrency / s.requests_per_s - s.e2e_s);
        p.queued_requests = concurrency - running;
    }
    fill_latencies(p, s, w, wait, ctx.engine);
    fill_power(p, ctx, s);
}

// The instance at its largest running batch, the state that bounds the rates it serves: priced by the clumped
// chain where its prompts fit the steps, so that a rate and its bound come from the same closure.
SteadyState capacity_steady_state(const ServingContext& ctx, const ServingWorkload& w, double max_running)
{
    if (ctx.engine.mixes_prompts_with_decodes) {
        const SteadyState c = steady_state_clumped(ctx, w, max_running);
        if (!c.prompts_overflow)
            return c;
    }
    return stream_steady_state(ctx, w, max_running);
}

// A Poisson stream on an engine that mixes prompts into its decode steps, priced by the clumped chain: the
// running batch is Little's law's for the time a request spends in the system, a fixed point over that chain
// alone (its prompts capped to a step's budget keep the map continuous). Empty where, at that fixed point,
// the prompts a step gathers overflow its budget: prefill is then the queue, and the whole rate is priced by
// the prefill share and M/D/1 (steady_state), so the latencies switch closures once, at one rate.
std::optional<SteadyState> rate_steady_state(
    const ServingContext& ctx, const ServingWorkload& w, double rate, double max_running)
{
    if (!ctx.engine.mixes_prompts_with_decodes)
        return std::nullopt;
    const auto running_for = [&](double running) {
        return std::clamp(rate * steady_state_clumped(ctx, w, running).e2e_s, 1.0, max_running);
    };
    const SteadyState c
        = steady_state_clumped(ctx, w, solve_fixed_point(running_for, 1.0, max_running, kRunningTolerance).x);
    if (c.prompts_overflow)
        return std::nullopt;
    return c;
}

// Poisson arrivals at `rate` per instance: the running batch is what Little's law gives for the time
// a request spends running (fixed point); the wait for a prefill slot follows M/D/1 at the utilisation
// rate / the instance's largest throughput.
void predict_rate(
    ServingPrediction& p, const ServingContext& ctx, const ServingWorkload& w, double rate, double max_running)
{
    const SteadyState full = capacity_steady_state(ctx, w, max_running);
    const double utilisation = rate / full.requests_per_s;
    if (utilisation >= 1.0) {
        p.feasible = false;
        p.warnings.insert(p.warnings.begin(),
            "the request rate (" + fmt(rate) + "/s per instance) exceeds the largest the instance serves ("
                + fmt(full.requests_per_s) + "/s): the queue grows without bound");
        fill_latencies(p, full, w, 0, ctx.engine);
        fill_power(p, ctx, full);
        return;
    }
    // The prefill-share closure only where the clumped chain does not hold (its fixed point is costly).
    const std::optional<SteadyState> clumped = rate_steady_state(ctx, w, rate, max_running);
    const auto running_for = [&](double running) {
        return std::clamp(rate * stream_steady_state(ctx, w, running).e2e_s, 1.0, max_running);
    };
    const SteadyState s = clumped
        ? *clumped
        : stream_steady_state(ctx, w, solve_fixed_point(running_for, 1.0, max_running, kRunningTolerance).x);
    const double service = s.prefill_steps * s.prefill_step.time_s;
    const double wait = s.waits_counted ? 0.0 : utilisation / (2.0 * (1.0 - utilisation)) * service;
    fill_latencies(p, s, w, wait, ctx.engine);
    // The deployment serves what arrives, not more.
    p.requests_per_s = rate * p.replicas;
    p.output_tokens_per_s = p.requests_per_s * static_cast<double>(w.osl);
    p.output_tokens_per_s_per_gpu = p.output_tokens_per_s / static_cast<double>(p.gpus);
    fill_power(p, ctx, s);
}

} // namespace

void check_slo(ServingPrediction& p, const ServingSlo& slo)
{
    if (slo.ttft_ms && p.ttft_ms > *slo.ttft_ms) {
        p.slo_met = false;
        p.warnings.push_back("TTFT " + fmt(p.ttft_ms) + " ms misses the SLO of " + fmt(*slo.ttft_ms) + " ms");
    }
    if (slo.tpot_ms && p.tpot_ms > *slo.tpot_ms) {
        p.slo_met = false;
        p.warnings.push_back("TPOT " + fmt(p.tpot_ms) + " ms misses the SLO of " + fmt(*slo.tpot_ms) + " ms");
    }
}

void add_serving_interval(ServingPrediction& p, const ServingScenario& s)
{
    if (!p.feasible)
        return;
    const ServingBands& b = builtin_serving_bands(serving_band_class(s));
    if (!b.throughput.valid())
        return;
    ServingInterval& i = p.interval;
    i.level = b.throughput.level;
    i.tokens_per_s_low = p.output_tokens_per_s * b.throughput.low_factor;
    i.tokens_per_s_high = p.output_tokens_per_s * b.throughput.high_factor;
    i.tokens_per_s_per_gpu_low = p.output_tokens_per_s_per_gpu * b.throughput.low_factor;
    i.tokens_per_s_per_gpu_high = p.output_tokens_per_s_per_gpu * b.throughput.high_factor;
    const ServingBand& ttft = b.ttft.valid() ? b.ttft : b.throughput;
    const ServingBand& tpot = b.tpot.valid() ? b.tpot : b.throughput;
    i.ttft_ms_low = p.ttft_ms * ttft.low_factor;
    i.ttft_ms_high = p.ttft_ms * ttft.high_factor;
    i.tpot_ms_low = p.tpot_ms * tpot.low_factor;
    i.tpot_ms_high = p.tpot_ms * tpot.high_factor;
    i.basis = b.throughput.basis;
}

ServingPrediction predict_serving(const ServingScenario& s)
{
    if (s.deployment.disaggregated) {
        ServingPrediction p = predict_disaggregated(s);
        check_slo(p, s.serving.slo);
        add_serving_interval(p, s);
        return p;
    }
    ServingPrediction p;
    const InstanceLayout& l = s.deployment.instance;
    const ServingWorkload& w = s.serving.workload;
    const ServingContext ctx(s.model, s.cluster, s.serving, l);
    p.replicas = std::max(1, s.replicas());
    p.instance_gpus = l.gpus();
    p.gpus = static_cast<long long>(p.replicas) * p.instance_gpus;
    p.memory = serving_memory(ctx, w);
    p.warnings = serving_warnings(s);
    const double engine_limit = static_cast<double>(ctx.engine.max_running_requests) * l.attention_dp;
    p.max_batch_by_memory = w.load == LoadKind::batch_size ? p.memory.max_requests : p.memory.max_running;
    p.feasible = p.memory.fits();
    if (!p.feasible) {
        p.warnings.insert(p.warnings.begin(),
            "out of memory: the weights (" + fmt(p.memory.weights_B / 1073741824.0)
                + " GiB per GPU) leave no room in the engine's reservation for the KV cache of one request of "
                + std::to_string(w.isl + w.osl) + " tokens");
        return p;
    }
    const double max_running = std::min(static_cast<double>(p.memory.max_running), engine_limit);
    switch (w.load) {
    case LoadKind::concurrency:
        predict_concurrency(p, ctx, w, static_cast<double>(w.concurrency) / p.replicas, max_running);
        break;
    case LoadKind::max_throughput: {
        // Offline: a queue of requests keeps every slot busy. An engine that mixes prompts into its decode
        // steps spreads their phases (steady state); one that prefills apart keeps them in phase, since the
        // batch it prefilled together decodes and finishes together and its replacements are prefilled
        // together again (a cohort each round).
        const SteadyState st
            = ctx.engine.mixes_prompts_with_decodes ? steady_state(ctx, w, max_running) : cohort(ctx, w, max_running);
        fill_latencies(p, st, w, 0, ctx.engine);
        fill_power(p, ctx, st);
        break;
    }
    case LoadKind::request_rate:
        predict_rate(p, ctx, w, w.request_rate_qps / p.replicas, max_running);
        break;
    case LoadKind::batch_size: {
        const double batch = static_cast<double>(w.batch_size);
        if (batch > static_cast<double>(p.memory.max_requests)) {
            p.feasible = false;
            p.warnings.insert(p.warnings.begin(),
                "out of memory: a static batch of " + std::to_string(w.batch_size) + " needs the KV cache of "
                    + std::to_string(w.batch_size) + " requests; " + std::to_string(p.memory.max_requests) + " fit");
        }
        const SteadyState st = static_batch(ctx, w, batch);
        fill_latencies(p, st, w, 0, ctx.engine);
        fill_power(p, ctx, st);
        break;
    }
    }
    if (p.feasible)
        note_host_bound_decode(p, ctx, s.serving.engine);
    check_slo(p, s.serving.slo);
    add_serving_interval(p, s);
    return p;
}

} // namespace parallax

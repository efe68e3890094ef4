#include "serving/disaggregated_model.hpp"

#include "serving/kv_cache.hpp"
#include "serving/serving_context.hpp"
#include "serving/serving_rules.hpp"
#include "serving/serving_step.hpp"

#include <algorithm>
#include <cmath>

namespace parallax {

namespace {

std::string fmt(double v)
{
    return std::to_string(static_cast<long long>(std::llround(v)));
}

// A prefill worker at full load: steps of the engine's whole token budget, filled with prompts.
double prefill_requests_per_s(const ServingContext& ctx, const ServingWorkload& w, double* alone_s)
{
    const double isl = static_cast<double>(w.isl);
    StepLoad one;
    one.prefill_tokens = isl;
    one.prompt_tokens = isl;
    one.sampled_requests = 1;
    *alone_s = step_cost(ctx, one).time_s;
    const double per_step = std::max(isl, static_cast<double>(ctx.engine.max_batched_tokens));
    StepLoad full = one;
    full.prefill_tokens = per_step;
    full.sampled_requests = per_step / isl;
    return per_step / isl / step_cost(ctx, full).time_s;
}

StepCost decode_only(const ServingContext& ctx, const ServingWorkload& w, double running)
{
    StepLoad l;
    l.decode_requests = running;
    l.decode_context = static_cast<double>(w.isl) + 0.5 * static_cast<double>(w.osl);
    l.sampled_requests = running;
    return step_cost(ctx, l);
}

} // namespace

double kv_transfer_s(const ServingScenario& s, double tokens)
{
    const auto& d = *s.deployment.disaggregated;
    const double bytes = kv_bytes_per_sequence(s.model, s.serving.precision.kv_cache, tokens);
    const long long gpus = static_cast<long long>(d.prefill.layout.gpus()) * d.prefill.workers
        + static_cast<long long>(d.decode.layout.gpus()) * d.decode.workers;
    const FabricSpec& f = gpus <= s.cluster.gpus_per_node ? s.cluster.intra_node : s.cluster.inter_node;
    const double senders = std::min(d.prefill.layout.gpus(), d.decode.layout.gpus());
    return f.latency_s + bytes / (senders * f.bw_Bps);
}

PrefillPoolCost prefill_pool_cost(const ServingScenario& s, const InstanceLayout& l)
{
    const ServingContext pre(s.model, s.cluster, s.serving, l);
    const ServingWorkload& w = s.serving.workload;
    PrefillPoolCost c;
    c.memory = serving_memory(pre, w);
    c.requests_per_s = prefill_requests_per_s(pre, w, &c.alone_s);
    StepLoad full;
    full.prefill_tokens = std::max(static_cast<double>(w.isl), static_cast<double>(pre.engine.max_batched_tokens));
    full.prompt_tokens = static_cast<double>(w.isl);
    const StepCost step = step_cost(pre, full);
    c.busy_W = step_energy_J(pre, step) / step.time_s;
    c.wait_W = pre.power.wait_W;
    return c;
}

ServingPrediction predict_disaggregated(const ServingScenario& s, const PrefillPoolCost* known)
{
    const auto& d = *s.deployment.disaggregated;
    const ServingWorkload& w = s.serving.workload;
    const PrefillPoolCost pre = known ? *known : prefill_pool_cost(s, d.prefill.layout);
    const ServingContext dec(s.model, s.cluster, s.serving, d.decode.layout);
    ServingPrediction p;
    p.replicas = d.decode.workers;
    p.instance_gpus = d.decode.layout.gpus();
    p.gpus = static_cast<long long>(d.prefill.layout.gpus()) * d.prefill.workers
        + static_cast<long long>(d.decode.layout.gpus()) * d.decode.workers;
    p.warnings = serving_warnings(s);
    p.memory = serving_memory(dec, w);
    p.max_batch_by_memory = p.memory.max_running;
    if (pre.memory.peak_B() > p.memory.peak_B())
        p.memory = pre.memory; // the contract reports the GPU that would run out first
    p.feasible = pre.memory.fits() && p.max_batch_by_memory >= 1;
    if (!p.feasible) {
        p.warnings.insert(p.warnings.begin(),
            std::string("out of memory: the ") + (pre.memory.fits() ? "decode" : "prefill")
                + " workers' weights leave no room for the KV cache of one request");
        return p;
    }
    const double prefill_capacity = pre.requests_per_s * d.prefill.workers;
    const double max_running = std::min(static_cast<double>(p.max_batch_by_memory),
        static_cast<double>(dec.engine.max_running_requests) * d.decode.layout.attention_dp);
    double in_flight = max_running * d.decode.workers;
    if (w.load == LoadKind::concurrency)
        in_flight = static_cast<double>(w.concurrency);
    else if (w.load == LoadKind::batch_size)
        in_flight = static_cast<double>(w.batch_size);
    const double running = std::clamp(in_flight / d.decode.workers, 1.0, max_running);
    const StepCost step = decode_only(dec, w, running);
    const double decode_steps = static_cast<double>(w.osl - 1);
    const double transfer_s = kv_transfer_s(s, static_cast<double>(w.isl));
    const double ttft_alone = pre.alone_s + transfer_s;
    const double decode_capacity = running * d.decode.workers / std::max(1e-9, (decode_steps + 1) * step.time_s);
    double rate = std::min(prefill_capacity, decode_capacity);
    if (w.load == LoadKind::request_rate) {
        if (w.request_rate_qps >= rate) {
            p.feasible = false;
            p.warnings.insert(
                p.warnings.begin(), "the request rate exceeds what the pools serve (" + fmt(rate) + "/s)");
        }
        rate = std::min(rate, w.request_rate_qps);
    }
    // Closed loop: requests beyond what the slower pool serves wait for a prefill slot; Poisson
    // arrivals wait for a prefill worker as in M/D/1.
    const double e2e_alone = ttft_alone + decode_steps * step.time_s;
    double wait = 0;
    if (w.load != LoadKind::request_rate) {
        wait = std::max(0.0, in_flight / rate - e2e_alone);
    } else {
        const double util = std::min(0.99, rate / prefill_capacity);
        wait = util / (2.0 * (1.0 - util)) * pre.alone_s;
    }
    p.running_batch = running;
    p.decode_step = step;
    p.ttft_ms = (ttft_alone + wait) * 1e3;
    p.tpot_ms = decode_steps > 0 ? step.time_s * 1e3 : 0;
    p.e2e_latency_ms = p.ttft_ms + decode_steps * p.tpot_ms;
    p.requests_per_s = rate;
    p.output_tokens_per_s = rate * static_cast<double>(w.osl);
    p.output_tokens_per_s_per_gpu = p.output_tokens_per_s / static_cast<double>(p.gpus);
    p.output_tokens_per_s_per_user = p.tpot_ms > 0 ? 1e3 / p.tpot_ms : 0;
    // Power: decode GPUs run their step continuously; prefill GPUs at the share of their capacity used.
    const double dec_W = step_energy_J(dec, step) / step.time_s;
    const double busy = std::min(1.0, rate / prefill_capacity);
    const double pre_W = busy * pre.busy_W + (1.0 - busy) * pre.wait_W;
    const double pre_gpus = static_cast<double>(d.prefill.layout.gpus()) * d.prefill.workers;
    const double dec_gpus = static_cast<double>(d.decode.layout.gpus()) * d.decode.workers;
    p.avg_W_per_gpu = (pre_W * pre_gpus + dec_W * dec_gpus) / (pre_gpus + dec_gpus);
    p.energy_J_per_token = p.avg_W_per_gpu * static_cast<double>(p.gpus) / p.output_tokens_per_s;
    return p;
}

} // namespace parallax

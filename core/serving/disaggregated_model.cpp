#include "serving/disaggregated_model.hpp"

#include "io/number_format.hpp"
#include "serving/fixed_point.hpp"
#include "serving/host_bound_note.hpp"
#include "serving/kv_cache.hpp"
#include "serving/serving_context.hpp"
#include "serving/serving_rules.hpp"
#include "serving/serving_step.hpp"

#include <algorithm>
#include <cmath>

namespace parallax {

namespace {

// The share of a NIC's or NVLink's nominal bandwidth a KV-cache transfer reaches (NIXL/UCX): the
// default bw_efficiency of AIConfigurator's disaggregated model (sdk/queueing/disagg.py, DisaggSpec).
constexpr double kKvTransferEfficiency = 0.8;
// The running batch is settled to this share of itself: far below what any output shows.
constexpr double kClosedLoopTolerance = 1e-9;

std::string fmt(double v)
{
    return format_number("%.0f", v);
}

// A prefill worker's step at full load: the whole token budget of prompts, or with serial prefill one
// prompt per attention-DP rank.
StepLoad full_prefill_load(const ServingContext& ctx, const ServingWorkload& w, bool serial)
{
    const double isl = static_cast<double>(w.isl);
    const double adp = ctx.layout.attention_dp;
    StepLoad full;
    full.prompt_tokens = isl;
    full.prefill_tokens = serial ? isl * adp : std::max(isl, instance_token_budget(ctx));
    full.sampled_requests = full.prefill_tokens / isl;
    return full;
}

// A prefill worker at full load, in requests per second; `alone_s`: one prompt on an idle worker.
double prefill_requests_per_s(const ServingContext& ctx, const ServingWorkload& w, bool serial, double* alone_s)
{
    const double isl = static_cast<double>(w.isl);
    StepLoad one;
    one.prefill_tokens = isl;
    one.prompt_tokens = isl;
    one.sampled_requests = 1;
    *alone_s = step_cost(ctx, one).time_s;
    const StepLoad full = full_prefill_load(ctx, w, serial);
    return full.prefill_tokens / isl / step_cost(ctx, full).time_s;
}

StepCost decode_only(const ServingContext& ctx, const ServingWorkload& w, double running)
{
    StepLoad l;
    l.decode_requests = running;
    l.decode_context = static_cast<double>(w.isl) + 0.5 * static_cast<double>(w.osl);
    l.sampled_requests = running;
    return step_cost(ctx, l);
}

// The closed loop of a fixed concurrency over the two pools: a request cycles through its TTFT and
// its decode; the decode workers hold what Little's law gives for the time it decodes, at most their
// largest batch, and the prefill pool caps the rate; whatever the slower pool cannot take waits.
struct DisaggregatedLoop {
    double running = 1; // per decode worker
    StepCost step;
    double rate = 0; // requests per second, deployment
    double ttft_s = 0;
};

DisaggregatedLoop closed_loop(const ServingContext& dec, const ServingWorkload& w, double in_flight,
    double decode_workers, double max_running, double prefill_capacity, double ttft_alone_s)
{
    const double decode_steps = decode_steps_of(dec, w);
    DisaggregatedLoop l;
    const auto settle = [&](double running) {
        l.running = running;
        l.step = decode_only(dec, w, running);
        const double decode_s = decode_steps * l.step.time_s;
        l.rate = std::min({ in_flight / (ttft_alone_s + decode_s), prefill_capacity,
            decode_workers * max_running / std::max(decode_s, 1e-12) });
        return std::clamp(l.rate * decode_s / decode_workers, 1.0, max_running);
    };
    settle(solve_fixed_point(settle, 1.0, max_running, kClosedLoopTolerance).x);
    l.ttft_s = std::max(ttft_alone_s, in_flight / l.rate - decode_steps * l.step.time_s);
    return l;
}

// The first round of a benchmark that starts every request at once: each prefill worker (each of its
// attention-DP ranks with serial prefill) takes its share of the prompts in order; the mean wait.
double first_round_ttft_s(const ServingContext& pre, const ServingWorkload& w, double in_flight, int workers,
    bool serial, double alone_s, double after_prefill_s)
{
    if (serial) {
        const double per_rank = std::max(1.0, in_flight / (workers * pre.layout.attention_dp));
        return 0.5 * (per_rank + 1.0) * alone_s + after_prefill_s;
    }
    const StepLoad full = full_prefill_load(pre, w, false);
    const double step_s = step_cost(pre, full).time_s;
    const double per_step = full.prefill_tokens / static_cast<double>(w.isl);
    const double per_worker = std::max(1.0, in_flight / workers);
    const double steps = std::ceil(per_worker / per_step);
    // Request k finishes with step ceil(k / per_step): the mean over k of those steps.
    return std::max(alone_s, 0.5 * (steps + 1.0) * step_s) + after_prefill_s;
}

} // namespace

bool disaggregated_serial_prefill(ServingEngine e)
{
    // TensorRT-LLM's disaggregated serving runs its context requests one at a time behind a
    // round-robin router (AIConfigurator sdk/queueing/disagg.py: kappa = 1, measured, low-load TTFT
    // within 3%); vLLM and SGLang prefill workers batch queued prompts up to the token budget.
    return e == ServingEngine::trtllm;
}

bool disaggregated_first_token_from_prefill(ServingEngine e)
{
    // TensorRT-LLM's context server returns the first token with the context phase (AIConfigurator
    // disagg.py: the handoff lands in the first inter-token gap); vLLM's and SGLang's PD proxies stream
    // from the decode server, which emits it in its first step after the KV cache arrives.
    return e == ServingEngine::trtllm;
}

double kv_transfer_s(const ServingScenario& s, double tokens)
{
    const auto& d = *s.deployment.disaggregated;
    const InstanceLayout& pre = d.prefill.layout;
    const InstanceLayout& dec = d.decode.layout;
    // Every TP rank of the decode group receives its share of the heads; MLA's latent is not split by
    // heads, so each receives it whole (kv_tp_share).
    const double bytes
        = kv_bytes_per_sequence(s.model, s.serving.precision.kv_cache, tokens) * kv_tp_share(s.model, dec.tp) * dec.tp;
    const long long gpus = static_cast<long long>(pre.gpus()) * d.prefill.workers
        + static_cast<long long>(dec.gpus()) * d.decode.workers;
    const FabricSpec& f = gpus <= s.cluster.gpus_per_node ? s.cluster.intra_node : s.cluster.inter_node;
    // The request's ranks on each side send and receive at once, each over its own link.
    const double links = std::min(pre.tp * pre.pp, dec.tp * dec.pp);
    return f.latency_s + bytes / (links * f.bw_Bps * kKvTransferEfficiency);
}

PrefillPoolCost prefill_pool_cost(const ServingScenario& s, const InstanceLayout& l)
{
    const ServingContext pre(s.model, s.cluster, s.serving, l);
    const ServingWorkload& w = s.serving.workload;
    const bool serial = disaggregated_serial_prefill(s.serving.engine);
    PrefillPoolCost c;
    c.memory = serving_memory(pre, w);
    c.requests_per_s = prefill_requests_per_s(pre, w, serial, &c.alone_s);
    const StepCost step = step_cost(pre, full_prefill_load(pre, w, serial));
    c.busy_W = step_energy_J(pre, step) / step.time_s;
    c.wait_W = pre.power.wait_W;
    return c;
}

namespace {

// Power: decode GPUs run their step continuously; prefill GPUs at the share of their capacity used.
void fill_disaggregated_power(ServingPrediction& p, const ServingContext& dec, const DisaggregatedDeployment& d,
    const PrefillPoolCost& pre, double prefill_capacity)
{
    const double dec_W = step_energy_J(dec, p.decode_step) / p.decode_step.time_s;
    const double busy = std::min(1.0, p.requests_per_s / prefill_capacity);
    const double pre_W = busy * pre.busy_W + (1.0 - busy) * pre.wait_W;
    const double pre_gpus = static_cast<double>(d.prefill.layout.gpus()) * d.prefill.workers;
    const double dec_gpus = static_cast<double>(d.decode.layout.gpus()) * d.decode.workers;
    p.avg_W_per_gpu = (pre_W * pre_gpus + dec_W * dec_gpus) / (pre_gpus + dec_gpus);
    p.energy_J_per_token = p.avg_W_per_gpu * static_cast<double>(p.gpus) / p.output_tokens_per_s;
}

// Poisson arrivals: the decode batch is the largest the workers hold (or the load's), and a request
// waits for a prefill worker as in M/D/1.
DisaggregatedLoop rate_loop(ServingPrediction& p, const ServingContext& dec, const ServingWorkload& w,
    double decode_workers, double max_running, double prefill_capacity, double prefill_alone_s, double ttft_alone_s)
{
    DisaggregatedLoop l;
    l.running = max_running;
    l.step = decode_only(dec, w, l.running);
    const double decode_capacity = l.running * decode_workers
        / std::max(1e-9, static_cast<double>(w.osl) / dec.tokens_per_decode_step * l.step.time_s);
    l.rate = std::min(prefill_capacity, decode_capacity);
    if (w.request_rate_qps >= l.rate) {
        p.feasible = false;
        p.warnings.insert(p.warnings.begin(), "the request rate exceeds what the pools serve (" + fmt(l.rate) + "/s)");
    }
    l.rate = std::min(l.rate, w.request_rate_qps);
    const double util = std::min(0.99, l.rate / prefill_capacity);
    l.ttft_s = ttft_alone_s + util / (2.0 * (1.0 - util)) * prefill_alone_s;
    return l;
}

} // namespace

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
    const double decode_workers = d.decode.workers;
    const double max_running = std::min(static_cast<double>(p.max_batch_by_memory),
        static_cast<double>(dec.engine.max_running_requests) * d.decode.layout.attention_dp);
    const double decode_steps = decode_steps_of(dec, w);
    const double transfer_s = kv_transfer_s(s, static_cast<double>(w.isl));
    const bool from_prefill = disaggregated_first_token_from_prefill(s.serving.engine);
    // Where the first token comes from the decode worker, it follows the transfer and one decode step.
    const double first_decode_s = from_prefill ? 0.0 : transfer_s + decode_only(dec, w, 1.0).time_s;
    double in_flight = max_running * decode_workers;
    if (w.load == LoadKind::concurrency)
        in_flight = static_cast<double>(w.concurrency);
    else if (w.load == LoadKind::batch_size)
        in_flight = static_cast<double>(w.batch_size);
    DisaggregatedLoop loop = w.load == LoadKind::request_rate
        ? rate_loop(p, dec, w, decode_workers, max_running, prefill_capacity, pre.alone_s, pre.alone_s + first_decode_s)
        : closed_loop(dec, w, in_flight, decode_workers, max_running, prefill_capacity, pre.alone_s + first_decode_s);
    double ttft_s = loop.ttft_s;
    if (w.load == LoadKind::concurrency && w.rounds > 0) {
        // A benchmark of `rounds` requests per slot: its first round arrives at once, in phase.
        const ServingContext pre_ctx(s.model, s.cluster, s.serving, d.prefill.layout);
        const double first = first_round_ttft_s(pre_ctx, w, in_flight, d.prefill.workers,
            disaggregated_serial_prefill(s.serving.engine), pre.alone_s, first_decode_s);
        const double first_share = 1.0 / static_cast<double>(w.rounds);
        ttft_s = first_share * first + (1.0 - first_share) * ttft_s;
    }
    p.running_batch = loop.running;
    p.decode_step = loop.step;
    p.queued_requests = std::max(0.0, in_flight - loop.running * decode_workers);
    p.ttft_ms = ttft_s * 1e3;
    // A transfer after the first token lands in the first gap between tokens.
    const double handoff_s = from_prefill && decode_steps > 0 ? transfer_s / decode_steps : 0.0;
    p.tpot_ms = decode_steps > 0 ? (loop.step.time_s + handoff_s) / dec.tokens_per_decode_step * 1e3 : 0;
    p.e2e_latency_ms = p.ttft_ms + static_cast<double>(w.osl - 1) * p.tpot_ms;
    p.requests_per_s = loop.rate;
    p.output_tokens_per_s = loop.rate * static_cast<double>(w.osl);
    p.output_tokens_per_s_per_gpu = p.output_tokens_per_s / static_cast<double>(p.gpus);
    p.output_tokens_per_s_per_user = p.tpot_ms > 0 ? 1e3 / p.tpot_ms : 0;
    fill_disaggregated_power(p, dec, d, pre, prefill_capacity);
    note_host_bound_decode(p, dec, s.serving.engine);
    return p;
}

} // namespace parallax

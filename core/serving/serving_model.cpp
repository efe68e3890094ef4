#include "serving/serving_model.hpp"

#include "calibration/serving_error_band.hpp"
#include "io/number_format.hpp"

#include "serving/disaggregated_model.hpp"
#include "serving/fixed_point.hpp"
#include "serving/host_bound_note.hpp"
#include "serving/serving_context.hpp"
#include "serving/serving_rules.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

namespace parallax {

namespace {

// The running batch of a Poisson load is settled to this share of itself: far below what any output shows.
constexpr double kRunningTolerance = 1e-9;
// Beyond this share of its time in prefill steps an engine that prefills apart barely decodes: the stream is
// past what it serves (predict_rate refuses such rates by the instance's capacity first).
constexpr double kMaxPrefillShare = 0.99;
// Iterations of the stream steady states (damped for a prefill batch or a carrying step, bisection for the
// rate); each settles to 1e-9 in a few dozen.
constexpr int kStreamIterations = 200;
// A floor for a stream's rate, requests per second, where it divides: far below any served load.
constexpr double kSmallestRate = 1e-12;

// Continuous batching with `running` requests in one instance, each prefilled over `prefill_steps`
// steps then decoded for osl - 1 steps. Another request is prefilling with probability
// 1 - decode_share, so a step carries, besides its own request, the others' decodes and prompt chunks.
struct SteadyState {
    double running = 1;
    double prefill_steps = 1;
    StepCost decode_step;
    StepCost prefill_step;
    double ttft_s = 0; // without waiting for a slot
    double tpot_s = 0;
    double e2e_s = 0;
    double requests_per_s = 0;
    double decode_share = 1;
    bool waits_counted = false; // ttft_s already holds the wait for a prefill slot (no M/D/1 on top)
    bool prompts_overflow = false; // the clumped steps' prompts exceed a step's budget (capped to it)
};

// A request's TPOT (the decode step over the tokens it gains) and its time end to end, from its TTFT and
// its decode steps.
void set_decode_times(SteadyState& s, const ServingContext& ctx, double decode_steps)
{
    s.tpot_s = decode_steps > 0 ? s.decode_step.time_s / ctx.tokens_per_decode_step : 0;
    s.e2e_s = s.ttft_s + decode_steps * s.decode_step.time_s;
}

StepLoad step_of(const ServingWorkload& w, double decodes, double prefill_tokens, double prefill_steps)
{
    StepLoad l;
    l.decode_requests = decodes;
    l.decode_context = static_cast<double>(w.isl) + 0.5 * static_cast<double>(w.osl);
    l.prefill_tokens = prefill_tokens;
    l.prompt_tokens = static_cast<double>(w.isl);
    l.sampled_requests = decodes + prefill_tokens / static_cast<double>(w.isl) / prefill_steps;
    return l;
}

StepCost blend(const StepCost& a, const StepCost& b, double share_b)
{
    auto mix = [&](double x, double y) { return (1.0 - share_b) * x + share_b * y; };
    StepCost c;
    c.time_s = mix(a.time_s, b.time_s);
    c.compute_bound_s = mix(a.compute_bound_s, b.compute_bound_s);
    c.memory_bound_s = mix(a.memory_bound_s, b.memory_bound_s);
    c.comm_s = mix(a.comm_s, b.comm_s);
    c.overhead_s = mix(a.overhead_s, b.overhead_s);
    c.host_wait_s = mix(a.host_wait_s, b.host_wait_s);
    c.kernels = mix(a.kernels, b.kernels);
    c.flops = mix(a.flops, b.flops);
    c.tensor_s = mix(a.tensor_s, b.tensor_s);
    c.hbm_bytes = mix(a.hbm_bytes, b.hbm_bytes);
    c.weight_bytes = mix(a.weight_bytes, b.weight_bytes);
    c.kv_bytes = mix(a.kv_bytes, b.kv_bytes);
    return c;
}

// A step with `decodes` decoding requests while `prefilling` other requests (an expectation) each add a
// prompt chunk. Fewer than one is a chance, not a fraction: that share of the steps carries a whole
// chunk, the rest none (a step's cost is far from linear in its tokens: weights are read once).
StepCost step_with_chunks(const ServingContext& ctx, const ServingWorkload& w, double decodes, double own_prefill,
    double prefilling, double chunk, double prefill_steps)
{
    if (prefilling >= 1.0 || prefilling <= 0.0)
        return step_cost(ctx, step_of(w, decodes, own_prefill + prefilling * chunk, prefill_steps));
    const StepCost without = step_cost(ctx, step_of(w, decodes, own_prefill, prefill_steps));
    const StepCost with = step_cost(ctx, step_of(w, decodes, own_prefill + chunk, prefill_steps));
    return blend(without, with, prefilling);
}

SteadyState steady_state(const ServingContext& ctx, const ServingWorkload& w, double running)
{
    SteadyState s;
    s.running = std::max(1.0, running);
    const double others = s.running - 1.0;
    const double decode_steps = decode_steps_of(ctx, w);
    const double budget = instance_token_budget(ctx);
    const double isl = static_cast<double>(w.isl);
    // Steps to prefill one prompt: the prompt tokens of every request in its prefill share the step's
    // token budget with the decodes (fixed point; the share of prefilling requests grows with it).
    double sp = std::max(1.0, std::ceil(isl / budget));
    for (int i = 0; i < 50; ++i) {
        const double prefill_share = sp / (decode_steps + sp);
        const double decodes = others * (1.0 - prefill_share);
        const double room = std::max(1.0, budget - decodes);
        const double next = std::max(std::ceil(isl / budget), isl * (1.0 + others * prefill_share) / room);
        if (std::fabs(next - sp) < 1e-6 * sp)
            break;
        sp = 0.5 * (sp + next);
    }
    s.prefill_steps = std::max(1.0, sp);
    s.decode_share = decode_steps / (decode_steps + s.prefill_steps);
    const double chunk = isl / s.prefill_steps;
    const double others_decoding = others * s.decode_share;
    const double others_prefilling = others * (1.0 - s.decode_share);
    s.decode_step = step_with_chunks(ctx, w, 1.0 + others_decoding, 0.0, others_prefilling, chunk, s.prefill_steps);
    s.prefill_step = step_with_chunks(ctx, w, others_decoding, chunk, others_prefilling, chunk, s.prefill_steps);
    // A new request waits for the step in progress to end (half a step) unless the engine is idle.
    const double boundary_wait = 0.5 * s.decode_step.time_s * others / s.running;
    s.ttft_s = boundary_wait + s.prefill_steps * s.prefill_step.time_s;
    set_decode_times(s, ctx, decode_steps);
    s.requests_per_s = s.running / (s.prefill_steps * s.prefill_step.time_s + decode_steps * s.decode_step.time_s);
    return s;
}

// The rate X at which `running` requests are served at X per second: the root of served(X) = X, where
// served (running / end-to-end time) falls as X rises (more arrivals, longer steps), by bisection on [0, hi].
template <class Served> double served_rate(double hi, const Served& served)
{
    double lo = 0;
    for (int i = 0; i < kStreamIterations && hi - lo > 1e-9 * hi; ++i) {
        const double mid = 0.5 * (lo + hi);
        (served(mid) > mid ? lo : hi) = mid;
    }
    return std::max(lo, kSmallestRate);
}

// An engine that prefills apart from its decodes (SGLang without mixed chunks) under a stream of requests
// whose phases are spread (Poisson arrivals, or replacements of finished requests): whenever prompts wait at
// a step boundary it prefills them, up to its token budget a step, and every running request's decode pauses
// meanwhile (Scheduler.get_next_batch_to_run). So the engine cycles: one decode step of the running batch,
// then a prefill batch of the prompts that arrived during the cycle before, at least one (a prefill runs only
// when one waits). With X requests per second a batch holds k = max(1, X (t_decode + t_prefill(k)))
// prompts, prefill takes u = (X / k) t_prefill(k) of the time, and a request gains a token per decode step:
// TPOT = t_decode / (1 - u). A new request waits for the step in flight (a decode step with probability
// 1 - u, a prefill with u), then for its share of its batch's prefill steps (first come, first prefilled).
struct ApartCycle {
    double batch = 1; // prompts a prefill batch holds
    double prefill_steps = 1; // steps of that batch
    StepCost prefill_step;
    double prefill_share = 0; // u
    double ttft_s = 0;
    double tpot_s = 0; // per decode step
    bool served = true; // false: prefill alone cannot keep up with X
};

ApartCycle apart_cycle(const ServingContext& ctx, const ServingWorkload& w, double running, double x, double t_decode)
{
    ApartCycle c;
    const double isl = static_cast<double>(w.isl);
    const double budget = instance_token_budget(ctx);
    double t_prefill = 0;
    for (int j = 0; j < kStreamIterations; ++j) {
        c.prefill_steps = std::max(1.0, std::ceil(c.batch * isl / budget - 1e-9));
        c.prefill_step = step_cost(ctx, step_of(w, 0, c.batch * isl / c.prefill_steps, 1.0));
        t_prefill = c.prefill_steps * c.prefill_step.time_s;
        const double next = std::clamp(x * (t_decode + t_prefill), 1.0, running);
        if (std::fabs(next - c.batch) <= 1e-9 * c.batch)
            break;
        c.batch = 0.5 * (c.batch + next);
    }
    c.prefill_share = x / c.batch * t_prefill;
    if (c.prefill_share >= kMaxPrefillShare) {
        c.served = false;
        return c;
    }
    c.tpot_s = t_decode / (1.0 - c.prefill_share);
    const double own_prefill_s = 0.5 * (c.prefill_steps + 1.0) * c.prefill_step.time_s;
    c.ttft_s = 0.5 * ((1.0 - c.prefill_share) * t_decode + c.prefill_share * t_prefill) + own_prefill_s;
    // An overlap scheduler hands the first token over a step late (fill_latencies adds a decode step): the
    // step after a prefill is another prefill when a prompt arrived during it (Poisson: 1 - e^-X t_prefill).
    const double next_is_prefill = 1.0 - std::exp(-x * t_prefill);
    c.ttft_s += ctx.engine.output_delay_steps * next_is_prefill * std::max(0.0, c.prefill_step.time_s - t_decode);
    return c;
}

// X, the requests per second of `running` requests in the cycle, is running / end-to-end time: the root of a
// decreasing function (more arrivals, longer prefills), found by bisection.
SteadyState steady_state_apart(const ServingContext& ctx, const ServingWorkload& w, double running)
{
    SteadyState s;
    s.running = std::max(1.0, running);
    const double decode_steps = decode_steps_of(ctx, w);
    s.decode_step = step_cost(ctx, step_of(w, s.running, 0, 1.0));
    const double t_decode = s.decode_step.time_s;
    const auto served_per_s = [&](double x, ApartCycle& c) {
        c = apart_cycle(ctx, w, s.running, x, t_decode);
        return c.served ? s.running / (c.ttft_s + decode_steps * c.tpot_s) : 0.0;
    };
    ApartCycle c;
    const double x = served_rate(s.running / std::max(kSmallestRate, decode_steps * t_decode),
        [&](double rate) { return served_per_s(rate, c); });
    served_per_s(x, c);
    s.prefill_steps = c.prefill_steps;
    s.prefill_step = c.prefill_step;
    s.ttft_s = c.ttft_s;
    s.tpot_s = c.tpot_s / ctx.tokens_per_decode_step;
    s.e2e_s = c.ttft_s + decode_steps * c.tpot_s;
    s.requests_per_s = s.running / s.e2e_s;
    // Steps per second of each kind: prefill (x / batch) x its steps, decode the rest of the time.
    const double prefill_steps_per_s = x / c.batch * c.prefill_steps;
    const double decode_steps_per_s = (1.0 - c.prefill_share) / t_decode;
    s.decode_share = decode_steps_per_s / (decode_steps_per_s + prefill_steps_per_s);
    return s;
}

// An engine that mixes prompts into its decode steps, fed by a Poisson stream whose prompts each fit one step:
// a step admits the prompts that arrived during the step before, so a step carrying prompts, longer, gathers
// more for the next one. The steps form a two-state Markov chain, plain or carrying prompts: after a step of
// length t the next carries prompts with probability 1 - e^(-X t), and then X t / (1 - e^(-X t)) of them.
// Prompts clump into fewer, fuller steps than one prompt spread over every step would give (the weights are
// read, and an eager step launched, once per step). A request gains a token per step (TPOT is the mean step);
// a new one waits for the step in flight (length-biased) and then for the step it rides in (weighted by the
// prompts it carries). Prompts beyond what a step's token budget holds beside the decodes are capped to it and
// flagged: that load is priced by the prefill share instead (rate_steady_state).
struct ClumpedSteps {
    StepCost plain;
    StepCost after_plain; // carrying the prompts that arrived during a plain step
    StepCost after_mixed;
    double carrying_share = 0; // of the steps
    double repeat = 0; // chance that a step after a carrying one carries prompts too
    double prompts_after_plain = 1;
    double prompts_after_mixed = 1;
    bool overflows = false; // the prompts gathered exceed what a step holds beside the decodes (capped to it)
};

ClumpedSteps clumped_steps(const ServingContext& ctx, const ServingWorkload& w, double x, double decodes)
{
    const double isl = static_cast<double>(w.isl);
    const double room = instance_token_budget(ctx) - decodes;
    ClumpedSteps c;
    c.plain = step_cost(ctx, step_of(w, decodes, 0, 1.0));
    const double fits = std::max(1.0, room / isl);
    const auto gathered = [&](double t) {
        const double n = x * t / std::max(1e-300, -std::expm1(-x * t));
        c.overflows = c.overflows || n > fits;
        return std::min(n, fits);
    };
    c.prompts_after_plain = gathered(c.plain.time_s);
    const bool plain_overflows = c.overflows;
    double t_mixed = c.plain.time_s;
    for (int i = 0; i < kStreamIterations; ++i) {
        c.overflows = plain_overflows;
        c.prompts_after_mixed = gathered(t_mixed);
        c.after_plain = step_cost(ctx, step_of(w, decodes, c.prompts_after_plain * isl, 1.0));
        c.after_mixed = step_cost(ctx, step_of(w, decodes, c.prompts_after_mixed * isl, 1.0));
        c.repeat = -std::expm1(-x * t_mixed);
        const double next = c.repeat * c.after_mixed.time_s + (1.0 - c.repeat) * c.after_plain.time_s;
        if (std::fabs(next - t_mixed) <= 1e-9 * next)
            break;
        t_mixed = 0.5 * (t_mixed + next);
    }
    const double start = -std::expm1(-x * c.plain.time_s);
    c.carrying_share = start / (1.0 - c.repeat + start);
    return c;
}

// A request's latencies in the clumped chain at X requests per second: TPOT the mean step, TTFT the wait for
// the step in flight (length-biased: E[t^2] / 2 E[t]) and then the step it rides in, which carries 1 + X t of
// the prompts that arrived during the step of length t before it (size-biased Poisson), not their mean.
SteadyState clumped_state(const ServingContext& ctx, const ServingWorkload& w, double running, double x)
{
    const ClumpedSteps c = clumped_steps(ctx, w, x, running);
    SteadyState r;
    r.running = running;
    r.prompts_overflow = c.overflows;
    const double q = c.repeat;
    const StepCost carrying = blend(c.after_plain, c.after_mixed, q);
    r.decode_step = blend(c.plain, carrying, c.carrying_share);
    r.prefill_step = carrying;
    const auto sq = [](double t) { return t * t; };
    const double mean_sq = (1.0 - c.carrying_share) * sq(c.plain.time_s)
        + c.carrying_share * (q * sq(c.after_mixed.time_s) + (1.0 - q) * sq(c.after_plain.time_s));
    const auto ridden = [&](double t_before) {
        return step_cost(ctx, step_of(w, running, (1.0 + x * t_before) * static_cast<double>(w.isl), 1.0)).time_s;
    };
    const double prompts = q * c.prompts_after_mixed + (1.0 - q) * c.prompts_after_plain;
    const double own = (q * c.prompts_after_mixed * ridden(carrying.time_s)
                           + (1.0 - q) * c.prompts_after_plain * ridden(c.plain.time_s))
        / prompts;
    r.ttft_s = mean_sq / (2.0 * r.decode_step.time_s) + own;
    set_decode_times(r, ctx, decode_steps_of(ctx, w));
    r.decode_share = 1.0; // the mean step carries the prompts' share
    r.waits_counted = true;
    return r;
}

SteadyState steady_state_clumped(const ServingContext& ctx, const ServingWorkload& w, double running)
{
    const double r = std::max(1.0, running);
    const double hi = r / (decode_steps_of(ctx, w) * step_cost(ctx, step_of(w, r, 0, 1.0)).time_s);
    const double x = served_rate(hi, [&](double rate) { return r / clumped_state(ctx, w, r, rate).e2e_s; });
    SteadyState s = clumped_state(ctx, w, r, x);
    s.requests_per_s = r / s.e2e_s;
    return s;
}

// A stream of requests in steady state, priced as the engine batches prompts.
SteadyState stream_steady_state(const ServingContext& ctx, const ServingWorkload& w, double running)
{
    return ctx.engine.mixes_prompts_with_decodes ? steady_state(ctx, w, running) : steady_state_apart(ctx, w, running);
}

// The steady state of a closed loop of `running` requests of the same length. The benchmark starts
// them together, but they do not stay together: each replacement reaches the engine only after the
// client has read the finished stream and sent a new request, and the server has tokenised it, one
// request after another, so replacements arrive spread over the steps rather than as the cohort that
// finished. The engine schedules its running requests first and admits what is waiting into the rest
// of the step's token budget (vLLM V1 Scheduler.schedule, TensorRT-LLM's in-flight batching), so in
// steady state a step admits the requests that arrived during the previous one: running / (steps of a
// request's life) on average, at least one, at most what the budget left by the decodes holds (a
// group). A group waits for the step in flight, then is prefilled alongside the others' decodes; while
// a request decodes, the other groups' prompts ride along in some of its steps. If the groups' prompts
// take more steps than a request decodes, prefill is the bottleneck and a group also waits for the
// groups ahead of it.
SteadyState closed_loop(const ServingContext& ctx, const ServingWorkload& w, double running)
{
    SteadyState s;
    s.running = std::max(1.0, running);
    const double isl = static_cast<double>(w.isl);
    const double decode_steps = decode_steps_of(ctx, w);
    const double budget = instance_token_budget(ctx);
    // The decodes take their token each from the step's budget (vLLM max_num_batched_tokens,
    // TensorRT-LLM max_num_tokens); a step admits the prompts that arrived during the one before, as
    // many as fit the rest.
    const double room = std::max(budget / 2, budget - (s.running - 1.0));
    const double arrivals_per_step = s.running / (decode_steps + std::max(1.0, std::ceil(isl / room)));
    const double group = std::clamp(arrivals_per_step, 1.0, std::max(1.0, std::floor(room / isl)));
    const double groups = std::ceil(s.running / group);
    const double others_decoding = std::max(0.0, s.running - group);
    s.prefill_steps = std::max(1.0, std::ceil(group * isl / room - 1e-9));
    const double chunk = group * isl / s.prefill_steps;
    s.prefill_step = step_cost(ctx, step_of(w, others_decoding, chunk, s.prefill_steps));
    const StepCost plain = step_cost(ctx, step_of(w, s.running, 0, 1.0));
    const StepCost riding = step_cost(ctx, step_of(w, others_decoding + group, chunk, s.prefill_steps));
    // Steps of a request's decode that carry another group's prompt chunk.
    const double other_prefill_steps = (groups - 1.0) * s.prefill_steps;
    const double riding_share = decode_steps > 0 ? std::min(1.0, other_prefill_steps / decode_steps) : 0.0;
    s.decode_step = blend(plain, riding, riding_share);
    const double backlog_steps = std::max(0.0, other_prefill_steps - decode_steps);
    const double wait = groups > 1 ? s.decode_step.time_s : 0.0;
    s.ttft_s = wait + (backlog_steps + s.prefill_steps) * s.prefill_step.time_s;
    set_decode_times(s, ctx, decode_steps);
    s.requests_per_s = s.running / s.e2e_s;
    s.decode_share = decode_steps / (decode_steps + s.prefill_steps);
    return s;
}

// A closed loop's cohort, requests that start together (in phase): it prefills the whole cohort in steps
// of the token budget (first come, first finished), then decodes it as one batch. A request done with its
// prompt early decodes in the cohort's later prompt steps where the engine mixes them, and waits for them
// where it does not.
SteadyState cohort(const ServingContext& ctx, const ServingWorkload& w, double running)
{
    SteadyState s;
    s.running = std::max(1.0, running);
    const double isl = static_cast<double>(w.isl);
    const double budget = std::max(isl, instance_token_budget(ctx));
    const double total = s.running * isl;
    const double full_steps = std::floor(total / budget);
    const double rest = total - full_steps * budget;
    const StepCost full = step_cost(ctx, step_of(w, 0, budget, 1.0));
    const StepCost last = rest > 0 ? step_cost(ctx, step_of(w, 0, rest, 1.0)) : StepCost {};
    s.prefill_steps = full_steps + (rest > 0 ? 1 : 0);
    s.prefill_step = blend(full, last, rest > 0 ? 1.0 / s.prefill_steps : 0.0);
    s.decode_step = step_cost(ctx, step_of(w, s.running, 0, 1.0));
    const double decode_steps = decode_steps_of(ctx, w);
    // Request k finishes its prompt in step ceil(k isl / budget); its first decode steps then wait for
    // the rest of the cohort's prompt steps, which it rides along with one token each.
    const auto finished_by
        = [&](double step) { return step <= full_steps ? step * full.time_s : full_steps * full.time_s + last.time_s; };
    const double prefill_all = finished_by(s.prefill_steps);
    double ttft_sum = 0;
    double tpot_sum = 0;
    const int n = static_cast<int>(std::ceil(s.running));
    for (int k = 1; k <= n; ++k) {
        const double step = std::min(s.prefill_steps, std::ceil(k * isl / budget - 1e-9));
        ttft_sum += finished_by(step);
        const double riding
            = ctx.engine.mixes_prompts_with_decodes ? std::min(decode_steps, s.prefill_steps - step) : 0.0;
        const double waiting = ctx.engine.mixes_prompts_with_decodes ? 0.0 : prefill_all - finished_by(step);
        if (decode_steps > 0)
            tpot_sum += (waiting + finished_by(step + riding) - finished_by(step)
                            + (decode_steps - riding) * s.decode_step.time_s)
                / decode_steps;
    }
    s.ttft_s = ttft_sum / n;
    s.tpot_s = tpot_sum / n / ctx.tokens_per_decode_step;
    s.e2e_s = s.ttft_s + static_cast<double>(w.osl - 1) * s.tpot_s;
    s.requests_per_s = s.running / (prefill_all + decode_steps * s.decode_step.time_s);
    s.decode_share = decode_steps / (decode_steps + s.prefill_steps);
    return s;
}

// Static batches: the whole batch is prefilled in one pass, then decoded together.
SteadyState static_batch(const ServingContext& ctx, const ServingWorkload& w, double batch)
{
    SteadyState s;
    s.running = batch;
    StepLoad pre;
    pre.prefill_tokens = batch * static_cast<double>(w.isl);
    pre.prompt_tokens = static_cast<double>(w.isl);
    pre.sampled_requests = batch;
    s.prefill_step = step_cost(ctx, pre);
    StepLoad dec;
    dec.decode_requests = batch;
    dec.decode_context = static_cast<double>(w.isl) + 0.5 * static_cast<double>(w.osl);
    dec.sampled_requests = batch;
    s.decode_step = step_cost(ctx, dec);
    const double decode_steps = decode_steps_of(ctx, w);
    s.ttft_s = s.prefill_step.time_s;
    set_decode_times(s, ctx, decode_steps);
    s.requests_per_s = batch / s.e2e_s;
    s.decode_share = decode_steps / (decode_steps + 1.0);
    return s;
}

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
    const auto running_for = [&](double running) {
        return std::clamp(rate * stream_steady_state(ctx, w, running).e2e_s, 1.0, max_running);
    };
    const SteadyState s = rate_steady_state(ctx, w, rate, max_running)
                              .value_or(stream_steady_state(
                                  ctx, w, solve_fixed_point(running_for, 1.0, max_running, kRunningTolerance).x));
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

#include "serving/steady_state.hpp"

#include "serving/serving_context.hpp"

#include <algorithm>
#include <cmath>

namespace parallax {

namespace {

// Beyond this share of its time in prefill steps an engine that prefills apart barely decodes: the stream is
// past what it serves (predict_rate refuses such rates by the instance's capacity first).
constexpr double kMaxPrefillShare = 0.99;
// Iterations of the stream steady states (damped for a prefill batch or a carrying step, bisection for the
// rate); each settles to 1e-9 in a few dozen.
constexpr int kStreamIterations = 200;
// A floor for a stream's rate, requests per second, where it divides: far below any served load.
constexpr double kSmallestRate = 1e-12;

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
    // Prompts arriving during a step of length t, given at least one (Poisson), before the cap of a step.
    const auto gathered = [&](double t) { return x * t / std::max(1e-300, -std::expm1(-x * t)); };
    const double after_plain = gathered(c.plain.time_s);
    c.prompts_after_plain = std::min(after_plain, fits);
    c.after_plain = step_cost(ctx, step_of(w, decodes, c.prompts_after_plain * isl, 1.0));
    double after_mixed = after_plain;
    double t_mixed = c.plain.time_s;
    for (int i = 0; i < kStreamIterations; ++i) {
        after_mixed = gathered(t_mixed);
        c.prompts_after_mixed = std::min(after_mixed, fits);
        c.after_mixed = step_cost(ctx, step_of(w, decodes, c.prompts_after_mixed * isl, 1.0));
        c.repeat = -std::expm1(-x * t_mixed);
        const double next = c.repeat * c.after_mixed.time_s + (1.0 - c.repeat) * c.after_plain.time_s;
        if (std::fabs(next - t_mixed) <= 1e-9 * next)
            break;
        t_mixed = 0.5 * (t_mixed + next);
    }
    c.overflows = after_plain > fits || after_mixed > fits;
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

} // namespace

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

} // namespace parallax

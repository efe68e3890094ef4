#pragma once
// The steady states of continuous batching in one serving instance: what a request's TTFT, TPOT and time end
// to end come to with `running` requests in flight, for each way requests arrive (a closed loop spread or in
// phase, a stream of spread arrivals, static batches) and each way an engine batches prompts (mixed into the
// decode steps or prefilled apart). serving_model.cpp turns them into predictions.
#include "serving/serving_spec.hpp"
#include "serving/serving_step.hpp"

namespace parallax {

struct ServingContext;

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

// A stream of `running` requests whose phases are spread, on an engine that mixes prompts into its decode
// steps: each prompt prefilled over a fixed point of steps, its chunks riding in a share of the others' steps.
SteadyState steady_state(const ServingContext& ctx, const ServingWorkload& w, double running);

// The same stream on an engine that prefills apart from its decodes (SGLang without mixed chunks): one decode
// step, then one prefill batch of the prompts that arrived meanwhile, every decode pausing for it.
SteadyState steady_state_apart(const ServingContext& ctx, const ServingWorkload& w, double running);

// A Poisson stream on an engine that mixes prompts into its decode steps: plain and carrying steps as a
// two-state Markov chain, prompts clumped into the steps after long ones (`prompts_overflow` where they exceed
// a step's budget).
SteadyState steady_state_clumped(const ServingContext& ctx, const ServingWorkload& w, double running);

// steady_state or steady_state_apart, as the engine batches prompts.
SteadyState stream_steady_state(const ServingContext& ctx, const ServingWorkload& w, double running);

// A closed loop of `running` requests of the same length, their replacements spread over the steps.
SteadyState closed_loop(const ServingContext& ctx, const ServingWorkload& w, double running);

// A closed loop's cohort: requests that start together, prefilled in steps of the token budget, then decoded
// as one batch.
SteadyState cohort(const ServingContext& ctx, const ServingWorkload& w, double running);

// Static batches of `batch` requests: prefilled in one pass, then decoded together.
SteadyState static_batch(const ServingContext& ctx, const ServingWorkload& w, double batch);

} // namespace parallax

#pragma once
// Time of one engine step of a serving instance: one forward pass over every layer for the requests
// it decodes (one token each, reading its KV cache) and the prompt tokens it prefills (compute-bound
// GEMMs and causal attention), plus the collectives of TP, EP and PP and the engine's host overhead.
#include "serving/serving_context.hpp"

namespace parallax {

// What one step processes, over the whole instance.
struct StepLoad {
    double decode_requests = 0; // requests that generate one token this step
    double decode_context = 0; // tokens already in their KV cache (mean)
    double decode_queries = 1; // tokens each decoding request runs through the model (set by step_cost)
    double prefill_tokens = 0; // prompt tokens processed this step
    double prompt_tokens = 1; // length of the prompts being prefilled (isl): their attention span
    double sampled_requests = 0; // requests whose logits are computed (decode + prompts that finish)
};

struct StepCost {
    double time_s = 0; // the whole step, one token for each decoding request
    double compute_bound_s = 0; // kernels limited by the tensor cores
    double memory_bound_s = 0; // kernels limited by HBM (weights and KV reads)
    double comm_s = 0; // TP, EP and PP collectives, not overlapped
    double overhead_s = 0; // kernel gaps and the engine's host work
    double host_wait_s = 0; // of which the GPU idles for the host (an eager step's launches, per-request work)
    double kernels = 0; // kernels launched (per GPU), for the host's share of an eager step
    double flops = 0; // per GPU
    double tensor_s = 0; // flops at the matmul precision's dense peak (power model)
    double hbm_bytes = 0; // per GPU
    double weight_bytes = 0; // of which weights
    double kv_bytes = 0; // of which KV cache reads
};

// With pp > 1 the requests are split into pp micro-batches that follow each other through the stages:
// a token waits for every stage once, so the step is the whole model's pass at a micro-batch of 1/pp.
StepCost step_cost(const ServingContext& ctx, const StepLoad& load);
// Energy of one GPU over a step: the compute-bound kernels scale with the clock, the memory-bound ones,
// the collectives and the host's share do not.
double step_energy_J(const ServingContext& ctx, const StepCost& c);

// Prompt tokens the busiest attention-DP rank prefills in a step of `prefill_tokens` over the instance, whose
// prompts are `prompt_tokens` long: a prompt is prefilled whole by the rank it was given, so one rank holds
// at least one prompt's chunk, at most its token budget of it (the instance's tokens without attention DP).
double busiest_rank_prefill_tokens(const ServingContext& ctx, double prefill_tokens, double prompt_tokens);

// Whether an instance's MoE layers move tokens between attention-DP ranks by all-to-all (else they gather
// every rank's tokens and reduce-scatter the outputs): EP under attention DP with the all-to-all exchange,
// where the engine runs it.
bool moe_all_to_all(const EngineTraits& engine, const InstanceLayout& l, const MoeSpec& moe);

// Efficiency of the routed experts' grouped GEMMs of `rows_per_expert` rows, n columns over the local
// experts and depth k: the dense GEMM's at those shapes, capped by what the engines' fused MoE kernels reach.
double routed_expert_gemm_efficiency(
    const ServingContext& ctx, double rows_per_expert, double n, double k, Precision p);

// What the fused MoE kernels do not overlap, on top of the roofline of their weight reads (`bytes`) and their
// `flops`: the smaller of the two in small-tile terms, in full up to one 64-row tile per expert.
double fused_moe_serial_s(const ServingContext& ctx, double rows_per_expert, double flops, double bytes, Precision p);

// HBM bytes one routed (token, expert) row moves in a fused MoE layer besides the GEMMs' weights: the token
// gathered and quantised for its expert, the gate and up outputs written and read back by the activation,
// the activated row quantised for the down GEMM, and the down GEMM's fp32 partial written and read back by
// the weighted combine. `inter` is the expert's width on this GPU, `act_bytes` the GEMM inputs' element size.
double fused_moe_row_traffic_bytes(double hidden, double inter, double act_bytes);

// Expected number of distinct experts `draws` routing picks touch among `experts` when each token
// picks `top_k` of them uniformly: E (1 - (1 - k/E)^tokens).
double expected_distinct_experts(double experts, double top_k, double tokens);

} // namespace parallax

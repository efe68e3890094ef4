#pragma once
// A serving instance with only part of its layers' weights on the GPU: the other layers live in host
// memory and stream over the host link every step, each into one of a few staging buffers while the
// layers before it compute (FlexGen, DeepSpeed ZeRO-Inference and vLLM's --cpu-offload-gb prefetch one
// layer ahead). A step is then a per-layer pipeline of max(compute, fetch): while the fetches hide
// under the compute, throughput does not move; past the knee where the offloaded layers' fetch time
// equals the step's compute, it falls as 1 / fetch time, steeply and not linearly in the residency.
#include "serving/host_link.hpp"
#include "serving/serving_model.hpp"

#include <vector>

namespace parallax {

// One layer computing from its buffer while the next one streams into the other: FlexGen (Sheng et al.
// 2023, Sec. 4.1, loading layer j+1 while computing layer j) and ZeRO-Inference's prefetch of the next layer.
inline constexpr int kDefaultPrefetchDepth = 2;

struct OffloadPipeline {
    int layers = 1;
    int offloaded_layers = 0; // spread evenly among the resident ones
    double compute_s_per_layer = 0; // the step's time spread over its layers
    double fetch_s_per_layer = 0; // one layer's weights on this GPU over its host link
    int prefetch_depth = kDefaultPrefetchDepth; // staging buffers for offloaded layers
};

// Steady-state time of one step: layers compute in order; an offloaded layer waits for its fetch; the
// host link copies one layer at a time, each into a buffer freed when the layer that used it
// `prefetch_depth` offloaded layers before has computed (so the next step's fetches start early).
double offloaded_step_time_s(const OffloadPipeline& p);
// Layers left in host memory at `residency` (the fraction of layers on the GPU), rounded to whole layers.
int offloaded_layers_at(int layers, double residency);
// 1 - compute / (every layer's fetch): below it the fetches no longer hide. 1 when even one layer's
// fetch cannot hide, 0 when all of them can.
double knee_residency(double step_compute_s, double fetch_all_s);

struct ResidencyPoint {
    double residency = 1; // resident layers / layers
    int offloaded_layers = 0;
    double step_s = 0; // the reference decode step through the pipeline (sets TPOT)
    double relative_throughput = 1; // fully resident step / this step, at the reference step's batch
    double output_tokens_per_s = 0; // the deployment, from predict_offloaded (0 where it does not fit)
    bool fetch_bound = false;
};

struct ResidencyCurve {
    double step_compute_s = 0; // the reference: the decode step of the most resident point that fits
    double fetch_all_s = 0; // every layer's weights over the host link
    double knee_residency = 1;
    std::vector<ResidencyPoint> points; // from 1 down to 0
};

// The instance's weights outside the embedding and output projection, on one GPU (pp = 1).
double layer_weight_bytes_per_gpu(const ServingContext& ctx);

struct OffloadedPrediction {
    ServingPrediction prediction; // latencies and throughput with the pipeline's slowdowns applied
    double residency = 1;
    int offloaded_layers = 0;
    double offloaded_bytes_per_gpu = 0;
    double decode_slowdown = 1; // step time over the fully resident one's
    double prefill_slowdown = 1;
    double fetch_s_per_layer = 0; // one offloaded layer's weights over the host link
};

// How much slower a step of `step_s` runs with `offloaded` of `layers` layers fetched over the host
// link every step (the pipeline of offloaded_step_time_s).
double offload_slowdown(double step_s, int layers, int offloaded, double fetch_s_per_layer);

// The serving model at `residency`: the memory the offloaded layers free (less the staging buffers) goes
// to the engine's KV pool, then the decode and prefill steps stretch as the pipeline says.
OffloadedPrediction predict_offloaded(const ServingScenario& s, double residency, const HostLink& link);
// Decode throughput against residency, 1 to 0 in `steps` equal steps: relative throughput at one batch
// (the most resident point that fits), and the deployment's tokens/s where each residency fits.
ResidencyCurve residency_curve(const ServingScenario& s, const HostLink& link, int steps = 10);

} // namespace parallax

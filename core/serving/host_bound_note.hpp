#pragma once
// What a prediction says when its decode steps wait for the engine's per-request host work: the rank's
// output is then capped whatever the GPU, and a smaller batch per rank keeps the throughput.
#include "serving/serving_context.hpp"
#include "serving/serving_model.hpp"

namespace parallax {

// Adds the note to `p.warnings` when the host's wait is a noticeable share of `p.decode_step` (`ctx`: the
// instance, or the decode pool's worker, that runs those steps).
void note_host_bound_decode(ServingPrediction& p, const ServingContext& ctx, ServingEngine engine);

} // namespace parallax

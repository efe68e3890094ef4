#pragma once
// Disaggregated prefill/decode (Splitwise, DistServe): prompts run on prefill workers, whose KV cache
// then crosses the fabric to decode workers that only generate. The pools are sized independently;
// the slower of the two sets the throughput, and the KV transfer adds to the time to first token.
#include "serving/serving_model.hpp"

namespace parallax {

ServingPrediction predict_disaggregated(const ServingScenario& s);

// Seconds to move one request's KV cache of `tokens` from a prefill worker to a decode worker: every
// prefill GPU sends its share at once, over NVLink when both pools fit in one node, else the NICs.
double kv_transfer_s(const ServingScenario& s, double tokens);

} // namespace parallax

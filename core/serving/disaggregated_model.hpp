#pragma once
// Disaggregated prefill/decode (Splitwise, DistServe): prompts run on prefill workers, whose KV cache
// then crosses the fabric to decode workers that only generate. The pools are sized independently;
// the slower of the two sets the throughput, and the KV transfer adds to the time to first token.
#include "serving/serving_model.hpp"

namespace parallax {

// What a prefill pool's worker does, independent of the decode pool: the search computes it once per layout.
struct PrefillPoolCost {
    ServingMemory memory;
    double requests_per_s = 0; // one worker at full load
    double alone_s = 0; // one prompt on an idle worker
    double busy_W = 0; // per GPU at full load
    double wait_W = 0; // per GPU idle
};
PrefillPoolCost prefill_pool_cost(const ServingScenario& s, const InstanceLayout& l);

// `prefill`: the prefill pool's cost when already known (else computed).
ServingPrediction predict_disaggregated(const ServingScenario& s, const PrefillPoolCost* prefill = nullptr);

// Seconds to move one request's KV cache of `tokens` from a prefill worker to a decode worker: each
// decode TP rank receives its heads' share (all of MLA's latent), the ranks of both sides at once, over
// NVLink when both pools fit in one NVLink domain, else the NICs, at the share of the link a transfer
// reaches.
double kv_transfer_s(const ServingScenario& s, double tokens);

// TensorRT-LLM's prefill (context) workers run one prompt at a time; vLLM's and SGLang's batch them.
bool disaggregated_serial_prefill(ServingEngine e);
// TensorRT-LLM streams the first token from the prefill worker; vLLM and SGLang from the decode worker,
// after the KV transfer and one decode step.
bool disaggregated_first_token_from_prefill(ServingEngine e);

} // namespace parallax

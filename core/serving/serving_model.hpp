#pragma once
// The serving prediction: for a deployment and a workload, the running batch in steady state, the
// latencies a request sees (TTFT, TPOT, end to end), the throughput, memory and power. How each load
// kind is turned into a running batch is in docs/serving.md.
#include "serving/serving_memory.hpp"
#include "serving/serving_spec.hpp"
#include "serving/serving_step.hpp"

#include <string>
#include <vector>

namespace parallax {

// The band around TTFT, TPOT and output tokens/s that the serving model's errors on measured rows of the
// same kind of deployment give (calibration/serving_error_band.hpp); level 0: none.
struct ServingInterval {
    double level = 0;
    double ttft_ms_low = 0, ttft_ms_high = 0;
    double tpot_ms_low = 0, tpot_ms_high = 0;
    double tokens_per_s_low = 0, tokens_per_s_high = 0; // output tokens/s of the whole deployment
    double tokens_per_s_per_gpu_low = 0, tokens_per_s_per_gpu_high = 0;
    std::string basis; // the throughput band's rows, in words
};

struct ServingPrediction {
    bool feasible = false;
    std::vector<std::string> warnings; // why not feasible first, then what is worth knowing
    int replicas = 0;
    int instance_gpus = 0;
    long long gpus = 0;
    double ttft_ms = 0; // mean, queueing included
    double tpot_ms = 0; // mean time between output tokens after the first
    double e2e_latency_ms = 0;
    double output_tokens_per_s = 0; // whole deployment
    double output_tokens_per_s_per_gpu = 0;
    double output_tokens_per_s_per_user = 0; // 1000 / tpot
    double requests_per_s = 0;
    double running_batch = 0; // requests running at once, per instance
    long long max_batch_by_memory = 0; // per instance
    double queued_requests = 0; // per instance, waiting for a slot (closed loop beyond the batch)
    double prefill_steps = 0; // steps a prompt's prefill spans (chunked prefill)
    ServingMemory memory;
    StepCost decode_step; // a step while a request decodes (sets TPOT)
    StepCost prefill_step; // a step while it is prefilled
    double avg_W_per_gpu = 0;
    double energy_J_per_token = 0; // per output token, all GPUs of the deployment
    bool slo_met = true;
    ServingInterval interval;
};

ServingPrediction predict_serving(const ServingScenario& s);
// Sets the prediction's error band from the measured errors of its class of deployment (predict_serving
// does; a caller predicting through another path, as the search's shared prefill pools, calls it itself).
void add_serving_interval(ServingPrediction& p, const ServingScenario& s);
// Marks a prediction that misses the SLO (slo_met, a warning per limit missed).
void check_slo(ServingPrediction& p, const ServingSlo& slo);

} // namespace parallax

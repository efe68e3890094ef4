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
};

ServingPrediction predict_serving(const ServingScenario& s);
// Marks a prediction that misses the SLO (slo_met, a warning per limit missed).
void check_slo(ServingPrediction& p, const ServingSlo& slo);

} // namespace parallax

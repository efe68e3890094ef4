#pragma once
#include <string>
#include <vector>

namespace parallax {

enum class Fidelity : unsigned char { analytic, simulated };

// Bytes per GPU.
struct MemoryBreakdown {
    double weights = 0;
    double gradients = 0;
    double optimizer = 0;
    double activations = 0;
    double other = 0; // communication buffers, workspace, CUDA context, fragmentation reserve
    double total() const { return weights + gradients + optimizer + activations + other; }
};

// Seconds per step spent in each group's collectives (total busy time of that traffic) and the
// part of all communication that is not hidden under compute.
struct CommBreakdown {
    double tp = 0;
    double pp = 0;
    double dp = 0;
    double cp = 0;
    double ep = 0;
    double exposed = 0;
};

// Where one step's time goes on the critical path. Parts sum to step_time_s.
struct TimeBreakdown {
    double compute_s = 0; // forward + backward of the model FLOPs (no recompute)
    double recompute_s = 0;
    double bubble_s = 0;
    double exposed_tp_s = 0;
    double exposed_pp_s = 0;
    double exposed_dp_s = 0;
    double exposed_cp_s = 0;
    double exposed_ep_s = 0;
    double optimizer_s = 0;
    double offload_s = 0;
    double total() const
    {
        return compute_s + recompute_s + bubble_s + exposed_tp_s + exposed_pp_s + exposed_dp_s + exposed_cp_s
            + exposed_ep_s + optimizer_s + offload_s;
    }
};

struct PowerEstimate {
    double avg_W_per_gpu = 0;
    double peak_W_per_gpu = 0;
    double energy_J_per_token = 0;
};

struct StageReport {
    int stage = 0;
    int layers = 0;
    bool has_embedding = false;
    bool has_output = false;
    int in_flight_microbatches = 0;
    double forward_s = 0; // one micro-batch, all chunks of this stage
    double backward_s = 0;
    MemoryBreakdown memory;
};

struct Prediction {
    int schema = 1;
    Fidelity fidelity = Fidelity::analytic;
    bool feasible = true;
    std::string infeasible_reason;
    double step_time_s = 0;
    double tokens_per_s = 0;
    double tflops_per_gpu = 0; // model FLOPs as Megatron reports them
    double mfu = 0;
    double hfu = 0; // hardware FLOPs incl. recompute
    double bubble_fraction = 0;
    double peak_memory_bytes = 0;
    double capacity_bytes = 0;
    MemoryBreakdown memory; // of the rank with the highest peak
    int peak_memory_stage = 0;
    CommBreakdown communication_s;
    TimeBreakdown time;
    PowerEstimate power;
    std::vector<StageReport> stages;
    long long microbatches = 0;
    double checkpoint_bytes = 0; // bf16 weights + optimizer states of the whole model, as saved
    double moe_dropped_fraction = 0; // token-expert assignments dropped at the capacity factor
    std::vector<std::string> warnings;
    std::vector<std::string> assumptions;
};

} // namespace parallax

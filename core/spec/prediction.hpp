#pragma once
#include <array>
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
    // Offloaded optimizer states, gradients, parameters and activations this GPU keeps in its host's
    // memory: not GPU memory, so not in total().
    double host = 0;
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
    double data_stall_s = 0; // the loader could not prepare the next batch in time (data_path.hpp)
    // Activation and parameter copies to and from host memory that the compute does not hide.
    double host_copy_s = 0;
    double total() const;
};

// The step's parts in the order the views draw them, each with the name explanations give it. Code that
// lists the parts walks this table, so a new part is a member, an entry here and a colour in the views.
struct TimePartField {
    const char* name;
    double TimeBreakdown::*seconds;
};
inline constexpr std::array<TimePartField, 12> kTimeBreakdownParts { {
    { "compute", &TimeBreakdown::compute_s },
    { "recompute", &TimeBreakdown::recompute_s },
    { "pipeline bubble", &TimeBreakdown::bubble_s },
    { "exposed TP communication", &TimeBreakdown::exposed_tp_s },
    { "exposed PP communication", &TimeBreakdown::exposed_pp_s },
    { "exposed DP communication", &TimeBreakdown::exposed_dp_s },
    { "exposed CP communication", &TimeBreakdown::exposed_cp_s },
    { "exposed EP communication", &TimeBreakdown::exposed_ep_s },
    { "optimizer step", &TimeBreakdown::optimizer_s },
    { "offload", &TimeBreakdown::offload_s },
    { "data stall", &TimeBreakdown::data_stall_s },
    { "host copies", &TimeBreakdown::host_copy_s },
} };

inline double TimeBreakdown::total() const
{
    double sum = 0;
    for (const TimePartField& part : kTimeBreakdownParts)
        sum += this->*part.seconds;
    return sum;
}

// Power of one step (power_model.hpp). Per GPU unless named otherwise; the node and cluster figures
// add what a node draws besides its GPUs (ClusterSpec::node_overhead_W).
struct PowerEstimate {
    double avg_W_per_gpu = 0; // energy of the step / step time, averaged over the GPUs
    double peak_W_per_gpu = 0; // the highest pass-level power of any GPU (after the power cap)
    double energy_J_per_token = 0; // all GPUs
    double energy_J_per_step_per_gpu = 0; // as Megatron's --log-energy prints it (J/iter/GPU)
    double energy_J_per_step = 0; // all GPUs
    double node_overhead_W = 0; // CPUs, NICs, switches, fans of one node
    double avg_W_per_node = 0; // GPUs + overhead
    double peak_W_per_node = 0;
    double gpus = 0; // GPUs the plan uses
    double nodes = 0; // nodes the plan uses
    double nodes_per_rack = 0;
    double racks = 0;
    double rack_avg_kW = 0; // a full rack
    double rack_peak_kW = 0;
    double cluster_avg_kW = 0; // GPUs + node overhead of every node the plan uses
    double cluster_peak_kW = 0; // upper bound: every stage at its peak at once
    double idle_W = 0; // the floor: board idle
    double cap_W = 0; // the power limit the GPUs enforce
    double thermal_limit_W = 0; // sustained power the cooling allows at the inlet temperature
    double clock_MHz = 0; // mean application clock over the stages (after the thermal limit)
    double thermal_clock = 0; // clock fraction the thermal limit imposes; 0 = not thermally limited
    double busy_fraction = 0; // of the step the compute kernels run
    double cap_slowdown = 0; // kernel time the power cap adds on the most affected stage (fraction)
    bool power_capped = false; // the cap costs more than kCapNoticeable of some stage's kernel time
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
    double clock_MHz = 0; // application clock of this stage
    double avg_W = 0; // per GPU of this stage, over the step
    double peak_W = 0;
};

// Where the measured value should fall, `level` of the time (calibration/error_band.hpp): from the
// model's out-of-sample errors on published runs of the same kind of workload. level 0: none.
struct PredictionInterval {
    double level = 0;
    double tokens_per_s_low = 0;
    double tokens_per_s_high = 0;
    double step_time_s_low = 0;
    double step_time_s_high = 0;
    bool far_from_validation = false;
    // The best MFU measured in the workload's class when this prediction's MFU is above it (an
    // extrapolation: no validation run reached that efficiency); 0 otherwise.
    double best_measured_mfu_exceeded = 0;
    std::string basis;
    // Peak memory per GPU (level 0 when the model's memory errors give no band).
    double memory_level = 0;
    double peak_memory_bytes_low = 0;
    double peak_memory_bytes_high = 0;
    std::string memory_basis;
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
    // Host memory of one node: what its GPUs offload (MemoryBreakdown::host of each) and what it has.
    double host_memory_bytes_per_node = 0;
    double host_capacity_bytes_per_node = 0;
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
    PredictionInterval interval;
};

} // namespace parallax

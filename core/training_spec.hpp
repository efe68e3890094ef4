#pragma once
#include "precision.hpp"
#include "software_stack.hpp"

#include <optional>
#include <vector>

namespace parallax {

struct TrainingSpec {
    long long global_batch = 1; // sequences per optimizer step
    long long seq_len = 2048;
    Precision precision = Precision::bf16; // of the matmuls
    // Extensions (SCENARIO.md allows adding keys):
    bool flash_attention = true; // fused attention: no s^2 score matrices stored, recomputed in backward
    Framework framework = Framework::megatron;
    // How fp8 GEMM inputs are scaled: one scale per tensor (Transformer Engine, torchao tensorwise)
    // or per row (torchao rowwise, slower kernels).
    bool fp8_rowwise = false;
    // MoE router imbalance (moe_load.hpp): the busiest EP rank's tokens over the mean (1 = balanced),
    // or a measured per-expert load histogram (one entry per expert, any scale).
    double moe_imbalance = 1.0;
    std::vector<double> moe_expert_load;
    std::optional<double> tokens_to_train; // for time-to-train objectives
    // Power and DVFS (power_model.hpp). Clocks in MHz; 0 = the GPU's nominal clock (gpu.clock_MHz).
    double clock_MHz = 0; // application clock of every stage (nvidia-smi -lgc)
    std::vector<double> stage_clock_MHz; // one per pipeline stage; overrides clock_MHz when it has pp entries
    double power_cap_W = 0; // per-GPU power cap (nvidia-smi -pl); 0 = the GPU's limit or TDP
    std::optional<double> inlet_temp_C; // cooling inlet temperature; unset = power_model's default
};

} // namespace parallax

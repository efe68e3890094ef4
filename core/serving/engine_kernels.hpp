#pragma once
// What the serving engines' own kernels measure on Hopper and Blackwell, where the training model's
// constants (tuned on training kernels) do not describe them: a quantised Linear layer's rate (its input
// quantised on the fly, its weights streamed with their block scales) and the engines' NVLink all-reduce
// at the message sizes a decode step sends. Source: NVIDIA AIConfigurator's TensorRT-LLM 1.2.0rc5 kernel
// collection on H100 SXM and B200 (engine_kernels.cpp). Other GPUs keep the training model's physics.
#include "spec/gpu_spec.hpp"
#include "spec/precision.hpp"

#include <optional>

namespace parallax {

struct LinearRates {
    double gemm = 0; // the large-GEMM constant for the precision (0: the generation's own)
    double weight_stream = 0; // fraction of the HBM bandwidth while streaming the weights at a few rows
};

// The rates of the engines' Linear layers of weights stored at `p`; nullopt where nothing was measured.
std::optional<LinearRates> serving_linear_rates(GpuArchitecture a, Precision p);

// An all-reduce of `bytes` (bf16) over `gpus` GPUs of one NVLink domain with the engines' own kernel;
// nullopt where nothing was measured (other GPUs, or more than 8 ranks).
std::optional<double> measured_nvlink_all_reduce_s(GpuArchitecture a, int gpus, double bytes);

} // namespace parallax

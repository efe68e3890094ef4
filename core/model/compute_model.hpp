#pragma once
// Time of compute kernels on one GPU from their shapes: GEMMs with wave quantisation and K-loop
// overheads under a roofline, fused attention, and memory-bound elementwise kernels.
// Allocation-free; called in the analytic hot path.
#include "spec/gpu_spec.hpp"
#include "spec/hardware_generation.hpp"
#include "spec/precision.hpp"
#include "spec/software_stack.hpp"

namespace parallax {

struct ComputeDevice {
    const GpuSpec* gpu = nullptr;
    const GenerationConstants* gen = nullptr;
    int sm_count = 108;
    double clock_scale = 1.0; // DVFS: fraction of the nominal clock (power issue)

    AttentionKernel attention_kernel = AttentionKernel::best;
    // Calibration scales (calibration.hpp): on GEMM and attention efficiency, and on all compute
    // kernels for the framework. 1 = the uncalibrated physics.
    double gemm_scale = 1.0;
    double attention_scale = 1.0;
    double kernel_scale = 1.0;
    Fp8Scaling fp8_scaling = Fp8Scaling::tensorwise; // rowwise-scaled fp8 GEMMs run slower kernels

    // At the nominal clock; DVFS and the power limit act per kernel (power_model.hpp, power_curves.hpp).
    static ComputeDevice of(const GpuSpec& g);
    double peak(Precision p) const { return gpu->peak(p) * clock_scale; }
    // The 16-bit tensor-core precision the GPU has: bf16, or fp16 on Volta (no bf16 tensor cores).
    Precision half_precision() const { return gpu->supports(Precision::bf16) ? Precision::bf16 : Precision::fp16; }
    double half_peak() const { return peak(half_precision()); }
};

// Fraction of the precision's peak a GEMM C[m x n] = A[m x k] B[k x n] reaches: the library's
// best tile for the shape (partial tiles and the last partial wave are wasted), times the K-loop
// efficiency k/(k + k0), times the generation's large-GEMM efficiency.
double gemm_efficiency(const ComputeDevice& dev, double m, double n, double k, Precision p) noexcept;
// The generation's large-GEMM efficiency for the precision (its tuned constant, or a conservative 0.5 where
// it has none), before tiles, waves, the K loop and any calibration.
double tuned_gemm_efficiency(const GenerationConstants& gen, Precision p) noexcept;
// The tile and wave part of gemm_efficiency alone: the useful share of the work the best tile
// schedules for C[m x n] (partial tiles and the last partial wave wasted), weighted by the tile's speed.
double gemm_wave_efficiency(const ComputeDevice& dev, double m, double n) noexcept;
// Seconds for `batch` independent GEMMs of that shape (roofline against HBM traffic).
double gemm_time_s(const ComputeDevice& dev, double m, double n, double k, Precision p, double batch = 1) noexcept;

// Fused (flash) attention for `batch_heads` = micro_batch * heads on this GPU, `q_len` queries
// against `kv_len` keys; `causal` halves the work. Returns seconds; flops_out gets the executed FLOPs.
double flash_attention_fwd_s(const ComputeDevice& dev, double batch_heads, double q_len, double kv_len,
    double qk_head_dim, double v_head_dim, bool causal, double* flops_out = nullptr) noexcept;
// Backward recomputes the probabilities: 2.5x the forward FLOPs (5 matmuls vs 2; Dao 2023, Sec. 3.1).
double flash_attention_bwd_s(const ComputeDevice& dev, double batch_heads, double q_len, double kv_len,
    double qk_head_dim, double v_head_dim, bool causal, double* flops_out = nullptr) noexcept;

// Fused attention restricted to a causal sliding window: each query attends to at most `window` keys
// (itself and the window-1 before it). The kernel skips key blocks wholly outside the band and computes
// the partly masked ones in full. flops_out gets the useful FLOPs.
double flash_attention_windowed_fwd_s(const ComputeDevice& dev, double batch_heads, double q_len, double window,
    double qk_head_dim, double v_head_dim, double* flops_out = nullptr) noexcept;
double flash_attention_windowed_bwd_s(const ComputeDevice& dev, double batch_heads, double q_len, double window,
    double qk_head_dim, double v_head_dim, double* flops_out = nullptr) noexcept;
// Query-key pairs a causal sliding window of `window` keys scores over `q_len` queries:
// sum over query i of min(i + 1, window).
double windowed_attention_pairs(double q_len, double window) noexcept;
// Query-key pairs the tiled kernel computes for it: per block of queries, every key block the band
// touches, in full (FlashAttention-2 local attention, Dao 2023, Sec. 3.1: blocks outside the mask are
// skipped, the rest are computed and masked).
double windowed_attention_executed_pairs(double q_len, double window) noexcept;

// Seconds for the per-expert GEMMs of a grouped expert MLP that issues one GEMM kernel per local expert
// (Transformer Engine's GroupedLinear: a cuBLASLt GEMM per expert, TE general_grouped_gemm): each
// expert's GEMM has its own tiles and waves and pays the per-kernel launch and tail.
double per_expert_gemm_time_s(
    const ComputeDevice& dev, double rows, double n, double k, Precision p, double experts) noexcept;

// A kernel bound by HBM traffic.
double memory_bound_time_s(const ComputeDevice& dev, double bytes) noexcept;

} // namespace parallax

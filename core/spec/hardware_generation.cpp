#include "spec/hardware_generation.hpp"

namespace parallax {
namespace {

GenerationConstants make(std::array<double, kPrecisionCount> gemm, int sms, std::array<GemmTile, 3> tiles,
    double attn_fwd, double attn_bwd, double hbm, double kernel_s)
{
    GenerationConstants g;
    g.gemm_efficiency = gemm;
    g.default_sm_count = sms;
    g.tiles = tiles;
    g.attention_fwd_efficiency = attn_fwd;
    g.attention_bwd_efficiency = attn_bwd;
    g.attention_fa2_fwd_efficiency = attn_fwd;
    g.attention_fa2_bwd_efficiency = attn_bwd;
    g.hbm_efficiency = hbm;
    g.kernel_overhead_s = kernel_s;
    return g;
}

// Order of gemm arrays: fp32, tf32, bf16, fp16, fp8, fp4.
const GenerationConstants kGeneric = make({ 0.7, 0.7, 0.7, 0.7, 0.6, 0.55 }, 108,
    { { { 128, 256, 1.0 }, { 128, 128, 0.92 }, { 64, 128, 0.8 } } }, 0.5, 0.4, 0.8, 5e-6);

// V100: cuBLAS fp16 HGEMM reaches ~100-110 of 125 TFLOP/s on large squares (NVIDIA DL performance
// guide, Matrix Multiplication Background); 80 SMs (V100 whitepaper). No flash-attention kernels for
// Volta: attention runs as batched GEMMs + softmax.
const GenerationConstants kVolta = make({ 0.85, 0.0, 0.0, 0.82, 0.0, 0.0 }, 80,
    { { { 128, 128, 1.0 }, { 128, 64, 0.92 }, { 64, 64, 0.75 } } }, 0.35, 0.3, 0.8, 6e-6);

// A100: cuBLAS BF16 ~250-270 of 312 TFLOP/s for large GEMMs (NVIDIA DL performance guide); 108 SMs
// (A100 whitepaper); FlashAttention-2 forward ~70% of peak at head dim 128, backward ~55-60%
// (Dao 2023, FlashAttention-2, Fig. 4-6); STREAM-like kernels reach ~85-90% of HBM bandwidth.
const GenerationConstants kAmpere = make({ 0.9, 0.72, 0.82, 0.82, 0.0, 0.0 }, 108,
    { { { 128, 256, 1.0 }, { 128, 128, 0.93 }, { 64, 128, 0.8 } } }, 0.66, 0.55, 0.85, 4e-6);

// H100 SXM: cuBLAS BF16 ~700-760 of 989 TFLOP/s, FP8 ~1,250-1,450 of 1,979 (NVIDIA Hopper tuning
// guide, public cuBLAS benchmarks); 132 SMs (H100 whitepaper); FlashAttention-3/cuDNN forward
// 600-750 TFLOP/s at head dim 128 (Shah et al. 2024, FlashAttention-3), backward ~450-550.
const GenerationConstants kHopper = make({ 0.9, 0.7, 0.74, 0.74, 0.64, 0.0 }, 132,
    { { { 128, 256, 1.0 }, { 128, 128, 0.9 }, { 64, 128, 0.75 } } }, 0.6, 0.48, 0.85, 4e-6);

// B200: 148 SMs; cuBLAS BF16 ~1.5-1.7 of 2.25 PFLOP/s and FP8 ~3 of 4.5 (NVIDIA Blackwell tuning
// guide, public benchmarks: estimate); FlashAttention/cuDNN on Blackwell ~55% of peak (estimate).
// FlashAttention-2 on H100 reaches ~350-370 TFLOP/s forward and ~310-350 backward at head dim 128 on
// long sequences (Shah et al. 2024, FlashAttention-3, Fig. 5-6: FA2 baseline curves; FA3's backward is
// 1.5-1.75x FA2's).
GenerationConstants with_fa2(GenerationConstants g, double fwd, double bwd)
{
    g.attention_fa2_fwd_efficiency = fwd;
    g.attention_fa2_bwd_efficiency = bwd;
    return g;
}
// Exponentials in the attention forward: MUFU.EX2 runs 16 per clock and SM on Ampere, Hopper and
// Blackwell, while the dense 16-bit tensor cores do 2,048 (A100: 312 TFLOP/s / (108 SMs x 1.41 GHz)),
// 4,096 (H100: 989 / (132 x 1.83)) and 8,192 (B200: 2,250 / (148 x 1.86)) FLOPs per clock and SM
// (Zadouri et al. 2026, FlashAttention-4, Sec. 2: Blackwell doubled the tensor cores, not the SFUs).
GenerationConstants with_exp_unit(GenerationConstants g, double tensor_flops_per_clock_sm)
{
    constexpr double kExpPerClockSm = 16;
    g.tensor_flops_per_exp = tensor_flops_per_clock_sm / kExpPerClockSm;
    return g;
}
const GenerationConstants kHopperWithFa2 = with_exp_unit(with_fa2(kHopper, 0.37, 0.33), 4096);
const GenerationConstants kAmpereWithExp = with_exp_unit(kAmpere, 2048);

const GenerationConstants kBlackwell = make({ 0.9, 0.7, 0.72, 0.72, 0.66, 0.6 }, 148,
    { { { 256, 256, 1.0 }, { 128, 256, 0.95 }, { 128, 128, 0.85 } } }, 0.55, 0.45, 0.85, 4e-6);
// FlashAttention-2 on Blackwell runs without the new tensor-core instructions (estimate: ~25% of peak).
const GenerationConstants kBlackwellWithFa2 = with_exp_unit(with_fa2(kBlackwell, 0.28, 0.22), 8192);

// MI250X (per GCD): hipBLASLt BF16 ~55-60% of peak on large GEMMs (AMD ROCm performance notes,
// estimate); 110 CUs per GCD (CDNA2 whitepaper).
const GenerationConstants kCdna2 = make({ 0.8, 0.0, 0.58, 0.58, 0.0, 0.0 }, 110,
    { { { 256, 128, 1.0 }, { 128, 128, 0.92 }, { 64, 128, 0.78 } } }, 0.4, 0.32, 0.8, 6e-6);

// MI300X: hipBLASLt BF16 ~600-700 of 1,307 TFLOP/s (public MI300X GEMM benchmarks, e.g. SemiAnalysis
// 2024; estimate); 304 CUs (CDNA3 whitepaper); CK flash attention ~40% of peak (estimate).
const GenerationConstants kCdna3 = make({ 0.8, 0.5, 0.5, 0.5, 0.45, 0.0 }, 304,
    { { { 256, 256, 1.0 }, { 256, 128, 0.95 }, { 128, 128, 0.85 } } }, 0.4, 0.32, 0.8, 6e-6);

} // namespace

const GenerationConstants& generation_constants(GpuArchitecture arch)
{
    switch (arch) {
    case GpuArchitecture::volta:
        return kVolta;
    case GpuArchitecture::ampere:
        return kAmpereWithExp;
    case GpuArchitecture::hopper:
        return kHopperWithFa2;
    case GpuArchitecture::blackwell:
        return kBlackwellWithFa2;
    case GpuArchitecture::cdna2:
        return kCdna2;
    case GpuArchitecture::cdna3:
        return kCdna3;
    case GpuArchitecture::generic:
        break;
    }
    return kGeneric;
}

} // namespace parallax

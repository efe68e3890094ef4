#pragma once
// Named, sourced efficiency constants per GPU generation. These are the only knobs of the compute
// model; everything else follows from shapes, bytes and the datasheet peaks.
#include "spec/gpu_spec.hpp"
#include "spec/precision.hpp"

#include <array>

namespace parallax {

struct GemmTile {
    int m = 128;
    int n = 128;
    double relative_throughput = 1.0; // of this tile shape vs the largest tile, at full occupancy
};

struct GenerationConstants {
    // Fraction of the dense peak that a large, well-shaped GEMM reaches in cuBLAS/hipBLASLt.
    std::array<double, kPrecisionCount> gemm_efficiency {};
    int default_sm_count = 108;
    std::array<GemmTile, 3> tiles {}; // the library's tile menu (a heuristic picks the best)
    double gemm_k_overhead = 128; // K-equivalent of a tile's prologue/epilogue
    double attention_fwd_efficiency = 0.6; // fused (flash) attention forward, long sequences, head dim 128
    double attention_bwd_efficiency = 0.5;
    // Dense 16-bit tensor-core FLOPs per clock and SM over the exponentials per clock and SM of the
    // special-function unit (MUFU.EX2, 16 per clock and SM since Volta): the forward pass needs one exp
    // per score, so a head dim whose 4*d FLOPs per score fall below this is bound by the exponentials
    // (Zadouri et al. 2026, FlashAttention-4, arXiv 2603.05451, Sec. 2-3). 0: not modelled.
    double tensor_flops_per_exp = 0;
    // FlashAttention-2 (PyTorch SDPA's kernel) where the generation has a faster one (FA3/cuDNN on
    // Hopper and Blackwell); equal to the above where FA2 is the best available.
    double attention_fa2_fwd_efficiency = 0.6;
    double attention_fa2_bwd_efficiency = 0.5;
    double hbm_efficiency = 0.85; // streaming kernels vs the datasheet HBM bandwidth
    double kernel_overhead_s = 4e-6; // launch + tail per kernel in a training step
    double fp8_cast_bytes_per_element = 3.0; // quantise activations/weights: read 2 B, write 1 B
};

const GenerationConstants& generation_constants(GpuArchitecture arch);

} // namespace parallax

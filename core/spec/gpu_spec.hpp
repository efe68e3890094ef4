#pragma once
#include "spec/precision.hpp"

#include <array>
#include <string>

namespace parallax {

// The GPU generation selects named efficiency constants (hardware_generation.hpp).
enum class GpuArchitecture : unsigned char { generic, volta, ampere, hopper, blackwell, cdna2, cdna3 };

std::string_view to_string(GpuArchitecture a);
bool architecture_from_string(std::string_view s, GpuArchitecture& out);

struct GpuSpec {
    std::string name;
    GpuArchitecture architecture = GpuArchitecture::generic;
    std::array<double, kPrecisionCount> peak_flops {}; // dense FLOP/s per precision; 0 = unsupported
    double memory_bytes = 0;
    double memory_bw_Bps = 0;
    double tdp_W = 0;
    double idle_W = 0;
    double power_limit_W = 0; // 0 = run at tdp_W; a lower limit throttles the clock (power_model)
    // Awake idle: a context resident and clocks up, no kernel running (a GPU waiting in a pipeline
    // bubble). 0 = unknown; the generation's ratio to idle_W is used (power_model.cpp).
    double active_idle_W = 0;
    int sm_count = 0; // 0 = unknown; the generation's default is used
    double clock_MHz = 0; // 0 = unknown; the clock the tensor peaks are quoted at ("nominal")
    double max_clock_MHz = 0; // highest application (boost) clock; 0 = clock_MHz
    // Dense 16-bit TFLOP/s a large GEMM sustains at TDP, for GPUs whose power limit cannot hold the
    // nominal clock under a GEMM (low-power boards: T4). 0 = the GEMM holds the nominal clock at TDP.
    double tdp_gemm_TFLOPs = 0;
    std::string source;

    double peak(Precision p) const { return peak_flops[static_cast<int>(p)]; }
    bool supports(Precision p) const { return peak(p) > 0; }
};

} // namespace parallax

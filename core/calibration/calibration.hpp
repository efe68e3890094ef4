#pragma once
// Calibration: a handful of multiplicative scales on the physics model's named efficiencies, per GPU
// generation (GEMM and fused-attention efficiency) and per framework (how close a software stack
// gets to the kernels' rates). Fitted to measured runs (published ones, or the user's own from the
// run store) in log space with a prior pulling every scale towards 1, so a scale without evidence
// stays at the uncalibrated physics. Every prediction names the calibration it used.
#include "spec/gpu_spec.hpp"
#include "spec/software_stack.hpp"

#include <nlohmann/json.hpp>

#include <array>
#include <string>

namespace parallax {

inline constexpr int kArchitectureCount = 7; // GpuArchitecture values
inline constexpr int kFrameworkCount = 4; // Framework values

struct Calibration {
    std::string name = "none";
    std::string source; // what it was fitted on, and its cross-validated error
    // The GPU (preset name) of the runs it was fitted to; empty: any. A calibration from one cluster's
    // runs is never applied to another GPU (PlanContext falls back to the shipped one and says so).
    std::string gpu;
    // Which runs, when, and their residuals before and after the fit, kept as written.
    nlohmann::json provenance;
    std::array<double, kArchitectureCount> gemm_scale;
    std::array<double, kArchitectureCount> attention_scale;
    std::array<double, kFrameworkCount> framework_scale;

    Calibration();
    bool is_identity() const;
    double gemm(GpuArchitecture a) const { return gemm_scale[static_cast<int>(a)]; }
    double attention(GpuArchitecture a) const { return attention_scale[static_cast<int>(a)]; }
    double framework(Framework f) const { return framework_scale[static_cast<int>(f)]; }
};

// The calibration shipped with Parallax (fitted to validation/published-runs.json; see
// calibration_fit.hpp and `parallax-cli calibrate`).
const Calibration& builtin_calibration();
const Calibration& no_calibration();

// Why `c` is not applied to a plan on `gpu` (a preset name): it was fitted on another GPU's runs.
// Empty when it applies. PlanContext and the planner's status bar say the same thing from here.
std::string calibration_not_applied(const Calibration& c, const std::string& gpu);

nlohmann::json calibration_to_json(const Calibration& c);
// Throws InputError naming the file and key.
Calibration calibration_from_json(const nlohmann::json& j, const std::string& file);

} // namespace parallax

#pragma once
// Power of one GPU from what bounds its work. A GPU draws its idle power, plus
// the clock-dependent power of an awake chip (context resident, clocks up), plus dynamic power for
// what its kernels do: tensor-core FLOPs, HBM bytes, the SM array being busy, and the links and
// NCCL kernels of communication. Dynamic power scales as f * V(f)^2 along a per-generation
// voltage/frequency curve, so energy per FLOP falls with V^2 while the time of compute-bound kernels
// grows as 1/f. A power cap (TDP, the GPU's power limit or a user cap) lowers the clock of every
// kernel whose demand exceeds it until it draws the cap; a thermal limit caps the step's sustained
// average.
//
// Units: watts, joules, seconds, clock as a fraction x of the GPU's nominal clock (the clock its
// datasheet peaks are quoted at, gpu.clock_MHz), so x = 1 is what the compute model's times assume.
#include "model/compute_model.hpp"
#include "spec/cluster_spec.hpp"
#include "spec/training_spec.hpp"

#include <optional>

namespace parallax {

// Named, sourced constants of one GPU generation (power_model.cpp cites each).
struct PowerGeneration {
    double active_idle_ratio = 1.4; // awake-idle / board idle when the preset has no active_idle_W
    double sm_activity = 0.25; // fraction of the dynamic range any running kernel draws (SMs awake, L2, clock tree)
    double pipeline_activity = 0.45; // ... added while a kernel is compute-bound (issue, register files, FMA/SFU)
    double hbm_pJ_per_bit = 7.0; // HBM access incl. PHY and the on-chip movement to the SMs
    double comm_activity = 0.2; // fraction of the dynamic range while NCCL kernels and links run
    double voltage_floor = 0.7; // V at the knee clock / V at the nominal clock
    double knee_clock = 0.6; // clock fraction below which the voltage stays at its floor
    double min_clock = 0.3; // lowest application clock offered to plans (fraction of nominal)
    double max_operating_C = 87; // GPU max operating temperature
    double rated_inlet_C = 30; // inlet temperature at which the cooling sustains TDP
};
const PowerGeneration& power_generation(GpuArchitecture a);

// Inlet temperature assumed when the scenario gives none: the middle of ASHRAE's recommended range
// for data-center inlet air, 18-27 C (ASHRAE TC 9.9 thermal guidelines, class A1).
inline constexpr double kDefaultInletC = 25;

// What one kernel (or a sum of kernels) does, at the nominal clock.
struct KernelWork {
    double clock_s = 0; // seconds that scale as 1/clock (tensor-core and SM-bound work)
    double fixed_s = 0; // seconds that do not (HBM-bound work, launch overheads)
    double tensor_s = 0; // FLOPs / the precision's dense peak: seconds at 100% tensor-core utilisation
    double bytes = 0; // HBM traffic
    double occupancy = 1; // fraction of the SMs its compute-bound part keeps busy (GEMM waves)
    double time_s(double x) const { return clock_s / x + fixed_s; }
};

struct PowerModel {
    double idle_W = 0; // board idle, no context (gpu.idle_W)
    double wait_W = 0; // awake idle at the nominal clock: context resident, waiting (bubbles, barriers)
    double tdp_W = 0;
    double cap_W = 0; // the sustained power the GPU enforces: min(TDP, gpu.power_limit_W, training.power_cap_W)
    double dynamic_W = 0; // tdp_W - wait_W: what kernels can add at the nominal clock
    double tensor_activity = 0; // fraction of dynamic_W per unit of tensor-core utilisation (derived)
    double sm_activity = 0;
    double pipeline_activity = 0;
    double hbm_J_per_byte = 0;
    double comm_W = 0; // added while communication runs (links, NCCL's SMs)
    double hbm_bytes_per_s = 0; // achievable streaming bandwidth
    double voltage_floor = 0.7;
    double knee_clock = 0.6;
    double min_clock = 0.3;
    double max_clock = 1.0; // boost clock / nominal clock
    double nominal_MHz = 0;
    double max_operating_C = 87;
    double inlet_C = kDefaultInletC;
    double thermal_K_per_W = 0; // junction over inlet per watt of sustained power

    // `dev` at the nominal clock without calibration scales (the anchor GEMM uses its efficiency).
    static PowerModel of(const ComputeDevice& dev, const TrainingSpec& training);

    // V(x) / V(1): linear from the floor at the knee to 1 at the nominal clock, extrapolated to boost.
    double voltage(double x) const;
    // Dynamic power at clock x relative to the nominal clock: f * V^2.
    double clock_scale(double x) const;
    double wait_power(double x) const;
    // Energy and power demand of `w` run at clock x, before any cap.
    double energy_J(const KernelWork& w, double x) const;
    double demand_W(const KernelWork& w, double x) const;
    // The clock at which `w` draws `cap` W (the power limiter's operating point): x itself when the
    // demand at x is within the cap, never below min_clock.
    double capped_clock(const KernelWork& w, double x, double cap) const;
    // A streaming (HBM-bound) kernel at full bandwidth: the optimizer step, elementwise tails.
    double memory_bound_W(double x) const;
    // The sustained average the cooling allows at this inlet temperature (thermal equilibrium at the
    // max operating temperature); above TDP when the inlet is cooler than rated.
    double thermal_limit_W() const;
    double clock_MHz(double x) const { return x * nominal_MHz; }
};

// What a node draws besides its GPUs (CPUs, NICs, NVSwitches, fans, drives): the cluster's
// node_overhead_W, else the generation's measured/derived default per GPU times gpus_per_node.
double node_overhead_W(const ClusterSpec& c);
// Nodes per rack: the cluster's nodes_per_rack, else 4 (DGX SuperPOD racks of 8-GPU nodes) or 1 for
// rack-scale nodes (32+ GPUs in one NVLink domain, e.g. NVL72).
int nodes_per_rack(const ClusterSpec& c);

// Clock fraction of `stage` under the training settings (training.clock_MHz, stage_clock_MHz).
double stage_clock(const PowerModel& pm, const TrainingSpec& t, int pp, int stage);
// True when every stage runs at the same clock.
bool uniform_stage_clocks(const TrainingSpec& t, int pp);

} // namespace parallax

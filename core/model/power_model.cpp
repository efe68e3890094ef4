#include "model/power_model.hpp"

#include "spec/units.hpp"

#include <algorithm>
#include <cmath>

namespace parallax {

namespace {

// Voltage/frequency curve shared by the generations (estimate): datacenter GPUs do not publish
// theirs. A floor of ~0.7 of the top voltage (an idle H100 reads 685 mV at 345 MHz in public
// `nvidia-smi -q` dumps, driver 565) reached at ~60% of the nominal clock makes P_dyn ~ f^2.5 near
// the nominal clock: between f^2 (fixed voltage) and f^3 (voltage proportional to clock), as GPU DVFS
// measurements find (Mei et al. 2017, "A survey and measurement study of GPU DVFS on energy
// conservation"), and ~linear in f below the knee, as power-capped GEMMs at low caps show
// (facebookexperimental/triton PR #2023: a GB300 GEMM at a 500 W cap runs at ~1/3 of its 1400 W rate).
constexpr double kVoltageFloor = 0.70;
constexpr double kKneeClock = 0.60;
// Lowest application clock offered to plans: below the knee energy per op no longer falls (the
// voltage is at its floor) while static power keeps running, so lower clocks only lose time.
constexpr double kMinClock = 0.30;
// NVIDIA DGX A100 / DGX H100 user guides: operating temperature 5-30 C; the cooling is sized to
// sustain TDP at the top of that range.
constexpr double kRatedInletC = 30;

// Energy of HBM traffic incl. the PHY and the on-chip path to the SMs (L2, crossbar). HBM2 access
// costs ~3.9 pJ/bit (O'Connor et al. 2017, "Fine-Grained DRAM", MICRO, Fig. 1); the on-chip movement
// adds ~2 pJ/bit, and later HBM generations gain ~10% per bit each (vendors' per-generation claims;
// estimates).
constexpr double kHbm2pJ = 6.0;
constexpr double kHbm2epJ = 5.5;
constexpr double kHbm3pJ = 5.0;
constexpr double kHbm3epJ = 4.5;

// Fraction of the dynamic range any running kernel draws (SMs awake, L1/L2 traffic, clock tree):
// memory-bound kernels on H100/A100 draw ~55-60% of TDP with HBM at full bandwidth (estimate,
// consistent with the HBM energy above).
constexpr double kSmActivity = 0.25;
// Added while a kernel is bound by the SMs' throughput rather than HBM (instruction issue, register
// files, FMA and SFU pipes), whatever its tensor-core utilisation: fused attention at ~35-60% of the
// tensor peak still runs H100s near their limit (estimate). The tensor cores' own share is the rest
// of the range, in proportion to their utilisation (the anchor below).
constexpr double kPipelineActivity = 0.45;
// While only communication runs (NCCL kernels on a few SMs, NVLink/NIC SerDes busy) the board draws
// ~a third of TDP; as an addition to the awake-idle power ~20% of the dynamic range (estimate, after
// the communication-phase power in Zeus/Perseus traces: You et al. 2023, Chung et al. 2024).
constexpr double kCommActivity = 0.20;

// Awake-idle power over board idle (context resident, clocks up, no kernel) where presets have no
// measurement: H100 140-145 W vs 64-71 W (wilicc/gpu-burn issue #114), V100 53 vs 45 W (zai-org/GLM-130B
// issue #32), B200 187-196 vs 136-145 W (NVIDIA/TensorRT-LLM issue #10278), MI300X 191 vs 145 W
// (ROCm/legacy-rocm-build issue #5231); A100 and MI250X taken as the middle of these (estimate).
constexpr double kActiveIdleHopper = 2.0;
constexpr double kActiveIdleVolta = 1.18;
constexpr double kActiveIdleBlackwell = 1.36;
constexpr double kActiveIdleCdna3 = 1.32;
constexpr double kActiveIdleOther = 1.4;

// Max operating temperatures from public `nvidia-smi -q` dumps: V100 83 C, A100 85 C ("GPU Max
// Operating Temp"), H100 87 C (30 C current + 57 C "T.Limit" margin); Blackwell as Hopper and AMD's
// (junction 100+ C, edge lower) as A100 (estimates).
constexpr double kMaxOpVolta = 83;
constexpr double kMaxOpAmpere = 85;
constexpr double kMaxOpHopper = 87;

PowerGeneration make(double active_idle, double hbm_pJ, double max_op)
{
    PowerGeneration g;
    g.active_idle_ratio = active_idle;
    g.sm_activity = kSmActivity;
    g.pipeline_activity = kPipelineActivity;
    g.hbm_pJ_per_bit = hbm_pJ;
    g.comm_activity = kCommActivity;
    g.voltage_floor = kVoltageFloor;
    g.knee_clock = kKneeClock;
    g.min_clock = kMinClock;
    g.max_operating_C = max_op;
    g.rated_inlet_C = kRatedInletC;
    return g;
}

const PowerGeneration kGenericPower = make(kActiveIdleOther, kHbm2epJ, kMaxOpAmpere);
const PowerGeneration kVoltaPower = make(kActiveIdleVolta, kHbm2pJ, kMaxOpVolta);
const PowerGeneration kAmperePower = make(kActiveIdleOther, kHbm2epJ, kMaxOpAmpere);
const PowerGeneration kHopperPower = make(kActiveIdleHopper, kHbm3pJ, kMaxOpHopper);
const PowerGeneration kBlackwellPower = make(kActiveIdleBlackwell, kHbm3epJ, kMaxOpHopper);
const PowerGeneration kCdna2Power = make(kActiveIdleOther, kHbm2epJ, kMaxOpAmpere);
const PowerGeneration kCdna3Power = make(kActiveIdleCdna3, kHbm3pJ, kMaxOpAmpere);

// The anchor GEMM's HBM traffic: a large square bf16 GEMM, the shape public GEMM benchmarks quote
// (M = N = K = 8192). Its efficiency: whole waves of the best tile and a K loop long enough that the
// tile's prologue does not count (the compute model's ceiling).
constexpr double kAnchorGemmSize = 8192;
constexpr double kAnchorWaves = 64;
constexpr double kAnchorEndlessK = 1e9;
constexpr double kMinAnchorEfficiency = 0.05;

// The GEMM shape of the public measurements behind a preset's tdp_gemm_TFLOPs (cuBLAS HGEMM with
// M = N = K = 4096, as in NVIDIA's developer forum thread on the T4's sustained rate).
constexpr double kTdpGemmSize = 4096;

// Bisection steps for the capped clock: 2^-24 of the clock range, far below NVIDIA's ~15 MHz clock steps.
constexpr int kBisectionSteps = 24;

} // namespace

const PowerGeneration& power_generation(GpuArchitecture a)
{
    switch (a) {
    case GpuArchitecture::volta:
        return kVoltaPower;
    case GpuArchitecture::ampere:
        return kAmperePower;
    case GpuArchitecture::hopper:
        return kHopperPower;
    case GpuArchitecture::blackwell:
        return kBlackwellPower;
    case GpuArchitecture::cdna2:
        return kCdna2Power;
    case GpuArchitecture::cdna3:
        return kCdna3Power;
    case GpuArchitecture::generic:
        break;
    }
    return kGenericPower;
}

namespace {

// HBM power of a square n^3 GEMM at efficiency `eff` at the nominal clock: A, B and C moved once each.
double square_gemm_hbm_W(const PowerModel& pm, const GpuSpec& gpu, double n, double eff, Precision p)
{
    const double seconds = 2 * n * n * n / (gpu.peak(p) * eff);
    return pm.hbm_J_per_byte * 3 * n * n * element_bytes(p) / seconds;
}

// Low-power boards (T4: 70 W) cannot hold their nominal clock under a GEMM: the anchor then is the
// measured sustained rate instead. The GEMM of that measurement runs at clock x_s = rate / (peak x
// its efficiency) and draws exactly TDP there; at the nominal clock it asks for more and the power
// limiter (capped_clock) brings it back to x_s, as it does every kernel of similar activity.
void anchor_at_tdp_gemm_rate(PowerModel& pm, const ComputeDevice& dev, Precision p)
{
    const GpuSpec& gpu = *dev.gpu;
    const double n = kTdpGemmSize;
    const double eff = gemm_efficiency(dev, n, n, n, p);
    if (eff <= 0 || gpu.peak(p) <= 0 || pm.dynamic_W <= 0)
        return;
    const double x_s = std::clamp(gpu.tdp_gemm_TFLOPs * units::kTFLOP / (gpu.peak(p) * eff), pm.min_clock, 1.0);
    if (x_s >= 1.0)
        return;
    // Power of that GEMM at x_s: awake chip + f V^2 x (SMs, pipelines, tensor cores) + HBM bytes at
    // the rate x_s: solve for the tensor cores' share that makes it TDP.
    const double hbm_W = square_gemm_hbm_W(pm, gpu, n, eff, p) * x_s;
    const double per_activity = pm.dynamic_W * pm.clock_scale(x_s);
    const double activity = (pm.tdp_W - pm.wait_power(x_s) - hbm_W) / per_activity;
    pm.tensor_activity = std::max(0.0, activity - pm.sm_activity - pm.pipeline_activity) / eff;
}

} // namespace

PowerModel PowerModel::of(const ComputeDevice& dev, const TrainingSpec& training)
{
    const GpuSpec& gpu = *dev.gpu;
    const GenerationConstants& gen = *dev.gen;
    const PowerGeneration& pg = power_generation(gpu.architecture);
    PowerModel pm;
    pm.idle_W = gpu.idle_W;
    pm.tdp_W = gpu.tdp_W;
    pm.wait_W = gpu.active_idle_W > 0 ? gpu.active_idle_W : gpu.idle_W * pg.active_idle_ratio;
    pm.wait_W = std::clamp(pm.wait_W, pm.idle_W, pm.idle_W + 0.5 * (pm.tdp_W - pm.idle_W));
    pm.cap_W = pm.tdp_W;
    if (gpu.power_limit_W > 0)
        pm.cap_W = std::min(pm.cap_W, gpu.power_limit_W);
    if (training.power_cap_W > 0)
        pm.cap_W = std::min(pm.cap_W, training.power_cap_W);
    pm.dynamic_W = std::max(0.0, pm.tdp_W - pm.wait_W);
    pm.sm_activity = pg.sm_activity;
    pm.pipeline_activity = pg.pipeline_activity;
    // Anchor (derived): the most efficient GEMM the compute model runs (no partial tiles or waves, an
    // endless K loop) draws exactly TDP at the nominal clock, the clock the dense
    // peak is quoted at and that NVIDIA sustains under TDP (the efficiencies were measured there):
    // sm + pipeline + tensor * eff + hbm = 1. No kernel then needs more than TDP at the nominal clock.
    const Precision anchor_p = gpu.supports(Precision::bf16) ? Precision::bf16 : Precision::fp16;
    double best_gemm = 0;
    for (const GemmTile& t : gen.tiles)
        best_gemm = std::max(best_gemm,
            gemm_efficiency(
                dev, static_cast<double>(t.m) * dev.sm_count, t.n * kAnchorWaves, kAnchorEndlessK, anchor_p));
    best_gemm = std::max(kMinAnchorEfficiency, best_gemm);
    pm.hbm_J_per_byte = pg.hbm_pJ_per_bit * 8e-12;
    double anchor_hbm = 0;
    if (gpu.peak(anchor_p) > 0 && pm.dynamic_W > 0)
        anchor_hbm = square_gemm_hbm_W(pm, gpu, kAnchorGemmSize, best_gemm, anchor_p) / pm.dynamic_W;
    pm.tensor_activity = std::max(0.0, 1.0 - pm.sm_activity - pm.pipeline_activity - anchor_hbm) / best_gemm;
    pm.comm_W = pg.comm_activity * pm.dynamic_W;
    pm.hbm_bytes_per_s = gpu.memory_bw_Bps * gen.hbm_efficiency;
    pm.voltage_floor = pg.voltage_floor;
    pm.knee_clock = pg.knee_clock;
    pm.min_clock = pg.min_clock;
    pm.nominal_MHz = gpu.clock_MHz;
    pm.max_clock = (gpu.clock_MHz > 0 && gpu.max_clock_MHz > gpu.clock_MHz) ? gpu.max_clock_MHz / gpu.clock_MHz : 1.0;
    if (gpu.tdp_gemm_TFLOPs > 0)
        anchor_at_tdp_gemm_rate(pm, dev, anchor_p);
    pm.max_operating_C = pg.max_operating_C;
    pm.inlet_C = training.inlet_temp_C.value_or(kDefaultInletC);
    // Thermal resistance junction-to-inlet such that TDP is sustained at the rated inlet temperature.
    pm.thermal_K_per_W = pm.tdp_W > 0 ? (pm.max_operating_C - pg.rated_inlet_C) / pm.tdp_W : 0;
    return pm;
}

double PowerModel::voltage(double x) const
{
    // Linear V(f) above the knee (the regulator's V/f table is close to linear there), flat below.
    if (x <= knee_clock)
        return voltage_floor;
    return voltage_floor + (1.0 - voltage_floor) * (x - knee_clock) / (1.0 - knee_clock);
}

double PowerModel::clock_scale(double x) const
{
    // Dynamic CMOS power: P = a * C * V^2 * f (Weste & Harris, CMOS VLSI Design, Sec. 5.1).
    const double v = voltage(x);
    return x * v * v;
}

double PowerModel::wait_power(double x) const
{
    return idle_W + (wait_W - idle_W) * clock_scale(x);
}

double PowerModel::energy_J(const KernelWork& w, double x) const
{
    const double t = w.time_s(x);
    const double v = voltage(x);
    // Awake chip and busy SM array scale with f V^2 over the kernel's time; a tensor-core FLOP costs
    // C V^2 whatever the clock (its time shrinks as its power grows); an HBM byte costs the same at any
    // SM clock (the memory clock does not move with DVFS of the SMs).
    // The compute-bound part runs c / x seconds at f V^2 power: C V^2 per unit of work, like the FLOPs.
    return (wait_power(x) + dynamic_W * sm_activity * clock_scale(x)) * t
        + dynamic_W * (pipeline_activity * w.occupancy * w.clock_s + tensor_activity * w.tensor_s) * v * v
        + hbm_J_per_byte * w.bytes;
}

double PowerModel::demand_W(const KernelWork& w, double x) const
{
    const double t = w.time_s(x);
    return t > 0 ? energy_J(w, x) / t : wait_power(x);
}

double PowerModel::capped_clock(const KernelWork& w, double x, double cap) const
{
    if (demand_W(w, x) <= cap)
        return x;
    // Demand rises with the clock: bracket the operating point, then bisect.
    double lo = std::min(min_clock, x), hi = x;
    if (x > 1.0 && demand_W(w, 1.0) <= cap)
        lo = 1.0;
    else if (demand_W(w, lo) >= cap)
        return lo; // even the lowest clock draws more than the cap: the limiter bottoms out there
    for (int i = 0; i < kBisectionSteps; ++i) {
        const double mid = 0.5 * (lo + hi);
        (demand_W(w, mid) > cap ? hi : lo) = mid;
    }
    return lo;
}

double PowerModel::memory_bound_W(double x) const
{
    return wait_power(x) + dynamic_W * sm_activity * clock_scale(x) + hbm_J_per_byte * hbm_bytes_per_s;
}

double PowerModel::thermal_limit_W() const
{
    // Steady state: T_junction = T_inlet + R * P (first-order thermal model), held at the max
    // operating temperature by the firmware's thermal slowdown.
    if (thermal_K_per_W <= 0)
        return tdp_W;
    return std::max(idle_W, (max_operating_C - inlet_C) / thermal_K_per_W);
}

namespace {

// Non-GPU power per GPU of a node under training load. HGX/DGX H100: an 8-GPU node peaked at 8.4 kW
// training Llama 2 13B with its GPUs near their 700 W limit (Latif et al. 2024, "Empirical Measurements
// of AI Training Power Demand on a GPU-Accelerated Node"): (8.4 - 8 x 0.7) / 8 = 350 W per GPU. Other
// generations scale H100's ratio of that to the DGX nameplate's non-GPU share (DGX H100 10.2 kW - 8 x 700
// W = 4.6 kW, i.e. 0.61) onto their own DGX nameplates: DGX A100 6.5 kW - 8 x 400 W; DGX B200 14.3 kW -
// 8 x 1000 W; DGX-1 V100 3.5 kW - 8 x 300 W (NVIDIA DGX datasheets; estimates except H100). AMD
// platforms as the NVIDIA node of their power class (estimate).
constexpr double kOverheadHopperW = 350;
constexpr double kMeasuredToNameplate = (8400.0 - 8 * 700) / (10200.0 - 8 * 700);
constexpr double kOverheadAmpereW = kMeasuredToNameplate * (6500.0 - 8 * 400) / 8;
constexpr double kOverheadBlackwellW = kMeasuredToNameplate * (14300.0 - 8 * 1000) / 8;
constexpr double kOverheadVoltaW = kMeasuredToNameplate * (3500.0 - 8 * 300) / 8;
// NVIDIA DGX SuperPOD reference architecture: four 8-GPU DGX nodes per rack.
constexpr int kNodesPerRack = 4;
constexpr int kRackScaleNodeGpus = 32;

double overhead_per_gpu(GpuArchitecture a)
{
    switch (a) {
    case GpuArchitecture::volta:
        return kOverheadVoltaW;
    case GpuArchitecture::ampere:
    case GpuArchitecture::cdna2:
        return kOverheadAmpereW;
    case GpuArchitecture::blackwell:
        return kOverheadBlackwellW;
    case GpuArchitecture::hopper:
    case GpuArchitecture::cdna3:
    case GpuArchitecture::generic:
        break;
    }
    return kOverheadHopperW;
}

} // namespace

double node_overhead_W(const ClusterSpec& c)
{
    if (c.node_overhead_W)
        return *c.node_overhead_W;
    return overhead_per_gpu(c.gpu.architecture) * c.gpus_per_node;
}

int nodes_per_rack(const ClusterSpec& c)
{
    if (c.nodes_per_rack)
        return *c.nodes_per_rack;
    return c.gpus_per_node >= kRackScaleNodeGpus ? 1 : kNodesPerRack;
}

double stage_clock(const PowerModel& pm, const TrainingSpec& t, int pp, int stage)
{
    double mhz = t.clock_MHz;
    if (!t.stage_clock_MHz.empty() && static_cast<int>(t.stage_clock_MHz.size()) == pp && stage >= 0 && stage < pp)
        mhz = t.stage_clock_MHz[static_cast<std::size_t>(stage)];
    if (mhz <= 0 || pm.nominal_MHz <= 0)
        return 1.0;
    return std::clamp(mhz / pm.nominal_MHz, pm.min_clock, pm.max_clock);
}

bool uniform_stage_clocks(const TrainingSpec& t, int pp)
{
    if (t.stage_clock_MHz.empty() || static_cast<int>(t.stage_clock_MHz.size()) != pp)
        return true;
    return std::all_of(
        t.stage_clock_MHz.begin(), t.stage_clock_MHz.end(), [&](double v) { return v == t.stage_clock_MHz.front(); });
}

} // namespace parallax

#include "serving/host_link.hpp"

#include "model/host_link.hpp"

#include <algorithm>

namespace parallax {

namespace {

// PCIe x16 per direction at ~80% of the raw rate in pinned copies, as the pcie4/pcie5 fabric presets
// take it: gen 3 16 GB/s raw -> 12.5, gen 4 31.5 -> 25, gen 5 63 -> 50 (PCI-SIG link rates; estimate).
constexpr double kPcieGen3Bps = 12.5e9;
constexpr double kPcieGen4Bps = 25e9;
constexpr double kPcieGen5Bps = 50e9;
// DGX A100: each of the four PCIe gen 4 switches joins two A100s (and two NICs) to the CPU over one x16
// uplink (NVIDIA DGX A100 User Guide, system topology).
constexpr int kDgxA100GpusPerUplink = 2;

bool is_nvl72_superchip(const GpuSpec& gpu)
{
    return gpu.name.find("GB200") != std::string::npos || gpu.name.find("GB300") != std::string::npos;
}

} // namespace

HostLink default_host_link(const GpuSpec& gpu)
{
    if (is_nvl72_superchip(gpu))
        return { "nvlink-c2c", kNvlinkC2cBps, kGpusPerGrace, nvl72_grace_memory_Bps(gpu),
            "NVIDIA GB200/GB300 NVL72: NVLink-C2C 450 GB/s each way per GPU; the superchip's two GPUs share "
            "one Grace's LPDDR5X (18.4 / 14 TB/s over 36 Graces)" };
    if (gpu.name.find("GH200") != std::string::npos)
        return { "nvlink-c2c", kNvlinkC2cBps, 1, 0, "NVIDIA GH200 datasheet: NVLink-C2C 900 GB/s, 450 each way" };
    switch (gpu.architecture) {
    case GpuArchitecture::volta:
        return { "pcie3", kPcieGen3Bps, 1, 0, "PCIe 3.0 x16, ~80% of 16 GB/s (estimate)" };
    case GpuArchitecture::ampere:
        return { "pcie4", kPcieGen4Bps, kDgxA100GpusPerUplink, 0,
            "PCIe 4.0 x16, ~80% of 31.5 GB/s; two GPUs per switch uplink as in DGX A100 (User Guide)" };
    case GpuArchitecture::hopper:
    case GpuArchitecture::blackwell:
    case GpuArchitecture::cdna3:
        return { "pcie5", kPcieGen5Bps, 1, 0, "PCIe 5.0 x16, ~80% of 63 GB/s (estimate)" };
    default: // Ada (L40S, RTX 4090), MI250X and unknown: gen 4
        return { "pcie4", kPcieGen4Bps, 1, 0, "PCIe 4.0 x16, ~80% of 31.5 GB/s (estimate)" };
    }
}

double host_link_shared_Bps(const HostLink& link)
{
    return link.shared_Bps > 0 ? link.shared_Bps : link.bw_Bps;
}

double host_link_Bps_per_gpu(const HostLink& link, int copying_gpus)
{
    const int sharing = std::clamp(copying_gpus, 1, std::max(1, link.shared_by));
    return std::min(link.bw_Bps, host_link_shared_Bps(link) / sharing);
}

} // namespace parallax

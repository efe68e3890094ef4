#include "model/host_link.hpp"

#include <algorithm>
#include <string_view>

namespace parallax {

namespace {

// PCIe x16 per direction: 16 GB/s (gen 3), 32 GB/s (gen 4), 64 GB/s (gen 5) (PCI-SIG link rates);
// ~80% of it in pinned-memory copies (estimate).
constexpr double kPcieGen3x16Bps = 16e9;
constexpr double kPcieGen4x16Bps = 32e9;
constexpr double kPcieGen5x16Bps = 64e9;
constexpr double kPcieCopyEfficiency = 0.8;
// DGX A100/H100/B200 (and most GPU servers): 2 CPU sockets per node (NVIDIA DGX datasheets).
constexpr double kSocketsPerNode = 2;
// An NVL72 rack's domain: more GPUs per "node" than any PCIe server has.
constexpr int kMaxPcieServerGpus = 8;

// Host memory per GPU of each generation's reference node (system datasheets): DGX-2 1.5 TB for 16 V100;
// DGX A100 1 TB for 8 (2 TB optional); DGX H100 / H200 / B200 2 TB for 8; GH200 480 GB LPDDR5X per
// superchip; GB200 NVL72 480 GB per Grace, one Grace per 2 GPUs; AMD MI300X platform 1.5 TB for 8 (AMD
// Instinct MI300X platform brief: "up to" figures differ by OEM, so the lower).
// A node with fewer GPUs than its reference (one GPU of a DGX-2) still has the reference's memory.
struct ReferenceNode {
    double host_bytes_per_gpu;
    int gpus;
};
constexpr ReferenceNode kDgx2 { 1.5e12 / 16, 16 };
constexpr ReferenceNode kDgxA100 { 1e12 / 8, 8 };
constexpr ReferenceNode kDgxH100 { 2e12 / 8, 8 };
constexpr ReferenceNode kGh200 { 480e9, 1 };
constexpr ReferenceNode kGb200Nvl72 { 480e9 / 2, 72 };
constexpr ReferenceNode kMi300xPlatform { 1.5e12 / 8, 8 };
constexpr double kBytesPerGB = 1e9;

// An NVL72 rack's GPU shares its Grace's memory with the other GPU of its superchip: what each gets of
// it binds before its own NVLink-C2C does.
double nvl72_grace_memory_share_Bps(const ClusterSpec& c) noexcept
{
    return nvl72_grace_memory_Bps(c.gpu) / kGpusPerGrace;
}

// A GB200/GB300 NVL72 rack: Blackwell GPUs in a domain larger than any PCIe server.
bool nvl72_rack(const ClusterSpec& c) noexcept
{
    return c.gpu.architecture == GpuArchitecture::blackwell && c.gpus_per_node > kMaxPcieServerGpus;
}

} // namespace

double nvl72_grace_memory_Bps(const GpuSpec& gpu) noexcept
{
    const bool ultra = std::string_view(gpu.name).find("B300") != std::string_view::npos; // GB300 included
    return ultra ? kGb300GraceMemoryBps : kGb200GraceMemoryBps;
}

bool grace_host(const ClusterSpec& c) noexcept
{
    const bool gh200 = std::string_view(c.gpu.name).find("GH200") != std::string_view::npos;
    return gh200 || nvl72_rack(c);
}

double pcie_copy_Bps(const ClusterSpec& c) noexcept
{
    const GpuArchitecture arch = c.gpu.architecture;
    const bool gen4 = arch == GpuArchitecture::ampere || arch == GpuArchitecture::cdna2;
    const double link = arch == GpuArchitecture::volta ? kPcieGen3x16Bps : gen4 ? kPcieGen4x16Bps : kPcieGen5x16Bps;
    return link * kPcieCopyEfficiency;
}

double host_link_Bps(const ClusterSpec& c) noexcept
{
    if (!grace_host(c))
        return pcie_copy_Bps(c);
    const double link = nvl72_rack(c) ? std::min(kNvlinkC2cBps, nvl72_grace_memory_share_Bps(c)) : kNvlinkC2cBps;
    return link * kPcieCopyEfficiency; // copies over C2C reach the same ~80% as over PCIe (estimate)
}

double gpus_per_socket(const ClusterSpec& c) noexcept
{
    return nvl72_rack(c) ? kGpusPerGrace : static_cast<double>(c.gpus_per_node) / kSocketsPerNode;
}

double host_memory_per_node_bytes(const ClusterSpec& c) noexcept
{
    if (c.host_memory_GB)
        return *c.host_memory_GB * kBytesPerGB;
    ReferenceNode ref = kDgxH100;
    switch (c.gpu.architecture) {
    case GpuArchitecture::volta:
        ref = kDgx2;
        break;
    case GpuArchitecture::ampere:
    case GpuArchitecture::cdna2:
        ref = kDgxA100;
        break;
    case GpuArchitecture::cdna3:
        ref = kMi300xPlatform;
        break;
    default:
        break;
    }
    if (grace_host(c))
        ref = c.gpus_per_node > kMaxPcieServerGpus ? kGb200Nvl72 : kGh200;
    return ref.host_bytes_per_gpu * std::max(c.gpus_per_node, ref.gpus);
}

} // namespace parallax

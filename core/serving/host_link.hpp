#pragma once
// The link between a GPU and its host's memory: what weights offloaded to CPU memory stream over every
// step, and what a preempted model's weights and KV cache come back over. PCIe on most servers,
// NVLink-C2C on Grace superchips (GH200, GB200). Defaults by GPU (host_link.cpp); a scenario may name
// its own (docs/serving.md, "Co-location").
#include "spec/gpu_spec.hpp"

#include <string>

namespace parallax {

struct HostLink {
    std::string kind; // "pcie3", "pcie4", "pcie5", "nvlink-c2c" or "custom"
    double bw_Bps = 0; // one direction, what pinned copies reach
    // GPUs behind one uplink to the host (DGX A100: two per PCIe switch): when they all copy at once
    // each gets 1/shared_by of it.
    int shared_by = 1;
    std::string source;
};

// The link a GPU preset sits on in the servers NVIDIA ships it in.
HostLink default_host_link(const GpuSpec& gpu);
// Per GPU, when `copying_gpus` GPUs of one node copy at the same time.
double host_link_Bps_per_gpu(const HostLink& link, int copying_gpus);

} // namespace parallax

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
    // GPUs behind one uplink to the host (DGX A100: two per PCIe switch; a GB200 superchip's two GPUs
    // on one Grace's memory): when they all copy at once they split shared_Bps.
    int shared_by = 1;
    double shared_Bps = 0; // what the shared part carries for all of them together; 0: bw_Bps
    std::string source;
};

// The link a GPU preset sits on in the servers NVIDIA ships it in.
HostLink default_host_link(const GpuSpec& gpu);
// What the GPUs behind one uplink carry together: shared_Bps, or the link itself when none is named.
double host_link_shared_Bps(const HostLink& link);
// Per GPU, when `copying_gpus` GPUs of one node copy at the same time: its own link, or its share of the
// part they share, whichever is less.
double host_link_Bps_per_gpu(const HostLink& link, int copying_gpus);

} // namespace parallax

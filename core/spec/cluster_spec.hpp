#pragma once
#include "spec/fabric_spec.hpp"
#include "spec/gpu_spec.hpp"

#include <optional>
#include <string>

namespace parallax {

// A homogeneous cluster. A "node" is one fast-interconnect domain (8 GPUs in a DGX, 72 in an
// NVL72 rack): groups inside it use intra_node, groups that span nodes use inter_node.
struct ClusterSpec {
    std::string name;
    GpuSpec gpu;
    int nodes = 1;
    int gpus_per_node = 8;
    FabricSpec intra_node;
    FabricSpec inter_node;
    std::string source;
    // Power budget view: what a node draws besides its GPUs (CPUs, NICs, switches, fans), and how
    // many nodes share a rack. Unset = the generation's defaults (power_budget.hpp).
    std::optional<double> node_overhead_W;
    std::optional<int> nodes_per_rack;

    long long total_gpus() const { return static_cast<long long>(nodes) * gpus_per_node; }
};

} // namespace parallax

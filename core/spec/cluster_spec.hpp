#pragma once
#include "spec/fabric_spec.hpp"
#include "spec/gpu_spec.hpp"

#include <optional>
#include <string>
#include <vector>

namespace parallax {

// One kind of node in a heterogeneous cluster: its GPU, how many nodes and GPUs per node, the fabric
// inside a node and, optionally, its nodes' own NICs. The fabric between nodes is the cluster's
// inter_node, shared by all groups; a group's inter_node, where given, is what its nodes' NICs carry
// (per GPU), and a transfer between two nodes moves at the slowest of the two NICs and that fabric.
struct NodeGroup {
    std::string name;
    GpuSpec gpu;
    int nodes = 1;
    int gpus_per_node = 8;
    FabricSpec intra_node;
    std::string gpu_ref; // preset names as written, so saving writes names back
    std::string intra_node_ref;
    std::optional<FabricSpec> inter_node; // unset: the cluster's inter_node alone
    std::string inter_node_ref;
    // Spot capacity: preemptions per node and hour (0 = on-demand), and the wait for a replacement
    // node (unset = reliability.replacement_delay_s). Read only when the scenario has "reliability".
    double preemption_rate_per_hour = 0;
    std::optional<double> replacement_delay_s;

    long long total_gpus() const { return static_cast<long long>(nodes) * gpus_per_node; }
};

// The slower of two fabrics for a transfer that crosses both (by bandwidth per GPU; the longer latency).
inline FabricSpec slower_fabric(const FabricSpec& a, const FabricSpec& b)
{
    FabricSpec out = b.bw_Bps < a.bw_Bps ? b : a;
    out.latency_s = a.latency_s > b.latency_s ? a.latency_s : b.latency_s;
    return out;
}

// A cluster. Without groups it is homogeneous. A "node" is one fast-interconnect domain (8 GPUs in a DGX, 72 in an
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
    // Host (CPU) memory of one node in GB, shared by its GPUs' offloaded states and activations. Unset =
    // the generation's reference node (host_link.hpp: host_memory_per_node_bytes).
    std::optional<double> host_memory_GB;
    // Heterogeneous: node groups of different GPUs joined by inter_node (docs/heterogeneous.md). When
    // set, gpu, gpus_per_node and intra_node repeat the first group's and nodes counts all groups'
    // nodes, so code that reads one GPU type sees a representative one.
    std::vector<NodeGroup> groups;

    bool heterogeneous() const { return !groups.empty(); }
    const NodeGroup* group(const std::string& name) const
    {
        for (const NodeGroup& g : groups)
            if (g.name == name)
                return &g;
        return nullptr;
    }
    // What a node of group g reaches other nodes with: its own NICs, capped by the fabric between nodes.
    FabricSpec nic_of(const NodeGroup& g) const
    {
        return g.inter_node ? slower_fabric(*g.inter_node, inter_node) : inter_node;
    }
    long long total_gpus() const
    {
        if (groups.empty())
            return static_cast<long long>(nodes) * gpus_per_node;
        long long n = 0;
        for (const NodeGroup& g : groups)
            n += g.total_gpus();
        return n;
    }
};

} // namespace parallax

#include "model/collective_model.hpp"

#include <algorithm>
#include <cmath>

namespace parallax {

namespace {

// Achievable fraction of the link bandwidth as NCCL bus bandwidth at large messages.
// NVLink/NVSwitch: nccl-tests all_reduce busbw ~235 of 300 GB/s on DGX A100 and ~360-370 of 450 on
// DGX H100 (NVIDIA DGX user guides, nccl-tests results quoted by Calculon's presets) -> 0.8.
constexpr double kNvlinkBusEfficiency = 0.8;
// PCIe peer-to-peer reaches ~80% of the x16 link in both directions (estimate).
constexpr double kPcieBusEfficiency = 0.8;
// xGMI rings on MI250X/MI300X reach ~70% of the aggregate link bandwidth (RCCL tests, estimate).
constexpr double kXgmiBusEfficiency = 0.7;
// InfiniBand: ~23 of 25 GB/s per HDR NIC, ~46 of 50 per NDR NIC in multi-node nccl-tests -> 0.92.
constexpr double kIbBusEfficiency = 0.92;
// RoCE: slightly lower than IB under ECMP collisions (Llama 3 paper Sec. 3.3.1; estimate).
constexpr double kRoceBusEfficiency = 0.85;
// TCP: iperf3 moved 92 Gb/s over a 100 Gb/s AWS p3dn NIC (NVIDIA/nccl#209) -> 0.92 of the line rate.
constexpr double kTcpBusEfficiency = 0.92;
// NCCL's socket transport moves far less than the NIC can: 18.4 Gb/s per node with NCCL 2.4.7's AWS
// defaults on two p3dn.24xlarge (100 Gb/s, iperf3 92), 10.7 with 2.4.6 (NVIDIA/nccl#209, NCCL's
// maintainers in the thread); 4.7 GB/s bus bandwidth on the same instances in NVIDIA/nccl#398.
constexpr double kTcpSocketNodeBps = 18.4e9 / 8;
// All-to-all over the network reaches a lower fraction than rings (incast, many small flows):
// DeepSpeed-MoE / Tutel measurements report ~60-70% of NIC bandwidth (estimate).
constexpr double kAllToAllNetworkEfficiency = 0.65;
// DeepEP's RDMA kernels: 43-47 GB/s of a 50 GB/s CX7 NIC for internode dispatch/combine on H800
// (deepseek-ai/DeepEP README, normal kernels) -> 0.9.
constexpr double kRdmaAllToAllNetworkEfficiency = 0.9;

double bus_efficiency(FabricKind k)
{
    switch (k) {
    case FabricKind::nvlink:
    case FabricKind::nvswitch:
        return kNvlinkBusEfficiency;
    case FabricKind::pcie:
        return kPcieBusEfficiency;
    case FabricKind::xgmi:
        return kXgmiBusEfficiency;
    case FabricKind::ib:
        return kIbBusEfficiency;
    case FabricKind::roce:
        return kRoceBusEfficiency;
    case FabricKind::tcp:
        return kTcpBusEfficiency;
    case FabricKind::unspecified:
        break;
    }
    return 0.85;
}

} // namespace

NetworkModel NetworkModel::of(const ClusterSpec& c)
{
    NetworkModel n;
    n.intra_bw_Bps = c.intra_node.bw_Bps
        * bus_efficiency(c.intra_node.kind == FabricKind::unspecified ? FabricKind::nvlink : c.intra_node.kind);
    n.intra_latency_s = c.intra_node.latency_s;
    n.inter_bw_Bps = c.inter_node.bw_Bps
        * bus_efficiency(c.inter_node.kind == FabricKind::unspecified ? FabricKind::ib : c.inter_node.kind);
    // Over sockets the node's GPUs share what the transport moves, whatever the NIC's line rate.
    if (c.inter_node.kind == FabricKind::tcp && c.gpus_per_node > 0)
        n.inter_bw_Bps = std::min(n.inter_bw_Bps, kTcpSocketNodeBps / c.gpus_per_node);
    n.inter_latency_s = c.inter_node.latency_s;
    n.oversubscription = c.inter_node.oversubscription;
    n.rail_optimized = c.inter_node.rail_optimized;
    n.gpus_per_node = c.gpus_per_node;
    return n;
}

double collective_time_s(const NetworkModel& net, Collective c, double bytes, const GroupPlacement& g) noexcept
{
    const double n = static_cast<double>(g.size);
    if (g.size <= 1 || bytes <= 0)
        return 0;
    const bool single_node = g.nodes <= 1;
    // A group that stays on one rail of a rail-optimised fabric never crosses the spine.
    const double taper = (net.rail_optimized && g.same_rail) ? 1.0 : net.oversubscription;
    const double per_node = static_cast<double>(g.per_node);
    // Ring bottleneck: inside a node NVLink; across nodes each of the group's per_node GPUs drives its
    // own NIC, one ring channel each.
    const double ring_bw
        = single_node ? net.intra_bw_Bps : std::min(net.intra_bw_Bps, per_node * net.inter_bw_Bps / taper);
    const double alpha = single_node ? net.intra_latency_s : net.inter_latency_s;

    switch (c) {
    case Collective::all_reduce: {
        const double ring = 2 * (n - 1) * alpha + 2 * (n - 1) / n * bytes / ring_bw;
        // Double binary tree: logarithmic latency, ~the same bus bandwidth at scale (NCCL 2.4+).
        const double depth
            = std::ceil(std::log2(std::max(2.0, static_cast<double>(g.nodes)))) + (per_node > 1 ? per_node - 1 : 0);
        const double tree = 2 * depth * alpha + 2 * bytes / ring_bw;
        return std::min(ring, tree);
    }
    case Collective::all_gather:
    case Collective::reduce_scatter:
        return (n - 1) * alpha + (n - 1) / n * bytes / ring_bw;
    case Collective::all_to_all:
    case Collective::all_to_all_rdma: {
        // Pairwise exchange: (per_node-1)/n of the buffer stays in the node, the rest crosses the NIC.
        const double eff
            = c == Collective::all_to_all_rdma ? kRdmaAllToAllNetworkEfficiency : kAllToAllNetworkEfficiency;
        const double intra = (per_node - 1) / n * bytes / net.intra_bw_Bps;
        const double inter = single_node ? 0.0 : (n - per_node) / n * bytes / (net.inter_bw_Bps * eff / taper);
        return (n - 1) * alpha + std::max(intra, inter);
    }
    case Collective::send_recv:
    case Collective::broadcast: {
        const double bw = single_node ? net.intra_bw_Bps : net.inter_bw_Bps / taper;
        return alpha + bytes / bw;
    }
    }
    return 0;
}

} // namespace parallax

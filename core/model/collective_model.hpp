#pragma once
// Time of NCCL-style collectives on the two-level fabric (alpha-beta with bus-bandwidth factors,
// nccl-tests doc/PERFORMANCE.md), choosing ring, tree or hierarchical algorithms by size as NCCL's
// tuner does. Allocation-free.
#include "model/topology.hpp"
#include "spec/cluster_spec.hpp"

namespace parallax {

// all_to_all_rdma: a DeepEP-style dispatch whose cross-node part moves over RDMA at near the NIC rate
// (the caller passes the node-deduplicated volume).
enum class Collective : unsigned char {
    all_reduce,
    all_gather,
    reduce_scatter,
    all_to_all,
    send_recv,
    broadcast,
    all_to_all_rdma
};

struct NetworkModel {
    double intra_bw_Bps = 0; // achievable bus bandwidth per GPU inside a node
    double intra_latency_s = 0;
    double inter_bw_Bps = 0; // achievable per GPU (its own NIC) across nodes, before oversubscription
    double inter_latency_s = 0;
    double oversubscription = 1;
    bool rail_optimized = true;
    long long gpus_per_node = 8;

    static NetworkModel of(const ClusterSpec& c);
};

// `bytes`: all_reduce the buffer size; all_gather the gathered (output) size; reduce_scatter the
// input size; all_to_all each rank's whole send buffer; send_recv / broadcast the message.
double collective_time_s(const NetworkModel& net, Collective c, double bytes, const GroupPlacement& g) noexcept;

} // namespace parallax

#pragma once
#include <string>
#include <string_view>

namespace parallax {

// tcp: Ethernet without RDMA, where NCCL falls back to its socket transport (cloud instances without EFA).
enum class FabricKind : unsigned char { unspecified, nvlink, nvswitch, pcie, xgmi, ib, roce, tcp };

std::string_view to_string(FabricKind k);
bool fabric_kind_from_string(std::string_view s, FabricKind& out);

// One level of the interconnect hierarchy, as seen by one GPU.
struct FabricSpec {
    std::string name;
    FabricKind kind = FabricKind::unspecified;
    double bw_Bps = 0; // per GPU, one direction
    double latency_s = 0; // per step of a collective (software + hardware)
    bool rail_optimized = true;
    double oversubscription = 1.0; // >= 1; 2 means a 2:1 tapered network
    std::string source;
};

} // namespace parallax

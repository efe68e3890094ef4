#pragma once
// Activation offload (Megatron-Core --cpu-offloading, Transformer Engine's get_cpu_offload_context): an
// offloaded layer's saved activations are copied to host memory while the next layer runs its forward and
// copied back, one layer ahead, while the layer after it runs its backward. What the copies take beyond
// those windows is exposed; the GPU keeps the copy buffers of two layers instead of the activations of
// every micro-batch in flight.
#include "model/strategy_costs.hpp"

namespace parallax {

// One micro-batch through a chunk: the offloaded layers' copies and what of them the compute does not hide.
struct HostCopyTime {
    double forward_s = 0; // exposed copy-out, added to the chunk's forward
    double backward_s = 0; // exposed copy-back, added to its backward
    double bytes = 0; // copied each way
};
HostCopyTime chunk_activation_offload(
    const PlanContext& ctx, const Strategy& s, const StrategyCosts& c, const ChunkInfo& chunk) noexcept;

// The exposed part of copying `bytes` each way for one layer whose forward and backward take `t`.
HostCopyTime layer_host_copy(double bytes, double link_Bps, const LayerTotals& t) noexcept;

} // namespace parallax

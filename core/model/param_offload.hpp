#pragma once
// Parameter offload (ZeRO-Infinity, Rajbhandari et al. 2021; FSDP CPU offload): under ZeRO 3 the parameter
// shards, gradients and optimizer states live in host memory. Before a layer's forward and again before
// its backward each GPU fetches its shard over its host link and the data-parallel group all-gathers it,
// one layer ahead of the compute; the gradient shards go back to the host after the reduce-scatter, and
// CPU Adam updates the parameters in place in host memory.
#include "model/strategy_costs.hpp"

namespace parallax {

// Host-link traffic of one micro-batch through a stage, per GPU.
struct HostParamTraffic {
    double fetch_s = 0; // the parameter shards of every layer, host to GPU, once per pass
    double gradient_s = 0; // the gradient shards, GPU to host, in the backward
};
HostParamTraffic host_param_traffic(
    const PlanContext& ctx, const Strategy& s, const StrategyCosts& c, int stage) noexcept;

// What the host copies add to a micro-batch's forward and backward beyond the ZeRO-3 exposure already
// costed (`dp_forward_s`, `dp_backward_s`): the host link and the network work on different layers at
// once, so the slower sets the pace; the first layer waits for its fetch and its gather.
struct ParamFetchTime {
    double forward_s = 0;
    double backward_s = 0;
};
ParamFetchTime param_offload_exposed(const Zero3Traffic& z, const HostParamTraffic& h, const StageTiming& compute,
    double dp_forward_s, double dp_backward_s) noexcept;

} // namespace parallax

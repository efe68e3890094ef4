#include "model/param_offload.hpp"

#include "model/host_link.hpp"

#include <algorithm>

namespace parallax {

HostParamTraffic host_param_traffic(
    const PlanContext& ctx, const Strategy& s, const StrategyCosts& c, int stage) noexcept
{
    const StageParams sp = stage_params(ctx, s, c, stage);
    const StateBytes state = state_bytes(ctx.training, s);
    const double dense_shard = static_cast<double>(s.dp) * s.cp;
    const double expert_shard = std::max(
        1.0, static_cast<double>(s.tp) * s.cp * s.dp / (static_cast<double>(s.effective_expert_tp()) * s.ep));
    const double local = sp.dense / dense_shard + sp.expert / expert_shard;
    const double link = host_link_Bps(ctx.cluster);
    HostParamTraffic h;
    // ZeRO-Infinity's bandwidth-centric partitioning: each GPU fetches its own shard over its own link
    // (Sec. 6.1), the all-gather assembles the layer.
    h.fetch_s = local * gather_bytes_per_param(ctx.training.precision) / link;
    h.gradient_s = local * state.gradients / link;
    return h;
}

ParamFetchTime param_offload_exposed(const Zero3Traffic& z, const HostParamTraffic& h, const StageTiming& compute,
    double dp_forward_s, double dp_backward_s) noexcept
{
    const double first = (h.fetch_s + z.gather_s) / z.units;
    // Copies to and from the host use the link's two directions: the gradients going down do not slow
    // the next layer's parameters coming up.
    const double forward = std::max(first, std::max(h.fetch_s, z.gather_s) - compute.forward_s);
    const double backward
        = std::max(first, std::max({ h.fetch_s, h.gradient_s, z.gather_s + z.reduce_scatter_s }) - compute.backward_s);
    ParamFetchTime t;
    t.forward_s = std::max(0.0, forward - dp_forward_s);
    t.backward_s = std::max(0.0, backward - dp_backward_s);
    return t;
}

} // namespace parallax

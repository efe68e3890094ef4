#include "plan_context.hpp"

#include "model_math.hpp"

namespace parallax {

PlanContext::PlanContext(ModelSpec m, TrainingSpec t, ClusterSpec c)
    : model(std::move(m))
    , training(t)
    , cluster(std::move(c))
{
    device = ComputeDevice::of(cluster.gpu);
    device.attention_kernel = software_traits(training.framework).attention;
    network = NetworkModel::of(cluster);
    model_flops_per_token = megatron_flops_per_token(model, static_cast<double>(training.seq_len));
}

} // namespace parallax

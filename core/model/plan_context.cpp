#include "model/plan_context.hpp"

#include "model/model_math.hpp"

namespace parallax {

PlanContext::PlanContext(ModelSpec m, TrainingSpec t, ClusterSpec c, const Calibration& cal)
    : model(std::move(m))
    , training(t)
    , cluster(std::move(c))
    , calibration(cal)
{
    calibration_note = calibration_not_applied(calibration, cluster.gpu.name);
    if (!calibration_note.empty())
        calibration = builtin_calibration();
    device = ComputeDevice::of(cluster.gpu);
    device.attention_kernel
        = training.attention_kernel.value_or(software_traits(training.framework, training.software).attention);
    device.gemm_scale = calibration.gemm(cluster.gpu.architecture);
    device.attention_scale = calibration.attention(cluster.gpu.architecture);
    device.kernel_scale = calibration.framework(training.framework);
    device.fp8_scaling = training.fp8_scaling;
    network = NetworkModel::of(cluster);
    power_device = device;
    power_device.gemm_scale = 1;
    power_device.attention_scale = 1;
    power_device.kernel_scale = 1;
    power = PowerModel::of(power_device, training);
    clocks = ClockLadder::of(power);
    node_overhead_W = parallax::node_overhead_W(cluster);
    model_flops_per_token = megatron_flops_per_token(model, static_cast<double>(training.seq_len));
    dense_layer_params = layer_params(model, -1); // layer -1 is never an MoE layer
    if (model.is_moe())
        moe_layer_params = layer_params(model, model.moe->first_dense_layers);
    const WorkloadClass workload = workload_class(model, training, cluster);
    band = error_band(builtin_error_bands(), workload, cluster.total_gpus());
    memory_band = memory_error_band(builtin_error_bands(), workload, cluster.total_gpus());
    if (band.valid() && calibration.name != builtin_calibration().name)
        band.basis += "; measured with the shipped calibration, this plan uses " + calibration.name;
}

} // namespace parallax

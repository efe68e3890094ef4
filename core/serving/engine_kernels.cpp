#include "serving/engine_kernels.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace parallax {

namespace {

// AIConfigurator collects each Linear as TensorRT-LLM runs it, a bf16 input quantised inside the layer
// (collector/trtllm/collect_gemm.py; systems/data/{h100_sxm,b200}/gemm/trtllm/1.2.0rc5/gemm_perf.parquet
// at ai-dynamo/aiconfigurator@095f58a). `weight_stream`: the slope of latency against weight bytes over
// its shapes with n, k >= 1,024 at m = 1-128 (the fixed part, 4-21 us, is the layer's launches and the
// quantisation of its input). `gemm`: the large-GEMM constant that, times the model's wave and K-loop
// terms, gives the median of its 4,459 shapes with m, n, k >= 2,048. Only NVFP4's is used: its block
// scales are computed per 16 inputs in any deployment, while the measured bf16 and fp8 layers (0.76 and
// 0.48 on B200, 0.82 and 0.55 on H100) include a per-tensor amax that ModelOpt's static scales do without
// and agree with the generation's constants otherwise; 0 keeps those.
constexpr LinearRates kHopperHalf { 0, 0.85 };
constexpr LinearRates kHopperFp8 { 0, 0.85 };
constexpr LinearRates kBlackwellHalf { 0, 0.79 };
constexpr LinearRates kBlackwellFp8 { 0, 0.80 };
constexpr LinearRates kBlackwellNvfp4 { 0.41, 0.66 };

// TensorRT-LLM's custom all-reduce (bf16) on 2, 4 and 8 GPUs of a DGX H100 and a DGX B200, in us, for
// messages of 128 x 2^i elements, i = 0..22 (systems/data/{h100_sxm,b200}/comm/trtllm/1.2.0rc5/
// custom_allreduce_perf.parquet at the same commit).
constexpr int kAllReducePoints = 23;
constexpr double kFirstMessageBytes = 128 * 2.0;
using AllReduceCurve = std::array<double, kAllReducePoints>;
using AllReduceCurves = std::array<AllReduceCurve, 3>;

// Each point lowered to the fastest time measured at its size or above: a single slow sample is noise,
// not the kernel.
constexpr AllReduceCurves lower_envelopes(AllReduceCurves curves)
{
    for (AllReduceCurve& c : curves)
        for (std::size_t i = kAllReducePoints - 1; i-- > 0;)
            c[i] = std::min(c[i], c[i + 1]);
    return curves;
}

constexpr AllReduceCurves kHopperAllReduceUs = lower_envelopes({ {
    { 3.1, 3.1, 3.1, 3.3, 3.3, 3.5, 9.9, 3.4, 8.4, 3.8, 4.2, 5.1, 6.7, 9.6, 17.1, 37.8, 83.1, 145.6, 255.8, 467.8,
        885.5, 1682.9, 3236.5 },
    { 3.2, 3.2, 3.2, 3.4, 3.5, 3.6, 3.6, 3.7, 11.5, 10.9, 11.1, 11.9, 13.2, 22.1, 35.7, 62.9, 101.1, 174.9, 326.3,
        615.4, 1183.4, 2309.2, 4544.7 },
    { 3.5, 3.5, 3.6, 3.8, 3.9, 3.9, 4.0, 4.2, 4.9, 6.6, 10.3, 16.3, 19.6, 28.3, 46.4, 79.4, 122.8, 198.5, 322.7, 576.8,
        1090.5, 2111.8, 4011.7 },
} });
constexpr AllReduceCurves kBlackwellAllReduceUs = lower_envelopes({ {
    { 4.5, 4.5, 4.6, 5.0, 4.8, 4.9, 5.2, 5.1, 5.1, 5.3, 5.3, 5.7, 6.4, 8.2, 11.5, 20.5, 56.3, 86.3, 155.0, 281.6, 531.8,
        986.0, 1896.5 },
    { 4.6, 4.7, 4.7, 5.2, 5.1, 5.3, 5.4, 5.4, 5.4, 5.8, 6.3, 7.6, 9.8, 14.5, 23.8, 49.5, 78.3, 122.6, 186.6, 355.6,
        681.6, 1306.1, 2580.0 },
    { 4.8, 5.0, 5.4, 5.6, 5.6, 5.7, 6.0, 5.8, 5.9, 6.6, 8.1, 11.2, 17.2, 24.7, 31.5, 73.8, 103.1, 170.4, 279.6, 399.5,
        722.7, 1342.2, 2600.1 },
} });

// The curve's time for `bytes`: log-log interpolation between points, and the largest message's
// bandwidth beyond the table.
double interpolate_us(const AllReduceCurve& c, double bytes)
{
    const double x = std::log2(std::max(bytes, kFirstMessageBytes) / kFirstMessageBytes);
    if (x >= kAllReducePoints - 1)
        return c.back() * bytes / (kFirstMessageBytes * std::exp2(kAllReducePoints - 1));
    const int i = static_cast<int>(std::floor(x));
    const double f = x - i;
    return std::exp((1 - f) * std::log(c[i]) + f * std::log(c[i + 1]));
}

} // namespace

std::optional<LinearRates> serving_linear_rates(GpuArchitecture a, Precision p)
{
    if (a == GpuArchitecture::hopper) {
        if (p == Precision::fp8)
            return kHopperFp8;
        if (p == Precision::bf16 || p == Precision::fp16)
            return kHopperHalf;
    }
    if (a == GpuArchitecture::blackwell) {
        if (p == Precision::fp4)
            return kBlackwellNvfp4;
        if (p == Precision::fp8)
            return kBlackwellFp8;
        if (p == Precision::bf16 || p == Precision::fp16)
            return kBlackwellHalf;
    }
    return std::nullopt;
}

std::optional<double> measured_nvlink_all_reduce_s(GpuArchitecture a, int gpus, double bytes)
{
    if (gpus < 2 || gpus > 8 || (a != GpuArchitecture::hopper && a != GpuArchitecture::blackwell))
        return std::nullopt;
    // 2, 4 and 8 ranks were measured; 3 reads as 4, 5-7 as 8 (the ring's steps grow with the ranks).
    const int curve = gpus <= 2 ? 0 : gpus <= 4 ? 1 : 2;
    const auto& table = a == GpuArchitecture::hopper ? kHopperAllReduceUs : kBlackwellAllReduceUs;
    return interpolate_us(table[static_cast<std::size_t>(curve)], bytes) * 1e-6;
}

} // namespace parallax

#pragma once
#include <array>
#include <optional>
#include <string_view>

namespace parallax {

// Matmul precision. fp8/fp4 training keeps bf16 master copies as the frameworks do.
enum class Precision : unsigned char { fp32, tf32, bf16, fp16, fp8, fp4 };
inline constexpr int kPrecisionCount = 6;

inline constexpr std::array<std::string_view, kPrecisionCount> kPrecisionNames
    = { "fp32", "tf32", "bf16", "fp16", "fp8", "fp4" };

constexpr std::string_view to_string(Precision p)
{
    return kPrecisionNames[static_cast<int>(p)];
}

constexpr std::optional<Precision> precision_from_string(std::string_view s)
{
    for (int i = 0; i < kPrecisionCount; ++i)
        if (kPrecisionNames[i] == s)
            return static_cast<Precision>(i);
    return std::nullopt;
}

// How fp8 GEMM operands are scaled. Each recipe has its own quantisation kernels and GEMM rates.
enum class Fp8Scaling : unsigned char {
    tensorwise, // one scale per tensor from the tensor's current amax (TE Float8CurrentScaling, torchao tensorwise)
    delayed, // one scale per tensor from an amax history (TE DelayedScaling, the default recipe before 2025)
    rowwise, // one scale per row (torchao rowwise): slower GEMM kernels
    mxfp8, // one power-of-two scale per 32 elements (OCP MX; block-scaled tensor cores of Blackwell)
    blockwise, // 1x128 activation tiles, 128x128 weight blocks (DeepSeek-V3 Sec. 3.3.2; TE Float8BlockScaling)
};
inline constexpr int kFp8ScalingCount = 5;
inline constexpr std::array<std::string_view, kFp8ScalingCount> kFp8ScalingNames
    = { "tensorwise", "delayed", "rowwise", "mxfp8", "blockwise" };

constexpr std::string_view to_string(Fp8Scaling s)
{
    return kFp8ScalingNames[static_cast<int>(s)];
}

constexpr std::optional<Fp8Scaling> fp8_scaling_from_string(std::string_view s)
{
    for (int i = 0; i < kFp8ScalingCount; ++i)
        if (kFp8ScalingNames[i] == s)
            return static_cast<Fp8Scaling>(i);
    return std::nullopt;
}

// fp32 and tf32 keep weights, gradients and activations in fp32 (tf32 only rounds the matmul inputs).
constexpr bool is_full_precision(Precision p)
{
    return p == Precision::fp32 || p == Precision::tf32;
}

// Bytes of one element of an operand stored at this precision.
constexpr double element_bytes(Precision p)
{
    switch (p) {
    case Precision::fp32:
    case Precision::tf32:
        return 4.0;
    case Precision::bf16:
    case Precision::fp16:
        return 2.0;
    case Precision::fp8:
        return 1.0;
    case Precision::fp4:
        return 0.5;
    }
    return 2.0;
}

// Bytes of one stored activation element: fp32/tf32 training keeps fp32 activations; bf16/fp16 training
// 16-bit ones, and fp8/fp4 training too (Transformer Engine casts only the GEMM inputs, its layers pass
// bf16 activations on).
constexpr double activation_element_bytes(Precision p)
{
    return is_full_precision(p) ? element_bytes(p) : 2.0;
}

} // namespace parallax

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

} // namespace parallax

#pragma once
// Unit conversions. Internally everything is SI (bytes, seconds, FLOP, watts); convert at I/O only.

namespace parallax::units {

inline constexpr double kKiB = 1024.0;
inline constexpr double kMiB = 1024.0 * kKiB;
inline constexpr double kGiB = 1024.0 * kMiB;
inline constexpr double kGB = 1e9; // bandwidths are quoted in decimal GB/s by vendors and nccl-tests
inline constexpr double kTFLOP = 1e12;
inline constexpr double kMicrosecond = 1e-6;
inline constexpr double kMillisecond = 1e-3;

} // namespace parallax::units

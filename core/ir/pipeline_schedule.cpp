#include "ir/pipeline_schedule.hpp"

#include <algorithm>

namespace parallax {

long long warmup_passes(Schedule schedule, int device, int pp, int vpp, long long m)
{
    switch (schedule) {
    case Schedule::gpipe:
        return m;
    case Schedule::one_f_one_b:
    case Schedule::zb_h1:
        // Narayanan et al. 2021 Sec. 2.2.1: stage s runs p - s - 1 forwards before its first backward.
        return std::min<long long>(pp - device - 1, m);
    case Schedule::interleaved:
        // Megatron-LM schedules.py (forward_backward_pipelining_with_interleaving).
        return std::min<long long>(
            static_cast<long long>(pp - device - 1) * 2 + static_cast<long long>(vpp - 1) * pp, m * vpp);
    case Schedule::dualpipe:
        return std::min<long long>(pp - device - 1, m);
    case Schedule::custom:
        return 0; // the program's checker measures it (ScheduleProgram::peak_in_flight)
    }
    return 0;
}

namespace {

void one_f_one_b(std::vector<ScheduledPass>& out, int device, int pp, long long m, bool split_w)
{
    const long long warmup = std::min<long long>(pp - device - 1, m);
    auto f = [&](long long mb) { out.push_back({ PassKind::forward, 0, static_cast<std::int32_t>(mb), false }); };
    auto b = [&](long long mb, bool defer_w) {
        out.push_back({ PassKind::backward_input, 0, static_cast<std::int32_t>(mb), false });
        out.push_back({ PassKind::backward_weight, 0, static_cast<std::int32_t>(mb), defer_w });
    };
    for (long long i = 0; i < warmup; ++i)
        f(i);
    // ZB-H1 (Qi et al. 2024): W passes are deferred to fill the bubbles left while waiting for the next
    // input gradient, so B passes (and the gradients upstream) go first; the lowering bounds the
    // deferral so activations stay at 1F1B's level.
    for (long long i = 0; i < m - warmup; ++i) {
        f(warmup + i);
        b(i, split_w);
    }
    for (long long i = m - warmup; i < m; ++i)
        b(i, split_w);
}

// Megatron's mapping of the k-th virtual micro-batch to (chunk, micro-batch).
std::int16_t interleaved_chunk(long long k, int pp, int vpp, bool forward)
{
    const int in_group = static_cast<int>((k / pp) % vpp);
    return static_cast<std::int16_t>(forward ? in_group : vpp - 1 - in_group);
}

std::int32_t interleaved_microbatch(long long k, int pp, int vpp)
{
    return static_cast<std::int32_t>((k / (static_cast<long long>(pp) * vpp)) * pp + k % pp);
}

void interleaved(std::vector<ScheduledPass>& out, int device, int pp, int vpp, long long m)
{
    const long long total = m * vpp;
    const long long warmup = warmup_passes(Schedule::interleaved, device, pp, vpp, m);
    auto f = [&](long long k) {
        out.push_back(
            { PassKind::forward, interleaved_chunk(k, pp, vpp, true), interleaved_microbatch(k, pp, vpp), false });
    };
    auto b = [&](long long k) {
        const std::int16_t chunk = interleaved_chunk(k, pp, vpp, false);
        const std::int32_t mb = interleaved_microbatch(k, pp, vpp);
        out.push_back({ PassKind::backward_input, chunk, mb, false });
        out.push_back({ PassKind::backward_weight, chunk, mb, false });
    };
    for (long long k = 0; k < warmup; ++k)
        f(k);
    for (long long i = 0; i < total - warmup; ++i) {
        f(warmup + i);
        b(i);
    }
    for (long long i = total - warmup; i < total; ++i)
        b(i);
}

} // namespace

std::vector<ScheduledPass> device_program(Schedule schedule, int device, int pp, int vpp, long long m)
{
    std::vector<ScheduledPass> out;
    switch (schedule) {
    case Schedule::gpipe:
        out.reserve(static_cast<std::size_t>(3 * m));
        for (long long i = 0; i < m; ++i)
            out.push_back({ PassKind::forward, 0, static_cast<std::int32_t>(i), false });
        for (long long i = 0; i < m; ++i) {
            out.push_back({ PassKind::backward_input, 0, static_cast<std::int32_t>(i), false });
            out.push_back({ PassKind::backward_weight, 0, static_cast<std::int32_t>(i), false });
        }
        break;
    case Schedule::one_f_one_b:
        out.reserve(static_cast<std::size_t>(3 * m));
        one_f_one_b(out, device, pp, m, false);
        break;
    case Schedule::zb_h1:
        out.reserve(static_cast<std::size_t>(3 * m));
        one_f_one_b(out, device, pp, m, true);
        break;
    case Schedule::interleaved:
        out.reserve(static_cast<std::size_t>(3 * m * vpp));
        interleaved(out, device, pp, vpp, m);
        break;
    case Schedule::dualpipe: {
        // DualPipe runs two pipelines in opposite directions (Liu et al. 2024, DeepSeek-V3 Sec. 3.2.1):
        // the first half of the micro-batches flows device 0 -> pp-1 through chunk 0 of each device,
        // the second half flows pp-1 -> 0 through chunk 1. The order is decided at run time by
        // priority (backward first, then forward, W fills gaps); the program lists every pass.
        const long long half = m / 2;
        for (int dir = 0; dir < 2; ++dir) {
            for (long long i = 0; i < half; ++i) {
                const std::int32_t mb = static_cast<std::int32_t>(dir * half + i);
                out.push_back({ PassKind::forward, static_cast<std::int16_t>(dir), mb, false });
                out.push_back({ PassKind::backward_input, static_cast<std::int16_t>(dir), mb, false });
                out.push_back({ PassKind::backward_weight, static_cast<std::int16_t>(dir), mb, true });
            }
        }
        break;
    }
    case Schedule::custom:
        break; // written by the user: ScheduleProgram
    }
    return out;
}

} // namespace parallax

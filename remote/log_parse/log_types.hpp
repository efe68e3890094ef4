#pragma once
// What a training-log parser hands back: one record per logged step and a summary, in the units of the
// parse-log contract (docs/cli.md). A value is present only when the log printed it (or, for step time,
// when it follows from the log's own timestamps; see ParsedLog::step_time_from_timestamps).
//
// Rates, consistently across formats:
// - tokens_per_s is PER GPU in every format that prints tokens: torchtitan's `tps`/`wps` (per device),
//   Megatron-DeepSpeed's `tokens per gpu per second (tgs)` and the probe's `tokens_per_s`. Megatron-LM and
//   DeepSpeed print no token rate, so their steps have none.
// - samples_per_s is for the WHOLE JOB (global batch / step time): Megatron's `samples per second`,
//   DeepSpeed's `CurrSamplesPerSec`, `samples/sec` and profiler `samples/second`, the probe's.
// - tflops_per_gpu, power_W and energy_J (per step) are per GPU; mfu is a fraction (0.41, not 41 %).
// - memory_GiB is the peak over the ranks that printed that step: the allocator's max *reserved* memory
//   where the log prints it (Megatron `max reserved`, torchtitan `memory:`, the probe), DeepSpeed's
//   `MaxMemAllocated` otherwise (it prints nothing else).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace parallax::remote {

enum class LogFormat : unsigned char { auto_detect, megatron, torchtitan, deepspeed, probe };

// "auto", "megatron", "torchtitan", "deepspeed", "probe" (the names of `parse-log --format`).
std::string_view log_format_name(LogFormat format);
std::optional<LogFormat> log_format_from_name(std::string_view name);

struct StepRecord {
    std::int64_t step = 0;
    std::optional<double> step_time_s;
    std::optional<double> tokens_per_s; // per GPU
    std::optional<double> samples_per_s; // whole job
    std::optional<double> tflops_per_gpu;
    std::optional<double> mfu; // fraction
    std::optional<double> memory_GiB; // peak over ranks
    std::optional<double> power_W; // per GPU
    std::optional<double> energy_J; // per GPU and step (Megatron --log-energy: J/iter/GPU)
    std::optional<double> loss; // not in the JSON contract; kept for plots and tests

    bool operator==(const StepRecord&) const = default;
};

// One Megatron `[Rank R] (after K iterations) memory (MB) | ...` report. Megatron's "MB" are MiB
// (it divides by 1024 * 1024).
struct MemoryReport {
    std::optional<int> rank; // absent in old Megatron forks ("after 1 iterations memory (MB)")
    std::int64_t after_iterations = 0;
    std::optional<double> allocated_MiB;
    std::optional<double> max_allocated_MiB;
    std::optional<double> reserved_MiB;
    std::optional<double> max_reserved_MiB;
};

struct LogSummary {
    int steps = 0; // distinct logged steps
    // Medians over every logged step but the first (warm-up), as printed; left out with fewer than
    // kMinStepsForMedians steps or when no such step carries the value.
    std::optional<double> step_time_s;
    std::optional<double> tokens_per_s;
    std::optional<double> tflops_per_gpu;
    std::optional<double> peak_memory_GiB; // largest memory_GiB of any step, the first included
    std::optional<double> power_W; // median per-GPU power (Megatron --log-energy, the probe's NVML samples)
    std::optional<double> energy_J; // median per-GPU energy per step
};

// With fewer logged steps the median would rest on one or two possibly unsteady values; the fixtures'
// index (tests/data/logs/index.json) uses the same rule.
inline constexpr int kMinStepsForMedians = 3;

struct ParsedLog {
    // The format read: the one asked for, or the one detected; auto_detect when detection found none.
    LogFormat format = LogFormat::auto_detect;
    std::vector<StepRecord> steps; // each step once, in the order the log first printed it
    LogSummary summary;
    std::vector<MemoryReport> memory_reports; // Megatron only, every rank's report in file order
    // torchtitan and DeepSpeed print no step time; it is then taken from the timestamps of consecutive
    // logged steps (delta / step gap), only where they carry sub-second digits.
    bool step_time_from_timestamps = false;

    // Step records of the format were found (an explicit format that matched nothing has none).
    bool recognised() const { return format != LogFormat::auto_detect && !steps.empty(); }
};

} // namespace parallax::remote

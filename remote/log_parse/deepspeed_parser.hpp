#pragma once
// DeepSpeed training logs. Three kinds of step report:
// - the throughput timer (needs steps_per_print), in its current and two older spellings:
//   "[2024-03-07 15:27:17,188] [INFO] [timer.py:260:stop] epoch=0/micro_step=200/global_step=200,
//    RunningAvgSamplesPerSec=53.1, CurrSamplesPerSec=53.7, MemAllocated=4.2GB, MaxMemAllocated=9.8GB"
//   "... 0/200, RunningAvgSamplesPerSec=..., CurrSamplesPerSec=..., ..."   "... 0/200, SamplesPerSec=..."
// - the pipeline engine's per-step time line: "steps: 200 loss: 2.3456 iter time (s): 1.234 samples/sec: 51.9"
// - the flops profiler's "Profile Summary at step N:" block (iter latency, "FLOPS per GPU = ...", samples/second).
// Rates: all samples/s are the global batch over the step time, i.e. the whole job; DeepSpeed prints no
// token rate. Memory: MaxMemAllocated (DeepSpeed's "GB" divide by 1024**3, so they are GiB). Step time,
// when no iter time is printed, comes from the timestamps of consecutive timer lines.
#include "log_parse/format_parser.hpp"
#include "log_parse/step_table.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace parallax::remote {

class DeepSpeedParser final : public FormatParser {
public:
    void on_line(std::string_view line, bool complete) override;
    int records() const override { return m_records; }
    ParsedLog result() const override;

private:
    bool read_timer_line(std::string_view line, bool complete);
    bool read_pipeline_line(std::string_view line, bool complete);
    bool read_profiler_line(std::string_view line, bool complete);

    StepTable m_table;
    int m_records = 0;
    std::optional<std::int64_t> m_profile_step; // inside a "Profile Summary at step N:" block
    int m_profile_lines = 0;
    std::string m_key;
};

} // namespace parallax::remote

#pragma once
// Megatron-LM and Megatron-DeepSpeed training logs (printed by the last pipeline rank):
//   " iteration 20/ 1000 | consumed samples: 80 | elapsed time per iteration (ms): 1572.7 |
//     throughput per GPU (TFLOP/s/GPU): 401.2 | ... | energy per GPU (J/iter/GPU): ... | power per GPU (W/GPU): ... |"
// Variants read: elapsed time in seconds ("(s)"), Megatron-DeepSpeed's "samples per second",
// "tokens per gpu per second (tgs)" and "TFLOPs", "lm-loss", records hard-wrapped over several lines,
// launcher or timestamp prefixes, the fork line "Effective Tera Flops per GPU: X", and the memory
// reports "[Rank R] (after K iterations) memory (MB) | allocated: ... | max reserved: ..." including
// several run together on one line.
// Token rate: only Megatron-DeepSpeed's tgs, which is per GPU. "samples per second" is global batch /
// step time, i.e. the whole job.
#include "log_parse/format_parser.hpp"
#include "log_parse/step_table.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace parallax::remote {

class MegatronParser final : public FormatParser {
public:
    void on_line(std::string_view line, bool complete) override;
    void on_end() override;
    int records() const override { return m_records; }
    ParsedLog result() const override;

private:
    bool accepts_continuation(std::string_view line) const;
    void close_open_record();
    void parse_record(std::string_view record);
    void read_record_field(std::string_view segment, std::int64_t step);
    void read_memory_reports(std::string_view line, bool complete);
    void read_effective_tflops(std::string_view line, bool complete);

    StepTable m_table;
    std::vector<MemoryReport> m_memory_reports;
    std::string m_record; // a record whose line did not end with '|': waiting for its wrapped rest
    bool m_record_open = false;
    int m_continuation_lines = 0;
    std::optional<std::int64_t> m_last_step;
    int m_records = 0;
    std::string m_key; // scratch, reused for every field
};

} // namespace parallax::remote

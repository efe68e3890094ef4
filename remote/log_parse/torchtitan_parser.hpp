#pragma once
// torchtitan training logs (rank 0, or every rank with srun --label / torchrun --tee):
//   "[rank0]:[titan] 2026-05-20 02:13:46,329 - root - INFO - step:  2  loss: 11.13164  grad_norm: 53.7500
//    memory: 169.10GiB(94.81%)  tps: 9,913  tflops: 835.21  mfu: 37.12%"
// with ANSI colours around the fields (removed before this parser sees the line), thousands separators,
// `wps` instead of `tps` in older versions, `mfu: N/A`, "step: 640/644 = 99.37%" in forks.
// tps (wps: "words", i.e. tokens) is per device, so tokens_per_s is per GPU. memory is torch's max
// reserved memory of that rank. torchtitan prints no step time: it comes from the timestamps of
// consecutive steps.
#include "log_parse/format_parser.hpp"
#include "log_parse/step_table.hpp"

#include <string_view>

namespace parallax::remote {

class TorchtitanParser final : public FormatParser {
public:
    void on_line(std::string_view line, bool complete) override;
    int records() const override { return m_records; }
    ParsedLog result() const override;

private:
    StepTable m_table;
    int m_records = 0;
};

} // namespace parallax::remote

#pragma once
// The built-in probe's log: one JSON object per line after the marker "PARALLAX_PROBE " (format in
// probe_format.md). Only {"kind":"step", ...} objects make steps; other kinds and unknown keys are
// ignored so the probe can grow. tokens_per_s is per GPU, samples_per_s the whole job, as everywhere.
#include "log_parse/format_parser.hpp"
#include "log_parse/step_table.hpp"

#include <string_view>

namespace parallax::remote {

inline constexpr std::string_view kProbeMarker = "PARALLAX_PROBE ";

class ProbeParser final : public FormatParser {
public:
    void on_line(std::string_view line, bool complete) override;
    int records() const override { return m_records; }
    ParsedLog result() const override;

private:
    StepTable m_table;
    int m_records = 0;
};

} // namespace parallax::remote

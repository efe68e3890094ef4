#pragma once
// Properties every parse result must have, whatever the input: shared by the libFuzzer target and the
// deterministic robustness test so both check the same thing. Returns "" when all hold, else what broke.
#include "log_parse/log_types.hpp"
#include "log_parse/step_table.hpp"

#include <cmath>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

namespace parallax::remote::fuzz {

inline bool finite_or_absent(const std::optional<double>& v)
{
    return !v || std::isfinite(*v);
}

inline std::string check_invariants(const ParsedLog& log)
{
    std::unordered_set<std::int64_t> seen;
    for (const auto& s : log.steps) {
        if (s.step < 0)
            return "negative step " + std::to_string(s.step);
        if (!seen.insert(s.step).second)
            return "step " + std::to_string(s.step) + " appears twice";
        for (const auto* v : { &s.step_time_s, &s.tokens_per_s, &s.samples_per_s, &s.tflops_per_gpu, &s.mfu,
                 &s.memory_GiB, &s.power_W, &s.energy_J, &s.loss }) {
            if (!finite_or_absent(*v))
                return "non-finite value at step " + std::to_string(s.step);
        }
    }
    if (log.summary.steps != static_cast<int>(log.steps.size()))
        return "summary.steps differs from the number of steps";
    const LogSummary again = summarize_steps(log.steps);
    if (again.step_time_s != log.summary.step_time_s || again.tokens_per_s != log.summary.tokens_per_s
        || again.tflops_per_gpu != log.summary.tflops_per_gpu || again.peak_memory_GiB != log.summary.peak_memory_GiB)
        return "summary does not follow from the steps";
    if (!log.steps.empty() && log.format == LogFormat::auto_detect)
        return "steps without a format";
    return {};
}

inline bool same_value(const std::optional<double>& a, const std::optional<double>& b)
{
    return a.has_value() == b.has_value() && (!a || *a == *b);
}

// Chunking must not change anything: a log streamed over SSH parses like the finished file.
inline std::string check_same(const ParsedLog& a, const ParsedLog& b)
{
    if (a.format != b.format || a.steps.size() != b.steps.size() || a.memory_reports.size() != b.memory_reports.size())
        return "results differ in format or size";
    for (std::size_t i = 0; i < a.steps.size(); ++i) {
        const auto& x = a.steps[i];
        const auto& y = b.steps[i];
        if (x.step != y.step || !same_value(x.step_time_s, y.step_time_s) || !same_value(x.tokens_per_s, y.tokens_per_s)
            || !same_value(x.samples_per_s, y.samples_per_s) || !same_value(x.tflops_per_gpu, y.tflops_per_gpu)
            || !same_value(x.mfu, y.mfu) || !same_value(x.memory_GiB, y.memory_GiB) || !same_value(x.power_W, y.power_W)
            || !same_value(x.energy_J, y.energy_J) || !same_value(x.loss, y.loss))
            return "step " + std::to_string(x.step) + " differs";
    }
    return {};
}

} // namespace parallax::remote::fuzz

#include "log_parse/step_table.hpp"

#include <algorithm>

namespace parallax::remote {

namespace {

std::optional<double> median(std::vector<double> values)
{
    if (values.empty())
        return std::nullopt;
    const std::size_t mid = values.size() / 2;
    std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid), values.end());
    const double upper = values[mid];
    if (values.size() % 2 == 1)
        return upper;
    const double lower = *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid));
    return (lower + upper) / 2;
}

std::optional<double> median_after_first(const std::vector<StepRecord>& steps, std::optional<double> StepRecord::*field)
{
    if (steps.size() < static_cast<std::size_t>(kMinStepsForMedians))
        return std::nullopt;
    std::vector<double> values;
    values.reserve(steps.size() - 1);
    for (std::size_t i = 1; i < steps.size(); ++i) {
        if (const auto& v = steps[i].*field)
            values.push_back(*v);
    }
    return median(std::move(values));
}

} // namespace

StepRecord& StepTable::at(std::int64_t step)
{
    const auto [it, inserted] = m_index.try_emplace(step, m_records.size());
    if (inserted) {
        m_records.push_back(StepRecord { step, {}, {}, {}, {}, {}, {}, {}, {}, {} });
        m_first_seen_us.emplace_back();
    }
    return m_records[it->second];
}

void StepTable::raise_memory(std::int64_t step, double memory_GiB)
{
    auto& field = at(step).memory_GiB;
    if (!field || memory_GiB > *field)
        field = memory_GiB;
}

void StepTable::note_timestamp(std::int64_t step, std::int64_t timestamp_us)
{
    at(step);
    auto& seen = m_first_seen_us[m_index.at(step)];
    if (!seen)
        seen = timestamp_us;
}

ParsedLog StepTable::build(LogFormat format, bool derive_step_time) const
{
    ParsedLog log;
    log.format = format;
    log.steps = m_records;
    if (derive_step_time) {
        constexpr double kMicrosecondsPerSecond = 1e6;
        for (std::size_t i = 1; i < log.steps.size(); ++i) {
            StepRecord& cur = log.steps[i];
            const StepRecord& prev = log.steps[i - 1];
            const auto& t_cur = m_first_seen_us[i];
            const auto& t_prev = m_first_seen_us[i - 1];
            // Only forward in both steps and time: a restart from a checkpoint repeats step numbers.
            if (cur.step_time_s || !t_cur || !t_prev || cur.step <= prev.step || *t_cur < *t_prev)
                continue;
            const double delta_s = static_cast<double>(*t_cur - *t_prev) / kMicrosecondsPerSecond;
            cur.step_time_s = delta_s / static_cast<double>(cur.step - prev.step);
            log.step_time_from_timestamps = true;
        }
    }
    log.summary = summarize_steps(log.steps);
    return log;
}

LogSummary summarize_steps(const std::vector<StepRecord>& steps)
{
    LogSummary s;
    s.steps = static_cast<int>(std::min<std::size_t>(steps.size(), static_cast<std::size_t>(INT32_MAX)));
    s.step_time_s = median_after_first(steps, &StepRecord::step_time_s);
    s.tokens_per_s = median_after_first(steps, &StepRecord::tokens_per_s);
    s.tflops_per_gpu = median_after_first(steps, &StepRecord::tflops_per_gpu);
    s.power_W = median_after_first(steps, &StepRecord::power_W);
    s.energy_J = median_after_first(steps, &StepRecord::energy_J);
    for (const auto& r : steps) {
        if (r.memory_GiB && (!s.peak_memory_GiB || *r.memory_GiB > *s.peak_memory_GiB))
            s.peak_memory_GiB = r.memory_GiB;
    }
    return s;
}

} // namespace parallax::remote

#include "log_parse/deepspeed_parser.hpp"

#include "log_parse/text_scan.hpp"

namespace parallax::remote {

namespace {

using namespace std::string_view_literals;

// The profile summary is ~20 lines; a block that never ends is not one.
constexpr int kMaxProfileLines = 64;

// The number right after `key` (e.g. "CurrSamplesPerSec="), whole up to the next ',' or space; a value
// that runs into the cut of an incomplete line is not read.
std::optional<double> value_after(
    std::string_view line, std::string_view key, bool complete, std::string_view unit = {})
{
    const std::size_t p = text::find_word(line, key);
    if (p == std::string_view::npos)
        return std::nullopt;
    const std::size_t b = p + key.size();
    std::size_t n = 0;
    const auto v = text::parse_number(line.substr(b), 0, &n);
    if (!v)
        return std::nullopt;
    std::size_t e = b + n;
    if (!unit.empty()) {
        if (!line.substr(e).starts_with(unit))
            return std::nullopt;
        e += unit.size();
    }
    if (!complete && e >= line.size())
        return std::nullopt;
    if (e < line.size() && line[e] != ',' && !text::is_space(line[e]))
        return std::nullopt;
    return v;
}

// "12.34 ms", "1.2 s", "850 us" -> seconds.
std::optional<double> latency_s(std::string_view value)
{
    std::size_t n = 0;
    const auto t = text::trim(value);
    const auto v = text::parse_number(t, 0, &n);
    if (!v)
        return std::nullopt;
    const auto unit = text::trim(t.substr(n));
    if (unit == "s"sv)
        return v;
    if (unit == "ms"sv)
        return text::parse_number(t, -3);
    if (unit == "us"sv)
        return text::parse_number(t, -6);
    return std::nullopt;
}

// "2.35 TFLOPS" (the profiler scales to K/M/G/T/P) -> TFLOP/s.
std::optional<double> tflops(std::string_view value)
{
    std::size_t n = 0;
    const auto t = text::trim(value);
    if (!text::parse_number(t, 0, &n))
        return std::nullopt;
    const auto unit = text::trim(t.substr(n));
    struct Prefix {
        std::string_view unit;
        int pow10_to_tera;
    };
    static constexpr Prefix kUnits[] = { { "FLOPS"sv, -12 }, { "KFLOPS"sv, -9 }, { "MFLOPS"sv, -6 }, { "GFLOPS"sv, -3 },
        { "TFLOPS"sv, 0 }, { "PFLOPS"sv, 3 } };
    for (const auto& u : kUnits) {
        if (unit == u.unit)
            return text::parse_number(t, u.pow10_to_tera);
    }
    return std::nullopt;
}

std::optional<double> plain_number(std::string_view value)
{
    const auto t = text::trim(value);
    std::size_t n = 0;
    const auto v = text::parse_number(t, 0, &n);
    return (v && n == t.size()) ? v : std::nullopt;
}

} // namespace

void DeepSpeedParser::on_line(std::string_view line, bool complete)
{
    read_profiler_line(line, complete);
    if (!read_timer_line(line, complete))
        read_pipeline_line(line, complete);
}

bool DeepSpeedParser::read_timer_line(std::string_view line, bool complete)
{
    const std::size_t rate_at = line.find("SamplesPerSec="sv);
    if (rate_at == std::string_view::npos)
        return false;
    // The step: "global_step=S", or in older versions the "E/S," just before the first rate.
    std::optional<std::int64_t> step;
    std::size_t step_end = 0;
    if (const std::size_t g = text::find_word(line, "global_step="sv); g != std::string_view::npos) {
        std::size_t n = 0;
        step = text::parse_count(line.substr(g + 12), &n);
        step_end = g + 12 + n;
    } else {
        const std::size_t comma = line.rfind(',', rate_at);
        if (comma == std::string_view::npos)
            return false;
        std::size_t b = comma;
        while (b > 0 && text::is_digit(line[b - 1]))
            --b;
        if (b == comma || b == 0 || line[b - 1] != '/')
            return false;
        step = text::parse_count(line.substr(b, comma - b));
        step_end = comma;
    }
    if (!step || (!complete && step_end >= line.size()))
        return false;
    ++m_records;
    StepRecord& r = m_table.at(*step);
    auto samples = value_after(line, "CurrSamplesPerSec="sv, complete);
    if (!samples && text::find_word(line, "RunningAvgSamplesPerSec="sv) == std::string_view::npos)
        samples = value_after(line, "SamplesPerSec="sv, complete); // the oldest spelling has only this
    set_once(r.samples_per_s, samples);
    if (const auto mem = value_after(line, "MaxMemAllocated="sv, complete, "GB"sv))
        m_table.raise_memory(*step, *mem);
    if (const auto t = text::find_fractional_timestamp_us(line.substr(0, rate_at)))
        m_table.note_timestamp(*step, *t);
    return true;
}

bool DeepSpeedParser::read_pipeline_line(std::string_view line, bool complete)
{
    // "steps: N loss: L iter time (s): T samples/sec: S" (PipelineEngine) or "step: N / M loss: ..." (forks).
    std::size_t key_at = text::find_word(line, "steps:"sv);
    std::size_t key_len = 6;
    if (key_at == std::string_view::npos) {
        key_at = text::find_word(line, "step:"sv);
        key_len = 5;
    }
    if (key_at == std::string_view::npos)
        return false;
    const std::size_t time_at = line.find("iter time (s):"sv, key_at);
    if (time_at == std::string_view::npos)
        return false;
    const std::size_t number_at = text::skip_spaces(line, key_at + key_len);
    const auto step = text::parse_count(line.substr(number_at));
    if (!step)
        return false;
    ++m_records;
    StepRecord& r = m_table.at(*step);
    const auto field = [&](std::string_view key) -> std::optional<double> {
        const std::size_t p = text::find_word(line, key, key_at);
        if (p == std::string_view::npos)
            return std::nullopt;
        const std::size_t b = text::skip_spaces(line, p + key.size());
        std::size_t e = b;
        while (e < line.size() && !text::is_space(line[e]))
            ++e;
        if (!complete && e == line.size())
            return std::nullopt;
        return plain_number(line.substr(b, e - b));
    };
    set_once(r.step_time_s, field("iter time (s):"sv));
    set_once(r.samples_per_s, field("samples/sec:"sv));
    set_once(r.loss, field("loss:"sv));
    return true;
}

bool DeepSpeedParser::read_profiler_line(std::string_view line, bool complete)
{
    constexpr std::string_view kHeader = "Profile Summary at step"sv;
    if (const std::size_t h = line.find(kHeader); h != std::string_view::npos) {
        m_profile_step = text::parse_count(line.substr(text::skip_spaces(line, h + kHeader.size())));
        m_profile_lines = 0;
        if (m_profile_step) {
            ++m_records;
            m_table.at(*m_profile_step);
        }
        return true;
    }
    if (!m_profile_step)
        return false;
    const auto t = text::trim(line);
    if (++m_profile_lines > kMaxProfileLines || t.starts_with("---"sv)) {
        m_profile_step.reset(); // "----- Aggregated Profile per GPU -----" ends the summary
        return false;
    }
    const std::size_t colon = t.rfind(':');
    if (colon == std::string_view::npos || !complete) // an incomplete line's value touches the cut
        return true;
    const std::string_view value = t.substr(colon + 1);
    text::normalize_key(t.substr(0, colon), m_key);
    StepRecord& r = m_table.at(*m_profile_step);
    if (m_key == "iter latency"sv)
        set_once(r.step_time_s, latency_s(value));
    else if (m_key.starts_with("flops per gpu"sv)) // "FLOPS per GPU = 3 * fwd flops per GPU / iter latency"
        set_once(r.tflops_per_gpu, tflops(value));
    else if (m_key == "samples/second"sv)
        set_once(r.samples_per_s, plain_number(value));
    return true;
}

ParsedLog DeepSpeedParser::result() const
{
    return m_table.build(LogFormat::deepspeed, true);
}

} // namespace parallax::remote

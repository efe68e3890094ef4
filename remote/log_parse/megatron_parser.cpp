#include "log_parse/megatron_parser.hpp"

#include "log_parse/text_scan.hpp"

namespace parallax::remote {

namespace {

using namespace std::string_view_literals;

// megatron-08.log wraps each record over three lines; more than a handful means it was not a wrap.
constexpr int kMaxContinuationLines = 6;
// A record is ~600 bytes; stop joining long before an unterminated record could grow without bound.
constexpr std::size_t kMaxRecordBytes = 64 * 1024;
// Megatron's "MB" are MiB (it divides by 1024 * 1024); GiB = MiB / 1024.
constexpr double kMiBPerGiB = 1024.0;
constexpr std::int64_t kMaxRank = 10'000'000;

constexpr std::string_view kMemoryMarker = "memory (MB)"sv;
constexpr std::string_view kEffectiveTflops = "Effective Tera Flops per GPU:"sv;

struct RecordStart {
    std::size_t pos = std::string_view::npos; // where "iteration" begins
    std::size_t fields = 0; // just after "N/ M"
    std::int64_t step = 0;
};

// "iteration <N> / <M>" as a word; "number of skipped iterations:" and "validation loss at iteration 100 |"
// are not records.
RecordStart find_record_start(std::string_view line)
{
    constexpr std::string_view kWord = "iteration"sv;
    std::size_t from = 0;
    while (true) {
        const std::size_t p = text::find_word(line, kWord, from);
        if (p == std::string_view::npos)
            return {};
        from = p + 1;
        std::size_t i = p + kWord.size();
        if (i >= line.size() || !text::is_space(line[i]))
            continue;
        i = text::skip_spaces(line, i);
        std::size_t n = 0;
        const auto step = text::parse_count(line.substr(i), &n);
        if (!step)
            continue;
        i = text::skip_spaces(line, i + n);
        if (i >= line.size() || line[i] != '/')
            continue;
        i = text::skip_spaces(line, i + 1);
        if (!text::parse_count(line.substr(i), &n))
            continue;
        return { p, i + n, *step };
    }
}

bool ends_with_pipe(std::string_view s)
{
    const auto t = text::trim(s);
    return !t.empty() && t.back() == '|';
}

// The whole value must be the number: "1572.7", not "1572.7 ms" or a fragment of something else.
std::optional<double> whole_number(std::string_view value, int pow10)
{
    const auto v = text::trim(value);
    std::size_t n = 0;
    const auto x = text::parse_number(v, pow10, &n);
    return (x && n == v.size()) ? x : std::nullopt;
}

} // namespace

void MegatronParser::on_line(std::string_view line, bool complete)
{
    if (m_record_open) {
        if (text::trim(line).empty())
            return; // a blank line inside a wrapped record says nothing about it
        if (accepts_continuation(line)) {
            m_record += ' '; // the wrap took the space between words ("number of nan" / "iterations:")
            m_record += line;
            ++m_continuation_lines;
            if (!complete || ends_with_pipe(m_record) || m_continuation_lines >= kMaxContinuationLines
                || m_record.size() > kMaxRecordBytes)
                close_open_record();
            return;
        }
        close_open_record();
    }
    read_memory_reports(line, complete);
    read_effective_tflops(line, complete);
    const RecordStart start = find_record_start(line);
    if (start.pos == std::string_view::npos)
        return;
    const std::string_view record = line.substr(start.pos);
    if (!complete || ends_with_pipe(record) || record.size() > kMaxRecordBytes) {
        parse_record(record);
        return;
    }
    m_record.assign(record);
    m_record_open = true;
    m_continuation_lines = 0;
}

void MegatronParser::on_end()
{
    close_open_record();
}

bool MegatronParser::accepts_continuation(std::string_view line) const
{
    const auto t = text::trim(line);
    if (t.empty() || t.front() == '[') // "[Rank 3] ...", "[default7]: ...", "[2024-...]": a new log line
        return false;
    if (line.find(kMemoryMarker) != std::string_view::npos || t.starts_with("time (ms)"sv))
        return false;
    if (find_record_start(line).pos != std::string_view::npos)
        return false;
    return t.find('|') != std::string_view::npos || t.find(':') != std::string_view::npos;
}

void MegatronParser::close_open_record()
{
    if (!m_record_open)
        return;
    m_record_open = false;
    parse_record(m_record);
    m_record.clear();
}

void MegatronParser::parse_record(std::string_view record)
{
    const RecordStart start = find_record_start(record);
    if (start.pos == std::string_view::npos)
        return;
    ++m_records;
    m_last_step = start.step;
    m_table.at(start.step);
    // Megatron ends every field with " |"; a field without its '|' may have been cut, so it is not read.
    std::size_t bar = record.find('|', start.fields);
    while (bar != std::string_view::npos) {
        const std::size_t next = record.find('|', bar + 1);
        if (next == std::string_view::npos)
            break;
        read_record_field(record.substr(bar + 1, next - bar - 1), start.step);
        bar = next;
    }
}

void MegatronParser::read_record_field(std::string_view segment, std::int64_t step)
{
    const std::size_t colon = segment.rfind(':');
    if (colon == std::string_view::npos)
        return;
    text::normalize_key(segment.substr(0, colon), m_key);
    const std::string_view value = segment.substr(colon + 1);
    StepRecord& r = m_table.at(step);
    if (m_key == "elapsed time per iteration (ms)"sv)
        set_once(r.step_time_s, whole_number(value, -3));
    else if (m_key == "elapsed time per iteration (s)"sv)
        set_once(r.step_time_s, whole_number(value, 0));
    else if (m_key == "throughput per gpu (tflop/s/gpu)"sv || m_key == "tflops"sv)
        set_once(r.tflops_per_gpu, whole_number(value, 0));
    else if (m_key == "samples per second"sv)
        set_once(r.samples_per_s, whole_number(value, 0));
    else if (m_key == "tokens per gpu per second (tgs)"sv)
        set_once(r.tokens_per_s, whole_number(value, 0));
    else if (m_key == "power per gpu (w/gpu)"sv)
        set_once(r.power_W, whole_number(value, 0));
    else if (m_key == "energy per gpu (j/iter/gpu)"sv)
        set_once(r.energy_J, whole_number(value, 0));
    else if (m_key == "lm loss"sv || m_key == "lm-loss"sv)
        set_once(r.loss, whole_number(value, 0));
}

void MegatronParser::read_memory_reports(std::string_view line, bool complete)
{
    std::size_t marker = line.find(kMemoryMarker);
    std::size_t header_from = 0;
    while (marker != std::string_view::npos) {
        const std::size_t fields_from = marker + kMemoryMarker.size();
        const std::size_t next_marker = line.find(kMemoryMarker, fields_from);
        const bool last_on_line = next_marker == std::string_view::npos;
        const std::size_t fields_to = last_on_line ? line.size() : next_marker;
        const std::string_view header = line.substr(header_from, marker - header_from);
        const std::string_view fields = line.substr(fields_from, fields_to - fields_from);
        header_from = fields_from;
        marker = next_marker;

        // "(after K iterations)" - without it the report cannot be tied to a step.
        const std::size_t after = header.rfind("after "sv);
        if (after == std::string_view::npos)
            continue;
        const auto iterations = text::parse_count(header.substr(text::skip_spaces(header, after + 6)));
        if (!iterations)
            continue;
        MemoryReport report;
        report.after_iterations = *iterations;
        const std::size_t rank_at = header.rfind("[Rank"sv, after);
        if (rank_at != std::string_view::npos) {
            const auto rank = text::parse_count(header.substr(text::skip_spaces(header, rank_at + 5)));
            if (rank && *rank <= kMaxRank)
                report.rank = static_cast<int>(*rank);
        }
        // "| allocated: A | max allocated: B | reserved: C | max reserved: D" and then, when reports
        // run together, the next "[Rank ...": each value is the number at the start of its field.
        std::size_t bar = fields.find('|');
        while (bar != std::string_view::npos) {
            const std::size_t next = fields.find('|', bar + 1);
            const std::string_view segment
                = fields.substr(bar + 1, next == std::string_view::npos ? std::string_view::npos : next - bar - 1);
            bar = next;
            const std::size_t colon = segment.find(':');
            if (colon == std::string_view::npos)
                continue;
            text::normalize_key(segment.substr(0, colon), m_key);
            const std::size_t value_at = text::skip_spaces(segment, colon + 1);
            std::size_t n = 0;
            const auto value = text::parse_number(segment.substr(value_at), 0, &n);
            const bool touches_cut
                = !complete && last_on_line && next == std::string_view::npos && value_at + n == segment.size();
            if (!value || touches_cut)
                continue;
            if (m_key == "allocated"sv)
                set_once(report.allocated_MiB, value);
            else if (m_key == "max allocated"sv)
                set_once(report.max_allocated_MiB, value);
            else if (m_key == "reserved"sv)
                set_once(report.reserved_MiB, value);
            else if (m_key == "max reserved"sv)
                set_once(report.max_reserved_MiB, value);
        }
        if (report.max_reserved_MiB)
            m_table.raise_memory(report.after_iterations, *report.max_reserved_MiB / kMiBPerGiB);
        m_memory_reports.push_back(report);
    }
}

void MegatronParser::read_effective_tflops(std::string_view line, bool complete)
{
    const std::size_t p = line.find(kEffectiveTflops);
    if (p == std::string_view::npos || !m_last_step)
        return;
    const std::size_t value_at = text::skip_spaces(line, p + kEffectiveTflops.size());
    std::size_t n = 0;
    const auto value = text::parse_number(line.substr(value_at), 0, &n);
    if (!value || (!complete && value_at + n == line.size()))
        return;
    set_once(m_table.at(*m_last_step).tflops_per_gpu, value);
}

ParsedLog MegatronParser::result() const
{
    ParsedLog log = m_table.build(LogFormat::megatron, false);
    log.memory_reports = m_memory_reports;
    return log;
}

} // namespace parallax::remote

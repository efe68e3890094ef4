#include "log_parse/training_log_parser.hpp"

#include "log_parse/deepspeed_parser.hpp"
#include "log_parse/megatron_parser.hpp"
#include "log_parse/probe_parser.hpp"
#include "log_parse/text_scan.hpp"
#include "log_parse/torchtitan_parser.hpp"

#include <array>

namespace parallax::remote {

namespace {

std::unique_ptr<FormatParser> make_parser(LogFormat format)
{
    switch (format) {
    case LogFormat::megatron:
        return std::make_unique<MegatronParser>();
    case LogFormat::torchtitan:
        return std::make_unique<TorchtitanParser>();
    case LogFormat::deepspeed:
        return std::make_unique<DeepSpeedParser>();
    case LogFormat::probe:
        return std::make_unique<ProbeParser>();
    case LogFormat::auto_detect:
        break;
    }
    return nullptr;
}

} // namespace

TrainingLogParser::TrainingLogParser(LogFormat format)
{
    static constexpr std::array kDetectionOrder { LogFormat::probe, LogFormat::megatron, LogFormat::torchtitan,
        LogFormat::deepspeed };
    if (format == LogFormat::auto_detect) {
        for (LogFormat f : kDetectionOrder)
            m_candidates.push_back({ f, make_parser(f) });
    } else {
        m_candidates.push_back({ format, make_parser(format) });
    }
}

TrainingLogParser::~TrainingLogParser() = default;

void TrainingLogParser::feed(std::string_view bytes)
{
    m_splitter.feed(bytes, [this](std::string_view line, bool complete) { on_physical_line(line, complete); });
}

ParsedLog TrainingLogParser::finish()
{
    m_splitter.finish([this](std::string_view line, bool complete) { on_physical_line(line, complete); });
    for (auto& c : m_candidates)
        c.parser->on_end();
    return current();
}

ParsedLog TrainingLogParser::current() const
{
    for (const auto& c : m_candidates) {
        if (c.parser->records() > 0)
            return c.parser->result();
    }
    ParsedLog none;
    // An explicit format that found nothing still says which format was asked for.
    if (m_candidates.size() == 1)
        none.format = m_candidates.front().format;
    return none;
}

void TrainingLogParser::on_physical_line(std::string_view line, bool complete)
{
    // CRLF logs (Windows editors, some launchers): the '\r' is part of the line end.
    if (!line.empty() && line.back() == '\r')
        line.remove_suffix(1);
    // A lone '\r' is a progress bar redrawing its line: each redraw is a line of its own, and all but
    // the last were finished when the next began.
    std::size_t cr = line.find('\r');
    while (cr != std::string_view::npos) {
        on_clean_line(line.substr(0, cr), true);
        line.remove_prefix(cr + 1);
        cr = line.find('\r');
    }
    on_clean_line(line, complete);
}

void TrainingLogParser::on_clean_line(std::string_view line, bool complete)
{
    m_clean.clear();
    text::strip_ansi(line, m_clean);
    for (auto& c : m_candidates)
        c.parser->on_line(m_clean, complete);
}

ParsedLog parse_training_log(std::string_view text, LogFormat format)
{
    TrainingLogParser parser(format);
    parser.feed(text);
    return parser.finish();
}

} // namespace parallax::remote

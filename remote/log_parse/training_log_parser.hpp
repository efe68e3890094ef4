#pragma once
// Entry point of the log parsers: feed bytes as they arrive (any chunking gives the same result), then
// finish(). With LogFormat::auto_detect every format's parser reads every line and the result is taken
// from the first of probe, megatron, torchtitan, deepspeed that found step records: the probe's marker
// is unambiguous, and Megatron-DeepSpeed logs also carry DeepSpeed timer lines but Megatron's records
// are the richer ones.
#include "log_parse/format_parser.hpp"
#include "log_parse/line_splitter.hpp"
#include "log_parse/log_types.hpp"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace parallax::remote {

class TrainingLogParser {
public:
    explicit TrainingLogParser(LogFormat format = LogFormat::auto_detect);
    ~TrainingLogParser();
    TrainingLogParser(const TrainingLogParser&) = delete;
    TrainingLogParser& operator=(const TrainingLogParser&) = delete;

    void feed(std::string_view bytes);
    // Ends the input (an unterminated last line counts as possibly cut) and returns the result; call once.
    ParsedLog finish();
    // The result of the complete lines fed so far, without ending the input: the unterminated last line and
    // a record still waiting for its wrapped rest are left for later feeds (a live log is read on).
    ParsedLog current() const;

private:
    struct Candidate {
        LogFormat format;
        std::unique_ptr<FormatParser> parser;
    };
    void on_physical_line(std::string_view line, bool complete);
    void on_clean_line(std::string_view line, bool complete);

    std::vector<Candidate> m_candidates; // in detection priority
    LineSplitter m_splitter;
    std::string m_clean; // reused buffer: the current line without colour codes
};

// Parses a whole log held in memory.
ParsedLog parse_training_log(std::string_view text, LogFormat format = LogFormat::auto_detect);

} // namespace parallax::remote

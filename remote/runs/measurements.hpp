#pragma once
// What a run's log says, in the store's terms: the steps and summary from the training-log parsers
// (remote/log_parse), plus the probe's own records that parse-log ignores (benchmarks, the "run" record
// describing what ran, the "done" record that says whether it ended cleanly).
#include "jobs/job_bundle.hpp"
#include "log_parse/line_splitter.hpp"
#include "log_parse/log_types.hpp"
#include "log_parse/training_log_parser.hpp"
#include "store/run_store.hpp"

#include <nlohmann/json.hpp>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace parallax::remote {

struct Measurements {
    ParsedLog parsed;
    std::vector<BenchRecord> benches;
    std::string run_info_json; // the probe's "run" record, compact
    std::optional<std::string> done_exit; // the probe's "done" record: "ok" or "error"
    std::string done_error;

    // parse-log's summary keys plus the format and the probe's end state.
    nlohmann::json summary_json() const;
};

// The log format a framework's runs print (Megatron-DeepSpeed prints Megatron and DeepSpeed lines: auto).
LogFormat log_format_for(JobFramework f);

// The probe's own records ("bench", "run", "done") read line by line as the log streams in. A line is read
// once its end has arrived: an unterminated last line may still be cut.
class ProbeRecordScanner {
public:
    // As the probe parser: a record is a few hundred bytes; longer lines are not ours.
    static constexpr std::size_t kMaxRecordBytes = 64 * 1024;

    void feed(std::string_view bytes, Measurements& into);

private:
    void read_line(std::string_view line, Measurements& into);
    LineSplitter m_splitter { kMaxRecordBytes };
    int m_seq = 0;
};

// Incremental: feed the log as it streams and each byte is parsed once (a poll costs what it brought, not
// the whole log again). snapshot() is what the complete lines so far say; finish() ends the log (its
// unterminated last line and an open wrapped record are read too) and gives what parsing the whole file at
// once gives. Only the last kTailBytes of the log are kept, for the engine's overlap check.
class MeasurementCollector {
public:
    explicit MeasurementCollector(LogFormat format);
    ~MeasurementCollector();
    MeasurementCollector(const MeasurementCollector&) = delete;
    MeasurementCollector& operator=(const MeasurementCollector&) = delete;

    // Throws std::logic_error after finish().
    void feed(std::string_view bytes);
    std::size_t size() const { return m_size_bytes; }
    // The last `n` bytes fed (fewer when less arrived); n is at most kTailBytes.
    std::string_view tail(std::size_t n) const;
    // Forgets everything fed (the log was replaced): the next byte fed is the log's first.
    void clear();
    Measurements snapshot() const;
    // Ends the log; call once.
    Measurements finish();
    bool finished() const { return m_finished; }

    static constexpr std::size_t kTailBytes = 4096;

private:
    LogFormat m_format;
    std::unique_ptr<TrainingLogParser> m_parser;
    ProbeRecordScanner m_probe;
    Measurements m_probe_records; // benches, run and done records (parsed stays empty)
    std::string m_tail;
    std::size_t m_size_bytes = 0;
    bool m_finished = false;
};

Measurements parse_measurements(std::string_view log, LogFormat format);

} // namespace parallax::remote

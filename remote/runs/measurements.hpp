#pragma once
// What a run's log says, in the store's terms: the steps and summary from the training-log parsers
// (remote/log_parse), plus the probe's own records that parse-log ignores (benchmarks, the "run" record
// describing what ran, the "done" record that says whether it ended cleanly).
#include "jobs/job_bundle.hpp"
#include "log_parse/log_types.hpp"
#include "store/run_store.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>

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

// Incremental: feed the log as it streams; snapshot() parses what has arrived so far.
class MeasurementCollector {
public:
    explicit MeasurementCollector(LogFormat format)
        : m_format(format)
    {
    }
    void feed(std::string_view bytes) { m_log.append(bytes); }
    std::size_t size() const { return m_log.size(); }
    // The last `n` bytes fed (fewer when less arrived).
    std::string_view tail(std::size_t n) const
    {
        return std::string_view(m_log).substr(m_log.size() - std::min(n, m_log.size()));
    }
    void clear() { m_log.clear(); }
    Measurements snapshot() const;

private:
    LogFormat m_format;
    std::string m_log;
};

Measurements parse_measurements(std::string_view log, LogFormat format);

} // namespace parallax::remote

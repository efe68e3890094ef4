#pragma once
// Collects a parser's step records: each step once however many ranks print it, in the order the log
// first printed it, and turns them into a ParsedLog with its summary.
#include "log_parse/log_types.hpp"

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

namespace parallax::remote {

class StepTable {
public:
    // The record of `step`, created empty the first time. A field already set keeps its value: the first
    // rank to print a step wins (they print the same reduced numbers), so fill fields with set_once().
    StepRecord& at(std::int64_t step);
    // Memory differs between ranks (pipeline stages); the step keeps the largest, the rank that would
    // run out first.
    void raise_memory(std::int64_t step, double memory_GiB);
    // Wall-clock time at which the log first printed `step`, for formats that print no step time.
    void note_timestamp(std::int64_t step, std::int64_t timestamp_us);

    std::size_t size() const { return m_records.size(); }

    // Steps, summary and (when derive_step_time) step times from consecutive timestamps.
    ParsedLog build(LogFormat format, bool derive_step_time) const;

private:
    std::vector<StepRecord> m_records;
    std::vector<std::optional<std::int64_t>> m_first_seen_us; // parallel to m_records
    std::unordered_map<std::int64_t, std::size_t> m_index;
};

inline void set_once(std::optional<double>& field, std::optional<double> value)
{
    if (!field && value)
        field = value;
}

// Median of every step but the first (see LogSummary); also used by the tests.
LogSummary summarize_steps(const std::vector<StepRecord>& steps);

} // namespace parallax::remote

#pragma once
// One stored run as a table shows it: who, where, what, and measured against predicted step time and
// tokens/s with the error. A plain value made off the GUI thread (RunCatalog::rows) and handed over whole.
#include "store/run_record.hpp"

#include <QString>

#include <optional>
#include <vector>

namespace parallax::remote {

struct RunRow {
    QString id;
    RunState state = RunState::created;
    QString detail;
    QString cluster;
    QString framework;
    QString launcher;
    QString plan; // the scenario label
    QString description;
    QString job_id;
    QString created; // ISO 8601 UTC
    QString finished; // when it reached a terminal state; empty while it runs
    int steps = 0;
    std::optional<double> step_measured; // s, median of the steady-state steps
    std::optional<double> step_predicted;
    std::optional<double> tps_measured; // tokens/s per GPU
    std::optional<double> tps_predicted;
    QString prediction_source; // workload, plan, none
    QString why; // why there is no comparison
    std::optional<double> step_error() const;
    std::optional<double> tps_error() const;
    bool active() const { return !is_terminal(state); }
    // Can be watched again: unfinished, or failed after it reached the launcher (its job may have run on;
    // RemoteRunner::attach reopens it).
    bool attachable() const { return active() || (state == RunState::failed && !job_id.isEmpty()); }
    // The state as stored and printed ("running", "failed", ...).
    QString state_text() const;
    bool operator==(const RunRow&) const = default;
};

// The row of a stored run: its record and parsed steps (compare_run decides what is compared with what).
RunRow run_row(const RunRecord& run, const std::vector<StepRecord>& steps);

} // namespace parallax::remote

#pragma once
// The run store: every remote run Parallax dispatched, in SQLite through Qt's QSQLITE driver. One run keeps
// its plan and scenario as sent, the cluster profile, the generated script, the job id, every state
// transition with its time, the raw log as it streamed in, the parsed steps and benchmarks, and the
// predictions made at dispatch time. Each change is one transaction, so a crash or a dropped connection
// never leaves a half-written run; the log is stored in chunks keyed by their offset in the remote file, so
// reading the same bytes again after a reconnect stores nothing twice and a gap is refused.
//
// A RunStore is one database connection and belongs to the thread that created it (Qt's rule for
// QSqlDatabase). The file is in WAL mode: a GUI thread can read while a worker writes, each with its own
// RunStore on the same path.
#include "store/run_record.hpp"

#include <QString>

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace parallax::remote {

class RunStore {
public:
    // Opens (creating when missing) and migrates the database at `path`. Throws StoreError.
    explicit RunStore(const QString& path);
    ~RunStore();
    RunStore(const RunStore&) = delete;
    RunStore& operator=(const RunStore&) = delete;

    // The schema this build writes, and the one found in the file when it was opened.
    static int latest_schema();
    int opened_schema() const { return m_opened_schema; }
    const QString& path() const { return m_path; }
    // ~/.local/share/parallax/runs.sqlite, or $PARALLAX_RUN_STORE.
    static QString default_path();

    // The run with its first transition (run.state, run.detail) and its files, in one transaction.
    void create(const RunRecord& run, const std::vector<StoredFile>& files = {});
    std::vector<StoredFile> files(const std::string& id) const;
    // Records a transition (appended to the history) and updates the run; unchanged state + detail is a no-op.
    void set_state(const std::string& id, RunState state, const std::string& detail, std::optional<int> exit_code = {});
    void set_job(const std::string& id, const std::string& job_id, const std::string& log_path,
        const std::string& submit_command);
    // Appends the remote log's bytes that start at `offset`. Bytes the store already has are skipped;
    // offset beyond the stored size (a gap) throws. Returns the stored size after the call.
    std::int64_t append_log(const std::string& id, std::int64_t offset, std::string_view bytes);
    // Drops the stored log (the file on the cluster was replaced: a requeued job writes its log anew), with a
    // transition that says so; the next append starts at offset 0.
    void reset_log(const std::string& id, const std::string& why);
    // Replaces the parsed measurements in one transaction.
    void set_measurements(const std::string& id, const ParsedLog& parsed, const std::vector<BenchRecord>& benches,
        const std::string& summary_json, const std::string& run_info_json);
    // Writes what changed (steps and benchmarks by their key, replacing a stored one) in one transaction.
    void store_measurements(const std::string& id, const MeasurementDelta& delta);

    std::optional<RunRecord> get(const std::string& id) const;
    // Newest first; `limit` 0 = all.
    std::vector<RunRecord> list(int limit = 0) const;
    // Runs not in a terminal state (to re-attach after a restart), oldest first.
    std::vector<RunRecord> active() const;
    std::vector<StateTransition> transitions(const std::string& id) const;
    std::vector<StepRecord> steps(const std::string& id) const;
    std::vector<BenchRecord> benches(const std::string& id) const;
    std::string log(const std::string& id) const;
    // Streams the log chunk by chunk (a log can be large), in order.
    void for_each_log_chunk(const std::string& id, const std::function<void(std::string_view)>& fn) const;
    // Up to max_bytes of the stored log from byte `offset` on (a live view reads only what is new).
    std::string log_from(const std::string& id, std::int64_t offset, std::size_t max_bytes) const;

private:
    class Transaction;
    void migrate();
    void check_schema_is_readable() const;
    QString m_path;
    QString m_connection;
    int m_opened_schema = 0;
};

// ISO 8601 UTC with milliseconds, the store's timestamps.
std::string utc_now_iso();

} // namespace parallax::remote

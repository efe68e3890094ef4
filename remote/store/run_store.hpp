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
#include "log_parse/log_types.hpp"

#include <QString>

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace parallax::remote {

enum class RunState : unsigned char {
    created, // stored, files not yet on the cluster
    submitted, // handed to the launcher (sbatch accepted it / processes started)
    queued, // waiting for resources (SLURM PENDING)
    running,
    cancelling, // cancel requested, not yet confirmed by the scheduler
    completed, // finished with exit status 0
    failed, // finished otherwise (non-zero exit, node failure, timeout, out of memory, lost)
    cancelled, // cancel confirmed
};
std::string_view to_string(RunState s);
std::optional<RunState> run_state_from_string(std::string_view s);
bool is_terminal(RunState s);

struct RunRecord {
    std::string id;
    std::string created_at; // ISO 8601 UTC with milliseconds
    std::string updated_at;
    std::string framework; // probe | megatron | torchtitan | deepspeed
    std::string launcher; // slurm | direct
    std::string cluster; // profile name
    std::string scenario_label;
    std::string description;
    std::string profile_json;
    std::string scenario_json;
    std::string plan_json; // plan.json as sent
    std::string script; // the launcher's script as sent (job.sh or node.sh)
    std::string submit_command; // the exact remote command that started it
    std::string remote_dir;
    std::string log_path; // the remote log streamed into the store
    std::string job_id; // SLURM job id, or "host:pgid,..." for the direct launcher
    RunState state = RunState::created;
    std::string detail; // the latest transition's explanation
    std::optional<int> exit_code;
    std::int64_t log_bytes = 0;
    std::string log_format; // detected format, once parsed
    std::string prediction_json; // predict --json of the plan at dispatch time
    std::string workload_prediction_json; // of what actually ran (the probe's reduced workload); may be empty
    std::string summary_json; // parse-log summary
    std::string notes_json; // array of strings: differences between plan and run
    std::string run_info_json; // the probe's "run" record (device, backend, versions)
};

struct StateTransition {
    int seq = 0;
    std::string at;
    RunState state = RunState::created;
    std::string detail;
};

// One micro-benchmark result of the probe (`"kind":"bench"` records).
struct BenchRecord {
    int seq = 0;
    std::string op; // gemm, all_reduce, all_gather, all_to_all, p2p
    std::string name; // gemm: qkv, fc1, ...
    std::string group; // tp, dp, cp, ep, pp
    double time_s = 0;
    std::optional<double> bytes;
    std::optional<double> tflops;
    std::optional<double> bus_GBps;
    std::string json; // the whole record as printed
};

// A file of the run as it was sent (scripts, configs, the probe), so a run can be re-sent after a restart
// and a user can always see exactly what ran.
struct StoredFile {
    std::string name;
    int mode = 0644;
    std::string content;
};

class StoreError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

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
    // Replaces the parsed measurements in one transaction.
    void set_measurements(const std::string& id, const ParsedLog& parsed, const std::vector<BenchRecord>& benches,
        const std::string& summary_json, const std::string& run_info_json);

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
    QString m_path;
    QString m_connection;
    int m_opened_schema = 0;
};

// ISO 8601 UTC with milliseconds, the store's timestamps.
std::string utc_now_iso();

} // namespace parallax::remote

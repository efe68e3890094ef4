#pragma once
// The run life cycle, one blocking step at a time: dispatch (predict, store, upload, submit), poll (the
// launcher's state, new log bytes into the store, measurements re-parsed), cancel (request, then the next
// polls confirm). Everything that matters is in the run store before a step returns, so a step that fails
// half-way (connection lost, app killed) is simply done again: uploads overwrite, a submit first looks for
// the job by its name, log bytes are keyed by their offset.
//
// Runs on one thread (RemoteWorker's), with the store and connections of that thread.
#include "jobs/cancel_token.hpp"
#include "jobs/job_bundle.hpp"
#include "runs/measurement_sync.hpp"
#include "runs/measurements.hpp"
#include "ssh/ssh_connection.hpp"
#include "store/run_store.hpp"

#include <functional>
#include <map>
#include <memory>
#include <string>

namespace parallax::remote {

// SSH connections by user@host:port, all owned by one thread.
class ConnectionPool {
public:
    ConnectionPool(std::shared_ptr<SshInteraction> interaction, ReconnectPolicy policy = {});
    SshConnection& get(const ClusterProfile& profile, const std::string& host);
    SshConnection& primary(const ClusterProfile& profile) { return get(profile, profile.host); }
    void keepalive_all();
    void close_all();
    const std::map<std::string, std::unique_ptr<SshConnection>>& connections() const { return m_connections; }
    // Every connection's state changes, with its label.
    std::function<void(const std::string& label, ConnectionState, const std::string& message)> on_state;

private:
    std::shared_ptr<SshInteraction> m_interaction;
    ReconnectPolicy m_policy;
    std::map<std::string, std::unique_ptr<SshConnection>> m_connections;
};

// Chrome/Perfetto traces found in a run's folder on the cluster (a PyTorch profiler export, torchtitan's
// profile_traces/, Megatron's --use-pytorch-profiler output), copied to a local folder.
struct TraceFetch {
    std::vector<std::string> local_paths; // in the order found (sorted by remote path)
    std::vector<std::string> remote_paths; // relative to the run folder
    std::string message; // what was looked for, what was skipped and why
};

struct PollOutcome {
    RunState state = RunState::created;
    std::string detail;
    bool state_changed = false;
    std::string appended; // log bytes stored by this poll (for live views)
    bool measurements_changed = false;
    bool terminal() const { return is_terminal(state); }
};

class RunEngine {
public:
    RunEngine(RunStore& store, ConnectionPool& pool);

    // Generates the job, predicts the plan (and the probe's workload) with the analytic model, connects,
    // stores the run, uploads its files and submits it. Returns the run id. Throws InputError for a plan or
    // profile that cannot run, SshError when the cluster cannot be reached (nothing is stored then). Once
    // the run is stored, failures are stored on it: a refused submission fails the run, a lost connection
    // leaves it "created" and the next poll() uploads and submits again.
    std::string dispatch(const RunRequest& request, const CancelToken& cancel = {});

    // One monitoring step. Throws SshError when the cluster cannot be reached (nothing is lost: call again
    // later) and StoreError when the store cannot be written.
    PollOutcome poll(const std::string& run_id, const CancelToken& cancel = {});

    // Asks the launcher to stop the run (scancel / TERM to the process groups) and records "cancelling";
    // the following polls confirm the final state. Throws SshError like poll().
    void cancel(const std::string& run_id, const CancelToken& cancel = {});

    // A run marked failed while its job may still be running or have finished with its log (an older version
    // declared it gone during a controller outage, or the app was closed at the wrong moment) is watched again:
    // it goes back to "submitted" and the next polls ask the launcher and read the log on. Only failed runs
    // that reached the launcher (a job id) are reopened; returns whether this one was.
    bool reopen(const std::string& run_id);

    // The measurements parsed so far.
    Measurements measurements(const std::string& run_id);

    // Looks for trace files (*trace*.json, up to kMaxTraceFiles of at most kMaxTraceBytes each, four folders
    // deep) in the run's folder on the host that writes its log, and downloads them over SFTP into
    // local_dir. Throws SshError like poll(), InputError when local_dir cannot be written.
    TraceFetch fetch_traces(const std::string& run_id, const std::string& local_dir, const CancelToken& cancel = {});
    static constexpr int kMaxTraceFiles = 16;
    static constexpr std::size_t kMaxTraceBytes = 256u << 20;

    // Told the moment a dispatched run is in the store, before its files are uploaded and submitted
    // (a GUI can list it at once).
    std::function<void(const std::string& run_id)> on_created;

    // Polls in a row in which the controller itself said it holds no such job (squeue and scontrol answered,
    // without it: older than MinJobAge, or the controller lost it) before the job is declared gone. Polls the
    // controller did not answer (down, restarting, timed out) never count.
    static constexpr int kUnknownPollsBeforeGone = 3;
    // Log bytes read per poll: a fast-growing log catches up over a few polls instead of blocking one.
    static constexpr std::size_t kMaxLogBytesPerPoll = 8u << 20;
    // Stored log bytes read again at each poll to check that the file is still the one read so far.
    static constexpr std::size_t kLogOverlapBytes = 256;
    static_assert(kLogOverlapBytes <= MeasurementCollector::kTailBytes);
    // Transient submission failures (controller unreachable, squeue unanswered) before a run is failed; the
    // worker's polls space them out (poll_min_s growing to poll_max_s).
    static constexpr int kMaxSubmitRetries = 30;

private:
    struct Live {
        ClusterProfile profile;
        JobFramework framework = JobFramework::probe;
        std::unique_ptr<MeasurementCollector> collector; // fed each log byte once
        StoredMeasurements stored; // what the store holds of its measurements
        Measurements latest; // the collector's last snapshot (or its finish() once the log is complete)
        int unknown_polls = 0;
        std::string last_slurm_state;
        std::int64_t parsed_bytes = -1;
        int submit_retries = 0; // transient submission failures so far
        std::string reopened_from; // the failure detail of a reopened run, kept if nothing new is learnt
    };
    Live& live(const RunRecord& run, const ClusterProfile* profile_with_env = nullptr);
    // The stored files, with env.sh rebuilt from the live profile's values (the store keeps only names).
    std::vector<StoredFile> files_to_upload(const RunRecord& run, const ClusterProfile& p) const;
    // first_attempt: the run was stored a moment ago by this engine, so no earlier submission can exist.
    void upload_and_submit(const RunRecord& run, Live& l, bool first_attempt, const CancelToken& cancel);
    void submit_slurm(const RunRecord& run, Live& l, bool first_attempt, const CancelToken& cancel);
    void submit_direct(const RunRecord& run, Live& l, const CancelToken& cancel);
    void retry_submit_later(const RunRecord& run, Live& l, const std::string& why);
    struct LauncherState {
        RunState state = RunState::running;
        std::string detail;
        std::optional<int> exit_code;
        bool known = true; // the launcher still knows the job
        bool no_answer = false; // the launcher could not be asked (controller down): nothing is known
    };
    LauncherState query_slurm(const RunRecord& run, Live& l, const CancelToken& cancel);
    LauncherState query_direct(const RunRecord& run, Live& l, const CancelToken& cancel);
    std::string read_new_log(const RunRecord& run, Live& l, bool drain, const CancelToken& cancel);
    void restart_log(const RunRecord& run, Live& l, std::int64_t stored_bytes);
    // final: the log is complete (the job ended); its unterminated last line is read too.
    bool update_measurements(const RunRecord& run, Live& l, bool final);
    std::string log_host(const RunRecord& run, const Live& l) const;

    RunStore& m_store;
    ConnectionPool& m_pool;
    std::map<std::string, Live> m_live;
};

} // namespace parallax::remote

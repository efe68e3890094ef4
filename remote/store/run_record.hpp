#pragma once
// What the run store holds, as plain values: a run's record, its state transitions, the probe's benchmark
// records, the files that were sent. These travel to the GUI and the CLI; the store itself
// (store/run_store.hpp) stays inside remote/. A run's state is a RunState everywhere past the store: the
// text ("completed", "failed", ...) is written and parsed only where it is stored or printed.
#include "log_parse/log_types.hpp"

#include <cstdint>
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

// What changed in a run's measurements since they were last stored (a poll writes only this).
struct MeasurementDelta {
    bool replace = false; // drop every stored step and benchmark first (the log was replaced or re-read)
    std::vector<StepRecord> steps; // new or changed steps
    std::vector<BenchRecord> benches; // new benchmarks
    std::string log_format; // "" when no format was recognised
    std::string summary_json;
    std::string run_info_json;
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

} // namespace parallax::remote

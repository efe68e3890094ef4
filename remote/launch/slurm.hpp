#pragma once
// SLURM from the outside: the command lines Parallax runs over SSH (every word through shell_quote, wrapped
// in `bash -lc` so the cluster's login environment applies) and parsers for what sbatch, squeue and
// scontrol print. Pure functions, tested without a cluster; SlurmLauncher (launcher.hpp) runs them.
#include "cluster/cluster_profile.hpp"
#include "jobs/job_bundle.hpp"
#include "store/run_store.hpp"

#include <optional>
#include <string>
#include <vector>

namespace parallax::remote {

struct SlurmJobInfo {
    std::string job_id;
    std::string state; // squeue %T / scontrol JobState: PENDING, RUNNING, COMPLETED, CANCELLED, ...
    std::string reason; // squeue %r / scontrol Reason
    std::string comment; // the run id carrier
    std::optional<int> exit_code; // scontrol ExitCode "code:signal"
    std::optional<int> exit_signal;
};

// `command` in `bash -lc` (or `bash -c` when the profile turns login shells off), quoted as one word.
std::string cluster_shell(const ClusterProfile& p, const std::string& command);
// <argv> for one run, through cluster_shell. When the profile has an environment (SLURM_CONF and friends),
// the command first sources the run folder's env.sh, so no value (often a token) shows on a command line.
std::string remote_command(const ClusterProfile& p, const std::string& run_dir, const std::vector<std::string>& argv);
// Several programs in one shell (a login shell can take seconds: one per poll, not one per program); each
// program's output is followed by a line "kSectionEnd STATUS" with that program's own exit status (the
// shell's status is only the last one's). split_sections() cuts the output back apart.
std::string remote_commands(
    const ClusterProfile& p, const std::string& run_dir, const std::vector<std::vector<std::string>>& argvs);
inline constexpr const char* kSectionEnd = "@@parallax-section-end@@";
struct CommandSection {
    std::string out; // stdout and stderr together
    std::optional<int> exit_status; // none: the marker had no number (the command was killed mid-way)
    bool ok() const { return exit_status && *exit_status == 0; }
};
std::vector<CommandSection> split_sections(const std::string& out);

// What a squeue/scontrol call for one job id says about that job. Only an answer from the controller is
// authoritative: "Invalid job id specified" (it forgot the job) or a clean exit. Anything else (the
// controller down or restarting, a timeout, munge trouble) says nothing about the job: ask again later.
enum class SlurmAnswer : unsigned char { answered, job_unknown, no_answer };
SlurmAnswer classify_slurm_answer(const CommandSection& section);
// sbatch failed for a reason that may pass (controller unreachable, timeouts, the job limit while the
// controller restarts), as opposed to a refusal of the job itself (bad partition, account, limits).
bool sbatch_error_is_transient(const std::string& output, std::optional<int> exit_status);

std::vector<std::string> sbatch_argv(
    const ClusterProfile& p, const JobBundle& b, const std::string& run_id, const std::string& run_dir);
// sbatch --parsable prints "ID" or "ID;cluster" (login shells may print other lines first).
std::optional<std::string> parse_sbatch_job_id(const std::string& out);

// The job's state, including finished jobs within MinJobAge (`-t all`). Prints "id|state|reason|comment".
std::vector<std::string> squeue_argv(const std::string& job_id);
// Jobs of a run found by the name Parallax gave them (re-attach when the job id was never stored).
std::vector<std::string> squeue_by_name_argv(const std::string& run_id);
std::vector<SlurmJobInfo> parse_squeue(const std::string& out);
std::vector<std::string> scontrol_argv(const std::string& job_id);
// `scontrol show job -o ID`: one line of Key=Value pairs.
std::optional<SlurmJobInfo> parse_scontrol(const std::string& out);
std::vector<std::string> scancel_argv(const std::string& job_id);

struct MappedState {
    RunState state;
    bool terminal;
};
// PENDING -> queued, RUNNING/COMPLETING/... -> running, COMPLETED -> completed, CANCELLED -> cancelled,
// every other end (FAILED, TIMEOUT, NODE_FAIL, OUT_OF_MEMORY, PREEMPTED, BOOT_FAIL, DEADLINE) -> failed.
MappedState map_slurm_state(const std::string& state);

} // namespace parallax::remote

#pragma once
// A cluster profile: where runs go and how they start there. Stored in the user's settings (QSettings,
// ProfileStore) or read from a JSON file for headless use; it never holds a password or passphrase (a key
// file's path at most). Its `env` values may be secrets (tokens): they reach the cluster only in the run
// folder's owner-only env.sh, never a command line, plan.json or the run store (profile_to_json withholds them). Every
// field may hold anything a user can type; none of it is ever pasted into a command line unquoted (shell_quote), and
// fields that a program parses (host, user, environment variable names) are checked here.
#include "ssh/ssh_target.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

namespace parallax::remote {

enum class LauncherKind : unsigned char { slurm, direct };
std::string_view to_string(LauncherKind k);

struct ClusterProfile {
    std::string name; // [A-Za-z0-9._-]+
    // SSH
    std::string host;
    unsigned port = 22;
    std::string user;
    std::string key_file;
    std::string known_hosts; // empty: ~/.ssh/known_hosts
    bool use_ssh_config = false;
    bool use_agent = true;
    // Cluster commands run in `bash -lc` so that the login environment (modules, PATH to sbatch) applies;
    // off: `bash -c`, faster where a login shell is slow and the plain environment finds the tools.
    bool login_shell = true;
    int connect_timeout_s = 20;
    int keepalive_s = 30;
    // Launch
    LauncherKind launcher = LauncherKind::slurm;
    std::string partition;
    std::string account;
    std::string qos;
    std::string time_limit = "00:30:00"; // sbatch --time
    std::vector<std::string> extra_sbatch_args; // each one argument, e.g. "--reservation=abc"
    std::vector<std::string> hosts; // direct launcher: the hosts to start on (default: host)
    std::vector<std::string> modules; // `module load` each, in order
    std::string container; // image; runs through container_runtime
    std::string container_runtime; // "pyxis" (srun --container-image) or "apptainer"; empty: no container
    std::string gpu_type; // a GPU preset name ("H100-SXM5-80GB"); "cpu" or empty: CPU ranks with gloo
    int gpus_per_node = 0; // ranks per node; 0: the plan's gpus_per_node
    int cpus_per_task = 0; // 0: let the launcher decide (1 per rank on CPU)
    // Paths on the cluster
    std::string work_dir = "parallax-runs"; // relative: below the login folder
    std::string python = "/usr/bin/python3";
    std::string megatron_path; // Megatron-LM checkout (pretrain_gpt.py)
    std::string torchtitan_path; // torchtitan checkout
    std::string deepspeed_path; // Megatron-DeepSpeed checkout
    std::map<std::string, std::string> env; // exported in job scripts and for the run's cluster commands
    // A stored run's profile: the names of env variables whose values stayed on the cluster (env.sh).
    std::vector<std::string> env_names_withheld;
    // Monitoring
    double poll_min_s = 2.0; // first poll interval; grows by 1.5x while nothing changes
    double poll_max_s = 30.0;

    bool cpu() const { return gpu_type.empty() || gpu_type == "cpu"; }
    // The hosts the direct launcher starts on.
    std::vector<std::string> direct_hosts() const { return hosts.empty() ? std::vector<std::string> { host } : hosts; }
    SshTarget ssh_target() const;
    SshTarget ssh_target_for(const std::string& other_host) const;
};

// Checks every field; throws InputError naming `file` and the key (file may be a settings group name).
void validate_profile(const ClusterProfile& p, const std::string& file);

enum class EnvValues : unsigned char {
    include, // the user's own profile file or settings
    withhold, // anything that leaves the profile: plan.json, the run store (names kept as env_names_withheld)
};
nlohmann::json profile_to_json(const ClusterProfile& p, EnvValues env_values = EnvValues::include);
// Every environment variable name of the profile, with or without its value.
std::vector<std::string> env_names(const ClusterProfile& p);
// Strict: unknown keys are errors (a typo must not silently change where a job goes). Throws InputError.
ClusterProfile profile_from_json(const nlohmann::json& j, const std::string& file);
ClusterProfile load_profile_file(const std::string& path);

} // namespace parallax::remote

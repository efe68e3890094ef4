#pragma once
// Turns a plan (scenario + strategy) and a cluster profile into the files of one run: complete scripts a
// user can open, read and edit before they are sent, plus the framework's own config. Pure: no network,
// no clock; the same request, run id and folder always give the same bytes (tested).
//
// Every run folder holds:
//   job.sh    SLURM launcher: the batch script that sbatch runs (srun starts the ranks)
//   node.sh   direct launcher: what one host runs (torchrun starts that host's ranks)
//   start.sh  direct launcher: runs node.sh in its own session and records its exit code
//   plan.json the plan as dispatched (scenario, strategy, profile without its env values, framework)
//   env.sh    the profile's env values (often tokens), mode 0600: the only place they are written
// and per framework: parallax_probe.py + probe_plan.json, megatron_args.sh, torchtitan.toml or
// ds_config.json.
#include "cluster/cluster_profile.hpp"
#include "spec/scenario.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace parallax::remote {

enum class JobFramework : unsigned char { probe, megatron, torchtitan, deepspeed };
std::string_view to_string(JobFramework f);
std::optional<JobFramework> job_framework_from_string(std::string_view s);

struct RunRequest {
    Scenario scenario;
    std::string scenario_label; // the file or preset it came from, for comments and the run list
    ClusterProfile profile;
    JobFramework framework = JobFramework::probe;
    std::string run_id; // empty: a new one (new_run_id())
    int steps = 0; // training steps; 0: 6 for the probe, 30 for the frameworks
    // Probe only (0: automatic): layers it trains (a multiple of pp) and micro-batches per step.
    int probe_layers = 0;
    int probe_microbatches = 0;
    // Files the user reviewed and edited before sending, by name: they replace (or add to) the generated ones.
    std::vector<std::pair<std::string, std::string>> edited_files;
};

struct JobFile {
    std::string name; // inside the run folder
    std::string content;
    int mode = 0644;
};

struct JobBundle {
    std::string run_id;
    // The run folder on the cluster: absolute, or relative to the login folder ($HOME). Scripts refer to it
    // as $PARALLAX_RUN_DIR, so a bundle written out for review is valid before anything is resolved.
    std::string run_dir;
    std::vector<JobFile> files;
    std::string batch_script = "job.sh"; // sbatch's script
    std::string node_script = "node.sh"; // what one host runs (direct launcher)
    std::string start_script = "start.sh";
    int world_size = 1;
    int nodes = 1;
    int ranks_per_node = 1;
    bool gpus = false;
    int cpus_per_task = 0; // 0: launcher default
    int steps = 0;
    std::string description; // one line for the run list
    // What actually runs, when it differs from the plan (the probe trains a few layers of the plan's
    // shapes with GPipe): the scenario to predict for a like-for-like comparison. Absent when it cannot
    // be expressed as a scenario; `notes` then says why.
    std::optional<Scenario> workload;
    std::vector<std::string> notes; // differences between plan and run, said plainly
    std::vector<std::string> edited; // names of files the user edited (RunRequest::edited_files)

    const JobFile* find(std::string_view name) const;
};

// Throws InputError when the plan cannot run on the profile (world size not a multiple of the ranks per
// node, a framework path missing from the profile, pyxis with the direct launcher...). Uses request.run_id,
// or a new id when it is empty.
JobBundle make_job_bundle(const RunRequest& request);
// profile.work_dir + "/" + run_id.
std::string run_folder(const ClusterProfile& profile, const std::string& run_id);
// The run folder as shell text: '/abs/dir' or "$HOME"/'rel/dir'.
std::string run_folder_shell(const std::string& run_dir);
// A file name a bundle may hold: [A-Za-z0-9._-]+, not "." or "..".
bool valid_bundle_file_name(std::string_view name);
// The file that holds the profile's env values: every script and cluster command of a run sources it.
inline constexpr std::string_view kEnvFileName = "env.sh";
// `export NAME='value'` for each env variable of the profile (values it holds; withheld names are skipped).
std::string env_file_text(const ClusterProfile& p);
// What the run store keeps in env.sh's place: the variable names, no values.
std::string withheld_env_file_text(const ClusterProfile& p);
// env.sh 0600 (secrets: owner only), other *.sh 0755, the rest 0644 (the server's umask narrows them further).
int bundle_file_mode(std::string_view name);

// The probe program shipped with Parallax (resources/probe/parallax_probe.py, embedded at build time).
std::string probe_program();

// Run ids: "YYYYMMDD-HHMMSS-xxxxxx" (UTC, 6 random hex digits): sortable, unique enough, and safe in job
// names, comments, file names and shells.
std::string new_run_id();
bool valid_run_id(std::string_view id);
// The SLURM job name and comment that carry the run id (re-attach finds jobs by them).
std::string slurm_job_name(const std::string& run_id);
std::string slurm_comment(const std::string& run_id);

} // namespace parallax::remote

#pragma once
// Internal to jobs/: the script pieces every framework shares, and one add_*_files() per framework.
#include "io/export/launch_config.hpp"
#include "jobs/bash_script.hpp"
#include "jobs/job_bundle.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace parallax::remote {

// Comment block (what, plan, scenario, profile) and `set -eo pipefail`.
void write_header(BashScript& s, const RunRequest& req, const std::string& run_id, const std::string& what);
// PARALLAX_RUN_DIR and cd there, modules, the profile's environment, thread settings.
void write_environment(BashScript& s, const RunRequest& req, const std::string& run_dir);
// "$PARALLAX_RUN_DIR"/'name' as one shell word.
ShellWord in_run_dir(const std::string& name);
// job.sh (inside an allocation): MASTER_ADDR = first node, MASTER_PORT = a free port there.
void write_slurm_rendezvous(BashScript& s, const ClusterProfile& p);
// node.sh: NODE_RANK / NNODES from the direct launcher or srun; MASTER_* required.
void write_node_rendezvous(BashScript& s);
// launch=( ... ), the dry-run switch, then "${launch[@]}".
void write_launch(BashScript& s, const std::vector<ShellWord>& words);
// Words that run a command inside the profile's container (pyxis: srun options; apptainer: a prefix).
std::vector<ShellWord> container_prefix(const ClusterProfile& p, bool under_srun);
// python -m torch.distributed.run with this node's rank and the rendezvous (node.sh).
std::vector<ShellWord> torchrun_words(const ClusterProfile& p, const JobBundle& b);

// sbatch job.sh that runs node.sh once per node (frameworks that start ranks with torchrun).
std::string slurm_node_launcher_script(const RunRequest& req, const JobBundle& b, const std::string& run_id,
    const std::string& run_dir, const std::string& what);

void add_probe_files(JobBundle& b, const RunRequest& req, const std::string& run_id, const std::string& run_dir);
void add_megatron_files(JobBundle& b, const RunRequest& req, const std::string& run_id, const std::string& run_dir);
void add_torchtitan_files(JobBundle& b, const RunRequest& req, const std::string& run_id, const std::string& run_dir);
void add_deepspeed_files(JobBundle& b, const RunRequest& req, const std::string& run_id, const std::string& run_dir);

} // namespace parallax::remote

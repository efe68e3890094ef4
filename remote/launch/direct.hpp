#pragma once
// The direct launcher's commands: start node.sh on each host in its own session (start.sh records the
// process group and, at the end, the exit status), ask whether it still runs, and signal its process group
// to cancel. Every value goes through shell_quote; pure functions, tested without a network.
#include "cluster/cluster_profile.hpp"

#include <optional>
#include <string>

namespace parallax::remote {

// Prints the pid (= process group) of the started start.sh.
std::string direct_start_command(const ClusterProfile& p, const std::string& run_dir, int node_rank, int nnodes,
    const std::string& master_addr, int master_port);
// Prints "exit N", "running" or "gone" for one node.
std::string direct_status_command(const std::string& run_dir, int node_rank);
// TERM to node.sh's process group (its pid is in node<rank>.pid); start.sh then records the exit status.
std::string direct_cancel_command(const std::string& run_dir, int node_rank);
// A free TCP port on the host (the rendezvous of torchrun), printed as a number.
std::string free_port_command(const ClusterProfile& p);

struct DirectStatus {
    enum Kind { running, exited, gone, unknown } kind = unknown;
    int exit_code = 0;
};
DirectStatus parse_direct_status(const std::string& out);

std::string direct_log_name(int node_rank);

} // namespace parallax::remote

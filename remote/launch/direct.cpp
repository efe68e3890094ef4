#include "launch/direct.hpp"

#include "jobs/shell_quote.hpp"
#include "launch/slurm.hpp"

#include <sstream>

namespace parallax::remote {

std::string direct_log_name(int node_rank)
{
    return "node" + std::to_string(node_rank) + ".log";
}

std::string direct_start_command(const ClusterProfile& p, const std::string& run_dir, int node_rank, int nnodes,
    const std::string& master_addr, int master_port)
{
    std::vector<std::string> argv { "env", "PARALLAX_NNODES=" + std::to_string(nnodes), "MASTER_ADDR=" + master_addr,
        "MASTER_PORT=" + std::to_string(master_port) };
    // The profile's env values are not on this command line: node.sh sources env.sh in the run folder.
    // setsid: start.sh leads its own session, so it outlives this SSH channel and a cancel can signal the
    // whole group. The redirections release the channel at once.
    for (const char* w : { "setsid", "bash", "start.sh" })
        argv.emplace_back(w);
    argv.push_back(std::to_string(node_rank));
    // `cd ... || exit` on its own: `cd ... && cmd &` would put the whole list in a background subshell that
    // keeps the channel's stdout open until the job ends.
    return cluster_shell(p,
        "cd " + shell_quote(run_dir) + " || exit 1; " + shell_join(argv) + " > /dev/null 2>&1 < /dev/null & echo $!");
}

std::string direct_status_command(const std::string& run_dir, int node_rank)
{
    const std::string r = std::to_string(node_rank);
    // Fixed script; the folder is one quoted argument ($1).
    const std::string script = "cd \"$1\" || { echo gone; exit 0; }; "
                               "if [ -e node"
        + r + ".exit ]; then echo \"exit $(cat node" + r + ".exit)\"; " + "elif [ -e node" + r
        + ".pid ] && kill -0 \"$(cat node" + r
        + ".pid)\" 2>/dev/null; then echo running; "
          "elif [ -e node"
        + r + ".pid ]; then sleep 1; if [ -e node" + r + ".exit ]; then echo \"exit $(cat node" + r
        + ".exit)\"; else echo gone; fi; "
          "else echo starting; fi";
    return "sh -c " + shell_quote(script) + " sh " + shell_quote(run_dir);
}

std::string direct_cancel_command(const std::string& run_dir, int node_rank)
{
    const std::string r = std::to_string(node_rank);
    const std::string script = "cd \"$1\" && [ -e node" + r + ".pid ] && kill -TERM -\"$(cat node" + r
        + ".pid)\" 2>/dev/null; echo signalled";
    return "sh -c " + shell_quote(script) + " sh " + shell_quote(run_dir);
}

std::string free_port_command(const ClusterProfile& p)
{
    return cluster_shell(p,
        shell_join(
            { p.python, "-c", "import socket; s = socket.socket(); s.bind(('', 0)); print(s.getsockname()[1])" }));
}

DirectStatus parse_direct_status(const std::string& out)
{
    DirectStatus st;
    std::istringstream in(out);
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("exit ", 0) == 0) {
            st.kind = DirectStatus::exited;
            try {
                st.exit_code = std::stoi(line.substr(5));
            } catch (...) {
                st.exit_code = -1;
            }
        } else if (line == "running" || line == "starting") {
            st.kind = DirectStatus::running;
        } else if (line == "gone") {
            st.kind = DirectStatus::gone;
        }
    }
    return st;
}

} // namespace parallax::remote

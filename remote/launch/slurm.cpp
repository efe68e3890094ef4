#include "launch/slurm.hpp"

#include "jobs/shell_quote.hpp"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <sstream>

namespace parallax::remote {

namespace {

std::vector<std::string> lines_of(const std::string& text)
{
    std::vector<std::string> out;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        while (!line.empty() && (line.back() == '\r' || line.back() == ' '))
            line.pop_back();
        out.push_back(line);
    }
    return out;
}

bool all_digits(const std::string& s)
{
    return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

// "0:0" -> code 0, signal 0.
void parse_exit(const std::string& v, SlurmJobInfo& info)
{
    const auto colon = v.find(':');
    const std::string code = v.substr(0, colon);
    if (all_digits(code))
        info.exit_code = std::stoi(code);
    if (colon != std::string::npos) {
        const std::string sig = v.substr(colon + 1);
        if (all_digits(sig))
            info.exit_signal = std::stoi(sig);
    }
}

constexpr const char* kSqueueFormat = "%i|%T|%r|%k";

} // namespace

std::string cluster_shell(const ClusterProfile& p, const std::string& command)
{
    return p.login_shell ? login_shell(command) : "bash -c " + shell_quote(command);
}

namespace {

// Sources the run's env.sh when the profile has an environment; nothing otherwise.
std::string env_prelude(const ClusterProfile& p, const std::string& run_dir)
{
    if (p.env.empty() && p.env_names_withheld.empty())
        return {};
    const std::string file = shell_quote(run_dir + "/" + std::string(kEnvFileName));
    return "[ ! -r " + file + " ] || . " + file + "; ";
}

} // namespace

std::string remote_command(const ClusterProfile& p, const std::string& run_dir, const std::vector<std::string>& argv)
{
    return cluster_shell(p, env_prelude(p, run_dir) + shell_join(argv));
}

std::string remote_commands(
    const ClusterProfile& p, const std::string& run_dir, const std::vector<std::vector<std::string>>& argvs)
{
    std::string script = env_prelude(p, run_dir);
    for (const auto& argv : argvs)
        script += shell_join(argv) + " 2>&1; echo " + shell_quote(kSectionEnd) + " $?; ";
    return cluster_shell(p, script);
}

std::vector<CommandSection> split_sections(const std::string& out)
{
    std::vector<CommandSection> sections;
    CommandSection current;
    const std::string marker = kSectionEnd;
    for (const auto& line : lines_of(out)) {
        if (line.rfind(marker, 0) == 0 && (line.size() == marker.size() || line[marker.size()] == ' ')) {
            const std::string status = line.size() > marker.size() ? line.substr(marker.size() + 1) : std::string();
            if (all_digits(status) && status.size() <= 3)
                current.exit_status = std::stoi(status);
            sections.push_back(std::move(current));
            current = {};
        } else {
            current.out += line + "\n";
        }
    }
    return sections;
}

SlurmAnswer classify_slurm_answer(const CommandSection& section)
{
    // squeue and scontrol print "slurm_load_jobs error: Invalid job id specified" (exit 1) for a job the
    // controller no longer holds; with the controller down they print "Unable to contact slurm controller".
    if (section.out.find("Invalid job id specified") != std::string::npos)
        return SlurmAnswer::job_unknown;
    return section.ok() ? SlurmAnswer::answered : SlurmAnswer::no_answer;
}

bool sbatch_error_is_transient(const std::string& output, std::optional<int> exit_status)
{
    if (!exit_status)
        return true; // killed or cut off: nobody said no
    // Slurm's own words for "try again" (slurm_strerror): the controller unreachable or busy.
    static const char* const kTransient[] = { "Unable to contact slurm controller", "Socket timed out",
        "Zero Bytes were transmitted or received", "Connection refused", "Resource temporarily unavailable",
        "Slurm backup controller in standby mode", "slurmctld is not responding", "Communication connection failure",
        "Slurm temporarily unable to accept job", "Requested operation is presently disabled" };
    return std::any_of(std::begin(kTransient), std::end(kTransient),
        [&](const char* t) { return output.find(t) != std::string::npos; });
}

std::vector<std::string> sbatch_argv(
    const ClusterProfile& p, const JobBundle& b, const std::string& run_id, const std::string& run_dir)
{
    std::vector<std::string> a { "sbatch", "--parsable", "--job-name=" + slurm_job_name(run_id),
        "--comment=" + slurm_comment(run_id), "--output=" + run_dir + "/job.log", "--chdir=" + run_dir,
        "--nodes=" + std::to_string(b.nodes), "--ntasks-per-node=" + std::to_string(b.ranks_per_node) };
    if (b.cpus_per_task > 0)
        a.push_back("--cpus-per-task=" + std::to_string(b.cpus_per_task));
    if (b.gpus)
        a.push_back("--gpus-per-node=" + std::to_string(b.ranks_per_node));
    if (!p.partition.empty())
        a.push_back("--partition=" + p.partition);
    if (!p.account.empty())
        a.push_back("--account=" + p.account);
    if (!p.qos.empty())
        a.push_back("--qos=" + p.qos);
    if (!p.time_limit.empty())
        a.push_back("--time=" + p.time_limit);
    for (const auto& extra : p.extra_sbatch_args)
        a.push_back(extra);
    a.push_back(run_dir + "/" + b.batch_script);
    return a;
}

std::optional<std::string> parse_sbatch_job_id(const std::string& out)
{
    const auto lines = lines_of(out);
    for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
        const std::string id = it->substr(0, it->find(';'));
        if (all_digits(id))
            return id;
    }
    return std::nullopt;
}

std::vector<std::string> squeue_argv(const std::string& job_id)
{
    return { "squeue", "-h", "-t", "all", "-j", job_id, "-o", kSqueueFormat };
}

std::vector<std::string> squeue_by_name_argv(const std::string& run_id)
{
    return { "squeue", "-h", "-t", "all", "--name=" + slurm_job_name(run_id), "-o", kSqueueFormat };
}

std::vector<SlurmJobInfo> parse_squeue(const std::string& out)
{
    std::vector<SlurmJobInfo> jobs;
    for (const auto& line : lines_of(out)) {
        // id|state|reason|comment: the comment is last because it may itself hold '|'.
        const auto a = line.find('|');
        if (a == std::string::npos)
            continue;
        const auto b = line.find('|', a + 1);
        if (b == std::string::npos)
            continue;
        const auto c = line.find('|', b + 1);
        SlurmJobInfo info;
        info.job_id = line.substr(0, a);
        if (!all_digits(info.job_id.substr(0, info.job_id.find('_'))))
            continue; // a login banner, not a job line
        info.state = line.substr(a + 1, b - a - 1);
        info.reason = line.substr(b + 1, c == std::string::npos ? std::string::npos : c - b - 1);
        if (c != std::string::npos)
            info.comment = line.substr(c + 1);
        jobs.push_back(std::move(info));
    }
    return jobs;
}

std::vector<std::string> scontrol_argv(const std::string& job_id)
{
    return { "scontrol", "show", "job", "-o", job_id };
}

std::optional<SlurmJobInfo> parse_scontrol(const std::string& out)
{
    for (const auto& line : lines_of(out)) {
        if (line.rfind("JobId=", 0) != 0)
            continue;
        SlurmJobInfo info;
        // Key=Value pairs separated by spaces; values of Comment/Reason may hold spaces, so a key starts
        // only where a space is followed by an identifier and '='.
        std::size_t pos = 0;
        while (pos < line.size()) {
            const auto eq = line.find('=', pos);
            if (eq == std::string::npos)
                break;
            const std::string key = line.substr(pos, eq - pos);
            std::size_t next = eq + 1;
            std::size_t end = line.size();
            while (next < line.size()) {
                const auto sp = line.find(' ', next);
                if (sp == std::string::npos)
                    break;
                const auto eq2 = line.find('=', sp + 1);
                const auto sp2 = line.find(' ', sp + 1);
                if (eq2 != std::string::npos && (sp2 == std::string::npos || eq2 < sp2)) {
                    const std::string k2 = line.substr(sp + 1, eq2 - sp - 1);
                    if (!k2.empty() && std::all_of(k2.begin(), k2.end(), [](unsigned char ch) {
                            return std::isalnum(ch) || ch == '_' || ch == ':' || ch == '/';
                        })) {
                        end = sp;
                        break;
                    }
                }
                next = sp + 1;
            }
            const std::string value = line.substr(eq + 1, end - eq - 1);
            if (key == "JobId")
                info.job_id = value;
            else if (key == "JobState")
                info.state = value;
            else if (key == "Reason")
                info.reason = value;
            else if (key == "Comment")
                info.comment = value;
            else if (key == "ExitCode")
                parse_exit(value, info);
            pos = end == line.size() ? end : end + 1;
        }
        if (!info.job_id.empty())
            return info;
    }
    return std::nullopt;
}

std::vector<std::string> scancel_argv(const std::string& job_id)
{
    return { "scancel", job_id };
}

MappedState map_slurm_state(const std::string& raw)
{
    // squeue may print "CANCELLED by 0"; scontrol prints the bare word.
    const std::string s = raw.substr(0, raw.find(' '));
    if (s == "PENDING" || s == "REQUEUED" || s == "REQUEUE_HOLD" || s == "REQUEUE_FED" || s == "RESV_DEL_HOLD"
        || s == "SUSPENDED")
        return { RunState::queued, false };
    if (s == "RUNNING" || s == "CONFIGURING" || s == "COMPLETING" || s == "STAGE_OUT" || s == "SIGNALING"
        || s == "RESIZING" || s == "STOPPED")
        return { RunState::running, false };
    if (s == "COMPLETED")
        return { RunState::completed, true };
    if (s == "CANCELLED")
        return { RunState::cancelled, true };
    if (s == "FAILED" || s == "TIMEOUT" || s == "NODE_FAIL" || s == "OUT_OF_MEMORY" || s == "PREEMPTED"
        || s == "BOOT_FAIL" || s == "DEADLINE" || s == "SPECIAL_EXIT" || s == "REVOKED")
        return { RunState::failed, true };
    return { RunState::running, false }; // unknown words: keep watching
}

} // namespace parallax::remote

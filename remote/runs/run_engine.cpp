#include "runs/run_engine.hpp"

#include "io/input_limits.hpp"
#include "io/prediction_io.hpp"
#include "io/scenario_io.hpp"
#include "jobs/shell_quote.hpp"
#include "launch/direct.hpp"
#include "launch/slurm.hpp"
#include "logging/log_categories.hpp"
#include "model/analytic_model.hpp"

#include "spec/input_error.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace parallax::remote {

namespace {

// Cluster commands are short (squeue, sbatch, mkdir); a login shell on a busy login node can still take
// seconds. Longer than this is a hung node, not a slow one.
constexpr auto kCommandTimeout = std::chrono::seconds(90);

std::string trim(std::string s)
{
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
        s.pop_back();
    std::size_t i = 0;
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i])))
        ++i;
    return s.substr(i);
}

std::string last_line(const std::string& out)
{
    std::istringstream in(out);
    std::string line;
    std::string last;
    while (std::getline(in, line)) {
        line = trim(line);
        if (!line.empty())
            last = line;
    }
    return last;
}

// The error text of a failed command: stderr, else stdout, shortened for a state detail.
std::string failure_text(const ExecResult& r)
{
    std::string t = trim(r.err.empty() ? r.out : r.err);
    constexpr std::size_t kMax = 600;
    if (t.size() > kMax)
        t = t.substr(0, kMax) + " ...";
    std::string status = r.exit_status ? "exit status " + std::to_string(*r.exit_status)
                                       : (r.exit_signal.empty() ? "no exit status" : "killed by SIG" + r.exit_signal);
    return status + (t.empty() ? std::string() : ": " + t);
}

ExecResult run_command(SshConnection& c, const std::string& command, const CancelToken& cancel)
{
    return c.run(
        [&](SshSession& s) {
            ExecOptions o;
            o.timeout = kCommandTimeout;
            o.cancel = cancel;
            return s.exec(command, o);
        },
        cancel);
}

std::string first_line(const std::string& out)
{
    std::istringstream in(out);
    std::string line;
    while (std::getline(in, line)) {
        line = trim(line);
        if (!line.empty())
            return line.size() > 300 ? line.substr(0, 300) + " ..." : line;
    }
    return "no output";
}

// Why files cannot be written to `dir`: a full disk or a read-only one ("" when neither shows).
std::string disk_diagnosis(SshConnection& c, const std::string& dir, const CancelToken& cancel)
{
    const ExecResult r = run_command(c,
        "bash -c "
            + shell_quote("df -Pk -- " + shell_quote(dir) + " | awk 'NR==2 {print $4, $2}'; test -w " + shell_quote(dir)
                + " && echo writable"),
        cancel);
    std::istringstream in(r.out);
    long long free_kib = -1;
    long long total_kib = -1;
    in >> free_kib >> total_kib;
    if (r.out.find("writable") == std::string::npos)
        return " (" + dir + " is not writable)";
    if (free_kib >= 0 && free_kib < 1024)
        return " (no space left on the disk holding " + dir + ": " + std::to_string(free_kib) + " KiB free of "
            + std::to_string(total_kib) + " KiB)";
    return {};
}

std::string connection_key(const ClusterProfile& p, const std::string& host)
{
    return (p.user.empty() ? std::string() : p.user + "@") + host + ":" + std::to_string(p.port);
}

bool all_digits(const std::string& s)
{
    return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

} // namespace

// ------------------------------------------------------------------------------------------------

ConnectionPool::ConnectionPool(std::shared_ptr<SshInteraction> interaction, ReconnectPolicy policy)
    : m_interaction(std::move(interaction))
    , m_policy(policy)
{
}

SshConnection& ConnectionPool::get(const ClusterProfile& profile, const std::string& host)
{
    const std::string label = connection_key(profile, host);
    // How the connection authenticates and checks the host key is part of its identity: a profile edited in a
    // long-lived GUI (another key file, another known_hosts) must not reuse the session made with the old one.
    const SshTarget target = profile.ssh_target_for(host);
    const std::string key = label + "|" + target.key_file + "|" + target.known_hosts + "|"
        + (target.use_agent ? "agent" : "") + "|" + (target.use_ssh_config ? "config" : "") + "|"
        + std::to_string(target.connect_timeout.count());
    auto it = m_connections.find(key);
    if (it == m_connections.end()) {
        auto conn = std::make_unique<SshConnection>(target, m_interaction, m_policy);
        conn->on_state = [this, label](ConnectionState s, const std::string& msg) {
            if (on_state)
                on_state(label, s, msg);
        };
        it = m_connections.emplace(key, std::move(conn)).first;
    }
    return *it->second;
}

void ConnectionPool::keepalive_all()
{
    for (auto& [key, c] : m_connections)
        c->keepalive();
}

void ConnectionPool::close_all()
{
    for (auto& [key, c] : m_connections)
        c->close();
}

// ------------------------------------------------------------------------------------------------

RunEngine::RunEngine(RunStore& store, ConnectionPool& pool)
    : m_store(store)
    , m_pool(pool)
{
}

RunEngine::Live& RunEngine::live(const RunRecord& run, const ClusterProfile* profile_with_env)
{
    auto it = m_live.find(run.id);
    // A finished collector read a log that was complete, yet the run goes on (the store failed before the end
    // state was written): start again from the stored log.
    if (it != m_live.end() && !it->second.collector->finished())
        return it->second;
    if (it != m_live.end())
        m_live.erase(it);
    Live l;
    // The stored profile lacks the env values (secrets are never stored); the dispatching request has them.
    l.profile = profile_with_env
        ? *profile_with_env
        : profile_from_json(nlohmann::json::parse(run.profile_json), "run " + run.id + " (stored profile)");
    l.framework = job_framework_from_string(run.framework).value_or(JobFramework::probe);
    l.collector = std::make_unique<MeasurementCollector>(log_format_for(l.framework));
    m_store.for_each_log_chunk(run.id, [&](std::string_view chunk) { l.collector->feed(chunk); });
    l.latest = l.collector->snapshot();
    return m_live.emplace(run.id, std::move(l)).first->second;
}

std::string RunEngine::dispatch(const RunRequest& request, const CancelToken& cancel)
{
    const JobBundle bundle = make_job_bundle(request);
    const ClusterProfile& p = request.profile;
    std::vector<std::string> notes = bundle.notes;

    // Predictions at dispatch time: the plan as the planner showed it, and what actually runs.
    std::string prediction;
    std::string workload_prediction;
    try {
        const PlanContext ctx(request.scenario.model, request.scenario.training, request.scenario.cluster);
        prediction = prediction_to_json(AnalyticModel(ctx).predict(request.scenario.strategy)).dump();
    } catch (const std::exception& e) {
        notes.push_back(std::string("no prediction of the plan at dispatch: ") + e.what());
    }
    if (bundle.workload) {
        try {
            const PlanContext ctx(bundle.workload->model, bundle.workload->training, bundle.workload->cluster);
            workload_prediction = prediction_to_json(AnalyticModel(ctx).predict(bundle.workload->strategy)).dump();
        } catch (const std::exception& e) {
            notes.push_back(std::string("no prediction of the probe's workload: ") + e.what());
        }
    }

    // The run folder on every host; the first host's absolute path is the one SLURM gets.
    std::vector<std::string> hosts
        = p.launcher == LauncherKind::direct ? p.direct_hosts() : std::vector<std::string> { p.host };
    qCDebug(lcRun, "run %s: dispatching to %s (%s, %d host(s))", bundle.run_id.c_str(), p.name.c_str(),
        to_string(p.launcher).data(), static_cast<int>(hosts.size()));
    std::string abs_dir;
    try {
        for (std::size_t i = 0; i < hosts.size(); ++i) {
            qCDebug(lcRun, "run %s: creating the run folder on %s", bundle.run_id.c_str(), hosts[i].c_str());
            const ExecResult r = run_command(m_pool.get(p, hosts[i]),
                // POSIX tools only: no login environment needed (a login shell can take seconds).
                "bash -c "
                    + shell_quote("mkdir -p -- " + shell_quote(bundle.run_dir) + " && cd -- "
                        + shell_quote(bundle.run_dir) + " && pwd"),
                cancel);
            if (!r.ok())
                throw SshError(SshErrorKind::remote_command,
                    hosts[i] + ": cannot create the run folder " + bundle.run_dir + ": " + failure_text(r));
            if (i == 0)
                abs_dir = last_line(r.out);
        }
        if (abs_dir.empty() || abs_dir.front() != '/')
            throw SshError(
                SshErrorKind::remote_command, p.host + ": could not resolve the run folder " + bundle.run_dir);
    } catch (const SshError& e) {
        qCWarning(lcRun, "run %s: step 'create the run folder' failed: %s", bundle.run_id.c_str(), e.what());
        throw;
    }

    RunRecord run;
    run.id = bundle.run_id;
    run.framework = std::string(to_string(request.framework));
    run.launcher = std::string(to_string(p.launcher));
    run.cluster = p.name;
    run.scenario_label = request.scenario_label;
    run.description = bundle.description;
    run.profile_json = profile_to_json(p, EnvValues::withhold).dump();
    Scenario as_sent = request.scenario;
    as_sent.dp_derived = false; // stored with every degree written out
    run.scenario_json = scenario_to_json(as_sent).dump();
    const JobFile* plan = bundle.find("plan.json");
    run.plan_json = plan ? plan->content : std::string();
    const JobFile* script = bundle.find(p.launcher == LauncherKind::slurm ? bundle.batch_script : bundle.node_script);
    run.script = script ? script->content : std::string();
    run.remote_dir = abs_dir;
    if (p.launcher == LauncherKind::slurm)
        run.submit_command = remote_command(p, abs_dir, sbatch_argv(p, bundle, run.id, abs_dir));
    else
        run.submit_command = "direct: setsid bash start.sh <rank> on " + std::to_string(hosts.size()) + " host(s)";
    run.state = RunState::created;
    run.detail = "stored; uploading " + std::to_string(bundle.files.size()) + " files to " + p.host + ":" + abs_dir;
    run.prediction_json = prediction;
    run.workload_prediction_json = workload_prediction;
    run.notes_json = nlohmann::json(notes).dump();
    std::vector<StoredFile> files;
    for (const JobFile& f : bundle.files)
        files.push_back({ f.name, f.mode, f.name == kEnvFileName ? withheld_env_file_text(p) : f.content });
    m_store.create(run, files);
    if (on_created)
        on_created(run.id);

    Live& l = live(run, &p);
    try {
        upload_and_submit(run, l, true, cancel);
    } catch (const SshError& e) {
        qCWarning(lcRun, "run %s: step 'upload and submit' failed: %s", run.id.c_str(), e.what());
        if (e.transient() || e.kind() == SshErrorKind::cancelled)
            m_store.set_state(run.id, RunState::created,
                std::string("not submitted yet (") + e.what() + "); retried when the connection is back");
        else
            m_store.set_state(run.id, RunState::failed, std::string("could not submit: ") + e.what());
    }
    return run.id;
}

std::vector<StoredFile> RunEngine::files_to_upload(const RunRecord& run, const ClusterProfile& p) const
{
    std::vector<StoredFile> files = m_store.files(run.id);
    for (StoredFile& f : files) {
        if (f.name != kEnvFileName)
            continue;
        if (p.env.empty())
            throw SshError(SshErrorKind::config,
                "run " + run.id + ": the values of its environment (" + std::to_string(env_names(p).size())
                    + " variables) are not stored, and this app did not send it; send it again with its cluster "
                      "profile");
        f.content = env_file_text(p);
        f.mode = bundle_file_mode(kEnvFileName);
    }
    return files;
}

void RunEngine::upload_and_submit(const RunRecord& run, Live& l, bool first_attempt, const CancelToken& cancel)
{
    const ClusterProfile& p = l.profile;
    const std::vector<StoredFile> files = files_to_upload(run, p);
    const bool slurm = p.launcher == LauncherKind::slurm;
    const std::vector<std::string> hosts = slurm ? std::vector<std::string> { p.host } : p.direct_hosts();
    for (const auto& host : hosts) {
        // The first host uses the resolved absolute folder; others their own login-relative one.
        const std::string dir = host == hosts.front() ? run.remote_dir : run_folder(p, run.id);
        SshConnection& c = m_pool.get(p, host);
        if (host != hosts.front()) {
            const ExecResult r = run_command(c, "bash -c " + shell_quote("mkdir -p -- " + shell_quote(dir)), cancel);
            if (!r.ok())
                throw SshError(SshErrorKind::remote_command, host + ": cannot create " + dir + ": " + failure_text(r));
        }
        qCDebug(lcRun, "run %s: uploading %d files to %s:%s", run.id.c_str(), static_cast<int>(files.size()),
            host.c_str(), dir.c_str());
        try {
            c.run(
                [&](SshSession& s) {
                    for (const StoredFile& f : files)
                        s.upload(dir + "/" + f.name, f.content, f.mode);
                },
                cancel);
        } catch (const SshError& e) {
            if (e.kind() != SshErrorKind::sftp)
                throw;
            // SFTP v3 reports a full disk as a bare "Failure": ask the host what is wrong with the folder.
            throw SshError(SshErrorKind::sftp, std::string(e.what()) + disk_diagnosis(c, dir, cancel));
        }
    }
    if (slurm)
        submit_slurm(run, l, first_attempt, cancel);
    else
        submit_direct(run, l, cancel);
}

void RunEngine::submit_slurm(const RunRecord& run, Live& l, bool first_attempt, const CancelToken& cancel)
{
    const ClusterProfile& p = l.profile;
    SshConnection& c = m_pool.primary(p);
    // A previous attempt may have submitted and lost only the answer: the job's name carries the run id.
    if (!first_attempt) {
        const ExecResult found = run_command(c, remote_command(p, run.remote_dir, squeue_by_name_argv(run.id)), cancel);
        if (!found.ok()) {
            // Not knowing whether a job exists is no licence to submit a second one: wait and ask again.
            retry_submit_later(run, l, "cannot look for an earlier submission (squeue: " + failure_text(found) + ")");
            return;
        }
        for (const SlurmJobInfo& job : parse_squeue(found.out)) {
            if (job.comment == slurm_comment(run.id)) {
                m_store.set_job(run.id, job.job_id, run.remote_dir + "/job.log", run.submit_command);
                m_store.set_state(run.id, RunState::submitted,
                    "SLURM job " + job.job_id + " (found by its name after a lost answer)");
                return;
            }
        }
    }
    qCDebug(lcSlurm, "run %s: submitting: %s", run.id.c_str(), run.submit_command.c_str());
    const ExecResult r = run_command(c, run.submit_command, cancel);
    if (!r.ok()) {
        if (sbatch_error_is_transient(r.err + r.out, r.exit_status)) {
            qCWarning(lcSlurm, "run %s: sbatch could not reach the controller, retrying later: %s", run.id.c_str(),
                failure_text(r).c_str());
            retry_submit_later(run, l, "sbatch could not reach the controller (" + failure_text(r) + ")");
            return;
        }
        qCWarning(lcSlurm, "run %s: sbatch refused the job (exit %d): %s", run.id.c_str(),
            static_cast<int>(r.exit_status.value_or(-1)), failure_text(r).c_str());
        m_store.set_state(run.id, RunState::failed, "sbatch refused the job: " + failure_text(r), r.exit_status);
        return;
    }
    const auto job_id = parse_sbatch_job_id(r.out);
    if (!job_id) {
        qCWarning(lcSlurm, "run %s: sbatch printed no job id: %s", run.id.c_str(), failure_text(r).c_str());
        m_store.set_state(run.id, RunState::failed, "sbatch printed no job id: " + failure_text(r));
        return;
    }
    qCDebug(lcSlurm, "run %s: SLURM job %s", run.id.c_str(), job_id->c_str());
    m_store.set_job(run.id, *job_id, run.remote_dir + "/job.log", run.submit_command);
    m_store.set_state(run.id, RunState::submitted,
        "SLURM job " + *job_id + " submitted" + (p.partition.empty() ? std::string() : " to partition " + p.partition));
}

void RunEngine::retry_submit_later(const RunRecord& run, Live& l, const std::string& why)
{
    if (++l.submit_retries > kMaxSubmitRetries) {
        m_store.set_state(run.id, RunState::failed,
            why + "; gave up after " + std::to_string(kMaxSubmitRetries) + " tries, nothing was submitted");
        return;
    }
    // Left "created": the next poll looks for the job by its name first, then submits.
    m_store.set_state(run.id, RunState::created, why + "; trying again");
}

void RunEngine::submit_direct(const RunRecord& run, Live& l, const CancelToken& cancel)
{
    const ClusterProfile& p = l.profile;
    const std::vector<std::string> hosts = p.direct_hosts();
    const std::string dir = run_folder(p, run.id);
    const ExecResult port_out = run_command(m_pool.get(p, hosts.front()), free_port_command(p), cancel);
    const std::string port = last_line(port_out.out);
    if (!port_out.ok() || !all_digits(port)) {
        qCWarning(lcDirect, "run %s: no rendezvous port on %s: %s", run.id.c_str(), hosts.front().c_str(),
            failure_text(port_out).c_str());
        throw SshError(
            SshErrorKind::remote_command, hosts.front() + ": cannot pick a rendezvous port: " + failure_text(port_out));
    }
    std::string job_id;
    const int n = static_cast<int>(hosts.size());
    for (int rank = 0; rank < n; ++rank) {
        SshConnection& c = m_pool.get(p, hosts[static_cast<std::size_t>(rank)]);
        const std::string node_dir = rank == 0 ? run.remote_dir : dir;
        // Started before (a lost answer)? Then its pid file is there: never start a node twice.
        const ExecResult st = run_command(c, direct_status_command(node_dir, rank), cancel);
        std::string pid;
        if (st.ok() && last_line(st.out) != "starting") {
            const ExecResult pr
                = run_command(c, "cat " + shell_quote(node_dir + "/node" + std::to_string(rank) + ".pid"), cancel);
            pid = last_line(pr.out);
        } else {
            const ExecResult r
                = run_command(c, direct_start_command(p, node_dir, rank, n, hosts.front(), std::stoi(port)), cancel);
            pid = last_line(r.out);
            if (!r.ok() || !all_digits(pid)) {
                qCWarning(lcDirect, "run %s: %s could not start node %d: %s", run.id.c_str(),
                    hosts[static_cast<std::size_t>(rank)].c_str(), static_cast<int>(rank), failure_text(r).c_str());
                m_store.set_state(run.id, RunState::failed,
                    hosts[static_cast<std::size_t>(rank)] + ": could not start node " + std::to_string(rank) + ": "
                        + failure_text(r));
                return;
            }
        }
        job_id += (job_id.empty() ? "" : ",") + hosts[static_cast<std::size_t>(rank)] + ":" + pid;
    }
    m_store.set_job(run.id, job_id,
        log_host(run, l) == hosts.front() ? run.remote_dir + "/node0.log" : dir + "/" + direct_log_name(n - 1),
        run.submit_command);
    m_store.set_state(run.id, RunState::submitted,
        "started on " + std::to_string(n) + " host(s), rendezvous " + hosts.front() + ":" + port);
}

std::string RunEngine::log_host(const RunRecord&, const Live& l) const
{
    if (l.profile.launcher == LauncherKind::slurm)
        return l.profile.host;
    // Megatron-LM prints its iteration lines on the last pipeline rank, which torchrun puts on the last node.
    const auto hosts = l.profile.direct_hosts();
    return l.framework == JobFramework::megatron ? hosts.back() : hosts.front();
}

RunEngine::LauncherState RunEngine::query_slurm(const RunRecord& run, Live& l, const CancelToken& cancel)
{
    const ClusterProfile& p = l.profile;
    SshConnection& c = m_pool.primary(p);
    LauncherState out;
    std::optional<SlurmJobInfo> info;
    // squeue for the live state, scontrol for the exit code and when squeue has forgotten the job: one shell.
    const ExecResult q = run_command(
        c, remote_commands(p, run.remote_dir, { squeue_argv(run.job_id), scontrol_argv(run.job_id) }), cancel);
    const std::vector<CommandSection> sections = split_sections(q.out);
    if (sections.size() < 2) {
        // The shell itself did not finish (killed, or the login environment failed): no word on the job.
        out.no_answer = true;
        out.detail = "squeue/scontrol printed nothing usable: " + failure_text(q);
        return out;
    }
    const SlurmAnswer sq = classify_slurm_answer(sections[0]);
    const SlurmAnswer sc_answer = classify_slurm_answer(sections[1]);
    if (sq == SlurmAnswer::answered)
        for (const SlurmJobInfo& job : parse_squeue(sections[0].out))
            if (job.job_id == run.job_id)
                info = job;
    if (auto sc = sc_answer == SlurmAnswer::answered ? parse_scontrol(sections[1].out) : std::nullopt;
        sc && sc->job_id == run.job_id) {
        if (!info) {
            info = sc;
        } else {
            // scontrol's JobState is the controller's own word once the job ended; squeue adds the reason.
            if (map_slurm_state(info->state).terminal && !sc->state.empty())
                info->state = sc->state;
            info->exit_code = sc->exit_code;
            info->exit_signal = sc->exit_signal;
        }
    }
    if (!info && (sq == SlurmAnswer::no_answer || sc_answer == SlurmAnswer::no_answer)) {
        // "Unable to contact slurm controller" is not "job unknown": the job may well be running.
        const CommandSection& failed = sq == SlurmAnswer::no_answer ? sections[0] : sections[1];
        out.no_answer = true;
        out.detail = "the SLURM controller did not answer (" + first_line(failed.out) + ")";
        return out;
    }
    if (!info) {
        out.known = false;
        out.detail = "SLURM job " + run.job_id + " is not in squeue or scontrol";
        return out;
    }
    const MappedState m = map_slurm_state(info->state);
    out.state = m.state;
    out.exit_code = m.terminal ? info->exit_code : std::nullopt;
    out.detail = "SLURM job " + run.job_id + " " + info->state;
    if (!info->reason.empty() && info->reason != "None" && info->reason != "(null)")
        out.detail += " (" + info->reason + ")";
    if (info->exit_code && m.terminal) // scontrol prints ExitCode=0:0 while a job still runs
        out.detail
            += ", exit " + std::to_string(*info->exit_code) + ":" + std::to_string(info->exit_signal.value_or(0));
    l.last_slurm_state = info->state;
    return out;
}

RunEngine::LauncherState RunEngine::query_direct(const RunRecord& run, Live& l, const CancelToken& cancel)
{
    const ClusterProfile& p = l.profile;
    const std::vector<std::string> hosts = p.direct_hosts();
    LauncherState out;
    int exited = 0;
    int first_failure = 0;
    std::string failed_node;
    std::string gone_node;
    for (std::size_t rank = 0; rank < hosts.size(); ++rank) {
        const std::string dir = rank == 0 ? run.remote_dir : run_folder(p, run.id);
        const ExecResult r
            = run_command(m_pool.get(p, hosts[rank]), direct_status_command(dir, static_cast<int>(rank)), cancel);
        const DirectStatus st = parse_direct_status(r.out);
        if (st.kind == DirectStatus::exited) {
            ++exited;
            if (st.exit_code != 0 && first_failure == 0) {
                first_failure = st.exit_code;
                failed_node = hosts[rank] + " (node " + std::to_string(rank) + ")";
            }
        } else if (st.kind == DirectStatus::gone && gone_node.empty()) {
            gone_node = hosts[rank] + " (node " + std::to_string(rank) + ")";
        }
    }
    const int n = static_cast<int>(hosts.size());
    if (!gone_node.empty()) {
        out.state = RunState::failed;
        out.detail
            = gone_node + ": the processes ended without recording an exit status (killed, or the host rebooted)";
        return out;
    }
    if (exited < n) {
        out.state = RunState::running;
        out.detail = "running on " + std::to_string(n) + " host(s), " + std::to_string(exited) + " finished";
        return out;
    }
    out.exit_code = first_failure;
    if (first_failure == 0) {
        out.state = RunState::completed;
        out.detail = "all " + std::to_string(n) + " node(s) exited with status 0";
    } else {
        // 143 = 128 + SIGTERM: what a cancel sends.
        out.state = run.state == RunState::cancelling ? RunState::cancelled : RunState::failed;
        out.detail = failed_node + " exited with status " + std::to_string(first_failure);
    }
    return out;
}

std::string RunEngine::read_new_log(const RunRecord& run, Live& l, bool drain, const CancelToken& cancel)
{
    if (run.log_path.empty())
        return {};
    SshConnection& c = m_pool.get(l.profile, log_host(run, l));
    std::string appended;
    std::int64_t offset = run.log_bytes;
    // Each read starts a little before the stored end: those bytes must be the ones stored, or the file on the
    // cluster is not the one read so far (a requeued job truncates and rewrites its log) and appending would
    // splice two logs together.
    const std::size_t overlap = std::min<std::size_t>(kLogOverlapBytes, static_cast<std::size_t>(offset));
    std::string expected(l.collector->tail(overlap));
    for (;;) {
        const std::int64_t from = offset - static_cast<std::int64_t>(expected.size());
        const auto data = c.run(
            [&](SshSession& s) {
                return s.read_from(run.log_path, static_cast<std::uint64_t>(from), kMaxLogBytesPerPoll);
            },
            cancel);
        if (!data)
            break;
        if (data->compare(0, expected.size(), expected) != 0) {
            if (offset > 0 && l.collector->size() == static_cast<std::size_t>(offset)) {
                restart_log(run, l, offset);
                offset = 0;
                expected.clear();
                continue;
            }
            break;
        }
        if (data->size() == expected.size())
            break;
        const std::string_view fresh_data = std::string_view(*data).substr(expected.size());
        const std::int64_t before = offset;
        offset = m_store.append_log(run.id, offset, fresh_data);
        const std::size_t fresh = static_cast<std::size_t>(offset - before);
        if (fresh > 0) {
            const std::string_view new_bytes = fresh_data.substr(fresh_data.size() - fresh);
            l.collector->feed(new_bytes);
            appended.append(new_bytes);
        }
        if (!drain || fresh_data.size() < kMaxLogBytesPerPoll - expected.size())
            break;
        expected = std::string(l.collector->tail(std::min<std::size_t>(kLogOverlapBytes, l.collector->size())));
    }
    return appended;
}

void RunEngine::restart_log(const RunRecord& run, Live& l, std::int64_t stored_bytes)
{
    m_store.reset_log(run.id,
        run.detail + "; the log on the cluster was replaced (a requeued or restarted job), the "
            + std::to_string(stored_bytes) + " bytes read before were dropped and it is read from its start");
    l.collector->clear();
    l.stored.reset();
    l.parsed_bytes = -1;
}

bool RunEngine::update_measurements(const RunRecord& run, Live& l, bool final)
{
    const auto size = static_cast<std::int64_t>(l.collector->size());
    if (!final && size == l.parsed_bytes)
        return false;
    // Only the bytes fed since the last poll are parsed; the snapshot costs the steps, not the log's bytes.
    l.latest = final ? l.collector->finish() : l.collector->snapshot();
    m_store.store_measurements(run.id, l.stored.delta_to(l.latest));
    l.parsed_bytes = size;
    return true;
}

PollOutcome RunEngine::poll(const std::string& run_id, const CancelToken& cancel)
{
    std::optional<RunRecord> run = m_store.get(run_id);
    if (!run)
        throw StoreError("run store: no run " + quoted_for_message(run_id));
    PollOutcome out;
    out.state = run->state;
    out.detail = run->detail;
    if (is_terminal(run->state)) {
        m_live.erase(run_id);
        return out;
    }
    Live& l = live(*run);
    const bool slurm = l.profile.launcher == LauncherKind::slurm;

    if (run->state == RunState::created) {
        try {
            upload_and_submit(*run, l, false, cancel);
        } catch (const SshError& e) {
            if (e.kind() != SshErrorKind::config)
                throw;
            m_store.set_state(run_id, RunState::failed, std::string("could not submit: ") + e.what());
        }
        const std::optional<RunRecord> after = m_store.get(run_id);
        // Unchanged (the same transient failure again): the worker backs off instead of asking at once.
        out.state_changed = after->state != run->state || after->detail != run->detail;
        out.state = after->state;
        out.detail = after->detail;
        if (is_terminal(after->state))
            m_live.erase(run_id);
        return out;
    }

    LauncherState ls = slurm ? query_slurm(*run, l, cancel) : query_direct(*run, l, cancel);
    if (ls.known && !ls.no_answer)
        l.unknown_polls = 0;
    // Only the controller's own "no such job" counts towards "gone"; a poll it did not answer counts for nothing.
    const bool gone = !ls.known && !ls.no_answer && ++l.unknown_polls >= kUnknownPollsBeforeGone;
    const bool terminal = is_terminal(ls.state) && ls.known && !ls.no_answer;
    // The log after the state: once the launcher says "ended", the file is complete and read to its end.
    out.appended = read_new_log(*run, l, terminal || gone, cancel);
    out.measurements_changed = update_measurements(*run, l, terminal || gone);

    RunState next = ls.state;
    std::string detail = ls.detail;
    if (ls.no_answer) {
        next = run->state;
        detail = ls.detail + "; asking again";
    } else if (!ls.known && !gone) {
        next = run->state == RunState::submitted ? RunState::submitted : run->state;
        detail = ls.detail + "; asking again";
    } else if (gone) {
        const Measurements& m = l.latest;
        if (m.done_exit && *m.done_exit == "ok") {
            next = RunState::completed;
            detail = "SLURM job " + run->job_id
                + " ended and left SLURM's memory; its log ends with the probe's clean exit";
        } else if (!l.reopened_from.empty()) {
            next = RunState::failed; // as it was: the launcher has nothing to add
            detail = l.reopened_from + " (checked again: SLURM no longer knows job " + run->job_id + ")";
        } else {
            next = RunState::failed;
            detail = "SLURM job " + run->job_id + " vanished from squeue and scontrol; its final state is unknown";
        }
    }
    if (run->state == RunState::cancelling) {
        if (!is_terminal(next)) {
            next = RunState::cancelling;
            detail = "cancel requested; " + detail;
        } else if (next == RunState::cancelled) {
            detail = "cancelled, confirmed: " + detail;
        } else {
            detail = "finished before the cancel took effect: " + detail;
        }
    }
    if (next == RunState::completed && l.framework == JobFramework::probe) {
        const Measurements& m = l.latest;
        if (m.done_exit && *m.done_exit != "ok") {
            next = RunState::failed;
            detail += "; the probe reported an error: " + m.done_error;
        } else if (m.parsed.steps.empty()) {
            detail += "; the log holds no step records";
        }
    }
    if (next != run->state || detail != run->detail) {
        m_store.set_state(run_id, next, detail, is_terminal(next) ? ls.exit_code : std::nullopt);
        out.state_changed = true;
    }
    out.state = next;
    out.detail = detail;
    if (is_terminal(next))
        m_live.erase(run_id);
    return out;
}

bool RunEngine::reopen(const std::string& run_id)
{
    const std::optional<RunRecord> run = m_store.get(run_id);
    if (!run || run->state != RunState::failed || run->job_id.empty())
        return false;
    m_live.erase(run_id);
    m_store.set_state(run_id, RunState::submitted,
        "attached again after it was marked failed (" + run->detail + "); asking the launcher about job "
            + run->job_id);
    live(*m_store.get(run_id)).reopened_from = run->detail;
    return true;
}

void RunEngine::cancel(const std::string& run_id, const CancelToken& cancel)
{
    std::optional<RunRecord> run = m_store.get(run_id);
    if (!run)
        throw StoreError("run store: no run " + quoted_for_message(run_id));
    if (is_terminal(run->state))
        return;
    Live& l = live(*run);
    const ClusterProfile& p = l.profile;
    if (p.launcher == LauncherKind::slurm) {
        std::vector<std::string> jobs;
        if (!run->job_id.empty()) {
            jobs.push_back(run->job_id);
        } else {
            // Not recorded as submitted; a lost sbatch answer may still have started one.
            const ExecResult found = run_command(
                m_pool.primary(p), remote_command(p, run->remote_dir, squeue_by_name_argv(run_id)), cancel);
            for (const SlurmJobInfo& job : parse_squeue(found.out))
                if (job.comment == slurm_comment(run_id))
                    jobs.push_back(job.job_id);
        }
        if (jobs.empty()) {
            m_store.set_state(run_id, RunState::cancelled, "cancelled before it was submitted");
            m_live.erase(run_id);
            return;
        }
        for (const auto& job : jobs) {
            const ExecResult r
                = run_command(m_pool.primary(p), remote_command(p, run->remote_dir, scancel_argv(job)), cancel);
            if (!r.ok())
                throw SshError(SshErrorKind::remote_command, "scancel " + job + " failed: " + failure_text(r));
        }
        if (run->job_id.empty())
            m_store.set_job(run_id, jobs.front(), run->remote_dir + "/job.log", run->submit_command);
        m_store.set_state(
            run_id, RunState::cancelling, "scancel sent for job " + jobs.front() + "; waiting for SLURM to confirm");
        return;
    }
    if (run->job_id.empty()) {
        m_store.set_state(run_id, RunState::cancelled, "cancelled before it was started");
        m_live.erase(run_id);
        return;
    }
    const auto hosts = p.direct_hosts();
    for (std::size_t rank = 0; rank < hosts.size(); ++rank) {
        const std::string dir = rank == 0 ? run->remote_dir : run_folder(p, run_id);
        run_command(m_pool.get(p, hosts[rank]), direct_cancel_command(dir, static_cast<int>(rank)), cancel);
    }
    m_store.set_state(
        run_id, RunState::cancelling, "SIGTERM sent to every node's process group; waiting for them to exit");
}

TraceFetch RunEngine::fetch_traces(const std::string& run_id, const std::string& local_dir, const CancelToken& cancel)
{
    const std::optional<RunRecord> run = m_store.get(run_id);
    if (!run)
        throw StoreError("run store: no run " + quoted_for_message(run_id));
    TraceFetch out;
    if (run->remote_dir.empty()) {
        out.message = "the run has no folder on the cluster yet";
        return out;
    }
    ClusterProfile p = profile_from_json(nlohmann::json::parse(run->profile_json), "run " + run_id);
    Live probe_live;
    probe_live.profile = p;
    probe_live.framework = job_framework_from_string(run->framework).value_or(JobFramework::probe);
    const std::string host = log_host(*run, probe_live);
    // The folder the log host sees: the resolved one on the first host, the login-relative one elsewhere.
    const bool first_host = p.launcher == LauncherKind::slurm || host == p.direct_hosts().front();
    const std::string dir = first_host ? run->remote_dir : run_folder(p, run_id);
    SshConnection& c = m_pool.get(p, host);
    // GNU find prints "size<TAB>relative path" per file; names holding a newline or a tab are skipped below.
    const ExecResult r = run_command(c,
        "bash -c "
            + shell_quote("cd -- " + shell_quote(dir)
                + " && find . -maxdepth 4 -type f -iname '*trace*.json' -printf '%s\\t%P\\n'"),
        cancel);
    if (!r.ok())
        throw SshError(SshErrorKind::remote_command, host + ": cannot list " + dir + ": " + failure_text(r));
    std::istringstream lines(r.out);
    std::vector<std::string> skipped;
    std::error_code ec;
    std::filesystem::create_directories(local_dir, ec);
    if (ec)
        throw InputError(local_dir, "", "cannot create the folder: " + ec.message());
    std::vector<std::string> listed;
    for (std::string line; std::getline(lines, line);)
        listed.push_back(line);
    std::sort(listed.begin(), listed.end(), [](const std::string& a, const std::string& b) {
        return a.substr(a.find('\t') + 1) < b.substr(b.find('\t') + 1);
    });
    for (const std::string& line : listed) {
        const auto tab = line.find('\t');
        if (tab == std::string::npos)
            continue;
        const std::string size_text = line.substr(0, tab);
        const std::string rel = line.substr(tab + 1);
        if (!all_digits(size_text) || rel.empty() || rel.find('\t') != std::string::npos)
            continue;
        if (std::stoull(size_text) > kMaxTraceBytes) {
            skipped.push_back(
                rel + " (" + size_text + " bytes, over the " + std::to_string(kMaxTraceBytes >> 20) + " MiB limit)");
            continue;
        }
        if (static_cast<int>(out.remote_paths.size()) >= kMaxTraceFiles) {
            skipped.push_back(rel + " (more than " + std::to_string(kMaxTraceFiles) + " traces)");
            continue;
        }
        const std::string data
            = c.run([&](SshSession& s) { return s.download(dir + "/" + rel, kMaxTraceBytes); }, cancel);
        std::string flat = rel;
        std::replace(flat.begin(), flat.end(), '/', '_');
        const std::string local = (std::filesystem::path(local_dir) / flat).string();
        std::ofstream f(local, std::ios::binary | std::ios::trunc);
        f.write(data.data(), static_cast<std::streamsize>(data.size()));
        f.close();
        if (!f)
            throw InputError(local, "", "cannot write the trace");
        out.remote_paths.push_back(rel);
        out.local_paths.push_back(local);
    }
    out.message = std::to_string(out.local_paths.size()) + " trace file(s) (*trace*.json) in " + host + ":" + dir;
    for (const auto& sk : skipped)
        out.message += "; skipped " + sk;
    return out;
}

Measurements RunEngine::measurements(const std::string& run_id)
{
    auto it = m_live.find(run_id);
    if (it != m_live.end())
        return it->second.latest;
    const auto run = m_store.get(run_id);
    const JobFramework fw
        = run ? job_framework_from_string(run->framework).value_or(JobFramework::probe) : JobFramework::probe;
    return parse_measurements(m_store.log(run_id), log_format_for(fw));
}

} // namespace parallax::remote

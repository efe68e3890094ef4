// parallax-cli run SCENARIO --cluster PROFILE [--framework probe|megatron|torchtitan|deepspeed] [--wait]
// Sends a plan to a cluster over SSH (SLURM or direct), stores it in the run store and, with --wait, follows
// it to the end: state changes and parsed steps as they arrive, then measured against predicted.
// Also: --out DIR (write the job for review, send nothing), --from DIR (send a reviewed/edited job),
// --attach RUN_ID (follow a stored run again, e.g. after a restart), --cancel RUN_ID.
#include "cli/cli_commands.hpp"
#include "cli/cli_common.hpp"
#include "cli/cli_parser.hpp"
#include "cli/cli_store.hpp"
#include "cluster/profile_store.hpp"
#include "io/input_limits.hpp"
#include "io/json_reader.hpp"
#include "io/scenario_io.hpp"
#include "jobs/bundle_folder.hpp"
#include "jobs/job_bundle.hpp"
#include "runs/remote_runner.hpp"
#include "runs/run_catalog.hpp"
#include "spec/input_error.hpp"
#include "ssh/ssh_interaction.hpp"

#include <QDateTime>
#include <QDir>
#include <QEventLoop>
#include <QFile>
#include <QFileInfo>

#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <unistd.h>

namespace parallax::cli {

namespace {

using namespace parallax::remote;

// A run that failed, was cancelled, or could not be sent (SSH refused, sbatch refused). Added to the
// contract's exit codes (docs/cli.md).
constexpr int kRunFailed = 4;

ClusterProfile load_profile_argument(const QString& arg)
{
    const std::string a = arg.toStdString();
    std::error_code ec;
    if (arg.endsWith(QLatin1String(".json")) || std::filesystem::is_regular_file(a, ec))
        return load_profile_file(a);
    ProfileStore store;
    if (auto p = store.load(arg))
        return *p;
    const QStringList names = store.names();
    throw InputError("--cluster", "",
        "no cluster profile '" + quoted_for_message(a) + "' in " + store.location().toStdString()
            + (names.isEmpty() ? std::string(" (none stored)")
                               : " (stored: " + names.join(QStringLiteral(", ")).toStdString() + ")")
            + " and no such JSON file");
}

std::string now_hms()
{
    return QDateTime::currentDateTime().toString(QStringLiteral("HH:mm:ss")).toStdString();
}

// The reviewed job in `dir`: its plan.json says which run, scenario and framework; every file in it is sent.
RunRequest request_from_folder(const QString& dir, const ClusterProfile& profile)
{
    const std::string plan_path = QString(dir + QStringLiteral("/plan.json")).toStdString();
    const nlohmann::json plan = parse_json_text(read_text_file(plan_path), plan_path);
    if (!plan.is_object() || !plan.contains("run_id") || !plan.contains("scenario") || !plan.contains("framework"))
        throw InputError(plan_path, "", "is not a plan.json written by `parallax-cli run --out`");
    for (const char* key : { "run_id", "framework" })
        if (!plan[key].is_string())
            throw InputError(plan_path, key, "must be a string, found " + json_type_name(plan[key]));
    if (plan.contains("scenario_label") && !plan["scenario_label"].is_string())
        throw InputError(
            plan_path, "scenario_label", "must be a string, found " + json_type_name(plan["scenario_label"]));
    RunRequest req;
    req.run_id = plan["run_id"].get<std::string>();
    const auto fw = job_framework_from_string(plan["framework"].get<std::string>());
    if (!fw)
        throw InputError(plan_path, "framework", "unknown framework");
    req.framework = *fw;
    req.scenario = parse_scenario(plan["scenario"], plan_path + " (scenario)", PresetCatalog::standard());
    req.scenario_label = plan.value("scenario_label", std::string());
    req.profile = profile;
    for (const QFileInfo& fi : QDir(dir).entryInfoList(QDir::Files | QDir::NoDotAndDotDot, QDir::Name)) {
        QFile f(fi.absoluteFilePath());
        if (!f.open(QIODevice::ReadOnly))
            throw InputError(fi.absoluteFilePath().toStdString(), "", "cannot read the file");
        const QByteArray bytes = f.readAll();
        req.edited_files.emplace_back(
            fi.fileName().toStdString(), std::string(bytes.constData(), static_cast<std::size_t>(bytes.size())));
    }
    return req;
}

// Follows runs through the runner until the one watched finishes; prints progress on stderr.
class Follower {
public:
    Follower(RemoteRunner& runner, const QString& store_path, bool wait, bool json)
        : m_store_path(store_path)
        , m_wait(wait)
        , m_json(json)
    {
        QObject::connect(&runner, &RemoteRunner::dispatched, &m_loop, [this](QString id, QString description) {
            m_run_id = id;
            print_err("[" + now_hms() + "] run " + id.toStdString() + ": " + description.toStdString());
            // The run's first state change may arrive before this signal (they come from different
            // worker threads): without --wait, a run already past "created" is reported now.
            if (const auto seen = m_seen.find(id); seen != m_seen.end())
                report_submitted(id, seen->second);
        });
        QObject::connect(&runner, &RemoteRunner::dispatch_failed, &m_loop, [this](QString message) {
            print_err("parallax-cli run: could not send the run: " + terminal_text(message.toStdString()));
            finish(kRunFailed);
        });
        QObject::connect(
            &runner, &RemoteRunner::run_state_changed, &m_loop, [this](QString id, RunState state, QString detail) {
                print_err("[" + now_hms() + "] " + id.toStdString() + " " + std::string(to_string(state)) + ": "
                    + terminal_text(detail.toStdString()));
                m_seen[id] = state;
                if (id == m_run_id)
                    report_submitted(id, state);
            });
        QObject::connect(
            &runner, &RemoteRunner::measurements_updated, &m_loop, [this](QString id) { print_new_steps(id); });
        QObject::connect(&runner, &RemoteRunner::connection_state_changed, &m_loop,
            [](QString host, QString state, QString message) {
                print_err("[" + now_hms() + "] connection " + host.toStdString() + " " + state.toStdString() + ": "
                    + terminal_text(message.toStdString()));
            });
        QObject::connect(&runner, &RemoteRunner::run_error, &m_loop, [this](QString id, QString message) {
            print_err("parallax-cli run: " + (id.isEmpty() ? std::string() : id.toStdString() + ": ")
                + terminal_text(message.toStdString()));
            finish(kRunFailed);
        });
        QObject::connect(&runner, &RemoteRunner::run_finished, &m_loop, [this](QString id, RunState state, QString) {
            m_run_id = id;
            m_final_state = state;
            print_new_steps(id);
            try {
                const RunCatalog catalog(m_store_path);
                if (const auto run = catalog.run(id.toStdString()))
                    print_out(m_json ? catalog.run_json(*run, true).dump(2) + "\n" : catalog.summary_text(*run));
            } catch (const std::exception& e) {
                print_err(std::string("parallax-cli run: ") + e.what());
            }
            finish(state == RunState::completed ? kOk : kRunFailed);
        });
    }

    void watch(const QString& run_id) { m_run_id = run_id; }
    int exec() { return m_done ? m_rc : m_loop.exec(); }
    std::optional<RunState> final_state() const { return m_final_state; }

private:
    // Without --wait the command ends once the run is past "created": its id on stdout.
    void report_submitted(const QString& id, RunState state)
    {
        if (m_wait || m_done || state == RunState::created || state == RunState::cancelling)
            return;
        print_out(id.toStdString() + "\n");
        print_err("follow it with: parallax-cli run --attach " + id.toStdString());
        finish(state == RunState::failed ? kRunFailed : kOk);
    }

    void finish(int rc)
    {
        m_rc = rc;
        m_done = true;
        m_loop.exit(rc);
    }
    void print_new_steps(const QString& id)
    {
        try {
            for (const StepRecord& s : RunCatalog(m_store_path).steps(id.toStdString())) {
                if (!m_printed.insert(s.step).second)
                    continue;
                char line[160];
                std::snprintf(line, sizeof line, "[%s] %s step %lld: %.4g s%s", now_hms().c_str(),
                    id.toStdString().c_str(), static_cast<long long>(s.step), s.step_time_s.value_or(0.0),
                    s.tokens_per_s
                        ? (", " + std::to_string(static_cast<long long>(*s.tokens_per_s)) + " tokens/s/GPU").c_str()
                        : "");
                print_err(line);
            }
        } catch (const std::exception&) {
            // A read racing the worker's write: the next update prints these steps.
        }
    }

    QEventLoop m_loop;
    QString m_store_path;
    QString m_run_id;
    std::map<QString, RunState> m_seen; // the last state of each run, as reported
    std::optional<RunState> m_final_state;
    bool m_wait;
    bool m_json;
    bool m_done = false;
    int m_rc = kInternalError;
    std::set<std::int64_t> m_printed;
};

// The options of `run`, besides the scenario.
void add_run_options(QCommandLineParser& p)
{
    p.addOption({ QStringLiteral("cluster"), QStringLiteral("Cluster profile: a stored name or a JSON file."),
        QStringLiteral("PROFILE") });
    p.addOption({ QStringLiteral("framework"), QStringLiteral("probe (default), megatron, torchtitan or deepspeed."),
        QStringLiteral("name"), QStringLiteral("probe") });
    p.addOption(
        { QStringLiteral("wait"), QStringLiteral("Follow the run until it ends; exit 0 only if it completed.") });
    p.addOption({ QStringLiteral("steps"), QStringLiteral("Training steps (probe default 6, frameworks 30)."),
        QStringLiteral("N") });
    p.addOption({ QStringLiteral("probe-layers"), QStringLiteral("Layers the probe trains (a multiple of pp)."),
        QStringLiteral("N") });
    p.addOption(
        { QStringLiteral("probe-microbatches"), QStringLiteral("Micro-batches per probe step."), QStringLiteral("N") });
    p.addOption({ QStringLiteral("store"),
        QStringLiteral("Run store (SQLite); default ") + RunCatalog::default_store_path(), QStringLiteral("FILE") });
    p.addOption({ QStringLiteral("accept-host-key"),
        QStringLiteral("Trust an unknown host key if its fingerprint is exactly this (SHA256:...); "
                       "otherwise unknown keys are asked on the terminal, or refused without one."),
        QStringLiteral("FINGERPRINT") });
    p.addOption({ QStringLiteral("out"), QStringLiteral("Write the job's files to DIR for review and send nothing."),
        QStringLiteral("DIR") });
    p.addOption({ QStringLiteral("from"), QStringLiteral("Send the reviewed (edited) job in DIR, as written by --out."),
        QStringLiteral("DIR") });
    p.addOption({ QStringLiteral("attach"), QStringLiteral("Follow a stored run again (after a restart)."),
        QStringLiteral("RUN_ID") });
    p.addOption({ QStringLiteral("cancel"), QStringLiteral("Cancel a stored run and wait until the cluster confirms."),
        QStringLiteral("RUN_ID") });
    p.addOption({ QStringLiteral("json"), QStringLiteral("At the end print the run as `runs RUN_ID --json` does.") });
}

// `--attach ID` or `--cancel ID`: following or cancelling a stored run needs only the store.
int follow_stored_run(bool cancel, const QString& id, const QString& store_path,
    const std::shared_ptr<SshInteraction>& interaction, bool json)
{
    try {
        const auto store = open_existing_run_store(store_path);
        if (!store || !store->run(id.toStdString())) {
            print_err(
                "parallax-cli run: no run " + quoted_for_message(id.toStdString()) + " in " + store_path.toStdString());
            return kBadInput;
        }
    } catch (const InputError& e) {
        print_err(e.what());
        return kBadInput;
    } catch (const StoreError& e) {
        print_err(e.what());
        return kInternalError;
    }
    RemoteRunner runner(store_path, interaction);
    Follower follower(runner, store_path, true, json);
    follower.watch(id);
    if (cancel)
        runner.cancel(id);
    else
        runner.attach(id);
    const int rc = follower.exec();
    runner.shutdown();
    if (cancel)
        return follower.final_state() == RunState::cancelled ? kOk : kRunFailed;
    return rc;
}

// `--out DIR`: the job's files written for review, and how to send them afterwards.
void write_for_review(const JobBundle& bundle, const QString& dir, const QString& cluster)
{
    write_bundle_folder(bundle, dir);
    print_out("wrote " + std::to_string(bundle.files.size()) + " files of run " + bundle.run_id + " to "
        + dir.toStdString() + " (" + bundle.description + ")\n");
    for (const auto& n : bundle.notes)
        print_out("  note: " + n + "\n");
    print_out("review or edit them, then send with: parallax-cli run --cluster " + cluster.toStdString() + " --from "
        + dir.toStdString() + " --wait\n");
}

// A positive count option (--steps N), left as it is when not given.
void read_count_option(const QCommandLineParser& p, const char* name, int& out)
{
    constexpr int kMaxCount = 1000000;
    if (!p.isSet(QLatin1String(name)))
        return;
    bool ok = false;
    out = p.value(QLatin1String(name)).toInt(&ok);
    if (!ok || out < 1 || out > kMaxCount)
        throw InputError(std::string("--") + name, "", "must be a positive integer");
}

// The run to send, from the scenario or a reviewed folder; or the exit status when the command ends here
// (--out wrote the files, or the input is bad).
std::optional<int> build_run_request(const CommandParser& cmd, RunRequest& req, const QString& store_path)
{
    const auto& p = cmd.parser();
    if (!p.isSet(QStringLiteral("cluster"))) {
        print_err("parallax-cli run: --cluster PROFILE is required");
        return kBadInput;
    }
    try {
        const ClusterProfile profile = load_profile_argument(p.value(QStringLiteral("cluster")));
        if (p.isSet(QStringLiteral("from"))) {
            req = request_from_folder(p.value(QStringLiteral("from")), profile);
        } else {
            if (cmd.positional(0).isEmpty()) {
                print_err("parallax-cli run: SCENARIO is required (or --from DIR)");
                return kBadInput;
            }
            req.scenario = load_scenario_argument(
                cmd.positional(0).toStdString(), PresetCatalog::standard(), ScenarioUse::plan, true);
            if (req.scenario.heterogeneous() || req.scenario.cluster.heterogeneous())
                throw InputError(cmd.positional(0).toStdString(), "cluster.groups",
                    "run sends a job to one cluster profile of one GPU type and node size; a mixed-GPU plan needs "
                    "a host list per node group, which profiles do not hold yet: write its files with `parallax-cli "
                    "export SCENARIO --format megatron|torchtitan --out DIR/` and start the script on every host it "
                    "lists (docs/heterogeneous.md, Export)");
            req.scenario_label = cmd.positional(0).toStdString();
            req.profile = profile;
            const auto fw = job_framework_from_string(p.value(QStringLiteral("framework")).toStdString());
            if (!fw)
                throw InputError("--framework", "", "must be probe, megatron, torchtitan or deepspeed");
            req.framework = *fw;
        }
        read_count_option(p, "steps", req.steps);
        read_count_option(p, "probe-layers", req.probe_layers);
        read_count_option(p, "probe-microbatches", req.probe_microbatches);
        // Generated here first: a plan that cannot run is bad input (exit 2), found before any connection.
        const JobBundle bundle = make_job_bundle(req);
        req.run_id = bundle.run_id;
        if (p.isSet(QStringLiteral("out"))) {
            write_for_review(bundle, p.value(QStringLiteral("out")), p.value(QStringLiteral("cluster")));
            return kOk;
        }
        if (open_run_store(store_path)->run(req.run_id)) {
            print_err(
                "parallax-cli run: run " + req.run_id + " was already sent; follow it with --attach " + req.run_id);
            return kBadInput;
        }
    } catch (const InputError& e) {
        print_err(e.what());
        return kBadInput;
    } catch (const StoreError& e) {
        print_err(e.what());
        return kInternalError;
    }
    return std::nullopt;
}

} // namespace

int run_run(const QStringList& args)
{
    CommandParser cmd(
        QStringLiteral("Sends a plan to a cluster over SSH (SLURM or direct hosts), stores the run in the "
                       "run store and, with --wait, follows it to the measured result.\n"
                       "PROFILE is a cluster profile stored in the settings or a JSON file (docs/remote-runs.md: "
                       "\"Running on a real cluster\")."),
        QStringLiteral("SCENARIO"), QStringLiteral("scenario file or preset name"));
    add_run_options(cmd.parser());
    if (auto rc = cmd.parse(args, 0, 1))
        return *rc;
    const auto& p = cmd.parser();
    const QString store_path
        = p.isSet(QStringLiteral("store")) ? p.value(QStringLiteral("store")) : RunCatalog::default_store_path();
    const std::string accepted = p.value(QStringLiteral("accept-host-key")).toStdString();
    std::shared_ptr<SshInteraction> interaction;
    if (::isatty(STDIN_FILENO))
        interaction = std::make_shared<TerminalInteraction>(accepted);
    else
        interaction = std::make_shared<NonInteractive>(accepted);
    const bool json = p.isSet(QStringLiteral("json"));

    for (const char* opt : { "attach", "cancel" })
        if (p.isSet(QLatin1String(opt)))
            return follow_stored_run(QLatin1String(opt) == QLatin1String("cancel"), p.value(QLatin1String(opt)),
                store_path, interaction, json);

    RunRequest req;
    if (const auto rc = build_run_request(cmd, req, store_path))
        return *rc;
    RemoteRunner runner(store_path, interaction);
    Follower follower(runner, store_path, p.isSet(QStringLiteral("wait")), json);
    runner.dispatch(req);
    const int rc = follower.exec();
    runner.shutdown();
    return rc;
}

} // namespace parallax::cli

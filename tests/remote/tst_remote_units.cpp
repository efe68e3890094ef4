// remote/ without a network: SLURM command builders and parsers (real sbatch/squeue/scontrol output),
// cluster profiles (JSON, settings, validation), job templates (all four frameworks, syntax-checked by bash,
// TOML by Python, hostile profile values executed by a real bash in dry-run mode), the run store
// (transitions, incremental logs, transactions, migrations), probe-record parsing and the GUI prompt bridge.
#include "cluster/cluster_profile.hpp"
#include "cluster/profile_store.hpp"
#include "io/export/launch_config.hpp"
#include "io/preset_catalog.hpp"
#include "io/scenario_io.hpp"
#include "jobs/bash_script.hpp"
#include "jobs/bundle_folder.hpp"
#include "jobs/job_bundle.hpp"
#include "jobs/shell_quote.hpp"
#include "launch/direct.hpp"
#include "launch/slurm.hpp"
#include "runs/measurements.hpp"
#include "runs/run_catalog.hpp"
#include "runs/run_report.hpp"
#include "spec/input_error.hpp"
#include "ssh/prompt_bridge.hpp"
#include "store/run_store.hpp"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QSettings>
#include <QSignalSpy>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include <nlohmann/json.hpp>

#include <future>

using namespace parallax;
using namespace parallax::remote;

namespace {

const QString kSource = QStringLiteral(PARALLAX_SOURCE_DIR);

Scenario tiny_scenario()
{
    return load_scenario_file(
        QString(kSource + QStringLiteral("/tests/remote/data/tiny_probe_scenario.json")).toStdString(),
        PresetCatalog::standard());
}

ClusterProfile test_profile()
{
    ClusterProfile p;
    p.name = "test";
    p.host = "login.example.org";
    p.user = "alice";
    p.port = 2222;
    p.partition = "gpu";
    p.account = "proj42";
    p.work_dir = "/scratch/alice/parallax";
    return p;
}

struct Shell {
    int code = -1;
    QByteArray out;
    QByteArray err;
};

Shell run(const QString& program, const QStringList& args,
    const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment(), const QString& cwd = {})
{
    QProcess p;
    p.setProcessEnvironment(env);
    if (!cwd.isEmpty())
        p.setWorkingDirectory(cwd);
    p.start(program, args);
    Shell r;
    if (!p.waitForStarted(10000) || !p.waitForFinished(60000)) {
        p.kill();
        p.waitForFinished();
        return r;
    }
    r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = p.readAllStandardOutput();
    r.err = p.readAllStandardError();
    return r;
}

QString write(const QString& path, const std::string& content)
{
    QFile f(path);
    f.open(QIODevice::WriteOnly | QIODevice::Truncate);
    f.write(content.data(), static_cast<qint64>(content.size()));
    return path;
}

// A real `scontrol show job -o` line of slurmctld 22.05 (note the comment with a space and a '|', and
// keys with ':' and '/').
const char* kScontrolLine
    = "JobId=2 JobName=x UserId=root(0) GroupId=root(0) MCS_label=N/A Priority=4294901758 Nice=0 Account=(null) "
      "QOS=(null) JobState=CANCELLED Reason=None Dependency=(null) Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 "
      "ExitCode=0:15 RunTime=00:00:02 TimeLimit=01:00:00 TimeMin=N/A SubmitTime=2026-12-01T08:11:21 "
      "EligibleTime=2026-12-01T08:11:21 AccrueTime=2026-12-01T08:11:21 StartTime=2026-12-01T08:11:21 "
      "EndTime=2026-12-01T08:11:23 Deadline=N/A SuspendTime=None SecsPreSuspend=0 LastSchedEval=2026-12-01T08:11:21 "
      "Scheduler=Main Partition=debug AllocNode:Sid=localhost:30815 ReqNodeList=(null) ExcNodeList=(null) "
      "NodeList=localhost BatchHost=localhost NumNodes=1 NumCPUs=1 NumTasks=1 CPUs/Task=1 ReqB:S:C:T=0:0:*:* "
      "TRES=cpu=1,node=1,billing=1 Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=* MinCPUsNode=1 MinMemoryNode=0 "
      "MinTmpDiskNode=0 Features=(null) DelayBoot=00:00:00 OverSubscribe=OK Contiguous=0 Licenses=(null) "
      "Network=(null) Command=(null) WorkDir=/tmp/slt Comment=parallax-run:a b|c  StdErr=/tmp/slt/job2.log "
      "StdIn=/dev/null StdOut=/tmp/slt/job2.log Power= \n";

// Lines as the probe prints them through srun and torchrun (prefixes, interleaved warnings, a cut tail).
const char* kProbeLog
    = "parallax: job 7 on localhost, rendezvous localhost:41234\n"
      "[default0]:PARALLAX_PROBE "
      "{\"kind\":\"run\",\"schema\":1,\"world_size\":2,\"device\":\"cpu\",\"backend\":\"gloo\"}\n"
      "PARALLAX_PROBE "
      "{\"kind\":\"bench\",\"op\":\"gemm\",\"name\":\"qkv\",\"m\":256,\"n\":256,\"k\":128,\"dtype\":\"fp32\","
      "\"time_s\":0.00022,\"tflops\":0.0755}\n"
      "UserWarning: something harmless\n"
      "PARALLAX_PROBE "
      "{\"kind\":\"bench\",\"op\":\"p2p\",\"group\":\"pp\",\"ranks\":2,\"bytes\":131072,\"time_s\":0.001,"
      "\"alg_GBps\":0.13,\"bus_GBps\":0.13}\n"
      "PARALLAX_PROBE "
      "{\"kind\":\"step\",\"step\":1,\"step_time_s\":0.72,\"tokens_per_s\":707.9,\"samples_per_s\":11.06,\"loss\":7.09}"
      "\n"
      "PARALLAX_PROBE "
      "{\"kind\":\"step\",\"step\":2,\"step_time_s\":0.33,\"tokens_per_s\":1532.1,\"samples_per_s\":23.9,\"loss\":7.07}"
      "\n"
      "PARALLAX_PROBE "
      "{\"kind\":\"step\",\"step\":3,\"step_time_s\":0.29,\"tokens_per_s\":1741.2,\"samples_per_s\":27.2,\"loss\":7.13}"
      "\n"
      "PARALLAX_PROBE "
      "{\"kind\":\"step\",\"step\":4,\"step_time_s\":0.23,\"tokens_per_s\":2222.7,\"samples_per_s\":34.7,\"loss\":7.11}"
      "\n"
      "PARALLAX_PROBE {\"kind\":\"done\",\"steps\":4,\"exit\":\"ok\"}\n"
      "PARALLAX_PROBE {\"kind\":\"bench\",\"op\":\"gemm\",\"time_s\":0.5"; // cut: not a record

RunRecord sample_run(const std::string& id)
{
    RunRecord r;
    r.id = id;
    r.framework = "probe";
    r.launcher = "slurm";
    r.cluster = "test";
    r.profile_json = profile_to_json(test_profile()).dump();
    r.scenario_json = "{}";
    r.plan_json = "{}";
    r.script = "#!/bin/bash\n";
    r.remote_dir = "/scratch/run";
    r.detail = "stored";
    return r;
}

} // namespace

class TestRemoteUnits : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // --- SLURM --------------------------------------------------------------------------------------
    void sbatchJobIds()
    {
        QCOMPARE(parse_sbatch_job_id("12\n").value(), std::string("12"));
        QCOMPARE(parse_sbatch_job_id("12;paralloc\n").value(), std::string("12"));
        QCOMPARE(parse_sbatch_job_id("Welcome to the cluster!\nMOTD 2024\n4711\n").value(), std::string("4711"));
        QVERIFY(!parse_sbatch_job_id("sbatch: error: invalid partition specified: x\n").has_value());
        QVERIFY(!parse_sbatch_job_id("").has_value());
    }

    void squeueLines()
    {
        const auto jobs = parse_squeue("banner | not a job\n2|RUNNING|None|parallax-run:a b|c\n3|PENDING|Resources|\n");
        QCOMPARE(jobs.size(), std::size_t(2));
        QCOMPARE(jobs[0].job_id, std::string("2"));
        QCOMPARE(jobs[0].state, std::string("RUNNING"));
        QCOMPARE(jobs[0].comment, std::string("parallax-run:a b|c"));
        QCOMPARE(jobs[1].reason, std::string("Resources"));
        QCOMPARE(jobs[1].comment, std::string());
        QVERIFY(parse_squeue("slurm_load_jobs error: Invalid job id specified\n").empty());
    }

    void scontrolLine()
    {
        const auto info = parse_scontrol(kScontrolLine);
        QVERIFY(info.has_value());
        QCOMPARE(info->job_id, std::string("2"));
        QCOMPARE(info->state, std::string("CANCELLED"));
        QCOMPARE(info->reason, std::string("None"));
        QCOMPARE(info->comment, std::string("parallax-run:a b|c "));
        QCOMPARE(info->exit_code.value(), 0);
        QCOMPARE(info->exit_signal.value(), 15);
        QVERIFY(!parse_scontrol("slurm_load_jobs error: Invalid job id specified\n").has_value());
    }

    void slurmStates_data()
    {
        QTest::addColumn<QString>("slurm");
        QTest::addColumn<QString>("state");
        QTest::addColumn<bool>("terminal");
        QTest::newRow("pending") << "PENDING"
                                 << "queued" << false;
        QTest::newRow("running") << "RUNNING"
                                 << "running" << false;
        QTest::newRow("completing") << "COMPLETING"
                                    << "running" << false;
        QTest::newRow("completed") << "COMPLETED"
                                   << "completed" << true;
        QTest::newRow("cancelled by") << "CANCELLED by 0"
                                      << "cancelled" << true;
        QTest::newRow("failed") << "FAILED"
                                << "failed" << true;
        QTest::newRow("timeout") << "TIMEOUT"
                                 << "failed" << true;
        QTest::newRow("node fail") << "NODE_FAIL"
                                   << "failed" << true;
        QTest::newRow("oom") << "OUT_OF_MEMORY"
                             << "failed" << true;
        QTest::newRow("unknown word") << "SOMETHING_NEW"
                                      << "running" << false;
    }

    void slurmStates()
    {
        QFETCH(QString, slurm);
        QFETCH(QString, state);
        QFETCH(bool, terminal);
        const MappedState m = map_slurm_state(slurm.toStdString());
        QCOMPARE(QString::fromLatin1(to_string(m.state)), state);
        QCOMPARE(m.terminal, terminal);
    }

    void sbatchCarriesTheRunIdAndQuotesEverything()
    {
        RunRequest req;
        req.scenario = tiny_scenario();
        req.profile = test_profile();
        // A file the injected command would create: one of this test's own, so nothing else can make it exist.
        QTemporaryDir marker_dir;
        const std::string marker = marker_dir.filePath(QStringLiteral("injected")).toStdString();
        const std::string partition = "gpu'; touch " + marker + "; '";
        req.profile.partition = partition;
        req.profile.env["SLURM_CONF"] = "/etc/slurm/$(id).conf";
        req.run_id = "20250101-000000-abcdef";
        const JobBundle b = make_job_bundle(req);
        const auto argv = sbatch_argv(req.profile, b, req.run_id, "/abs/run");
        const auto has = [&](const std::string& a) { return std::find(argv.begin(), argv.end(), a) != argv.end(); };
        QVERIFY(has("--parsable"));
        QVERIFY(has("--job-name=parallax-20250101-000000-abcdef"));
        QVERIFY(has("--comment=parallax-run:20250101-000000-abcdef"));
        QVERIFY(has("--output=/abs/run/job.log"));
        QVERIFY(has("--chdir=/abs/run"));
        QVERIFY(has("--nodes=1"));
        QVERIFY(has("--ntasks-per-node=2"));
        QVERIFY(has("--partition=" + partition));
        QVERIFY(has("--account=proj42"));
        QCOMPARE(argv.back(), std::string("/abs/run/job.sh"));
        // The whole remote command: one bash -lc word whose inner words are each quoted; a real bash
        // (with `sbatch` replaced by printf through an isolated PATH) sees exactly these arguments, and the
        // profile's environment from the run folder's env.sh, never from the command line.
        QTemporaryDir tmp;
        const QString run_dir = tmp.filePath(QStringLiteral("run"));
        remote::write_bundle_folder(b, run_dir);
        const std::string cmd = remote_command(req.profile, run_dir.toStdString(), argv);
        QVERIFY(cmd.rfind("bash -lc '", 0) == 0);
        QVERIFY2(cmd.find("/etc/slurm/$(id).conf") == std::string::npos, cmd.c_str());
        QDir().mkpath(tmp.filePath(QStringLiteral("bin")));
        const QString sbatch = write(tmp.filePath(QStringLiteral("bin/sbatch")),
            "#!/bin/sh\nprintf 'SLURM_CONF=%s\\n' \"$SLURM_CONF\"\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done\n");
        QFile::setPermissions(sbatch, QFileDevice::ReadOwner | QFileDevice::ExeOwner);
        QProcessEnvironment env;
        env.insert(QStringLiteral("PATH"), tmp.filePath(QStringLiteral("bin")));
        env.insert(QStringLiteral("HOME"), tmp.path());
        // The remote user's shell runs the command line: here /bin/sh -c, with `bash` given by path.
        // (-c instead of -lc: a login shell here would read /etc/profile and reset PATH to the real tools.)
        std::string local = cmd;
        local.replace(0, 8, "/bin/bash -c");
        const Shell r = run(QStringLiteral("/bin/sh"), { QStringLiteral("-c"), QString::fromStdString(local) }, env);
        QCOMPARE(r.code, 0);
        QVERIFY2(r.out.contains("SLURM_CONF=/etc/slurm/$(id).conf\n"), r.out.constData());
        QVERIFY(r.out.contains(QByteArray::fromStdString("--partition=" + partition + "\n")));
        QVERIFY(!QFileInfo::exists(QString::fromStdString(marker)));
    }

    void profileEnvValuesReachOnlyTheOwnerOnlyEnvFile()
    {
        const std::string secret = "hf_0123456789abcdef";
        for (const JobFramework framework : { JobFramework::probe, JobFramework::megatron }) {
            RunRequest req;
            req.scenario = tiny_scenario();
            req.profile = test_profile();
            req.profile.megatron_path = "/opt/Megatron-LM";
            req.profile.env = { { "HF_TOKEN", secret }, { "SLURM_CONF", "/etc/slurm/slurm.conf" } };
            req.framework = framework;
            req.run_id = "20250101-000000-abcdef";
            const JobBundle b = make_job_bundle(req);
            const JobFile* env_file = b.find("env.sh");
            QVERIFY(env_file);
            QCOMPARE(env_file->mode, 0600);
            QVERIFY(env_file->content.find("export HF_TOKEN=" + shell_quote(secret)) != std::string::npos);
            for (const JobFile& f : b.files)
                if (f.name != "env.sh")
                    QVERIFY2(f.content.find(secret) == std::string::npos, f.name.c_str());
            // Scripts name the variables and source the file; plan.json keeps the names only.
            QVERIFY(b.find("job.sh")->content.find("HF_TOKEN, SLURM_CONF") != std::string::npos);
            QVERIFY(b.find("job.sh")->content.find("source \"$PARALLAX_RUN_DIR\"/env.sh") != std::string::npos);
            const nlohmann::json plan = nlohmann::json::parse(b.find("plan.json")->content);
            QVERIFY(plan["cluster_profile"]["env_names_withheld"] == nlohmann::json({ "HF_TOKEN", "SLURM_CONF" }));
            QVERIFY(!plan["cluster_profile"].contains("env"));
            // Written out for review, env.sh is owner-only here too.
            QTemporaryDir tmp;
            write_bundle_folder(b, tmp.path());
            QCOMPARE(QFile::permissions(tmp.filePath(QStringLiteral("env.sh"))),
                QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ReadUser | QFileDevice::WriteUser);
            QVERIFY(QFile::permissions(tmp.filePath(QStringLiteral("job.sh"))) & QFileDevice::ExeOwner);
            // A stored run's profile (names, no values) cannot make a new bundle: it would send empty values.
            RunRequest stored = req;
            stored.profile
                = profile_from_json(profile_to_json(req.profile, EnvValues::withhold), "run 20250101-000000-abcdef");
            QVERIFY(stored.profile.env.empty());
            try {
                make_job_bundle(stored);
                QFAIL("a profile without env values made a bundle");
            } catch (const InputError& e) {
                QCOMPARE(e.key(), std::string("env_names_withheld"));
            }
            // A reviewed env.sh sent back with `run --from` stays owner-only.
            req.edited_files = { { "env.sh", "export HF_TOKEN=edited\n" } };
            QCOMPARE(make_job_bundle(req).find("env.sh")->mode, 0600);
        }
    }

    void directCommands()
    {
        ClusterProfile p = test_profile();
        p.launcher = LauncherKind::direct;
        p.env["HF_TOKEN"] = "hf_not_on_any_command_line";
        const std::string start = direct_start_command(p, "runs/r1", 1, 2, "node0", 29500);
        QVERIFY(start.find("setsid") != std::string::npos);
        QVERIFY(start.find("hf_not_on_any_command_line") == std::string::npos);
        QVERIFY(start.find("MASTER_PORT=29500") != std::string::npos);
        QCOMPARE(parse_direct_status("exit 0\n").kind, DirectStatus::exited);
        QCOMPARE(parse_direct_status("exit 143\n").exit_code, 143);
        QCOMPARE(parse_direct_status("running\n").kind, DirectStatus::running);
        QCOMPARE(parse_direct_status("gone\n").kind, DirectStatus::gone);
        QCOMPARE(parse_direct_status("").kind, DirectStatus::unknown);
        // Status and cancel against a real folder: a process group that ends on TERM.
        QTemporaryDir tmp;
        const std::string dir = tmp.path().toStdString();
        QCOMPARE(run(QStringLiteral("/bin/sh"),
                     { QStringLiteral("-c"), QString::fromStdString(direct_status_command(dir, 0)) })
                     .out,
            QByteArray("starting\n"));
        write(tmp.filePath(QStringLiteral("node.sh")), "sleep 60\n");
        RunRequest req;
        req.scenario = tiny_scenario();
        req.profile = p;
        req.profile.hosts = { "localhost" };
        req.run_id = "r1";
        const JobBundle b = make_job_bundle(req);
        write(tmp.filePath(QStringLiteral("start.sh")), b.find("start.sh")->content);
        QProcess starter;
        starter.start(QStringLiteral("/bin/sh"),
            { QStringLiteral("-c"),
                QStringLiteral("cd '%1' && setsid bash start.sh 0 >/dev/null 2>&1 </dev/null & echo $!")
                    .arg(tmp.path()) });
        QVERIFY(starter.waitForFinished(10000));
        QTRY_VERIFY_WITH_TIMEOUT(QFileInfo::exists(tmp.filePath(QStringLiteral("node0.pid"))), 10000);
        QCOMPARE(run(QStringLiteral("/bin/sh"),
                     { QStringLiteral("-c"), QString::fromStdString(direct_status_command(dir, 0)) })
                     .out,
            QByteArray("running\n"));
        run(QStringLiteral("/bin/sh"), { QStringLiteral("-c"), QString::fromStdString(direct_cancel_command(dir, 0)) });
        QTRY_VERIFY_WITH_TIMEOUT(QFileInfo::exists(tmp.filePath(QStringLiteral("node0.exit"))), 10000);
        QCOMPARE(run(QStringLiteral("/bin/sh"),
                     { QStringLiteral("-c"), QString::fromStdString(direct_status_command(dir, 0)) })
                     .out,
            QByteArray("exit 143\n"));
    }

    // --- profiles -----------------------------------------------------------------------------------
    void profileJsonRoundTrip()
    {
        ClusterProfile p = test_profile();
        p.modules = { "cuda/12.4", "nccl" };
        p.env = { { "SLURM_CONF", "/etc/slurm.conf" }, { "NCCL_DEBUG", "WARN" } };
        p.hosts = { "n1", "n2" };
        p.container = "nvcr.io/nvidia/pytorch:24.05-py3";
        p.container_runtime = "pyxis";
        const nlohmann::json j = profile_to_json(p);
        const ClusterProfile back = profile_from_json(j, "p.json");
        QCOMPARE(profile_to_json(back).dump(), j.dump());
        for (const char* secret : { "password", "passphrase", "secret", "token" })
            for (const auto& [key, value] : j.items())
                QVERIFY2(key.find(secret) == std::string::npos, key.c_str());
    }

    void profileRejects_data()
    {
        QTest::addColumn<QString>("json");
        QTest::addColumn<QString>("key");
        QTest::newRow("unknown key") << "{\"name\":\"a\",\"host\":\"h\",\"partiton\":\"gpu\"}"
                                     << "partiton";
        QTest::newRow("host with shell") << "{\"name\":\"a\",\"host\":\"h; rm -rf /\"}"
                                         << "host";
        QTest::newRow("host option") << "{\"name\":\"a\",\"host\":\"-oProxyCommand=touch x\"}"
                                     << "host";
        QTest::newRow("user with quote") << "{\"name\":\"a\",\"host\":\"h\",\"user\":\"a'b\"}"
                                         << "user";
        QTest::newRow("bad name") << "{\"name\":\"a b\",\"host\":\"h\"}"
                                  << "name";
        QTest::newRow("env name") << "{\"name\":\"a\",\"host\":\"h\",\"env\":{\"A=B; x\":\"1\"}}"
                                  << "env.A=B; x";
        QTest::newRow("percent in work_dir") << "{\"name\":\"a\",\"host\":\"h\",\"work_dir\":\"runs/%j\"}"
                                             << "work_dir";
        QTest::newRow("newline in partition") << "{\"name\":\"a\",\"host\":\"h\",\"partition\":\"gpu\\nx\"}"
                                              << "partition";
        QTest::newRow("runtime")
            << "{\"name\":\"a\",\"host\":\"h\",\"container\":\"img\",\"container_runtime\":\"docker\"}"
            << "container_runtime";
        QTest::newRow("port") << "{\"name\":\"a\",\"host\":\"h\",\"port\":70000}"
                              << "port";
    }

    void profileRejects()
    {
        QFETCH(QString, json);
        QFETCH(QString, key);
        try {
            profile_from_json(nlohmann::json::parse(json.toStdString()), "p.json");
            QFAIL("accepted");
        } catch (const InputError& e) {
            QCOMPARE(QString::fromStdString(e.file()), QStringLiteral("p.json"));
            QCOMPARE(QString::fromStdString(e.key()), key);
        }
    }

    void profileStoreInSettings()
    {
        QTemporaryDir tmp;
        ProfileStore store(tmp.filePath(QStringLiteral("parallax.conf")));
        QVERIFY(store.names().isEmpty());
        ClusterProfile p = test_profile();
        p.modules = { "cuda/12.4" }; // one element: QSettings stores it as a plain string
        p.env = { { "SLURM_CONF", "/etc/slurm/slurm.conf" } };
        p.poll_min_s = 0.5;
        store.save(p);
        // The profile's env values may be tokens: the settings file becomes owner-only.
        QCOMPARE(
            QFile::permissions(tmp.filePath(QStringLiteral("parallax.conf"))) & 0x0077, QFileDevice::Permissions());
        ClusterProfile second = test_profile();
        second.name = "other";
        second.extra_sbatch_args = { "--reservation=r1", "--exclusive" };
        store.save(second);
        QCOMPARE(store.names(), QStringList({ QStringLiteral("other"), QStringLiteral("test") }));
        QCOMPARE(profile_to_json(store.load(QStringLiteral("test")).value()).dump(), profile_to_json(p).dump());
        QCOMPARE(profile_to_json(store.load(QStringLiteral("other")).value()).dump(), profile_to_json(second).dump());
        QVERIFY(!store.load(QStringLiteral("missing")).has_value());
        store.remove(QStringLiteral("other"));
        QCOMPARE(store.names(), QStringList({ QStringLiteral("test") }));
        ClusterProfile bad = p;
        bad.host = "bad host";
        QVERIFY_THROWS_EXCEPTION(InputError, store.save(bad));
        // A hand-edited settings file with a wrong type names the key.
        {
            QSettings s(tmp.filePath(QStringLiteral("parallax.conf")), QSettings::IniFormat);
            s.setValue(QStringLiteral("clusterProfiles/test/port"), QStringLiteral("twenty-two"));
        }
        try {
            store.load(QStringLiteral("test"));
            QFAIL("loaded a bad port");
        } catch (const InputError& e) {
            QCOMPARE(e.key(), std::string("port"));
        }
        const QByteArray text = [&] {
            QFile f(tmp.filePath(QStringLiteral("parallax.conf")));
            f.open(QIODevice::ReadOnly);
            return f.readAll();
        }();
        QVERIFY(!text.toLower().contains("password"));
    }

    // --- job templates ------------------------------------------------------------------------------
    void probeBundle()
    {
        RunRequest req;
        req.scenario = tiny_scenario();
        req.scenario_label = "tiny";
        req.profile = test_profile();
        req.run_id = "20250101-000000-abcdef";
        const JobBundle b = make_job_bundle(req);
        QCOMPARE(b.world_size, 2);
        QCOMPARE(b.nodes, 1);
        QCOMPARE(b.ranks_per_node, 2);
        QVERIFY(!b.gpus);
        for (const char* name :
            { "job.sh", "node.sh", "start.sh", "plan.json", "probe_plan.json", "parallax_probe.py" })
            QVERIFY2(b.find(name), name);
        // The embedded probe is the one in resources/.
        QFile source(kSource + QStringLiteral("/resources/probe/parallax_probe.py"));
        QVERIFY(source.open(QIODevice::ReadOnly));
        QCOMPARE(QByteArray::fromStdString(b.find("parallax_probe.py")->content), source.readAll());
        const auto plan = nlohmann::json::parse(b.find("probe_plan.json")->content);
        QCOMPARE(plan["strategy"]["pp"].get<int>(), 2);
        QCOMPARE(plan["model"]["layers"].get<int>(), 4);
        QCOMPARE(plan["model"]["hidden"].get<int>(), 128);
        QCOMPARE(plan["training"]["microbatches"].get<int>(), 4);
        QCOMPARE(plan["run_id"].get<std::string>(), req.run_id);
        QVERIFY(b.workload.has_value()); // like-for-like prediction of what the probe trains
        QCOMPARE(b.workload->strategy.schedule, Schedule::gpipe);
        QCOMPARE(b.workload->training.global_batch, 8LL);
        QVERIFY(b.find("job.sh")->content.find("srun") != std::string::npos);
        QVERIFY(b.find("node.sh")->content.find("torch.distributed.run") != std::string::npos);
        QVERIFY(b.find("job.sh")->content.find("'/usr/bin/python3'") != std::string::npos);
        // Deterministic: the same request and run id give the same bytes.
        const JobBundle again = make_job_bundle(req);
        QCOMPARE(again.files.size(), b.files.size());
        for (std::size_t i = 0; i < b.files.size(); ++i)
            QCOMPARE(again.files[i].content, b.files[i].content);
        // Every script is valid bash.
        QTemporaryDir tmp;
        for (const JobFile& f : b.files) {
            if (f.name.size() < 3 || f.name.substr(f.name.size() - 3) != ".sh")
                continue;
            const QString path = write(tmp.filePath(QString::fromStdString(f.name)), f.content);
            const Shell r = run(QStringLiteral("bash"), { QStringLiteral("-n"), path });
            QVERIFY2(r.code == 0, r.err.constData());
        }
        // The probe itself compiles.
        const QString probe
            = write(tmp.filePath(QStringLiteral("parallax_probe.py")), b.find("parallax_probe.py")->content);
        QCOMPARE(
            run(QStringLiteral("/usr/bin/python3"), { QStringLiteral("-m"), QStringLiteral("py_compile"), probe }).code,
            0);
    }

    void planThatDoesNotFitIsRefused()
    {
        RunRequest req;
        req.scenario = tiny_scenario();
        req.profile = test_profile();
        req.profile.gpus_per_node = 3; // 2 ranks are not a multiple of 3 per node... (3 > 2 clamps to 2)
        QCOMPARE(make_job_bundle(req).ranks_per_node, 2);
        req.scenario = load_scenario_preset("default", PresetCatalog::standard()); // 64 GPUs
        req.profile.gpus_per_node = 6;
        QVERIFY_THROWS_EXCEPTION(InputError, make_job_bundle(req));
        req.profile.gpus_per_node = 8;
        req.profile.launcher = LauncherKind::direct;
        req.profile.hosts = { "a", "b" }; // 8 nodes needed
        QVERIFY_THROWS_EXCEPTION(InputError, make_job_bundle(req));
        req.profile.launcher = LauncherKind::slurm;
        req.framework = JobFramework::megatron; // megatron_path missing
        try {
            make_job_bundle(req);
            QFAIL("no megatron_path");
        } catch (const InputError& e) {
            QCOMPARE(e.key(), std::string("megatron_path"));
        }
    }

    void megatronFlagsFollowThePlan()
    {
        RunRequest req;
        req.scenario = load_scenario_preset("default", PresetCatalog::standard()); // tp4 pp4 vpp5 cp2 dp2
        req.profile = test_profile();
        req.profile.gpu_type = "H100-SXM5-80GB";
        req.profile.gpus_per_node = 8;
        req.profile.megatron_path = "/opt/Megatron-LM";
        req.profile.modules = { "cuda/12.4" };
        req.framework = JobFramework::megatron;
        req.run_id = "m1";
        const JobBundle b = make_job_bundle(req);
        QCOMPARE(b.nodes, 8);
        QVERIFY(b.gpus);
        const std::string node = b.find("node.sh")->content;
        for (const char* flags : { "'--tensor-model-parallel-size'\n  '4'", "'--pipeline-model-parallel-size'\n  '4'",
                 "'--num-layers-per-virtual-pipeline-stage'\n  '4'", "'--context-parallel-size'\n  '2'",
                 "'--sequence-parallel'", "'--recompute-activations'", "'--use-distributed-optimizer'",
                 "'--micro-batch-size'\n  '1'", "'--global-batch-size'\n  '128'", "'--bf16'", "'--log-throughput'",
                 "'--group-query-attention'", "'--num-query-groups'\n  '8'", "'--swiglu'", "'--seq-length'\n  '8192'",
                 "'--num-layers'\n  '80'", "'--hidden-size'\n  '8192'", "'--mock-data'",
                 "'/opt/Megatron-LM/pretrain_gpt.py'", "'--nproc_per_node=8'", "module load 'cuda/12.4'" })
            QVERIFY2(node.find(flags) != std::string::npos, flags);
        // One generator: node.sh passes exactly the flags `parallax-cli export --format megatron` writes.
        std::vector<std::string> notes;
        LaunchSettings o;
        o.steps = b.steps;
        std::string expected = "megatron_args=(\n";
        for (const ArgGroup& g : megatron_arg_groups(req.scenario, o, notes))
            for (const auto& w : g.words)
                expected += "  " + shell_quote(w) + "\n";
        QVERIFY2(node.find(expected + ")\n") != std::string::npos, node.c_str());
        const std::string job = b.find("job.sh")->content;
        QVERIFY(job.find("'--ntasks-per-node=1'") != std::string::npos);
        QVERIFY(job.find("'bash'\n  'node.sh'") != std::string::npos);
        const auto argv = sbatch_argv(req.profile, b, "m1", "/abs");
        QVERIFY(std::find(argv.begin(), argv.end(), "--gpus-per-node=8") != argv.end());
        QTemporaryDir tmp;
        for (const char* name : { "node.sh", "job.sh" })
            QCOMPARE(run(QStringLiteral("bash"),
                         { QStringLiteral("-n"), write(tmp.filePath(QLatin1String(name)), b.find(name)->content) })
                         .code,
                0);
    }

    void torchtitanTomlParses()
    {
        RunRequest req;
        req.scenario = load_scenario_preset("default", PresetCatalog::standard());
        req.profile = test_profile();
        req.profile.gpu_type = "H100-SXM5-80GB";
        req.profile.gpus_per_node = 8;
        req.profile.torchtitan_path = "/opt/torchtitan";
        req.framework = JobFramework::torchtitan;
        req.run_id = "t1";
        const JobBundle b = make_job_bundle(req);
        QTemporaryDir tmp;
        const QString toml = write(tmp.filePath(QStringLiteral("torchtitan.toml")), b.find("torchtitan.toml")->content);
        const Shell r = run(QStringLiteral("/usr/bin/python3"),
            { QStringLiteral("-c"),
                QStringLiteral("import json, sys, tomllib; print(json.dumps(tomllib.load(open(sys.argv[1], 'rb'))))"),
                toml });
        QVERIFY2(r.code == 0, r.err.constData());
        const auto j = nlohmann::json::parse(r.out.toStdString());
        QCOMPARE(j["parallelism"]["tensor_parallel_degree"].get<int>(), 4);
        QCOMPARE(j["parallelism"]["pipeline_parallel_degree"].get<int>(), 4);
        QCOMPARE(j["parallelism"]["context_parallel_degree"].get<int>(), 2);
        QCOMPARE(j["parallelism"]["data_parallel_shard_degree"].get<int>(), 2); // zero 1 -> FSDP
        QCOMPARE(j["parallelism"]["pipeline_parallel_schedule"].get<std::string>(), std::string("Interleaved1F1B"));
        QCOMPARE(j["training"]["seq_len"].get<int>(), 8192);
        // torchtitan cuts each data-parallel rank's batch (128 / dp 2) into pipeline micro-batches of 1.
        QCOMPARE(j["training"]["local_batch_size"].get<int>(), 64);
        QCOMPARE(j["parallelism"]["pipeline_parallel_microbatch_size"].get<int>(), 1);
        QCOMPARE(j["parallelism"]["pipeline_parallel_layers_per_stage"].get<int>(), 4); // vpp 5 kept
        QCOMPARE(
            j["model"]["hf_assets_path"].get<std::string>(), std::string("/opt/torchtitan/assets/hf/Llama-3.1-70B"));
        // The same file export writes (one generator), but for the checkout's assets and the run's label.
        std::vector<std::string> notes;
        LaunchSettings o;
        o.steps = b.steps;
        o.run_label = "run t1";
        QCOMPARE(
            b.find("torchtitan.toml")->content, torchtitan_toml(req.scenario, o, "/opt/torchtitan/assets/hf", notes));
        QCOMPARE(j["training"]["global_batch_size"].get<int>(), 128);
        QCOMPARE(j["activation_checkpoint"]["mode"].get<std::string>(), std::string("selective"));
        QCOMPARE(j["model"]["flavor"].get<std::string>(), std::string("70B"));
        QCOMPARE(j["metrics"]["log_freq"].get<int>(), 1);
        QCOMPARE(
            run(QStringLiteral("bash"),
                { QStringLiteral("-n"), write(tmp.filePath(QStringLiteral("node.sh")), b.find("node.sh")->content) })
                .code,
            0);
    }

    void deepspeedConfig()
    {
        RunRequest req;
        req.scenario = load_scenario_preset("default", PresetCatalog::standard());
        req.profile = test_profile();
        req.profile.gpu_type = "H100-SXM5-80GB";
        req.profile.gpus_per_node = 8;
        req.profile.deepspeed_path = "/opt/Megatron-DeepSpeed";
        req.framework = JobFramework::deepspeed;
        req.run_id = "d1";
        const JobBundle b = make_job_bundle(req);
        const auto ds = nlohmann::json::parse(b.find("ds_config.json")->content);
        QCOMPARE(ds["train_batch_size"].get<int>(), 128);
        QCOMPARE(ds["train_micro_batch_size_per_gpu"].get<int>(), 1);
        QCOMPARE(ds["gradient_accumulation_steps"].get<int>(), 64); // 128 / (1 * dp 2)
        QCOMPARE(ds["steps_per_print"].get<int>(), 1);
        QCOMPARE(ds["zero_optimization"]["stage"].get<int>(), 1);
        QVERIFY(ds["bf16"]["enabled"].get<bool>());
        const std::string node = b.find("node.sh")->content;
        QVERIFY(node.find("'--deepspeed'") != std::string::npos);
        QVERIFY(node.find("\"$PARALLAX_RUN_DIR\"/'ds_config.json'") != std::string::npos);
        // Context parallelism does not exist there: said, not silently dropped.
        QVERIFY(std::any_of(b.notes.begin(), b.notes.end(),
            [](const std::string& n) { return n.find("context parallelism") != std::string::npos; }));
        QVERIFY(node.find("# NOTE: Megatron-DeepSpeed has no context parallelism") != std::string::npos);
        QTemporaryDir tmp;
        QCOMPARE(
            run(QStringLiteral("bash"), { QStringLiteral("-n"), write(tmp.filePath(QStringLiteral("node.sh")), node) })
                .code,
            0);
    }

    // Every profile field a user can type, filled with injections, goes through a real bash running the
    // generated script (dry run: it prints the launch instead of starting it). Nothing may execute.
    void hostileProfileValuesNeverExecute()
    {
        QTemporaryDir tmp;
        const QString marker = tmp.filePath(QStringLiteral("pwned"));
        const std::string m = marker.toStdString();
        RunRequest req;
        req.scenario = tiny_scenario();
        req.scenario.model.name = "tiny\n/usr/bin/touch " + m + "\n";
        req.scenario_label = "label $(touch " + m + ")\ntouch " + m;
        req.profile = test_profile();
        req.profile.name = "hostile";
        req.profile.work_dir
            = tmp.filePath(QStringLiteral("runs")).toStdString() + "/it's `touch " + m + "` $(touch " + m + ")";
        // A newline cannot even get in: the profile refuses control characters in names and paths.
        req.profile.modules = { "x\ntouch " + m };
        try {
            make_job_bundle(req);
            QFAIL("a module name with a newline was accepted");
        } catch (const InputError& e) {
            QCOMPARE(e.key(), std::string("modules[0]"));
        }
        req.profile.modules = { "cuda'; touch " + m + "; '", "$(touch " + m + ")", "`touch " + m + "`" };
        req.profile.env = { { "EVIL", "`touch " + m + "`" }, { "EVIL2", "a'; touch " + m + "; echo '" },
            { "EVIL3", "line\ntouch " + m } };
        req.profile.container = "img; touch " + m;
        req.profile.container_runtime = "apptainer";
        req.profile.python = "/usr/bin/python3";
        req.run_id = "hostile-1";
        const JobBundle b = make_job_bundle(req);
        const QString dir = QString::fromStdString(b.run_dir);
        QVERIFY(QDir().mkpath(dir));
        for (const JobFile& f : b.files)
            write(dir + QLatin1Char('/') + QString::fromStdString(f.name), f.content);
        const QString args_file = tmp.filePath(QStringLiteral("module-args"));
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("PARALLAX_DRY_RUN"), QStringLiteral("1"));
        // Stand-ins for the cluster's tools, as exported bash functions: they record, never run anything.
        env.insert(QStringLiteral("BASH_FUNC_module%%"),
            QStringLiteral("() { printf '%s\\n' \"$@\" >> '") + args_file + QStringLiteral("'; }"));
        env.insert(QStringLiteral("BASH_FUNC_scontrol%%"), QStringLiteral("() { echo localhost; }"));
        env.insert(QStringLiteral("SLURM_JOB_NODELIST"), QStringLiteral("localhost"));
        env.insert(QStringLiteral("SLURM_JOB_ID"), QStringLiteral("1"));
        for (const char* script : { "job.sh", "node.sh" }) {
            QProcessEnvironment e = env;
            e.insert(QStringLiteral("MASTER_ADDR"), QStringLiteral("localhost"));
            e.insert(QStringLiteral("MASTER_PORT"), QStringLiteral("1234"));
            const Shell r
                = run(QStringLiteral("bash"), { dir + QLatin1Char('/') + QLatin1String(script) }, e, tmp.path());
            QVERIFY2(r.code == 0, QByteArray(QByteArray(script) + ": " + r.err).constData());
            QVERIFY2(!QFileInfo::exists(marker), script);
            // The launch line names the container image as one literal word.
            QVERIFY2(r.out.contains("img\\;\\ touch\\ "), r.out.constData());
        }
        QFile args(args_file);
        QVERIFY(args.open(QIODevice::ReadOnly));
        const QByteArray recorded = args.readAll();
        QVERIFY(recorded.contains(QByteArray::fromStdString("cuda'; touch " + m + "; '\n")));
        QVERIFY(recorded.contains(QByteArray::fromStdString("$(touch " + m + ")\n")));
        // Comments carry the newline-laden model name without ending the comment.
        QVERIFY(b.find("job.sh")->content.find("# /usr/bin/touch") != std::string::npos);
        QVERIFY(!QFileInfo::exists(marker));
    }

    void editedFilesReplaceGeneratedOnes()
    {
        RunRequest req;
        req.scenario = tiny_scenario();
        req.profile = test_profile();
        req.run_id = "e1";
        req.edited_files = { { "job.sh", "#!/bin/bash\necho edited\n" }, { "extra.txt", "notes" } };
        const JobBundle b = make_job_bundle(req);
        QCOMPARE(b.find("job.sh")->content, std::string("#!/bin/bash\necho edited\n"));
        QCOMPARE(b.find("extra.txt")->content, std::string("notes"));
        QCOMPARE(b.edited, std::vector<std::string>({ "job.sh", "extra.txt" }));
        QVERIFY(b.notes.back().find("edited by the user before sending: job.sh, extra.txt") != std::string::npos);
        req.edited_files = { { "../escape.sh", "x" } };
        QVERIFY_THROWS_EXCEPTION(InputError, make_job_bundle(req));
    }

    void runIds()
    {
        const std::string a = new_run_id();
        QVERIFY(valid_run_id(a));
        QCOMPARE(a.size(), std::size_t(22));
        QVERIFY(a != new_run_id() || true);
        QVERIFY(!valid_run_id("a b"));
        QVERIFY(!valid_run_id("a;b"));
        QVERIFY(!valid_run_id(""));
    }

    void commentsCannotBeEscaped()
    {
        QTemporaryDir tmp;
        const std::string marker = tmp.filePath(QStringLiteral("pwned")).toStdString();
        BashScript s;
        s.comment("first\ntouch " + marker + "\r\ntouch " + marker);
        s.export_var("X", "$(touch " + marker + ")");
        s.command({ ShellWord::lit("printf"), ShellWord::lit("%s"), ShellWord::lit("`touch " + marker + "`") });
        const Shell r = run(QStringLiteral("bash"), { write(tmp.filePath(QStringLiteral("s.sh")), s.text()) });
        QCOMPARE(r.code, 0);
        QVERIFY(!QFileInfo::exists(QString::fromStdString(marker)));
        QCOMPARE(r.out.toStdString(), "`touch " + marker + "`");
    }

    // --- run store ----------------------------------------------------------------------------------
    void storeLifeCycle()
    {
        QTemporaryDir tmp;
        const QString path = tmp.filePath(QStringLiteral("runs.sqlite"));
        RunStore store(path);
        QCOMPARE(store.opened_schema(), 0);
        QCOMPARE(RunStore::latest_schema(), 1);
        RunRecord r = sample_run("r1");
        store.create(r, { { "job.sh", 0755, "#!/bin/bash\n" }, { "probe_plan.json", 0644, "{}" } });
        QCOMPARE(store.files("r1").size(), std::size_t(2));
        QCOMPARE(store.files("r1")[0].mode, 0755);
        store.set_job("r1", "42", "/scratch/run/job.log", "sbatch ...");
        store.set_state("r1", RunState::submitted, "SLURM job 42 submitted");
        store.set_state("r1", RunState::submitted, "SLURM job 42 submitted"); // no change: no transition
        store.set_state("r1", RunState::running, "SLURM job 42 RUNNING");
        store.set_state("r1", RunState::completed, "SLURM job 42 COMPLETED, exit 0:0", 0);
        const auto t = store.transitions("r1");
        QCOMPARE(t.size(), std::size_t(4));
        QCOMPARE(t[0].state, RunState::created);
        QCOMPARE(t[3].state, RunState::completed);
        QCOMPARE(t[3].seq, 3);
        for (std::size_t i = 1; i < t.size(); ++i)
            QVERIFY(t[i].at >= t[i - 1].at);
        const auto got = store.get("r1");
        QVERIFY(got.has_value());
        QCOMPARE(got->job_id, std::string("42"));
        QCOMPARE(got->exit_code.value(), 0);
        QCOMPARE(got->state, RunState::completed);
        QVERIFY(store.active().empty());
        store.create(sample_run("r2"));
        QCOMPARE(store.active().size(), std::size_t(1));
        QCOMPARE(store.list().size(), std::size_t(2));
        QCOMPARE(store.list(1).size(), std::size_t(1));
        QVERIFY_THROWS_EXCEPTION(StoreError, store.create(sample_run("r1"))); // duplicate id
        QVERIFY_THROWS_EXCEPTION(StoreError, store.set_state("missing", RunState::failed, "x"));
        QCOMPARE(store.transitions("r2").size(), std::size_t(1));
    }

    void storeLogIsIncrementalAndGapFree()
    {
        QTemporaryDir tmp;
        RunStore store(tmp.filePath(QStringLiteral("runs.sqlite")));
        store.create(sample_run("r1"));
        QCOMPARE(store.append_log("r1", 0, "hello "), std::int64_t(6));
        QCOMPARE(store.append_log("r1", 6, "world\n"), std::int64_t(12));
        // The same bytes read again after a reconnect, overlapping what is stored: only the new tail counts.
        QCOMPARE(store.append_log("r1", 6, "world\nmore"), std::int64_t(16));
        QCOMPARE(store.append_log("r1", 0, "hello"), std::int64_t(16));
        QVERIFY_THROWS_EXCEPTION(StoreError, store.append_log("r1", 20, "gap"));
        QCOMPARE(store.log("r1"), std::string("hello world\nmore"));
        QCOMPARE(store.get("r1")->log_bytes, std::int64_t(16));
        std::string streamed;
        int chunks = 0;
        store.for_each_log_chunk("r1", [&](std::string_view c) {
            streamed.append(c);
            ++chunks;
        });
        QCOMPARE(streamed, std::string("hello world\nmore"));
        QCOMPARE(chunks, 3);
        // Binary bytes survive.
        store.create(sample_run("bin"));
        const std::string binary("a\0b\xff\n", 5);
        store.append_log("bin", 0, binary);
        QCOMPARE(store.log("bin"), binary);
    }

    void catalog_reads_rows_logs_and_overlays()
    {
        QTemporaryDir tmp;
        const QString path = tmp.filePath(QStringLiteral("runs.sqlite"));
        QVERIFY(!RunCatalog::store_exists(path));
        {
            RunStore store(path);
            store.create(sample_run("r1"));
            store.append_log("r1", 0, "0123456789");
            store.set_state("r1", RunState::failed, "exit 1", 1);
            store.create(sample_run("r2"));
        }
        QVERIFY(RunCatalog::store_exists(path));
        const RunCatalog catalog(path);
        const std::vector<RunRow> rows = catalog.rows();
        QCOMPARE(rows.size(), std::size_t(2));
        const auto r1
            = std::find_if(rows.begin(), rows.end(), [](const RunRow& r) { return r.id == QLatin1String("r1"); });
        QVERIFY(r1 != rows.end());
        QCOMPARE(r1->state, RunState::failed);
        QCOMPARE(r1->state_text(), QStringLiteral("failed"));
        QVERIFY(!r1->active());
        QVERIFY(!r1->finished.isEmpty());
        const LogSlice tail = catalog.log_tail("r1", 4);
        QCOMPARE(tail.text, std::string("6789"));
        QCOMPARE(tail.from_byte, std::int64_t(6));
        QVERIFY(tail.truncated);
        const LogSlice from = catalog.log_from("r1", 3, 2);
        QCOMPARE(from.text, std::string("34"));
        QCOMPARE(from.from_byte, std::int64_t(3));
        QVERIFY(!from.truncated);
        QVERIFY(!catalog.log_tail("r2", 4).truncated);
        const auto overlay = catalog.overlay("r1");
        QVERIFY(overlay.has_value());
        QCOMPARE(overlay->state, RunState::failed);
        QVERIFY(!catalog.overlay("missing").has_value());
        QCOMPARE(catalog.run_json(*catalog.run("r1"), false)["state"].get<std::string>(), std::string("failed"));
    }

    void storeMeasurementsAndReopen()
    {
        QTemporaryDir tmp;
        const QString path = tmp.filePath(QStringLiteral("runs.sqlite"));
        {
            RunStore store(path);
            store.create(sample_run("r1"));
            const Measurements m = parse_measurements(kProbeLog, LogFormat::probe);
            store.set_measurements("r1", m.parsed, m.benches, m.summary_json().dump(), m.run_info_json);
            store.set_measurements("r1", m.parsed, m.benches, m.summary_json().dump(), m.run_info_json); // replaces
            // A second connection (as the GUI's) reads while this one is open.
            RunStore reader(path);
            QCOMPARE(reader.steps("r1").size(), std::size_t(4));
        }
        RunStore store(path);
        QCOMPARE(store.opened_schema(), 1);
        const auto steps = store.steps("r1");
        QCOMPARE(steps.size(), std::size_t(4));
        QCOMPARE(steps[1].step, std::int64_t(2));
        QCOMPARE(steps[1].step_time_s.value(), 0.33);
        QCOMPARE(steps[1].loss.value(), 7.07);
        QVERIFY(!steps[1].memory_GiB.has_value());
        const auto benches = store.benches("r1");
        QCOMPARE(benches.size(), std::size_t(2));
        QCOMPARE(benches[0].op, std::string("gemm"));
        QCOMPARE(benches[1].group, std::string("pp"));
        const auto run = store.get("r1");
        QCOMPARE(run->log_format, std::string("probe"));
        const auto summary = nlohmann::json::parse(run->summary_json);
        QCOMPARE(summary["steps"].get<int>(), 4);
        QCOMPARE(summary["step_time_s"].get<double>(), 0.29); // median of steps 2..4
        QCOMPARE(summary["probe_exit"].get<std::string>(), std::string("ok"));
        QVERIFY(run->run_info_json.find("\"backend\":\"gloo\"") != std::string::npos);
    }

    void storeRefusesANewerSchemaAndJunk()
    {
        QTemporaryDir tmp;
        const QString path = tmp.filePath(QStringLiteral("newer.sqlite"));
        {
            QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("raw"));
            db.setDatabaseName(path);
            QVERIFY(db.open());
            QSqlQuery q(db);
            QVERIFY(q.exec(QStringLiteral("PRAGMA user_version = 99")));
            db.close();
        }
        QSqlDatabase::removeDatabase(QStringLiteral("raw"));
        try {
            RunStore store(path);
            QFAIL("opened a newer schema");
        } catch (const StoreError& e) {
            QVERIFY2(std::string(e.what()).find("newer Parallax") != std::string::npos, e.what());
        }
        const QString junk = write(tmp.filePath(QStringLiteral("junk.sqlite")), std::string(4096, 'x'));
        QVERIFY_THROWS_EXCEPTION(StoreError, RunStore store(junk));
    }

    void failedTransactionsLeaveNothing()
    {
        QTemporaryDir tmp;
        RunStore store(tmp.filePath(QStringLiteral("runs.sqlite")));
        RunRecord r = sample_run("r1");
        // Two files with the same name violate the primary key inside create(): the run must not exist.
        QVERIFY_THROWS_EXCEPTION(StoreError, store.create(r, { { "a", 0644, "1" }, { "a", 0644, "2" } }));
        QVERIFY(!store.get("r1").has_value());
        QVERIFY(store.transitions("r1").empty());
        store.create(r);
        QVERIFY(store.get("r1").has_value());
    }

    // --- measurements -------------------------------------------------------------------------------
    void probeRecords()
    {
        const Measurements m = parse_measurements(kProbeLog, LogFormat::probe);
        QCOMPARE(m.parsed.steps.size(), std::size_t(4));
        QCOMPARE(m.benches.size(), std::size_t(2)); // the cut last line is not a record
        QCOMPARE(m.done_exit.value(), std::string("ok"));
        QVERIFY(m.run_info_json.find("world_size") != std::string::npos);
        MeasurementCollector c(LogFormat::probe);
        const std::string log = kProbeLog;
        for (std::size_t i = 0; i < log.size(); i += 7)
            c.feed(std::string_view(log).substr(i, 7));
        QCOMPARE(c.snapshot().parsed.steps.size(), std::size_t(4));
        const std::string failed
            = "PARALLAX_PROBE {\"kind\":\"done\",\"steps\":0,\"exit\":\"error\",\"error\":\"boom\"}\n";
        const Measurements f = parse_measurements(failed, LogFormat::probe);
        QCOMPARE(f.done_exit.value(), std::string("error"));
        QCOMPARE(f.done_error, std::string("boom"));
    }

    // --- measured against predicted (what an overlay draws) ---------------------------------------------
    void comparisonOfAGpuRun()
    {
        RunRecord run = sample_run("g1");
        ClusterProfile p = test_profile();
        p.gpu_type = "H100-SXM5-80GB";
        run.profile_json = profile_to_json(p).dump();
        run.framework = "megatron";
        run.scenario_json = "{\"strategy\":{\"tp\":2,\"pp\":2,\"dp\":2,\"cp\":1}}";
        run.prediction_json = "{\"step_time_s\":2.0,\"tokens_per_s\":8000,\"tflops_per_gpu\":400,"
                              "\"memory\":{\"peak_GiB\":60},\"power\":{\"avg_W_per_gpu\":600}}";
        std::vector<StepRecord> steps(4);
        const double times[] = { 3.0, 2.2, 2.0, 2.4 }; // the first step (warm-up) does not count
        const double memory[] = { 70, 61, 62, 61 }; // memory: the peak of all steps
        for (int i = 0; i < 4; ++i) {
            steps[std::size_t(i)].step = i + 1;
            steps[std::size_t(i)].step_time_s = times[i];
            steps[std::size_t(i)].tokens_per_s = 8 * 4096 / times[i] / 8;
            steps[std::size_t(i)].memory_GiB = memory[i];
        }
        const RunComparison c = compare_run(run, steps);
        QCOMPARE(c.prediction_source, std::string("plan"));
        const MetricComparison* st = c.find("step_time_s");
        QCOMPARE(st->measured.value(), 2.2);
        QCOMPARE(st->spread_low.value(), 2.0);
        QCOMPARE(st->spread_high.value(), 2.4);
        QCOMPARE(st->samples, 3);
        QCOMPARE(st->predicted.value(), 2.0);
        QVERIFY(std::abs(st->error().value() - 0.1) < 1e-12);
        QCOMPARE(c.find("tokens_per_s_per_gpu")->predicted.value(), 1000.0); // 8000 over 2*2*2 GPUs
        QCOMPARE(c.find("memory_GiB")->measured.value(), 70.0);
        QCOMPARE(c.find("memory_GiB")->predicted.value(), 60.0);
        QVERIFY(!c.find("power_W")->measured.has_value());
        QCOMPARE(c.find("power_W")->predicted.value(), 600.0);
        // A probe run is compared with the prediction of what the probe trained.
        run.framework = "probe";
        run.workload_prediction_json = "{\"step_time_s\":1.1}";
        QCOMPARE(compare_run(run, steps).prediction_source, std::string("workload"));
        QCOMPARE(compare_run(run, steps).find("step_time_s")->predicted.value(), 1.1);
        // CPU ranks: measured only.
        p.gpu_type = "cpu";
        run.profile_json = profile_to_json(p).dump();
        const RunComparison cpu = compare_run(run, steps);
        QCOMPARE(cpu.prediction_source, std::string("none"));
        QVERIFY(!cpu.find("step_time_s")->predicted.has_value());
        QCOMPARE(cpu.find("step_time_s")->measured.value(), 2.2);
    }

    // --- the GUI's prompt bridge ----------------------------------------------------------------------
    void promptBridgeAnswersAcrossThreads()
    {
        PromptBridge bridge;
        QSignalSpy host_spy(&bridge, &PromptBridge::host_key_question);
        QSignalSpy pass_spy(&bridge, &PromptBridge::passphrase_requested);
        // The GUI side: answers when asked, on this (the bridge's) thread.
        connect(&bridge, &PromptBridge::host_key_question, &bridge,
            [&](quint64 id, QString, QString, QString fingerprint, QString) {
                bridge.answer_host_key(id, fingerprint == QLatin1String("SHA256:good"));
            });
        connect(&bridge, &PromptBridge::passphrase_requested, &bridge,
            [&](quint64 id, QString) { bridge.answer_passphrase(id, QStringLiteral("pw"), true); });
        HostKeyInfo good;
        good.host = "[h]:22";
        good.fingerprint = "SHA256:good";
        HostKeyInfo bad = good;
        bad.fingerprint = "SHA256:bad";
        auto asked = std::async(std::launch::async, [&] {
            const bool a = bridge.confirm_unknown_host(good);
            const bool b = bridge.confirm_unknown_host(bad);
            const auto p = bridge.key_passphrase("/k");
            return std::make_tuple(a, b, p.has_value() && std::string(p->c_str()) == "pw");
        });
        QTRY_VERIFY_WITH_TIMEOUT(asked.wait_for(std::chrono::milliseconds(0)) == std::future_status::ready, 10000);
        const auto [a, b, p] = asked.get();
        QVERIFY(a);
        QVERIFY(!b);
        QVERIFY(p);
        QCOMPARE(host_spy.count(), 2);
        QCOMPARE(pass_spy.count(), 1);
        // On its own thread the bridge refuses instead of waiting for itself.
        QVERIFY(!bridge.confirm_unknown_host(good));
        // Nobody answers: the worker is released with "no" after the timeout, or at once by cancel_all().
        PromptBridge silent;
        silent.set_answer_timeout(std::chrono::milliseconds(100));
        auto unanswered = std::async(std::launch::async, [&] { return silent.confirm_unknown_host(good); });
        QVERIFY(!unanswered.get());
        PromptBridge cancelled;
        QSignalSpy asked_spy(&cancelled, &PromptBridge::host_key_question);
        auto waiting = std::async(std::launch::async, [&] { return cancelled.confirm_unknown_host(good); });
        QTRY_COMPARE_WITH_TIMEOUT(asked_spy.count(), 1, 10000);
        cancelled.cancel_all();
        QVERIFY(!waiting.get());
        // After refuse_all() (shutdown) nothing waits at all, even with nobody ever answering.
        PromptBridge closing;
        closing.refuse_all();
        const auto start = std::chrono::steady_clock::now();
        auto refused = std::async(std::launch::async, [&] { return closing.confirm_unknown_host(good); });
        QVERIFY(!refused.get());
        QVERIFY(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
    }
};

QTEST_GUILESS_MAIN(TestRemoteUnits)
#include "tst_remote_units.moc"

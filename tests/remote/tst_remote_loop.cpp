// The whole remote loop against real servers on 127.0.0.1, started and stopped by this test: OpenSSH and a
// single-node SLURM (munged + slurmctld + slurmd). The built-in probe is dispatched through libssh as an
// sbatch job, runs with 2 CPU ranks (gloo) under srun, is polled, its log streamed into the SQLite run store
// and parsed; the stored measurement must be a real positive step time. Then the hard cases: the SSH server
// killed mid-job (reconnect, nothing lost), a job cancelled (state confirmed by SLURM), a restart
// (re-attach by run id), hostile profile values (no injection), the direct launcher (torchrun over SSH),
// refusals (unknown/changed host key, wrong key) and the CLI (`run --wait`, `runs --json`, `run --out`).
#include "local_cluster.hpp"
#include "loopback_run.hpp"

#include "cluster/cluster_profile.hpp"
#include "cluster/profile_store.hpp"
#include "jobs/job_bundle.hpp"
#include "jobs/shell_quote.hpp"
#include "runs/remote_runner.hpp"
#include "runs/run_report.hpp"
#include "store/run_store.hpp"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <cmath>

using namespace parallax;
using namespace parallax::remote;
using namespace parallax::test;

class TestRemoteLoop : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_tmp;
    std::unique_ptr<LocalSshServer> m_ssh;
    std::unique_ptr<LocalSlurm> m_slurm;
    QString m_store;

    ClusterProfile profile(const QString& name = QStringLiteral("loopback")) const
    {
        return loopback_slurm_profile(*m_ssh, *m_slurm, m_tmp.path(), name);
    }

    static RunRequest request(int steps, const ClusterProfile& p) { return tiny_probe_request(steps, p); }

    std::shared_ptr<SshInteraction> trusting() const
    {
        // As `parallax-cli run --accept-host-key SHA256:...`: exactly this server's key, nothing else.
        return std::make_shared<NonInteractive>(str(m_ssh->host_fingerprint()));
    }

    std::unique_ptr<RemoteRunner> runner() const
    {
        auto r = std::make_unique<RemoteRunner>(m_store, trusting());
        r->set_reconnect_policy({ std::chrono::milliseconds(200), std::chrono::milliseconds(1000) });
        return r;
    }

    // Stored run, log, steps: checks that hold for every probe run that completed.
    void verify_completed_probe_run(const QString& run_id, int steps)
    {
        RunStore store(m_store);
        const auto run = store.get(str(run_id));
        QVERIFY(run.has_value());
        QCOMPARE(run->state, RunState::completed);
        QVERIFY(!run->job_id.empty());
        QCOMPARE(run->exit_code.value_or(-1), 0);
        // The store holds the log byte for byte as the cluster wrote it.
        const QByteArray on_disk = read_file(QString::fromStdString(run->log_path));
        QVERIFY2(!on_disk.isEmpty(), run->log_path.c_str());
        QCOMPARE(run->log_bytes, std::int64_t(on_disk.size()));
        QCOMPARE(QByteArray::fromStdString(store.log(run->id)), on_disk);
        // Every step, once, with a real positive time.
        const auto stored = store.steps(run->id);
        QCOMPARE(int(stored.size()), steps);
        for (int i = 0; i < steps; ++i) {
            QCOMPARE(stored[std::size_t(i)].step, std::int64_t(i + 1));
            QVERIFY(stored[std::size_t(i)].step_time_s.has_value());
            QVERIFY(*stored[std::size_t(i)].step_time_s > 0 && std::isfinite(*stored[std::size_t(i)].step_time_s));
        }
        const auto summary = nlohmann::json::parse(run->summary_json);
        QVERIFY(summary["step_time_s"].get<double>() > 0);
        QCOMPARE(summary["probe_exit"].get<std::string>(), std::string("ok"));
        QCOMPARE(run->log_format, std::string("probe"));
        QVERIFY(!run->prediction_json.empty()); // predicted at dispatch
        QVERIFY(nlohmann::json::parse(run->prediction_json)["step_time_s"].get<double>() > 0);
        QVERIFY(!run->workload_prediction_json.empty());
        QVERIFY(run->run_info_json.find("\"backend\":\"gloo\"") != std::string::npos);
        QVERIFY(!store.benches(run->id).empty());
        // The history ends in completed, after running, and no failure on the way.
        const auto t = store.transitions(run->id);
        QVERIFY(t.size() >= 3);
        QCOMPARE(t.front().state, RunState::created);
        QCOMPARE(t.back().state, RunState::completed);
        for (const auto& tr : t)
            QVERIFY2(tr.state != RunState::failed, tr.detail.c_str());
        std::string history;
        for (const auto& tr : t)
            history += tr.at + " " + std::string(to_string(tr.state)) + ": " + tr.detail + "\n";
        QVERIFY2(std::any_of(t.begin(), t.end(), [](const StateTransition& x) { return x.state == RunState::running; }),
            history.c_str());
        // CPU ranks are measured, not compared with the plan's GPU prediction (which is stored all the same).
        const RunComparison cmp = compare_run(*run, stored);
        QVERIFY(cmp.find("step_time_s")->measured.value_or(0) > 0);
        QCOMPARE(cmp.prediction_source, std::string("none"));
        QVERIFY(!cmp.find("step_time_s")->predicted.has_value());
    }

private Q_SLOTS:
    void initTestCase()
    {
        if (!running_as_root()) {
            // SlurmUser=root and the SSH login as the test's user need root; CI runs as root.
            if (qEnvironmentVariableIsSet("CI"))
                QFAIL("the remote loop test must run as root in CI");
            QSKIP("needs root (a local SLURM controller); CI runs it as root");
        }
        QVERIFY(m_tmp.isValid());
        m_store = m_tmp.filePath(QStringLiteral("runs.sqlite"));
        QString error;
        QVERIFY2(start_loopback_cluster(m_tmp.path(), m_ssh, m_slurm, &error), qPrintable(error));
    }

    void cleanupTestCase()
    {
        m_slurm.reset(); // cancels leftover jobs, stops the daemons by PID
        m_ssh.reset();
    }

    void probeRunsThroughSlurmEndToEnd()
    {
        auto r = runner();
        RunRecorder rec(*r);
        QElapsedTimer clock;
        clock.start();
        r->dispatch(request(4, profile()));
        QTRY_VERIFY2_WITH_TIMEOUT(rec.finished.count() == 1 || !rec.dispatch_failed.isEmpty() || !rec.errors.isEmpty(),
            qPrintable(rec.problems()), kLoopbackRunTimeoutMs);
        QVERIFY2(rec.errors.isEmpty(), qPrintable(rec.problems()));
        const double elapsed_s = clock.elapsed() / 1000.0;
        QVERIFY2(rec.dispatch_failed.isEmpty(), qPrintable(rec.problems()));
        QCOMPARE(state_text(rec.finished.first().at(1)), QStringLiteral("completed"));
        const QString id = rec.run_id();
        QVERIFY(!id.isEmpty());
        QCOMPARE(rec.created.count(), 1);
        QCOMPARE(rec.created.first().at(0).toString(), id);
        // Signals arrived on this (the GUI) thread as the run went: states, streamed log, measurements.
        QVERIFY(rec.saw_state(QStringLiteral("submitted")));
        QVERIFY(rec.saw_state(QStringLiteral("running")) || rec.saw_state(QStringLiteral("completed")));
        QVERIFY(!rec.logs.isEmpty());
        QVERIFY(!rec.measurements.isEmpty());
        QVERIFY(rec.errors.isEmpty());
        verify_completed_probe_run(id, 4);
        // SLURM agrees.
        RunStore store(m_store);
        const auto run = store.get(str(id));
        QByteArray out;
        m_slurm->client(QStringLiteral("scontrol"),
            { QStringLiteral("show"), QStringLiteral("job"), QStringLiteral("-o"),
                QString::fromStdString(run->job_id) },
            &out);
        QVERIFY2(out.contains("JobState=COMPLETED"), out.constData());
        QVERIFY2(out.contains(QByteArray::fromStdString("Comment=parallax-run:" + run->id)), out.constData());
        QVERIFY2(out.contains(QByteArray::fromStdString("JobName=parallax-" + run->id)), out.constData());
        const auto t = store.transitions(run->id);
        qInfo("dispatch to parsed, stored result: %.1f s (SLURM job %s; first transition %s, last %s)", elapsed_s,
            run->job_id.c_str(), t.front().at.c_str(), t.back().at.c_str());
        qInfo("%s", run_summary_text(store, *run).c_str());
    }

    void serverKilledMidJobReconnectsWithoutLosingRecords()
    {
        constexpr int kSteps = 120; // long enough to still run when the server is back
        auto r = runner();
        RunRecorder rec(*r);
        r->dispatch(request(kSteps, profile()));
        // Kill sshd (listener and every connection) once the probe's first steps have been streamed.
        QTRY_VERIFY2_WITH_TIMEOUT(!rec.measurements.isEmpty() || rec.finished.count() == 1, qPrintable(rec.problems()),
            kLoopbackRunTimeoutMs);
        const QString id = rec.run_id();
        QVERIFY(!id.isEmpty());
        QVERIFY2(rec.finished.isEmpty(), "the job ended before the server could be killed; make it longer");
        std::int64_t bytes_before = 0;
        {
            RunStore store(m_store);
            bytes_before = store.get(str(id))->log_bytes;
        }
        m_ssh->stop();
        QTRY_VERIFY_WITH_TIMEOUT(rec.saw_connection(QStringLiteral("lost")), 30000);
        QTest::qWait(2500); // down for a while: polls fail and back off, the job keeps running on the cluster
        QString error;
        QVERIFY2(m_ssh->start(&error), qPrintable(error));
        QTRY_VERIFY2_WITH_TIMEOUT(rec.finished.count() == 1, qPrintable(rec.problems()), kLoopbackRunTimeoutMs);
        QCOMPARE(state_text(rec.finished.first().at(1)), QStringLiteral("completed"));
        int reconnected = 0;
        for (const auto& a : rec.connection)
            reconnected += a.at(1).toString() == QLatin1String("connected")
                && a.at(2).toString().startsWith(QLatin1String("reconnected"));
        QVERIFY2(reconnected >= 1, qPrintable(rec.problems()));
        verify_completed_probe_run(id, kSteps);
        RunStore store(m_store);
        QVERIFY(store.get(str(id))->log_bytes > bytes_before);
    }

    void cancelledJobIsConfirmedAfterReattach()
    {
        QString id;
        {
            // The first "app" dispatches a long run and quits while it is running.
            auto r = runner();
            RunRecorder rec(*r);
            r->dispatch(request(100000, profile()));
            QTRY_VERIFY2_WITH_TIMEOUT(rec.saw_state(QStringLiteral("running")) || rec.finished.count() == 1,
                qPrintable(rec.problems()), kLoopbackRunTimeoutMs);
            QVERIFY2(rec.finished.isEmpty(), qPrintable(rec.problems()));
            id = rec.run_id();
            r->shutdown();
        }
        // The next "app" finds it unfinished in the store, re-attaches by run id and cancels it.
        auto r = runner();
        RunRecorder rec(*r);
        QCOMPARE(r->attach_active(), 1);
        QTRY_VERIFY_WITH_TIMEOUT(!rec.states.isEmpty() || !rec.logs.isEmpty(), 60000);
        r->cancel(id);
        QTRY_VERIFY2_WITH_TIMEOUT(rec.finished.count() == 1, qPrintable(rec.problems()), 120000);
        QCOMPARE(state_text(rec.finished.first().at(1)), QStringLiteral("cancelled"));
        QVERIFY2(
            rec.finished.first().at(2).toString().contains(QStringLiteral("CANCELLED")), qPrintable(rec.problems()));
        RunStore store(m_store);
        const auto run = store.get(str(id));
        QCOMPARE(run->state, RunState::cancelled);
        const auto t = store.transitions(run->id);
        QVERIFY(
            std::any_of(t.begin(), t.end(), [](const StateTransition& x) { return x.state == RunState::cancelling; }));
        QByteArray out;
        m_slurm->client(QStringLiteral("squeue"),
            { QStringLiteral("-h"), QStringLiteral("-t"), QStringLiteral("all"), QStringLiteral("-j"),
                QString::fromStdString(run->job_id), QStringLiteral("-o"), QStringLiteral("%T") },
            &out);
        QVERIFY2(out.trimmed().startsWith("CANCELLED"), out.constData());
        // The log streamed before the cancel is kept.
        QVERIFY(run->log_bytes > 0);
    }

    void hostileProfileValuesCannotInject()
    {
        const QString marker = m_tmp.filePath(QStringLiteral("pwned"));
        const std::string m = str(marker);
        auto r = runner();
        {
            // sbatch options: the partition reaches sbatch as one literal argument and is refused as such.
            RunRecorder rec(*r);
            ClusterProfile p = profile();
            p.partition = "debug'; touch " + m + "; echo '";
            p.account = "$(touch " + m + ")";
            p.qos = "`touch " + m + "`";
            p.login_shell = false; // the plain `bash -c` path
            r->dispatch(request(3, p));
            QTRY_VERIFY2_WITH_TIMEOUT(
                rec.finished.count() == 1 || !rec.dispatch_failed.isEmpty() || !rec.errors.isEmpty(),
                qPrintable(rec.problems()), 120000);
            QVERIFY2(rec.errors.isEmpty(), qPrintable(rec.problems()));
            QVERIFY2(rec.dispatch_failed.isEmpty(), qPrintable(rec.problems()));
            QCOMPARE(state_text(rec.finished.first().at(1)), QStringLiteral("failed"));
            const QString detail = rec.finished.first().at(2).toString();
            QVERIFY2(detail.contains(QStringLiteral("sbatch refused")), qPrintable(detail));
            QVERIFY2(detail.contains(QString::fromStdString(p.partition))
                    || detail.contains(QString::fromStdString(p.account))
                    || detail.contains(QString::fromStdString(p.qos)),
                qPrintable(detail));
            QVERIFY(!QFileInfo::exists(marker));
        }
        {
            // Values that are valid but hostile-looking: a run folder with quotes, $() and backticks, an
            // environment value with command substitution. The job runs normally and nothing executes.
            RunRecorder rec(*r);
            ClusterProfile p = profile();
            p.work_dir = str(m_tmp.filePath(QStringLiteral("cluster-home"))) + "/it's $(touch " + m + ") `touch " + m
                + "` dir";
            p.env["PARALLAX_TEST_EVIL"] = "$(touch " + m + ")`touch " + m + "`'\"";
            r->dispatch(request(3, p));
            QTRY_VERIFY2_WITH_TIMEOUT(
                rec.finished.count() == 1 || !rec.dispatch_failed.isEmpty() || !rec.errors.isEmpty(),
                qPrintable(rec.problems()), kLoopbackRunTimeoutMs);
            QVERIFY2(rec.errors.isEmpty(), qPrintable(rec.problems()));
            QVERIFY2(rec.dispatch_failed.isEmpty(), qPrintable(rec.problems()));
            QCOMPARE(state_text(rec.finished.first().at(1)), QStringLiteral("completed"));
            verify_completed_probe_run(rec.run_id(), 3);
            RunStore store(m_store);
            const auto run = store.get(str(rec.run_id()));
            QVERIFY2(run->remote_dir.find("it's $(touch") != std::string::npos, run->remote_dir.c_str());
            QVERIFY(QFileInfo::exists(QString::fromStdString(run->remote_dir) + QStringLiteral("/job.sh")));
            // The environment's values (SLURM_CONF made the submission and every poll work) live only in the
            // run folder's owner-only env.sh: not in the store, the scripts, plan.json or the submit command.
            const std::string value = p.env["PARALLAX_TEST_EVIL"];
            const QString env_file = QString::fromStdString(run->remote_dir) + QStringLiteral("/env.sh");
            QCOMPARE(QFile::permissions(env_file) & 0x0077, QFileDevice::Permissions());
            QFile env_text(env_file);
            QVERIFY(env_text.open(QIODevice::ReadOnly));
            QVERIFY(env_text.readAll().contains(QByteArray::fromStdString(shell_quote(value))));
            for (const std::string* text :
                { &run->profile_json, &run->plan_json, &run->script, &run->submit_command, &run->scenario_json })
                QVERIFY2(text->find(value) == std::string::npos, text->c_str());
            for (const StoredFile& f : store.files(run->id))
                QVERIFY2(f.content.find(value) == std::string::npos, f.name.c_str());
            QVERIFY(run->profile_json.find("PARALLAX_TEST_EVIL") != std::string::npos);
        }
        QVERIFY2(!QFileInfo::exists(marker), "a profile value was executed");
    }

    void directLauncherRunsTorchrunOverSsh()
    {
        auto r = runner();
        RunRecorder rec(*r);
        ClusterProfile p = profile(QStringLiteral("direct"));
        p.launcher = LauncherKind::direct;
        p.hosts = { "127.0.0.1" };
        p.gpus_per_node = 2;
        r->dispatch(request(3, p));
        QTRY_VERIFY2_WITH_TIMEOUT(rec.finished.count() == 1 || !rec.dispatch_failed.isEmpty() || !rec.errors.isEmpty(),
            qPrintable(rec.problems()), kLoopbackRunTimeoutMs);
        QVERIFY2(rec.errors.isEmpty(), qPrintable(rec.problems()));
        QVERIFY2(rec.dispatch_failed.isEmpty(), qPrintable(rec.problems()));
        QCOMPARE(state_text(rec.finished.first().at(1)), QStringLiteral("completed"));
        verify_completed_probe_run(rec.run_id(), 3);
        RunStore store(m_store);
        const auto run = store.get(str(rec.run_id()));
        QCOMPARE(run->launcher, std::string("direct"));
        QVERIFY(run->job_id.rfind("127.0.0.1:", 0) == 0);
        QVERIFY(run->log_path.find("node0.log") != std::string::npos);
        QVERIFY(store.log(run->id).find("[default0]:PARALLAX_PROBE") != std::string::npos); // torchrun's tee prefix
    }

    void refusalsAreCleanErrors()
    {
        const std::size_t runs_before = RunStore(m_store).list().size();
        {
            // Unknown host key and nobody to ask: refused, with the fingerprint to check.
            auto r = std::make_unique<RemoteRunner>(m_store, std::make_shared<NonInteractive>());
            RunRecorder rec(*r);
            ClusterProfile p = profile();
            p.known_hosts = str(m_tmp.filePath(QStringLiteral("fresh_known_hosts")));
            r->dispatch(request(3, p));
            QTRY_COMPARE_WITH_TIMEOUT(rec.dispatch_failed.count(), 1, 60000);
            const QString msg = rec.dispatch_failed.first().at(0).toString();
            QVERIFY2(msg.contains(m_ssh->host_fingerprint()), qPrintable(msg));
            QVERIFY2(msg.contains(QStringLiteral("not accepted")), qPrintable(msg));
        }
        {
            auto r = runner();
            RunRecorder rec(*r);
            ClusterProfile p = profile();
            p.key_file = str(m_ssh->make_key(QStringLiteral("not_authorized")));
            r->dispatch(request(3, p));
            QTRY_COMPARE_WITH_TIMEOUT(rec.dispatch_failed.count(), 1, 60000);
            QVERIFY2(rec.dispatch_failed.first().at(0).toString().contains(QStringLiteral("authentication failed")),
                qPrintable(rec.dispatch_failed.first().at(0).toString()));
        }
        {
            // A known_hosts that holds another key for this host: refused with both fingerprints.
            const QString other = m_ssh->make_key(QStringLiteral("impostor_key"));
            const QString kh = m_tmp.filePath(QStringLiteral("changed_known_hosts"));
            QFile f(kh);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(m_ssh->known_hosts_line(other + QStringLiteral(".pub")).toUtf8() + "\n");
            f.close();
            auto r = runner();
            RunRecorder rec(*r);
            ClusterProfile p = profile();
            p.known_hosts = str(kh);
            r->dispatch(request(3, p));
            QTRY_COMPARE_WITH_TIMEOUT(rec.dispatch_failed.count(), 1, 60000);
            const QString msg = rec.dispatch_failed.first().at(0).toString();
            QVERIFY2(msg.contains(QStringLiteral("CHANGED")), qPrintable(msg));
            QVERIFY2(msg.contains(m_ssh->host_fingerprint()), qPrintable(msg));
            QByteArray fp;
            run_program(QStringLiteral("ssh-keygen"), { QStringLiteral("-lf"), other + QStringLiteral(".pub") }, &fp);
            QVERIFY2(msg.contains(QString::fromLatin1(fp.split(' ').value(1))), qPrintable(msg));
        }
        // None of these reached the store: a run is stored only once the cluster has been reached.
        QCOMPARE(RunStore(m_store).list().size(), runs_before);
    }

    void cliRunWaitAndRuns()
    {
        const QString profile_file = m_tmp.filePath(QStringLiteral("cluster.json"));
        {
            ClusterProfile p = profile(QStringLiteral("cli"));
            QFile f(profile_file);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(QByteArray::fromStdString(profile_to_json(p).dump(2)));
        }
        const QString store = m_tmp.filePath(QStringLiteral("cli.sqlite"));
        const QString scenario = QStringLiteral(PARALLAX_SOURCE_DIR "/tests/remote/data/tiny_probe_scenario.json");
        QByteArray out;
        QByteArray err;
        // Review first: the job's files, written locally, nothing sent.
        const QString review = m_tmp.filePath(QStringLiteral("review"));
        QCOMPARE(run_program(QStringLiteral(PARALLAX_CLI_PATH),
                     { QStringLiteral("run"), scenario, QStringLiteral("--cluster"), profile_file,
                         QStringLiteral("--out"), review },
                     &out, &err),
            0);
        QVERIFY(QFileInfo::exists(review + QStringLiteral("/job.sh")));
        QVERIFY(QFileInfo::exists(review + QStringLiteral("/parallax_probe.py")));
        // An edit the user made while reviewing travels with the job.
        {
            QFile plan(review + QStringLiteral("/probe_plan.json"));
            QVERIFY(plan.open(QIODevice::ReadOnly));
            auto j = nlohmann::json::parse(plan.readAll().toStdString());
            plan.close();
            j["training"]["steps"] = 3;
            QVERIFY(plan.open(QIODevice::WriteOnly | QIODevice::Truncate));
            plan.write(QByteArray::fromStdString(j.dump(2)));
        }
        const int rc = run_program(QStringLiteral(PARALLAX_CLI_PATH),
            { QStringLiteral("run"), QStringLiteral("--cluster"), profile_file, QStringLiteral("--from"), review,
                QStringLiteral("--wait"), QStringLiteral("--store"), store, QStringLiteral("--accept-host-key"),
                m_ssh->host_fingerprint() },
            &out, &err, QProcessEnvironment::systemEnvironment(), kLoopbackRunTimeoutMs);
        QVERIFY2(rc == 0, QByteArray(out + err).constData());
        qInfo("parallax-cli run --wait, stderr:\n%s\nstdout:\n%s", err.constData(), out.constData());
        QVERIFY2(out.contains("completed"), out.constData());
        QVERIFY2(out.contains("step time"), out.constData());
        QVERIFY2(err.contains("step 3:"), err.constData());
        QCOMPARE(
            run_program(QStringLiteral(PARALLAX_CLI_PATH),
                { QStringLiteral("runs"), QStringLiteral("--store"), store, QStringLiteral("--json") }, &out, &err),
            0);
        const auto j = nlohmann::json::parse(out.toStdString());
        QCOMPARE(j["schema"].get<int>(), 1);
        QCOMPARE(j["runs"].size(), std::size_t(1));
        const auto& run = j["runs"][0];
        QCOMPARE(run["state"].get<std::string>(), std::string("completed"));
        QCOMPARE(run["framework"].get<std::string>(), std::string("probe"));
        QCOMPARE(run["summary"]["steps"].get<int>(), 3); // the edited plan ran
        QVERIFY(run["comparison"]["step_time_s"]["measured"].get<double>() > 0);
        QCOMPARE(run["comparison"]["prediction"].get<std::string>(), std::string("none")); // CPU ranks
        QVERIFY(run["comparison"]["why"].get<std::string>().find("CPU") != std::string::npos);
        const std::string id = run["id"].get<std::string>();
        QCOMPARE(run_program(QStringLiteral(PARALLAX_CLI_PATH),
                     { QStringLiteral("runs"), QString::fromStdString(id), QStringLiteral("--store"), store,
                         QStringLiteral("--json") },
                     &out, &err),
            0);
        const auto detail = nlohmann::json::parse(out.toStdString());
        QCOMPARE(detail["steps"].size(), std::size_t(3));
        QVERIFY(detail["notes"].dump().find("edited by the user before sending: probe_plan.json") != std::string::npos);
        QCOMPARE(run_program(QStringLiteral(PARALLAX_CLI_PATH),
                     { QStringLiteral("runs"), QStringLiteral("--store"), store }, &out, &err),
            0);
        QVERIFY(out.contains(QByteArray::fromStdString(id)));
        // Without --wait: back once submitted, with the run id; --attach follows it to the end later.
        const QString store2 = m_tmp.filePath(QStringLiteral("cli2.sqlite"));
        QCOMPARE(run_program(QStringLiteral(PARALLAX_CLI_PATH),
                     { QStringLiteral("run"), scenario, QStringLiteral("--cluster"), profile_file,
                         QStringLiteral("--steps"), QStringLiteral("3"), QStringLiteral("--store"), store2,
                         QStringLiteral("--accept-host-key"), m_ssh->host_fingerprint() },
                     &out, &err, QProcessEnvironment::systemEnvironment(), kLoopbackRunTimeoutMs),
            0);
        const QString submitted_id = QString::fromUtf8(out.trimmed());
        QVERIFY2(valid_run_id(submitted_id.toStdString()), QByteArray(out + err).constData());
        QVERIFY2(err.contains("follow it with: parallax-cli run --attach"), err.constData());
        QCOMPARE(run_program(QStringLiteral(PARALLAX_CLI_PATH),
                     { QStringLiteral("run"), QStringLiteral("--attach"), submitted_id, QStringLiteral("--store"),
                         store2, QStringLiteral("--json") },
                     &out, &err, QProcessEnvironment::systemEnvironment(), kLoopbackRunTimeoutMs),
            0);
        const auto attached = nlohmann::json::parse(out.toStdString());
        QCOMPARE(attached["state"].get<std::string>(), std::string("completed"));
        QCOMPARE(attached["steps"].size(), std::size_t(3));
        // A profile stored in the settings is found by its name (QSettings under $XDG_CONFIG_HOME).
        const QString xdg = m_tmp.filePath(QStringLiteral("xdg"));
        ProfileStore(xdg + QStringLiteral("/Parallax/parallax.conf")).save(profile(QStringLiteral("stored")));
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("XDG_CONFIG_HOME"), xdg);
        QCOMPARE(run_program(QStringLiteral(PARALLAX_CLI_PATH),
                     { QStringLiteral("run"), scenario, QStringLiteral("--cluster"), QStringLiteral("stored"),
                         QStringLiteral("--out"), m_tmp.filePath(QStringLiteral("review2")) },
                     &out, &err, env),
            0);
        QVERIFY(QFileInfo::exists(m_tmp.filePath(QStringLiteral("review2/job.sh"))));
        QCOMPARE(run_program(QStringLiteral(PARALLAX_CLI_PATH),
                     { QStringLiteral("run"), scenario, QStringLiteral("--cluster"), QStringLiteral("nosuch"),
                         QStringLiteral("--out"), m_tmp.filePath(QStringLiteral("review3")) },
                     &out, &err, env),
            2);
        QVERIFY2(err.contains("stored: stored"), err.constData());
        // Sending the same reviewed job twice is refused: follow it instead.
        QCOMPARE(run_program(QStringLiteral(PARALLAX_CLI_PATH),
                     { QStringLiteral("run"), QStringLiteral("--cluster"), profile_file, QStringLiteral("--from"),
                         review, QStringLiteral("--store"), store },
                     &out, &err),
            2);
    }
};

QTEST_GUILESS_MAIN(TestRemoteLoop)
#include "tst_remote_loop.moc"

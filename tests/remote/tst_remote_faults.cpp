// Faults injected into a real run on the loopback cluster (OpenSSH + single-node SLURM on 127.0.0.1, see
// local_cluster.hpp): the SLURM controller down mid-run, sshd and the app killed mid-run and
// started again, a requeued job, a full and a read-only remote disk. Each run is the built-in probe with
// 2 CPU ranks; what must hold is what a user relies on: the run ends in its true state, every step is
// stored once, the stored log is the cluster's file byte for byte, no job is submitted twice, errors say
// what failed and where.
#include "local_cluster.hpp"
#include "loopback_run.hpp"

#include "jobs/job_bundle.hpp"
#include "runs/remote_runner.hpp"
#include "store/run_store.hpp"

#include <QDir>
#include <QScopeGuard>
#include <QTemporaryDir>
#include <QTest>

#include <utility>

using namespace parallax;
using namespace parallax::remote;
using namespace parallax::test;

class TestRemoteFaults : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_tmp;
    std::unique_ptr<LocalSshServer> m_ssh;
    std::unique_ptr<LocalSlurm> m_slurm;
    QString m_store;

    ClusterProfile profile() const { return loopback_slurm_profile(*m_ssh, *m_slurm, m_tmp.path()); }

    static RunRequest request(int steps, const ClusterProfile& p) { return tiny_probe_request(steps, p); }

    std::unique_ptr<RemoteRunner> runner() const
    {
        auto r
            = std::make_unique<RemoteRunner>(m_store, std::make_shared<NonInteractive>(str(m_ssh->host_fingerprint())));
        r->set_reconnect_policy({ std::chrono::milliseconds(200), std::chrono::milliseconds(1000) });
        return r;
    }

    // Completed, exit 0, the log as on disk, every step once with a positive time.
    void verify_completed(const QString& run_id, int steps)
    {
        RunStore store(m_store);
        const auto run = store.get(str(run_id));
        QVERIFY(run.has_value());
        QCOMPARE(run->state, RunState::completed);
        QCOMPARE(run->exit_code.value_or(-1), 0);
        const QByteArray on_disk = read_file(QString::fromStdString(run->log_path));
        QVERIFY2(!on_disk.isEmpty(), run->log_path.c_str());
        QCOMPARE(QByteArray::fromStdString(store.log(run->id)), on_disk);
        QCOMPARE(run->log_bytes, std::int64_t(on_disk.size()));
        const auto stored = store.steps(run->id);
        QCOMPARE(int(stored.size()), steps);
        for (int i = 0; i < steps; ++i) {
            QCOMPARE(stored[std::size_t(i)].step, std::int64_t(i + 1));
            QVERIFY(stored[std::size_t(i)].step_time_s.value_or(0) > 0);
        }
    }

    // What a wrong end is explained by: the runner's states, the daemons' logs and the end of the job's own log.
    QString why_it_ended(const RunRecorder& rec, const QString& run_id) const
    {
        constexpr int kDaemonLogTailBytes = 1500;
        constexpr qsizetype kJobLogTailChars = 1500;
        return rec.problems() + m_slurm->controller_log_tail(kDaemonLogTailBytes) + QStringLiteral("job.log: ")
            + QString::fromStdString(RunStore(m_store).log(str(run_id))).right(kJobLogTailChars);
    }

    // The SLURM jobs that carry this run's name (squeue -t all: finished ones too).
    int jobs_named_after(const QString& run_id) const
    {
        QByteArray out;
        m_slurm->client(QStringLiteral("squeue"),
            { QStringLiteral("-h"), QStringLiteral("-t"), QStringLiteral("all"),
                QStringLiteral("--name=parallax-") + run_id, QStringLiteral("-o"), QStringLiteral("%i") },
            &out);
        return int(out.trimmed().isEmpty() ? 0 : out.trimmed().split('\n').size());
    }

    QString job_of(const QString& run_id) const
    {
        RunStore store(m_store);
        return QString::fromStdString(store.get(str(run_id))->job_id);
    }

private Q_SLOTS:
    void initTestCase()
    {
        if (!running_as_root()) {
            if (qEnvironmentVariableIsSet("CI"))
                QFAIL("the fault-injection tests must run as root in CI");
            QSKIP("needs root (a local SLURM controller, tmpfs mounts); CI runs it as root");
        }
        QVERIFY(m_tmp.isValid());
        m_store = m_tmp.filePath(QStringLiteral("runs.sqlite"));
        QString error;
        QVERIFY2(start_loopback_cluster(m_tmp.path(), m_ssh, m_slurm, &error), qPrintable(error));
    }

    void cleanupTestCase()
    {
        m_slurm.reset();
        m_ssh.reset();
    }

    void controllerOutageDuringARun()
    {
        // The outage ends a few polls after the runner first heard "cannot contact", not after a fixed time: the
        // probe's steps last 0.05-0.5 s with the load, so a fixed outage let the job end before, during or after
        // it by chance. What is tested is a run that goes on through the outage, so the job outlives it.
        constexpr int kSteps = 300;
        constexpr int kFirstNoAnswerMs = 30000;
        constexpr int kMorePollsMs = 5000; // the poll interval is at most 1 s, each unanswered poll ~2 s
        ClusterProfile p = profile();
        p.env["SLURM_CONF"] = str(m_slurm->client_conf(2)); // each poll hears "cannot contact" within seconds
        auto r = runner();
        RunRecorder rec(*r);
        r->dispatch(request(kSteps, p));
        // The outage starts once the probe has stored a step: before that the job may still be creating its
        // srun step, which needs the controller ("Unable to confirm allocation"), and its own first log lines
        // (job.sh's header) come before srun.
        QTRY_VERIFY2_WITH_TIMEOUT(
            rec.ended() || (!rec.run_id().isEmpty() && !RunStore(m_store).steps(str(rec.run_id())).empty()),
            qPrintable(rec.problems()), kLoopbackRunTimeoutMs);
        QVERIFY2(!rec.ended(), qPrintable(QStringLiteral("ended before the outage: ") + rec.problems()));
        const QString id = rec.run_id();
        m_slurm->stop_controller();
        // Polls go on while slurmctld is down: none of them may end the run.
        QTRY_VERIFY_WITH_TIMEOUT(rec.saw_detail(QStringLiteral("did not answer")) || rec.ended(), kFirstNoAnswerMs);
        QTest::qWait(kMorePollsMs);
        const bool ended_during_outage = rec.ended();
        const auto steps_at_restart = RunStore(m_store).steps(str(id)).size();
        QString error;
        QVERIFY2(m_slurm->start_controller(&error), qPrintable(error));
        QVERIFY2(!ended_during_outage, qPrintable(rec.problems()));
        QVERIFY2(rec.saw_detail(QStringLiteral("did not answer")), qPrintable(rec.problems()));
        QVERIFY2(steps_at_restart < std::size_t(kSteps),
            qPrintable(QStringLiteral("the job ended during the outage (%1 steps stored): make it longer")
                           .arg(steps_at_restart)));
        QTRY_VERIFY2_WITH_TIMEOUT(rec.ended(), qPrintable(rec.problems()), kLoopbackRunTimeoutMs);
        QVERIFY2(rec.errors.isEmpty(), qPrintable(rec.problems()));
        QVERIFY2(
            state_text(rec.finished.first().at(1)) == QStringLiteral("completed"), qPrintable(why_it_ended(rec, id)));
        verify_completed(id, kSteps);
        QCOMPARE(jobs_named_after(id), 1);
    }

    void requeuedJobLogIsNotSpliced()
    {
        constexpr int kSteps = 40;
        auto r = runner();
        RunRecorder rec(*r);
        r->dispatch(request(kSteps, profile()));
        QTRY_VERIFY2_WITH_TIMEOUT(
            !rec.measurements.isEmpty() || rec.ended(), qPrintable(rec.problems()), kLoopbackRunTimeoutMs);
        QVERIFY2(!rec.ended(), qPrintable(rec.problems()));
        const QString id = rec.run_id();
        // Let some steps be stored (their timings make the two logs differ where the first one ended; a
        // requeue before any step would restart an identical header, which is read on, not replaced), then
        // requeue: SLURM kills the job and starts it again, truncating job.log.
        QTRY_VERIFY_WITH_TIMEOUT(RunStore(m_store).steps(str(id)).size() >= 3 || rec.ended(), kLoopbackRunTimeoutMs);
        QVERIFY2(!rec.ended(), qPrintable(rec.problems()));
        QByteArray out;
        QByteArray err;
        QVERIFY2(
            m_slurm->client(QStringLiteral("scontrol"), { QStringLiteral("requeue"), job_of(id) }, &out, &err) == 0,
            QByteArray(out + err).constData());
        QTRY_VERIFY2_WITH_TIMEOUT(rec.ended(), qPrintable(rec.problems()), kLoopbackRunTimeoutMs);
        QVERIFY2(rec.errors.isEmpty(), qPrintable(rec.problems()));
        QCOMPARE(state_text(rec.finished.first().at(1)), QStringLiteral("completed"));
        verify_completed(id, kSteps);
        RunStore store(m_store);
        bool replaced = false;
        for (const auto& t : store.transitions(str(id)))
            replaced = replaced || t.detail.find("the log on the cluster was replaced") != std::string::npos;
        QVERIFY(replaced);
    }

    void sshdAndAppKilledMidRunReattach()
    {
        constexpr int kSteps = 60;
        // A store of its own: attach_active() resumes every unfinished run of the store.
        const QString store_path = m_tmp.filePath(QStringLiteral("reattach.sqlite"));
        const QString shared_store = std::exchange(m_store, store_path);
        const auto restore = qScopeGuard([&] { m_store = shared_store; });
        QString id;
        {
            auto r = runner();
            RunRecorder rec(*r);
            r->dispatch(request(kSteps, profile()));
            QTRY_VERIFY2_WITH_TIMEOUT(
                !rec.measurements.isEmpty() || rec.ended(), qPrintable(rec.problems()), kLoopbackRunTimeoutMs);
            QVERIFY2(!rec.ended(), qPrintable(rec.problems()));
            id = rec.run_id();
            m_ssh->stop(); // the server and every connection gone, then the app "quits"
        }
        QTest::qWait(3000);
        QString error;
        QVERIFY2(m_ssh->start(&error), qPrintable(error));
        auto r = runner();
        RunRecorder rec(*r);
        QCOMPARE(r->attach_active(), 1);
        QTRY_VERIFY2_WITH_TIMEOUT(rec.ended(), qPrintable(rec.problems()), kLoopbackRunTimeoutMs);
        QVERIFY2(rec.errors.isEmpty(), qPrintable(rec.problems()));
        QVERIFY2(
            state_text(rec.finished.first().at(1)) == QStringLiteral("completed"), qPrintable(why_it_ended(rec, id)));
        verify_completed(id, kSteps);
        QCOMPARE(jobs_named_after(id), 1);
    }

    // An older version declared a run gone during a controller outage (or the app was closed as it did): the
    // run is "failed" in the store while its job runs on. Attaching it again watches it to its real end.
    void aRunMarkedFailedIsAttachedAgain()
    {
        constexpr int kSteps = 40;
        QString id;
        {
            auto r = runner();
            RunRecorder rec(*r);
            r->dispatch(request(kSteps, profile()));
            QTRY_VERIFY2_WITH_TIMEOUT(
                !rec.measurements.isEmpty() || rec.ended(), qPrintable(rec.problems()), kLoopbackRunTimeoutMs);
            QVERIFY2(!rec.ended(), qPrintable(rec.problems()));
            id = rec.run_id();
        } // the app quits
        const std::string vanished = "SLURM job " + str(job_of(id)) + " vanished from squeue and scontrol";
        RunStore(m_store).set_state(str(id), RunState::failed, vanished);
        auto r = runner();
        RunRecorder rec(*r);
        QCOMPARE(r->attach_active(), 0); // a failed run is not resumed by itself...
        r->attach(id); // ...but when asked
        QTRY_VERIFY2_WITH_TIMEOUT(rec.ended(), qPrintable(rec.problems()), kLoopbackRunTimeoutMs);
        QVERIFY2(rec.errors.isEmpty(), qPrintable(rec.problems()));
        QVERIFY2(
            rec.saw_detail(QStringLiteral("attached again after it was marked failed")), qPrintable(rec.problems()));
        QCOMPARE(state_text(rec.finished.first().at(1)), QStringLiteral("completed"));
        verify_completed(id, kSteps);
        QCOMPARE(jobs_named_after(id), 1);
    }

    void fullAndReadOnlyDisksAreClearErrors_data()
    {
        QTest::addColumn<QString>("options");
        QTest::addColumn<QString>("expected");
        QTest::newRow("full") << QStringLiteral("size=64k") << QStringLiteral("no space left on the disk holding");
        QTest::newRow("read-only") << QStringLiteral("ro,size=64k") << QStringLiteral("Read-only file system");
    }

    void fullAndReadOnlyDisksAreClearErrors()
    {
        QFETCH(QString, options);
        QFETCH(QString, expected);
        const QString mount_point
            = m_tmp.filePath(QStringLiteral("cluster-home/disk-") + QString::fromLatin1(QTest::currentDataTag()));
        QVERIFY(QDir().mkpath(mount_point));
        QByteArray err;
        QVERIFY2(run_program(QStringLiteral("mount"),
                     { QStringLiteral("-t"), QStringLiteral("tmpfs"), QStringLiteral("-o"), options,
                         QStringLiteral("tmpfs"), mount_point },
                     nullptr, &err)
                == 0,
            err.constData());
        const auto unmount = qScopeGuard([&] { run_program(QStringLiteral("umount"), { mount_point }); });
        if (!options.startsWith(QLatin1String("ro"))) {
            // Fill it, leaving the run folder's mkdir possible but no room for the job's files.
            QDir().mkpath(mount_point + QStringLiteral("/parallax-runs"));
            run_program(QStringLiteral("dd"),
                { QStringLiteral("if=/dev/zero"), QStringLiteral("of=") + mount_point + QStringLiteral("/filler"),
                    QStringLiteral("bs=4k") });
        }
        ClusterProfile p = profile();
        p.work_dir = str(mount_point + QStringLiteral("/parallax-runs"));
        auto r = runner();
        RunRecorder rec(*r);
        r->dispatch(request(4, p));
        QTRY_VERIFY2_WITH_TIMEOUT(rec.ended(), qPrintable(rec.problems()), kLoopbackRunTimeoutMs);
        // Refused at once (not stored) or stored as failed: either way the message names the folder and why.
        QString message;
        if (!rec.dispatch_failed.isEmpty()) {
            message = rec.dispatch_failed.first().at(0).toString();
        } else {
            QCOMPARE(state_text(rec.finished.first().at(1)), QStringLiteral("failed"));
            message = rec.finished.first().at(2).toString();
        }
        QVERIFY2(message.contains(expected), qPrintable(message));
        QVERIFY2(message.contains(mount_point), qPrintable(message));
    }
};

QTEST_GUILESS_MAIN(TestRemoteFaults)
#include "tst_remote_faults.moc"

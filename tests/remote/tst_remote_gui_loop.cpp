// The remote loop driven from the planner window, against real servers on 127.0.0.1 started and stopped by
// this test (tests/remote/local_cluster: OpenSSH and a single-node SLURM). As a user would: a cluster profile
// typed into the profile editor, the plan sent with "Send as validation run" after editing job.sh in the
// review dialog, the unknown host key shown with its fingerprint and trusted, the built-in probe run as an
// sbatch job on 2 CPU ranks, watched until its measurement is stored, shown in the runs table and as overlay
// markers; a Chrome trace from the run's folder fetched onto the timeline; a long run survives an app restart
// (re-attached), is cancelled only after the confirmation and SLURM confirms it; a changed host key is refused
// with both fingerprints and nothing to accept, an unknown one rejected is asked again on the next send.
#include "local_cluster.hpp"

#include "cluster/profile_store.hpp"
#include "gui/main_window.hpp"
#include "gui/settings.hpp"
#include "gui/theme.hpp"
#include "io/preset_catalog.hpp"
#include "io/scenario_io.hpp"
#include "remote/remote_controller.hpp"
#include "remote/ssh_dialogs.hpp"
#include "runs/remote_runner.hpp"
#include "store/run_store.hpp"
#include "timeline/timeline_view.hpp"

#include "../support/planner_test_main.hpp"

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

using namespace parallax;
using namespace parallax::remote;
using namespace parallax::test;
using parallax::app::MainWindow;

namespace {

// A run-state argument of a runner or controller signal, as stored and printed.
QString state_text(const QVariant& arg)
{
    return QLatin1String(to_string(arg.value<RunState>()));
}

constexpr int kRunTimeoutMs = 240000;
const QString kScenario = QStringLiteral(PARALLAX_SOURCE_DIR "/tests/remote/data/tiny_probe_scenario.json");

template <class T> T* wait_for_top_level(const QString& object_name, int timeout_ms = 30000)
{
    QElapsedTimer clock;
    clock.start();
    while (clock.elapsed() < timeout_ms) {
        for (QWidget* w : QApplication::topLevelWidgets())
            if (auto* t = qobject_cast<T*>(w); t && t->objectName() == object_name && t->isVisible())
                return t;
        QTest::qWait(20);
    }
    return nullptr;
}

bool visible_top_level(const QString& object_name)
{
    for (QWidget* w : QApplication::topLevelWidgets())
        if (w->objectName() == object_name && w->isVisible())
            return true;
    return false;
}

void set_line(QWidget* field, const QString& text)
{
    auto* e = qobject_cast<QLineEdit*>(field);
    QVERIFY(e);
    e->selectAll();
    if (text.isEmpty())
        QTest::keyClick(e, Qt::Key_Delete);
    else
        QTest::keyClicks(e, text);
}

} // namespace

class TestRemoteGuiLoop : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_tmp;
    std::unique_ptr<LocalSshServer> m_ssh;
    std::unique_ptr<LocalSlurm> m_slurm;
    QString m_store;
    QString m_profiles;
    QString m_completed_run;
    std::unique_ptr<app::Settings> m_settings;

    std::unique_ptr<MainWindow> window(bool attach)
    {
        MainWindow::Options o;
        o.restore_layout = false;
        o.autosave = false;
        o.settings = m_settings.get();
        o.run_store = m_store;
        o.profiles_file = m_profiles;
        o.attach_runs = attach;
        auto w = std::make_unique<MainWindow>(o);
        w->resize(1600, 1000);
        w->show();
        if (!QTest::qWaitForWindowExposed(w.get()))
            qWarning("window not exposed");
        if (!w->open_scenario_file(kScenario))
            qWarning("%s", qPrintable(w->last_error()));
        w->wait_for_evaluation();
        w->show_panel(QStringLiteral("runs"));
        return w;
    }

    // "Send as validation run" (Ctrl+R) on `w`, the profile chosen, the probe's shape set; returns the dialog.
    views::DispatchDialog* open_send(MainWindow& w, const QString& profile, int steps)
    {
        w.remote()->panel()->send_action()->trigger();
        auto* d = wait_for_top_level<views::DispatchDialog>(QStringLiteral("dispatch_dialog"));
        if (!d)
            return nullptr;
        d->set_profile(profile);
        d->set_steps(steps);
        // All 4 layers of the tiny model and 2 micro-batches, whatever the split: runs of PP 2 and TP 2 compare.
        d->set_probe_shape(4, 2);
        return d;
    }

    static void click(QWidget* parent, const QString& button)
    {
        auto* b = parent->findChild<QPushButton*>(button);
        QVERIFY2(b, qPrintable(button));
        QTest::mouseClick(b, Qt::LeftButton);
    }

private Q_SLOTS:
    void initTestCase()
    {
        if (!running_as_root()) {
            // SlurmUser=root and the SSH login as the test's user need root; CI runs as root.
            if (qEnvironmentVariableIsSet("CI"))
                QFAIL("the GUI remote loop test must run as root in CI");
            QSKIP("needs root (a local SLURM controller); CI runs it as root");
        }
        QVERIFY(m_tmp.isValid());
        m_store = m_tmp.filePath(QStringLiteral("runs.sqlite"));
        m_profiles = m_tmp.filePath(QStringLiteral("profiles.ini"));
        m_settings = std::make_unique<app::Settings>(m_tmp.filePath(QStringLiteral("settings.ini")), nullptr);
        QString error;
        QVERIFY2(start_loopback_cluster(m_tmp.path(), m_ssh, m_slurm, &error), qPrintable(error));
    }

    void cleanupTestCase()
    {
        m_slurm.reset(); // cancels leftover jobs, stops the daemons by PID
        m_ssh.reset();
    }

    void probeSentFromTheWindowEndsMeasuredAndDrawn()
    {
        auto w = window(false);
        views::RemoteRunsController* remote = w->remote();

        // The profile, typed into the editor.
        views::ProfileEditorDialog* e = remote->open_profile_editor();
        QVERIFY(e);
        e->set_interactive(false);
        e->new_profile();
        set_line(e->field(QStringLiteral("name")), QStringLiteral("loopback"));
        set_line(e->field(QStringLiteral("host")), QStringLiteral("127.0.0.1"));
        set_line(e->field(QStringLiteral("port")), QString::number(m_ssh->port()));
        set_line(e->field(QStringLiteral("user")), m_ssh->user());
        set_line(e->field(QStringLiteral("key_file")), m_ssh->client_key());
        // A known_hosts of its own that does not hold this server yet: the GUI must ask.
        set_line(e->field(QStringLiteral("known_hosts")), m_tmp.filePath(QStringLiteral("gui_known_hosts")));
        qobject_cast<QCheckBox*>(e->field(QStringLiteral("use_agent")))->setChecked(false);
        set_line(e->field(QStringLiteral("partition")), QStringLiteral("debug"));
        set_line(e->field(QStringLiteral("time_limit")), QStringLiteral("00:10:00"));
        set_line(e->field(QStringLiteral("work_dir")), m_tmp.filePath(QStringLiteral("cluster-home/parallax-runs")));
        qobject_cast<QPlainTextEdit*>(e->field(QStringLiteral("env")))
            ->setPlainText(QStringLiteral("SLURM_CONF=") + m_slurm->conf());
        qobject_cast<QComboBox*>(e->field(QStringLiteral("gpu_type")))->setEditText(QStringLiteral("cpu"));
        set_line(e->field(QStringLiteral("cpus_per_task")), QStringLiteral("1"));
        set_line(e->field(QStringLiteral("poll_min_s")), QStringLiteral("0.3"));
        set_line(e->field(QStringLiteral("poll_max_s")), QStringLiteral("1"));
        set_line(e->field(QStringLiteral("keepalive_s")), QStringLiteral("2"));
        click(e, QStringLiteral("save_profile"));
        QVERIFY2(e->error_text().isEmpty(), qPrintable(e->error_text()));
        QCOMPARE(ProfileStore(m_profiles).names(), QStringList { QStringLiteral("loopback") });
        e->close();

        // Send: the job's files for review; job.sh edited before it goes.
        views::DispatchDialog* d = open_send(*w, QStringLiteral("loopback"), 4);
        QVERIFY(d);
        QVERIFY2(d->bundle().has_value(), qPrintable(d->error_text()));
        const QString run_id = d->run_id();
        QPlainTextEdit* job = d->editor(QStringLiteral("job.sh"));
        QVERIFY(job);
        job->setFocus();
        job->moveCursor(QTextCursor::Start);
        job->moveCursor(QTextCursor::Down);
        QTest::keyClicks(job, QStringLiteral("# reviewed in the GUI test"));
        QTest::keyClick(job, Qt::Key_Return);
        QVERIFY(d->edited(QStringLiteral("job.sh")));
        const QString keep = qEnvironmentVariable("PARALLAX_TEST_ARTIFACTS");
        if (!keep.isEmpty()) {
            QDir().mkpath(keep);
            d->grab().save(keep + QStringLiteral("/gui-dispatch-dialog.png"));
        }
        QSignalSpy finished(remote, &views::RemoteRunsController::run_finished);
        QSignalSpy failed(remote, &views::RemoteRunsController::dispatch_failed);
        QElapsedTimer clock;
        clock.start();
        click(d, QStringLiteral("send_run"));

        // The unknown host key: shown with its fingerprint, trusted by the user.
        auto* key = wait_for_top_level<views::HostKeyDialog>(QStringLiteral("host_key_dialog"));
        QVERIFY2(key, qPrintable(remote->panel()->status_text()));
        QCOMPARE(key->findChild<QLabel*>(QStringLiteral("fingerprint"))->text(), m_ssh->host_fingerprint());
        if (!keep.isEmpty())
            key->grab().save(keep + QStringLiteral("/gui-host-key-dialog.png"));
        click(key, QStringLiteral("accept_host_key"));

        QTRY_VERIFY2_WITH_TIMEOUT(
            !finished.isEmpty() || !failed.isEmpty(), qPrintable(remote->panel()->status_text()), kRunTimeoutMs);
        QVERIFY2(failed.isEmpty(), qPrintable(failed.value(0).value(0).toString()));
        QCOMPARE(finished.first().at(0).toString(), run_id);
        QVERIFY2(state_text(finished.first().at(1)) == QLatin1String("completed"),
            qPrintable(remote->panel()->status_text()));
        const double wall_s = clock.elapsed() / 1000.0;
        const std::optional<double> stored_s = remote->dispatch_to_finished_s(run_id);
        QVERIFY(stored_s.has_value());
        qInfo("GUI-driven probe run %s: %.1f s from Send to the stored, parsed result (%.1f s by the test's clock, "
              "the host-key question answered at once)",
            qPrintable(run_id), *stored_s, wall_s);
        m_completed_run = run_id;

        // The runs table shows the stored measurement.
        QVERIFY(remote->wait_until_idle(20000));
        const views::RunRow* row = remote->panel()->model()->find(run_id);
        QVERIFY(row);
        QCOMPARE(row->state, RunState::completed);
        QCOMPARE(row->steps, 4);
        QVERIFY(row->step_measured.value_or(0) > 0);
        QVERIFY(row->tps_measured.value_or(0) > 0);
        QCOMPARE(row->prediction_source, QStringLiteral("none")); // CPU ranks: measured, not compared
        const int r = remote->panel()->model()->row_of(run_id);
        QCOMPARE(
            remote->panel()->model()->data(remote->panel()->model()->index(r, views::RunsModel::step_error)).toString(),
            QStringLiteral("n/a"));

        // ... and as overlay markers with error bars from the steady-state spread.
        QVERIFY(remote->panel()->select_run(run_id));
        QVERIFY(remote->wait_until_idle(20000));
        const auto markers = remote->panel()->overlay_view()->markers();
        const auto step = std::find_if(
            markers.begin(), markers.end(), [](const auto& m) { return m.metric == QLatin1String("step_time_s"); });
        QVERIFY(step != markers.end());
        QCOMPARE(step->run_id, run_id);
        QCOMPARE(step->measured, *row->step_measured);
        QVERIFY(step->low && step->high && *step->low <= step->measured && step->measured <= *step->high);
        QVERIFY(step->error_bar.left() <= step->at.x() && step->at.x() <= step->error_bar.right());
        QVERIFY(!step->predicted); // nothing to compare CPU ranks with
        QVERIFY(remote->panel()->overlay_view()->text_lines().join(u'\n').contains(QStringLiteral("tokens/s per gpu")));
        QTRY_VERIFY_WITH_TIMEOUT(
            remote->panel()->log_view()->toPlainText().contains(QStringLiteral("PARALLAX_PROBE")), 10000);
        qInfo("%s", qPrintable(remote->panel()->overlay_view()->text_lines().join(u'\n')));

        // What was sent is the edited job.sh, and the host key is now known.
        RunStore store(m_store);
        const auto run = store.get(run_id.toStdString());
        QVERIFY(run.has_value());
        QVERIFY(run->script.find("# reviewed in the GUI test") != std::string::npos);
        QVERIFY(run->notes_json.find("edited by the user before sending: job.sh") != std::string::npos);
        QFile kh(m_tmp.filePath(QStringLiteral("gui_known_hosts")));
        QVERIFY(kh.open(QIODevice::ReadOnly));
        QVERIFY(kh.readAll().contains(QByteArray::number(m_ssh->port())));

        // The same model with TP 2 instead of PP 2, measured on the same machines: two runs compared.
        Scenario tp2 = *w->scenario();
        tp2.strategy.tp = 2;
        tp2.strategy.pp = 1;
        w->apply_edit(tp2, QStringLiteral("TP 2, PP 1"));
        QVERIFY(w->wait_for_evaluation());
        QVERIFY2(w->evaluation()->valid, qPrintable(w->status_text()));
        d = open_send(*w, QStringLiteral("loopback"), 4);
        QVERIFY(d);
        QVERIFY2(d->bundle().has_value(), qPrintable(d->error_text()));
        QVERIFY2(d->bundle()->description.find("tp 2 pp 1 dp 1), 4 of 4 layers") != std::string::npos,
            d->bundle()->description.c_str());
        const QString second = d->run_id();
        click(d, QStringLiteral("send_run")); // the host key is known now: no question
        QTRY_VERIFY2_WITH_TIMEOUT(
            finished.count() == 2 || !failed.isEmpty(), qPrintable(remote->panel()->status_text()), kRunTimeoutMs);
        QVERIFY2(failed.isEmpty(), qPrintable(failed.value(0).value(0).toString()));
        QCOMPARE(finished.last().at(0).toString(), second);
        QCOMPARE(state_text(finished.last().at(1)), QStringLiteral("completed"));
        qInfo("second GUI-driven probe run %s (tp 2): %.1f s from Send to the stored result", qPrintable(second),
            remote->dispatch_to_finished_s(second).value_or(-1));
        QVERIFY(remote->wait_until_idle(20000));
        QVERIFY(remote->panel()->select_runs({ run_id, second }));
        QVERIFY(remote->wait_until_idle(20000));
        QCOMPARE(int(remote->overlays().size()), 2);
        QStringList compared;
        for (const auto& m : remote->panel()->overlay_view()->markers())
            if (m.metric == QLatin1String("step_time_s"))
                compared << m.run_id;
        compared.sort(); // table order: newest first
        QCOMPARE(compared, (QStringList { run_id, second }));
        QCOMPARE(remote->panel()->model()->rowCount(), 2);

        // For the README's picture: the store of these real runs, and the window as it is now.
        if (!keep.isEmpty()) {
            w->resizeDocks({ w->dock(QStringLiteral("runs")) }, { 460 }, Qt::Vertical);
            QTest::qWait(200);
            w->grab().save(keep + QStringLiteral("/gui-probe-run-window.png"));
            // The store is in WAL mode: the database file and its write-ahead log together are the store.
            for (const QString& suffix : { QString(), QStringLiteral("-wal") }) {
                QFile::remove(keep + QStringLiteral("/gui-probe-run.sqlite") + suffix);
                if (QFileInfo::exists(m_store + suffix))
                    QFile::copy(m_store + suffix, keep + QStringLiteral("/gui-probe-run.sqlite") + suffix);
            }
        }
    }

    void measuredTraceFromTheRunFolderOnTheTimeline()
    {
        QVERIFY2(!m_completed_run.isEmpty(), "needs the run of the previous test");
        // The probe writes no trace; a framework's profiler would leave one in the run folder (torchtitan:
        // profile_traces/iteration_N/rank0_trace.json). Put a Chrome trace there, as the cluster would have it.
        RunStore store(m_store);
        const auto run = store.get(m_completed_run.toStdString());
        QVERIFY(run.has_value());
        const QString dir = QString::fromStdString(run->remote_dir) + QStringLiteral("/profile_traces/iteration_4");
        QVERIFY(QDir().mkpath(dir));
        QFile trace(dir + QStringLiteral("/rank0_trace.json"));
        QVERIFY(trace.open(QIODevice::WriteOnly));
        trace.write(R"({"traceEvents":[
 {"name":"fwd","ph":"X","ts":0,"dur":20000,"pid":0,"tid":1},
 {"name":"bwd","ph":"X","ts":21000,"dur":40000,"pid":0,"tid":1},
 {"name":"all_reduce","ph":"X","ts":62000,"dur":5000,"pid":0,"tid":2}]})");
        trace.close();

        auto w = window(false);
        views::RemoteRunsController* remote = w->remote();
        QVERIFY(remote->wait_until_idle(20000));
        QVERIFY(remote->panel()->select_run(m_completed_run));
        QVERIFY(remote->panel()->trace_action()->isEnabled());
        QSignalSpy loaded(remote, &views::RemoteRunsController::trace_loaded);
        QSignalSpy failed(remote, &views::RemoteRunsController::trace_failed);
        remote->panel()->trace_action()->trigger();
        QTRY_VERIFY2_WITH_TIMEOUT(
            !loaded.isEmpty() || !failed.isEmpty(), qPrintable(remote->panel()->status_text()), 60000);
        QVERIFY2(failed.isEmpty(), qPrintable(failed.value(0).value(0).toString()));
        const QString local = loaded.first().at(2).toString();
        QVERIFY(QFileInfo::exists(local));
        QFile a(local);
        QVERIFY(a.open(QIODevice::ReadOnly));
        QVERIFY(trace.open(QIODevice::ReadOnly));
        QCOMPARE(a.readAll(), trace.readAll());
        QVERIFY(w->timeline_view()->timeline()->measured() != nullptr);
        QCOMPARE(w->timeline_view()->timeline()->measured()->events, std::size_t(3));
        QVERIFY(w->dock(QStringLiteral("timeline"))->isVisible());
    }

    void longRunReattachedAfterRestartAndCancelledAfterConfirmation()
    {
        QString id;
        {
            auto w = window(false);
            views::DispatchDialog* d = open_send(*w, QStringLiteral("loopback"), 100000);
            QVERIFY(d);
            id = d->run_id();
            click(d, QStringLiteral("send_run"));
            views::RemoteRunsController* remote = w->remote();
            QTRY_VERIFY2_WITH_TIMEOUT(
                remote->panel()->model()->find(id) && remote->panel()->model()->find(id)->state == RunState::running,
                qPrintable(remote->panel()->status_text()), kRunTimeoutMs);
            // The app quits while the job runs on the cluster.
        }
        {
            RunStore store(m_store);
            QCOMPARE(store.get(id.toStdString())->state, RunState::running);
        }
        // The next start finds it unfinished and watches it again.
        auto w = window(true);
        views::RemoteRunsController* remote = w->remote();
        QSignalSpy logs(remote->runner(), &RemoteRunner::log_appended);
        QSignalSpy states(remote->runner(), &RemoteRunner::run_state_changed);
        QTRY_VERIFY_WITH_TIMEOUT(!logs.isEmpty() || !states.isEmpty(), 60000);
        QVERIFY(remote->wait_until_idle(20000));
        QVERIFY(remote->panel()->select_run(id));
        QVERIFY(remote->panel()->cancel_action()->isEnabled());
        QSignalSpy finished(remote, &views::RemoteRunsController::run_finished);

        // Cancel asks first; "Keep it running" keeps it running.
        remote->panel()->cancel_action()->trigger();
        auto* box = wait_for_top_level<QMessageBox>(QStringLiteral("cancel_confirmation"));
        QVERIFY(box);
        QVERIFY(box->text().contains(id));
        QVERIFY(box->informativeText().contains(QStringLiteral("scancel")));
        click(box, QStringLiteral("keep_running"));
        QTest::qWait(1500);
        QVERIFY(finished.isEmpty());
        QCOMPARE(RunStore(m_store).get(id.toStdString())->state, RunState::running);

        remote->panel()->cancel_action()->trigger();
        box = wait_for_top_level<QMessageBox>(QStringLiteral("cancel_confirmation"));
        QVERIFY(box);
        click(box, QStringLiteral("confirm_cancel"));
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), 120000);
        QCOMPARE(finished.first().at(0).toString(), id);
        QCOMPARE(state_text(finished.first().at(1)), QStringLiteral("cancelled"));
        QVERIFY(remote->wait_until_idle(20000));
        QCOMPARE(remote->panel()->model()->find(id)->state, RunState::cancelled);
        RunStore store(m_store);
        const auto run = store.get(id.toStdString());
        QByteArray out;
        m_slurm->client(QStringLiteral("squeue"),
            { QStringLiteral("-h"), QStringLiteral("-t"), QStringLiteral("all"), QStringLiteral("-j"),
                QString::fromStdString(run->job_id), QStringLiteral("-o"), QStringLiteral("%T") },
            &out);
        QVERIFY2(out.trimmed().startsWith("CANCELLED"), out.constData());
    }

    void hostKeyRefusedOrRejectedFromTheWindow()
    {
        const std::size_t runs_before = RunStore(m_store).list().size();
        const ClusterProfile base = *ProfileStore(m_profiles).load(QStringLiteral("loopback"));
        // known_hosts holds another key for this server: refused, both fingerprints, nothing to accept.
        const QString other = m_ssh->make_key(QStringLiteral("impostor_key"));
        const QString kh = m_tmp.filePath(QStringLiteral("changed_known_hosts"));
        {
            QFile f(kh);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(m_ssh->known_hosts_line(other + QStringLiteral(".pub")).toUtf8() + "\n");
        }
        ClusterProfile changed = base;
        changed.name = "changed";
        changed.known_hosts = kh.toStdString();
        ProfileStore(m_profiles).save(changed);
        ClusterProfile fresh = base;
        fresh.name = "fresh";
        fresh.known_hosts = m_tmp.filePath(QStringLiteral("fresh_known_hosts")).toStdString();
        ProfileStore(m_profiles).save(fresh);

        auto w = window(false);
        views::RemoteRunsController* remote = w->remote();
        QSignalSpy failed(remote, &views::RemoteRunsController::dispatch_failed);
        views::DispatchDialog* d = open_send(*w, QStringLiteral("changed"), 3);
        QVERIFY(d);
        click(d, QStringLiteral("send_run"));
        auto* box = wait_for_top_level<QMessageBox>(QStringLiteral("host_key_refused_dialog"));
        QVERIFY2(box, qPrintable(remote->panel()->status_text()));
        QVERIFY2(box->text().contains(m_ssh->host_fingerprint()), qPrintable(box->text()));
        QByteArray fp;
        run_program(QStringLiteral("ssh-keygen"), { QStringLiteral("-lf"), other + QStringLiteral(".pub") }, &fp);
        QVERIFY2(box->text().contains(QString::fromLatin1(fp.split(' ').value(1))), qPrintable(box->text()));
        QVERIFY(box->text().contains(QStringLiteral("CHANGED")));
        QCOMPARE(box->standardButtons(), QMessageBox::StandardButtons(QMessageBox::Close));
        for (QAbstractButton* b : box->buttons()) {
            QVERIFY2(!b->text().contains(QStringLiteral("ccept")), qPrintable(b->text()));
            QVERIFY2(!b->text().contains(QStringLiteral("rust")), qPrintable(b->text()));
        }
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 60000);
        QVERIFY(failed.first().at(0).toString().contains(QStringLiteral("CHANGED")));
        QVERIFY(!visible_top_level(QStringLiteral("dispatch_failed"))); // the refusal box said it all
        box->close();
        // known_hosts was not touched.
        {
            QFile f(kh);
            QVERIFY(f.open(QIODevice::ReadOnly));
            QCOMPARE(f.readAll(), m_ssh->known_hosts_line(other + QStringLiteral(".pub")).toUtf8() + "\n");
        }

        // An unknown key the user rejects: not sent; sending again asks again (the refusal is not kept).
        for (int attempt = 0; attempt < 2; ++attempt) {
            d = open_send(*w, QStringLiteral("fresh"), 3);
            QVERIFY(d);
            click(d, QStringLiteral("send_run"));
            auto* key = wait_for_top_level<views::HostKeyDialog>(QStringLiteral("host_key_dialog"));
            QVERIFY2(key, qPrintable(QStringLiteral("attempt %1: ").arg(attempt) + remote->panel()->status_text()));
            QCOMPARE(key->findChild<QLabel*>(QStringLiteral("fingerprint"))->text(), m_ssh->host_fingerprint());
            click(key, QStringLiteral("reject_host_key"));
            QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 2 + attempt, 60000);
            QVERIFY2(failed.last().at(0).toString().contains(QStringLiteral("not accepted")),
                qPrintable(failed.last().at(0).toString()));
            auto* warn = wait_for_top_level<QMessageBox>(QStringLiteral("dispatch_failed"));
            QVERIFY(warn);
            warn->close();
        }
        QVERIFY(!QFileInfo::exists(m_tmp.filePath(QStringLiteral("fresh_known_hosts")))
            || QFileInfo(m_tmp.filePath(QStringLiteral("fresh_known_hosts"))).size() == 0);
        QCOMPARE(RunStore(m_store).list().size(), runs_before);
    }
};

PARALLAX_PLANNER_TEST_MAIN(TestRemoteGuiLoop)

#include "tst_remote_gui_loop.moc"

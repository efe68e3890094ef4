// The GUI half of remote validation without a network, on the offscreen platform: the runs table model under
// QAbstractItemModelTester (merged live updates, text/state filters, numeric sorting with missing values last),
// rows and overlays made from a real run store, the overlay's markers and error bars, the profile editor
// (bad input named by key, nothing typed lost, drafts kept), the dispatch dialog (every job file shown, the
// edited version sent), the SSH questions as dialogs through PromptBridge from a worker thread (unknown host
// fingerprint, refusal without an accept button, passphrase and keyboard-interactive echo), the cancel
// confirmation, re-attach on start, the planner's own cards and memory bars carrying a run's measurement of
// the plan, and `parallax --screenshot --panel runs`. The loop against real servers is tst_remote_gui_loop.
#include "cluster/profile_store.hpp"
#include "gui/main_window.hpp"
#include "gui/settings.hpp"
#include "gui/theme.hpp"
#include "io/json_reader.hpp"
#include "io/prediction_io.hpp"
#include "io/preset_catalog.hpp"
#include "io/scenario_io.hpp"
#include "model/analytic_model.hpp"
#include "planner/metrics_panel.hpp"
#include "planner/strategy_panel.hpp"
#include "plots/breakdown_views.hpp"
#include "remote/calibration_fit_dialog.hpp"
#include "remote/remote_controller.hpp"
#include "remote/ssh_dialogs.hpp"
#include "runs/measurements.hpp"
#include "runs/remote_runner.hpp"
#include "runs/run_overlay.hpp"
#include "runs/run_row.hpp"
#include "runs/store_calibration.hpp"
#include "ssh/prompt_bridge.hpp"
#include "store/run_store.hpp"
#include "viewdata/rank_grid.hpp"

#include "../support/planner_test_main.hpp"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QProcess>
#include <QPushButton>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeWidget>
#include <QUndoStack>

#include <thread>

using namespace parallax;
using namespace parallax::remote;
using parallax::app::MainWindow;
using remote::RunRow;
using views::RunsModel;

namespace {

// A completed Megatron-LM run of `plan` on H100s, stored as RunEngine stores one: profile, scenario, the
// predictions made at dispatch, a log in Megatron's format (iteration lines and per-rank memory reports),
// its parsed steps. The measured numbers are made up for the test: `time_factor` x the predicted step time
// (with a spread), memory reports of `mem_factor` x each stage's prediction.
struct StoredRun {
    std::string id;
    double predicted_step_s = 0;
    std::vector<double> predicted_stage_GiB;
};

// The profile the stored runs were sent with: a GPU cluster behind a port where nothing listens (these tests
// never reach a server; a watch of such a run fails to connect at once and retries).
ClusterProfile gpu_profile(const std::string& name)
{
    ClusterProfile p;
    p.name = name;
    p.host = "127.0.0.1";
    p.port = 1;
    p.user = "nobody";
    p.gpu_type = "H100-SXM5-80GB";
    p.megatron_path = "/opt/Megatron-LM";
    p.connect_timeout_s = 2;
    p.poll_min_s = 0.2;
    p.poll_max_s = 1;
    return p;
}

StoredRun store_megatron_run(RunStore& store, const Scenario& plan, double time_factor, double mem_factor,
    const std::string& cluster = "gpu-cluster", RunState end = RunState::completed)
{
    StoredRun out;
    out.id = new_run_id();
    const ClusterProfile p = gpu_profile(cluster);
    const PlanContext ctx(plan.model, plan.training, plan.cluster);
    const Prediction pred = AnalyticModel(ctx).predict(plan.strategy);
    out.predicted_step_s = pred.step_time_s;
    for (const auto& s : pred.stages)
        out.predicted_stage_GiB.push_back(s.memory.total() / (1024.0 * 1024 * 1024));
    RunRecord r;
    r.id = out.id;
    r.framework = "megatron";
    r.launcher = "slurm";
    r.cluster = cluster;
    r.scenario_label = "default";
    r.description = "megatron on " + std::to_string(plan.strategy.total_gpus()) + " GPUs";
    r.profile_json = profile_to_json(p).dump();
    Scenario sent = plan;
    sent.dp_derived = false;
    r.scenario_json = scenario_to_json(sent).dump();
    r.prediction_json = prediction_to_json(pred).dump();
    r.state = RunState::created;
    r.detail = "stored";
    store.create(r, { { "job.sh", 0755, "#!/bin/bash\n" } });
    store.set_job(r.id, "4242", "/scratch/parallax-runs/" + r.id + "/job.log", "sbatch job.sh");
    store.set_state(r.id, RunState::running, "SLURM job 4242 RUNNING");
    std::string log;
    const double factors[] = { 1.6, 1.02, 1.0, 1.05, 0.98, 1.01 }; // the first step pays the start-up
    for (int i = 0; i < 6; ++i) {
        char line[512];
        std::snprintf(line, sizeof line,
            " [2025-01-01 12:00:%02d] iteration %7d/     100 | consumed samples: %12d | elapsed time per iteration "
            "(ms): %.1f | throughput per GPU (TFLOP/s/GPU): %.1f | learning rate: 1.000000E-04 | global batch size: "
            "%5lld | lm loss: 9.1E+00 | loss scale: 1.0 | number of skipped iterations:   0 | number of nan "
            "iterations:   0 |\n",
            i, i + 1, (i + 1) * 128, pred.step_time_s * time_factor * factors[i] * 1e3,
            pred.tflops_per_gpu / (time_factor * factors[i]), static_cast<long long>(plan.training.global_batch));
        log += line;
    }
    const RankGrid grid(plan.strategy, plan.cluster.gpus_per_node);
    for (long long rank = 0; rank < grid.ranks(); rank += plan.strategy.tp) {
        const auto stage = static_cast<std::size_t>(grid.coordinate(rank, ParallelDim::pp));
        const double mib = out.predicted_stage_GiB[stage] * mem_factor * 1024.0 * (1.0 + 0.01 * (rank % 3));
        char line[256];
        std::snprintf(line, sizeof line,
            "[Rank %lld] (after 2 iterations) memory (MB) | allocated: %.1f | max allocated: %.1f | reserved: %.1f | "
            "max reserved: %.1f\n",
            rank, mib * 0.7, mib * 0.9, mib * 0.95, mib);
        log += line;
    }
    store.append_log(r.id, 0, log);
    const Measurements m = parse_measurements(log, LogFormat::megatron);
    store.set_measurements(r.id, m.parsed, m.benches, m.summary_json().dump(), m.run_info_json);
    store.set_state(r.id, end, end == RunState::completed ? "SLURM job 4242 COMPLETED" : "SLURM job 4242 RUNNING",
        end == RunState::completed ? std::optional<int>(0) : std::nullopt);
    return out;
}

Scenario preset(const char* name)
{
    return load_scenario_preset(name, PresetCatalog::standard());
}

ClusterProfile cpu_profile(const std::string& name)
{
    ClusterProfile p;
    p.name = name;
    p.host = "127.0.0.1";
    p.port = 1; // nothing listens: these tests never reach a server
    p.user = "nobody";
    p.gpu_type = "cpu";
    p.partition = "debug";
    p.connect_timeout_s = 2;
    return p;
}

RunRow row(const QString& id, RunState state, std::optional<double> measured, std::optional<double> predicted,
    const QString& cluster = QStringLiteral("lab"))
{
    RunRow r;
    r.id = id;
    r.state = state;
    r.cluster = cluster;
    r.framework = QStringLiteral("probe");
    r.plan = QStringLiteral("tiny.json");
    r.created = QStringLiteral("2025-01-01T12:00:00.000Z");
    r.step_measured = measured;
    r.step_predicted = predicted;
    r.prediction_source = predicted ? QStringLiteral("workload") : QStringLiteral("none");
    return r;
}

template <class T> T* wait_for_top_level(const QString& object_name, int timeout_ms = 10000)
{
    T* found = nullptr;
    QElapsedTimer clock;
    clock.start();
    while (!found && clock.elapsed() < timeout_ms) {
        for (QWidget* w : QApplication::topLevelWidgets())
            if (auto* t = qobject_cast<T*>(w); t && t->objectName() == object_name && t->isVisible())
                found = t;
        if (!found)
            QTest::qWait(10);
    }
    return found;
}

// A planner window on the run store at `store`, with its settings and profiles in `dir` and no
// layout, autosave or user state of its own.
MainWindow::Options window_on_store(const QTemporaryDir& dir, const QString& store, app::Settings& settings)
{
    MainWindow::Options o;
    o.restore_layout = false;
    o.autosave = false;
    o.settings = &settings;
    o.run_store = store;
    o.profiles_file = dir.filePath(QStringLiteral("profiles.ini"));
    return o;
}

// Shows the window and evaluates the default scenario in it; false when either fails.
bool show_default_plan(MainWindow& w)
{
    w.resize(1600, 1000);
    w.show();
    return QTest::qWaitForWindowExposed(&w) && w.open_scenario_preset(QStringLiteral("default"))
        && w.wait_for_evaluation();
}

} // namespace

class TestRemoteGui : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { QVERIFY(QCoreApplication::testAttribute(Qt::AA_Use96Dpi)); }

    void runsModelUnderTester()
    {
        RunsModel model;
        views::RunsFilterModel proxy;
        proxy.setSourceModel(&model);
        QAbstractItemModelTester t1(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester t2(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.set_rows({ row(QStringLiteral("r3"), RunState::running, 0.30, 0.25),
            row(QStringLiteral("r2"), RunState::completed, 0.19, 0.20, QStringLiteral("gpu-big")),
            row(QStringLiteral("r1"), RunState::failed, std::nullopt, std::nullopt) });
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(model.data(model.index(0, RunsModel::step_error)).toString(), QStringLiteral("+20%"));
        QCOMPARE(model.data(model.index(1, RunsModel::step_error)).toString(), QStringLiteral("-5.0%"));
        QCOMPARE(model.data(model.index(2, RunsModel::step_error)).toString(), QStringLiteral("n/a"));
        QVERIFY(!model.data(model.index(2, RunsModel::step_error), RunsModel::SortRole).isValid());
        // A live update: one row changes in place, one is new (on top), one went away; no reset.
        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        model.set_rows({ row(QStringLiteral("r4"), RunState::queued, std::nullopt, 0.5),
            row(QStringLiteral("r3"), RunState::completed, 0.31, 0.25),
            row(QStringLiteral("r1"), RunState::failed, std::nullopt, std::nullopt) });
        QCOMPARE(reset.count(), 0);
        QCOMPARE(changed.count(), 1);
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(model.row_of(QStringLiteral("r4")), 0);
        QCOMPARE(model.row_of(QStringLiteral("r2")), -1);
        model.set_state(QStringLiteral("r4"), RunState::running, QStringLiteral("SLURM job 7 RUNNING"));
        QCOMPARE(model.find(QStringLiteral("r4"))->state, RunState::running);
        QCOMPARE(model.data(model.index(0, RunsModel::state), Qt::ToolTipRole).toString(),
            QStringLiteral("SLURM job 7 RUNNING"));
        model.upsert(row(QStringLiteral("r5"), RunState::created, std::nullopt, std::nullopt));
        QCOMPARE(model.row_of(QStringLiteral("r5")), 0);
        QCOMPARE(model.dump().size(), 4);
        QVERIFY2(model.dump().at(1).startsWith(QStringLiteral("r4 | running | lab | probe | tiny.json")),
            qPrintable(model.dump().at(1)));

        // Filters: state groups and text.
        proxy.set_state_filter(views::RunsFilterModel::StateFilter::active);
        QCOMPARE(proxy.rowCount(), 2); // r5 created, r4 running
        proxy.set_state_filter(views::RunsFilterModel::StateFilter::failed_or_cancelled);
        QCOMPARE(proxy.rowCount(), 1);
        proxy.set_state_filter(views::RunsFilterModel::StateFilter::all);
        proxy.set_text(QStringLiteral("R3"));
        QCOMPARE(proxy.rowCount(), 1);
        QCOMPARE(proxy.index(0, 0).data().toString(), QStringLiteral("r3"));
        proxy.set_text(QString());
        // Sorted by the error as a number; runs without one last in both orders.
        model.upsert(row(QStringLiteral("r6"), RunState::completed, 0.19, 0.20));
        proxy.sort(RunsModel::step_error, Qt::AscendingOrder);
        QStringList order;
        for (int i = 0; i < proxy.rowCount(); ++i)
            order << proxy.index(i, 0).data().toString();
        QCOMPARE(order.mid(0, 2), (QStringList { QStringLiteral("r6"), QStringLiteral("r3") }));
        proxy.sort(RunsModel::step_error, Qt::DescendingOrder);
        order.clear();
        for (int i = 0; i < proxy.rowCount(); ++i)
            order << proxy.index(i, 0).data().toString();
        QCOMPARE(order.mid(0, 2), (QStringList { QStringLiteral("r3"), QStringLiteral("r6") }));
        QVERIFY(!proxy.index(proxy.rowCount() - 1, RunsModel::step_error).data(RunsModel::SortRole).isValid());
    }

    void rowsAndOverlayFromTheStore()
    {
        QTemporaryDir dir;
        RunStore store(dir.filePath(QStringLiteral("runs.sqlite")));
        const Scenario plan = preset("default");
        const StoredRun stored = store_megatron_run(store, plan, 1.10, 1.05);
        const auto run = store.get(stored.id);
        QVERIFY(run.has_value());
        const RunRow r = remote::run_row(*run, store.steps(run->id));
        QCOMPARE(r.state, RunState::completed);
        QCOMPARE(r.prediction_source, QStringLiteral("plan"));
        QCOMPARE(r.steps, 6);
        QVERIFY(r.step_measured && r.step_predicted);
        // Median of steps 2..6 (factors 1.02, 1.0, 1.05, 0.98, 1.01 -> 1.01) x 1.10.
        QVERIFY2(std::abs(*r.step_error() - (1.10 * 1.01 - 1)) < 0.01, qPrintable(QString::number(*r.step_error())));
        QVERIFY(!r.finished.isEmpty());

        const RunOverlay o = make_run_overlay(store, *run);
        QCOMPARE(int(o.stages.size()), plan.strategy.pp);
        for (const auto& s : o.stages) {
            QVERIFY(s.measured_GiB && s.predicted_GiB && s.low_GiB && s.high_GiB);
            QVERIFY(*s.low_GiB < *s.high_GiB); // the spread over the stage's ranks
            QVERIFY2(std::abs(*s.error() - (1.05 * 1.02 - 1)) < 0.005, qPrintable(QString::number(*s.error())));
        }
        QVERIFY(QString::fromStdString(o.stage_note).contains(QStringLiteral("max reserved")));

        views::MeasuredOverlayView view;
        view.resize(760, 520);
        view.set_overlays({ std::make_shared<const RunOverlay>(o) });
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        const auto markers = view.markers();
        const auto step = std::find_if(
            markers.begin(), markers.end(), [](const auto& m) { return m.metric == QLatin1String("step_time_s"); });
        QVERIFY(step != markers.end());
        QVERIFY(step->error_bar.width() > 0); // min..max of the steady steps
        QVERIFY(step->error_bar.left() <= step->at.x() && step->at.x() <= step->error_bar.right());
        QVERIFY(step->predicted_bar.width() > 0);
        QVERIFY(step->at.x() > step->predicted_bar.right()); // measured 11% slower than predicted
        QVERIFY(std::abs(*step->error - *r.step_error()) < 1e-9);
        const int stage_markers = static_cast<int>(std::count_if(
            markers.begin(), markers.end(), [](const auto& m) { return m.metric.startsWith(QLatin1String("stage")); }));
        QCOMPARE(stage_markers, plan.strategy.pp);
        const QStringList lines = view.text_lines();
        QVERIFY2(lines.first().startsWith(QStringLiteral("step time | ") + QString::fromStdString(stored.id)),
            qPrintable(lines.join(u'\n')));
        QVERIFY2(lines.first().endsWith(QStringLiteral("+11%")), qPrintable(lines.first()));
        const QImage img = view.grab().toImage();
        QVERIFY(!img.isNull());
        // The marker is drawn where markers() says (a run colour, not the background).
        const QColor at = img.pixelColor(step->at.toPoint());
        QVERIFY2(at != view.palette().color(QPalette::Base), qPrintable(at.name()));

        // A CPU run: measured, never compared, and the row says why.
        const RunRecord cpu = [&] {
            RunRecord c = *run;
            ClusterProfile p = cpu_profile("lab");
            c.profile_json = profile_to_json(p).dump();
            return c;
        }();
        const RunRow rc = remote::run_row(cpu, store.steps(run->id));
        QCOMPARE(rc.prediction_source, QStringLiteral("none"));
        QVERIFY(rc.why.contains(QStringLiteral("CPU")));
        QVERIFY(!rc.step_error());
    }

    void profileEditorNamesTheKeyAndKeepsTheInput()
    {
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("profiles.ini"));
        views::ProfileEditorDialog d(file);
        d.set_interactive(false);
        d.show();
        QVERIFY(QTest::qWaitForWindowExposed(&d));
        auto* name = qobject_cast<QLineEdit*>(d.field(QStringLiteral("name")));
        auto* host = qobject_cast<QLineEdit*>(d.field(QStringLiteral("host")));
        auto* port = qobject_cast<QLineEdit*>(d.field(QStringLiteral("port")));
        auto* env = qobject_cast<QPlainTextEdit*>(d.field(QStringLiteral("env")));
        auto* modules = qobject_cast<QPlainTextEdit*>(d.field(QStringLiteral("modules")));
        QVERIFY(name && host && port && env && modules);
        name->clear();
        QTest::keyClicks(name, QStringLiteral("lab"));
        QTest::keyClicks(host, QStringLiteral("login.example.org"));
        port->clear();
        QTest::keyClicks(port, QStringLiteral("twenty-two"));
        modules->setPlainText(QStringLiteral("cuda/12.4\nnccl"));
        auto* save = d.findChild<QPushButton*>(QStringLiteral("save_profile"));
        QTest::mouseClick(save, Qt::LeftButton);
        QVERIFY2(d.error_text().contains(QStringLiteral("port")), qPrintable(d.error_text()));
        QCOMPARE(d.error_key(), QStringLiteral("port"));
        QVERIFY(d.stored_names().isEmpty());
        // Nothing typed is lost, and the bad field is the one with the focus.
        QCOMPARE(port->text(), QStringLiteral("twenty-two"));
        QCOMPARE(host->text(), QStringLiteral("login.example.org"));
        QCOMPARE(modules->toPlainText(), QStringLiteral("cuda/12.4\nnccl"));
        QTRY_VERIFY(port->hasFocus());

        port->setText(QStringLiteral("70000"));
        QVERIFY(!d.save());
        QVERIFY2(d.error_text().contains(QStringLiteral("port: must be an integer in [1, 65535]")),
            qPrintable(d.error_text()));
        port->setText(QStringLiteral("2222"));
        host->setText(QStringLiteral("login node; rm -rf"));
        QVERIFY(!d.save());
        QCOMPARE(d.error_key(), QStringLiteral("host"));
        QCOMPARE(host->text(), QStringLiteral("login node; rm -rf"));
        host->setText(QStringLiteral("login.example.org"));
        env->setPlainText(QStringLiteral("NCCL_DEBUG=WARN\n1BAD=x"));
        QVERIFY(!d.save());
        QVERIFY2(d.error_key().startsWith(QStringLiteral("env")), qPrintable(d.error_key()));
        QVERIFY2(d.error_text().contains(QStringLiteral("env.1BAD")), qPrintable(d.error_text()));
        env->setPlainText(QStringLiteral("NCCL_DEBUG=WARN\nno equals sign"));
        QVERIFY(!d.save());
        QCOMPARE(d.error_key(), QStringLiteral("env"));
        QCOMPARE(env->toPlainText(), QStringLiteral("NCCL_DEBUG=WARN\nno equals sign"));
        env->setPlainText(QStringLiteral("NCCL_DEBUG=WARN"));
        qobject_cast<QComboBox*>(d.field(QStringLiteral("gpu_type")))->setEditText(QStringLiteral("H100-SXM5-80GB"));
        QSignalSpy changed(&d, &views::ProfileEditorDialog::profiles_changed);
        QVERIFY2(d.save(), qPrintable(d.error_text()));
        QVERIFY(d.error_text().isEmpty());
        QCOMPARE(changed.count(), 1);
        QCOMPARE(d.stored_names(), QStringList { QStringLiteral("lab") });
        // Stored as the CLI reads it: the same settings file, loaded by ProfileStore.
        const auto p = ProfileStore(file).load(QStringLiteral("lab"));
        QVERIFY(p.has_value());
        QCOMPARE(p->port, 2222u);
        QCOMPARE(p->modules, (std::vector<std::string> { "cuda/12.4", "nccl" }));
        QCOMPARE(p->env.at("NCCL_DEBUG"), std::string("WARN"));
        QCOMPARE(p->gpu_type, std::string("H100-SXM5-80GB"));

        // A draft survives switching to another profile and back.
        d.new_profile();
        name->setText(QStringLiteral("second"));
        QTest::keyClicks(host, QStringLiteral("x"));
        host->setText(QStringLiteral("other.example.org"));
        QTest::keyClicks(host, QStringLiteral("x")); // a user edit (textEdited) records the draft
        QVERIFY(d.has_draft(QString()));
        QVERIFY(d.select(QStringLiteral("lab")));
        QCOMPARE(host->text(), QStringLiteral("login.example.org"));
        QVERIFY(d.select(QString()));
        QCOMPARE(host->text(), QStringLiteral("other.example.orgx"));
        QCOMPARE(name->text(), QStringLiteral("second"));
        // Renaming keeps one profile; a name that is taken is refused.
        QVERIFY(d.select(QStringLiteral("lab")));
        name->setText(QStringLiteral("lab2"));
        QTest::keyClicks(name, QString());
        QVERIFY(d.save());
        QCOMPARE(d.stored_names(), QStringList { QStringLiteral("lab2") });
    }

    void dispatchDialogShowsTheFilesAndSendsTheEditedVersion()
    {
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("profiles.ini"));
        ProfileStore(file).save(cpu_profile("lab"));
        const Scenario plan = load_scenario_file(
            PARALLAX_SOURCE_DIR "/tests/remote/data/tiny_probe_scenario.json", PresetCatalog::standard());
        views::DispatchDialog d(plan, QStringLiteral("tiny_probe_scenario.json"), file);
        d.show();
        QVERIFY(QTest::qWaitForWindowExposed(&d));
        d.set_profile(QStringLiteral("lab"));
        QVERIFY2(d.bundle().has_value(), qPrintable(d.error_text()));
        for (const char* f : { "job.sh", "node.sh", "start.sh", "plan.json", "parallax_probe.py", "probe_plan.json" })
            QVERIFY2(d.file_names().contains(QLatin1String(f)), f);
        // Every tab holds the generated file, byte for byte.
        for (const JobFile& f : d.bundle()->files)
            QCOMPARE(d.editor(QString::fromStdString(f.name))->toPlainText(), QString::fromStdString(f.content));
        QVERIFY(d.editor(QStringLiteral("job.sh"))->toPlainText().contains(QStringLiteral("srun")));
        QVERIFY(d.editor(QStringLiteral("job.sh"))->toPlainText().contains(d.run_id()));

        // Edit job.sh as a user would (keystrokes at the end of the text).
        QPlainTextEdit* job = d.editor(QStringLiteral("job.sh"));
        auto* tabs = d.findChild<QTabWidget*>(QStringLiteral("job_files"));
        tabs->setCurrentWidget(job);
        job->moveCursor(QTextCursor::End);
        QTest::keyClicks(job, QStringLiteral("# reviewed in the GUI"));
        QTest::keyClick(job, Qt::Key_Return);
        QVERIFY(d.edited(QStringLiteral("job.sh")));
        QVERIFY(tabs->tabText(tabs->indexOf(job)).contains(QStringLiteral("edited")));
        const QString edited_text = job->toPlainText();
        // Changing the steps regenerates the rest and keeps the edit.
        d.set_steps(3);
        QCOMPARE(d.editor(QStringLiteral("job.sh"))->toPlainText(), edited_text);
        QVERIFY(d.editor(QStringLiteral("probe_plan.json"))->toPlainText().contains(QStringLiteral("\"steps\": 3")));
        QVERIFY(!d.edited(QStringLiteral("probe_plan.json")));

        const RunRequest req = d.request();
        QCOMPARE(QString::fromStdString(req.run_id), d.run_id());
        QCOMPARE(req.steps, 3);
        QCOMPARE(req.profile.name, std::string("lab"));
        QCOMPARE(req.edited_files.size(), std::size_t(1));
        QCOMPARE(req.edited_files.front().first, std::string("job.sh"));
        QCOMPARE(QString::fromStdString(req.edited_files.front().second), edited_text);
        // What is sent is the edited job.sh (the generator lays the edit over its own file).
        const JobBundle sent = make_job_bundle(req);
        QCOMPARE(QString::fromStdString(sent.find("job.sh")->content), edited_text);
        QCOMPARE(sent.edited, std::vector<std::string> { "job.sh" });

        // Written for review elsewhere, as `parallax-cli run --out` writes a job (and `--from` sends it).
        QString why;
        QVERIFY2(d.write_to(dir.filePath(QStringLiteral("review")), &why), qPrintable(why));
        QFile written(dir.filePath(QStringLiteral("review/job.sh")));
        QVERIFY(written.open(QIODevice::ReadOnly));
        QCOMPARE(QString::fromUtf8(written.readAll()), edited_text);
        QVERIFY(written.permissions() & QFileDevice::ExeOwner);
        QVERIFY(QFileInfo::exists(dir.filePath(QStringLiteral("review/plan.json"))));
        QVERIFY(QFileInfo::exists(dir.filePath(QStringLiteral("review/parallax_probe.py"))));

        // Revert takes the generated text back.
        d.revert(QStringLiteral("job.sh"));
        QVERIFY(!d.edited(QStringLiteral("job.sh")));
        QVERIFY(d.request().edited_files.empty());

        // A plan the profile cannot run is explained, and Send is off.
        auto* send = d.findChild<QPushButton*>(QStringLiteral("send_run"));
        d.set_framework(JobFramework::megatron);
        QVERIFY(!d.bundle().has_value());
        QVERIFY2(d.error_text().contains(QStringLiteral("megatron_path")), qPrintable(d.error_text()));
        QVERIFY(!send->isEnabled());
        d.set_framework(JobFramework::probe);
        QVERIFY(send->isEnabled());
        QSignalSpy sent_spy(&d, &views::DispatchDialog::send_requested);
        QTest::mouseClick(send, Qt::LeftButton);
        QCOMPARE(sent_spy.count(), 1);
        QVERIFY(!d.isVisible());
    }

    void sshQuestionsAreDialogs()
    {
        QTemporaryDir dir;
        QWidget window;
        window.resize(800, 600);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        views::RemoteRunsController::Options o;
        o.store_path = dir.filePath(QStringLiteral("runs.sqlite"));
        o.profiles_file = dir.filePath(QStringLiteral("profiles.ini"));
        views::RemoteRunsController c(o, &window);
        PromptBridge* bridge = c.prompts();
        HostKeyInfo key;
        key.host = "[127.0.0.1]:2222";
        key.key_type = "ssh-ed25519";
        key.fingerprint = "SHA256:Zm9vYmFyYmF6cXV4cXV1eHl6enlYWVpYWVpYWVo0MjQy";
        key.known_hosts_file = str(dir.filePath(QStringLiteral("known_hosts")));

        for (const bool accept : { true, false }) {
            std::optional<bool> answer;
            std::thread worker([&] { answer = bridge->confirm_unknown_host(key); });
            auto* d = wait_for_top_level<views::HostKeyDialog>(QStringLiteral("host_key_dialog"));
            QVERIFY(d);
            QCOMPARE(
                d->findChild<QLabel*>(QStringLiteral("fingerprint"))->text(), QString::fromStdString(key.fingerprint));
            QVERIFY(d->findChild<QLabel*>(QStringLiteral("host_key_text"))->text().contains(QStringLiteral("SHA256:")));
            // Reject is the default: Enter does not trust a key.
            QVERIFY(d->findChild<QPushButton*>(QStringLiteral("reject_host_key"))->isDefault());
            QTest::mouseClick(d->findChild<QPushButton*>(
                                  accept ? QStringLiteral("accept_host_key") : QStringLiteral("reject_host_key")),
                Qt::LeftButton);
            worker.join();
            QCOMPARE(answer, std::optional<bool>(accept));
        }

        // A changed key: refused, both fingerprints shown, nothing to accept.
        HostKeyInfo changed = key;
        changed.known.push_back({ "ssh-ed25519", "SHA256:b2xka2V5b2xka2V5b2xka2V5b2xka2V5b2xka2V5MTIz", "/tmp/kh" });
        std::thread refuse([&] { bridge->host_key_refused(changed, true, "REFUSED: the host key has CHANGED"); });
        refuse.join();
        auto* box = wait_for_top_level<QMessageBox>(QStringLiteral("host_key_refused_dialog"));
        QVERIFY(box);
        QVERIFY(box->text().contains(QString::fromStdString(key.fingerprint)));
        QVERIFY(box->text().contains(QString::fromStdString(changed.known.front().fingerprint)));
        QVERIFY(box->text().contains(QStringLiteral("CHANGED")));
        // Close is the only answer (Show Details... only unfolds the full text, with the ssh-keygen -R line).
        QCOMPARE(box->standardButtons(), QMessageBox::StandardButtons(QMessageBox::Close));
        QVERIFY(box->detailedText().contains(QStringLiteral("REFUSED")));
        for (QAbstractButton* b : box->buttons()) {
            const auto role = box->buttonRole(b);
            QVERIFY2(role == QMessageBox::RejectRole || role == QMessageBox::ActionRole, qPrintable(b->text()));
            QVERIFY2(!b->text().contains(QStringLiteral("ccept")), qPrintable(b->text()));
            QVERIFY2(!b->text().contains(QStringLiteral("rust")), qPrintable(b->text()));
        }
        box->close();

        // A key passphrase: echo off, the answer reaches the worker once, the field is cleared.
        std::optional<Secret> pass;
        std::thread asker([&] { pass = bridge->key_passphrase("/home/me/.ssh/id_ed25519"); });
        auto* p = wait_for_top_level<views::SecretPromptDialog>(QStringLiteral("ssh_prompt_dialog"));
        QVERIFY(p);
        QCOMPARE(p->fields().size(), 1);
        QLineEdit* field = p->fields().front();
        QCOMPARE(field->echoMode(), QLineEdit::Password);
        QTest::keyClicks(field, QStringLiteral("s3cret"));
        QTest::keyClick(field, Qt::Key_Return);
        asker.join();
        QVERIFY(pass.has_value());
        QCOMPARE(std::string(pass->c_str()), std::string("s3cret"));

        // Keyboard-interactive: one field per prompt, echo as the server says; Cancel answers "no".
        for (const bool give : { true, false }) {
            KbdPrompt kp;
            kp.target = "me@login:22";
            kp.name = "Two-factor";
            kp.prompts = { { "Password: ", false }, { "Code (shown): ", true } };
            std::optional<std::vector<Secret>> answers;
            std::thread kbd([&] { answers = bridge->answer_prompts(kp); });
            auto* k = wait_for_top_level<views::SecretPromptDialog>(QStringLiteral("ssh_prompt_dialog"));
            QVERIFY(k);
            QCOMPARE(k->fields().size(), 2);
            QCOMPARE(k->fields().at(0)->echoMode(), QLineEdit::Password);
            QCOMPARE(k->fields().at(1)->echoMode(), QLineEdit::Normal);
            k->fields().at(0)->setText(QStringLiteral("pw"));
            k->fields().at(1)->setText(QStringLiteral("123456"));
            if (give)
                k->accept();
            else
                k->reject();
            kbd.join();
            QCOMPARE(answers.has_value(), give);
            if (give) {
                QCOMPARE(std::string(answers->at(0).c_str()), std::string("pw"));
                QCOMPARE(std::string(answers->at(1).c_str()), std::string("123456"));
            }
        }
    }

    // A server's keyboard-interactive name, instruction and prompts are its own text: tags stay tags, shown
    // as written, and never load an image or a link.
    void serverTextIsPlainTextInDialogs()
    {
        QTemporaryDir dir;
        QWidget window;
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        views::RemoteRunsController::Options o;
        o.store_path = dir.filePath(QStringLiteral("runs.sqlite"));
        o.profiles_file = dir.filePath(QStringLiteral("profiles.ini"));
        views::RemoteRunsController c(o, &window);
        KbdPrompt kp;
        kp.target = "me@login:22";
        kp.name = "<b>Bank</b>";
        kp.instruction = "<b>Welcome</b> <img src=\"http://x/y.png\"> \x1b]0;owned\x07 back";
        kp.prompts = { { "<i>Password</i>: ", false } };
        std::optional<std::vector<Secret>> answers;
        std::thread kbd([&] { answers = c.prompts()->answer_prompts(kp); });
        auto* k = wait_for_top_level<views::SecretPromptDialog>(QStringLiteral("ssh_prompt_dialog"));
        QVERIFY(k);
        auto* instruction = k->findChild<QLabel*>(QStringLiteral("instruction"));
        QVERIFY(instruction);
        QCOMPARE(instruction->textFormat(), Qt::PlainText);
        QVERIFY(instruction->text().startsWith(QStringLiteral("<b>Welcome</b> <img src=")));
        auto* prompt = k->findChild<QLabel*>(QStringLiteral("prompt_0"));
        QVERIFY(prompt);
        QCOMPARE(prompt->textFormat(), Qt::PlainText);
        QCOMPARE(prompt->text(), QStringLiteral("<i>Password</i>: "));
        QCOMPARE(k->windowTitle(), QStringLiteral("<b>Bank</b>"));
        k->reject();
        kbd.join();
        QVERIFY(!answers.has_value());
    }

    void cancelAsksFirstAndUnfinishedRunsAreWatchedAgain()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("runs.sqlite"));
        std::string id;
        {
            RunStore store(path);
            id = store_megatron_run(store, preset("default"), 1.0, 1.0, "gpu-cluster", RunState::running).id;
        }
        QWidget window;
        window.resize(1000, 700);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        views::RemoteRunsController::Options o;
        o.store_path = path;
        o.profiles_file = dir.filePath(QStringLiteral("profiles.ini"));
        views::RemoteRunsController c(o, &window);
        c.panel()->setParent(&window);
        c.panel()->resize(1000, 700);
        c.panel()->show();
        QSignalSpy rows(&c, &views::RemoteRunsController::rows_loaded);
        QSignalSpy messages(&c, &views::RemoteRunsController::status_message);
        QSignalSpy connection(c.runner(), &RemoteRunner::connection_state_changed);
        c.start(true);
        QTRY_VERIFY_WITH_TIMEOUT(rows.count() >= 1, 10000);
        QCOMPARE(c.panel()->model()->rowCount(), 1);
        // Re-attached on start: the unfinished run is watched again; its worker tries its host (nothing
        // listens there, so the connection is "lost" and retried with back-off, the run stays as it was).
        const auto said = [&](const QString& text) {
            for (const auto& m : messages)
                if (m.at(0).toString().contains(text))
                    return true;
            return false;
        };
        QTRY_VERIFY_WITH_TIMEOUT(said(QStringLiteral("Watching 1 unfinished run(s) again")), 10000);
        QTRY_VERIFY_WITH_TIMEOUT(!connection.isEmpty(), 30000);
        QCOMPARE(connection.first().at(0).toString(), QStringLiteral("nobody@127.0.0.1:1"));
        QCOMPARE(connection.first().at(1).toString(), QStringLiteral("lost"));
        QCOMPARE(c.panel()->model()->find(QString::fromStdString(id))->state, RunState::running);

        QVERIFY(c.panel()->select_run(QString::fromStdString(id)));
        QVERIFY(c.panel()->cancel_action()->isEnabled());
        QSignalSpy cancelled(&c, &views::RemoteRunsController::cancel_requested);
        c.panel()->cancel_action()->trigger();
        auto* box = wait_for_top_level<QMessageBox>(QStringLiteral("cancel_confirmation"));
        QVERIFY(box);
        QVERIFY(box->text().contains(QString::fromStdString(id)));
        QVERIFY(box->text().contains(QStringLiteral("job 4242")));
        QCOMPARE(box->defaultButton()->objectName(), QStringLiteral("keep_running"));
        QTest::mouseClick(box->findChild<QPushButton*>(QStringLiteral("keep_running")), Qt::LeftButton);
        QTest::qWait(50);
        QCOMPARE(cancelled.count(), 0);
        c.panel()->cancel_action()->trigger();
        box = wait_for_top_level<QMessageBox>(QStringLiteral("cancel_confirmation"));
        QVERIFY(box);
        QTest::mouseClick(box->findChild<QPushButton*>(QStringLiteral("confirm_cancel")), Qt::LeftButton);
        QTRY_COMPARE(cancelled.count(), 1);
        QCOMPARE(cancelled.first().at(0).toString(), QString::fromStdString(id));
        c.shutdown();
    }

    void plannerCarriesTheMeasurementOfItsOwnPlan()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("runs.sqlite"));
        StoredRun stored;
        {
            RunStore store(path);
            stored = store_megatron_run(store, preset("default"), 1.10, 1.05);
        }
        app::Settings settings(dir.filePath(QStringLiteral("settings.ini")), nullptr);
        MainWindow w(window_on_store(dir, path, settings));
        QVERIFY(show_default_plan(w));
        QVERIFY(w.show_panel(QStringLiteral("runs")));
        QVERIFY(w.panel(QStringLiteral("runs")) != nullptr);
        views::RemoteRunsController* remote = w.remote();
        QVERIFY(remote->wait_until_idle(10000));
        QCOMPARE(remote->panel()->model()->rowCount(), 1);
        QVERIFY(remote->panel()->select_run(QString::fromStdString(stored.id)));
        QVERIFY(remote->wait_until_idle(10000));
        QVERIFY(remote->plan_overlay() != nullptr);
        const QString step = w.metrics_panel()->measured_text(Metric::step_time);
        QVERIFY2(step.contains(QStringLiteral("measured")), qPrintable(step));
        QVERIFY2(step.contains(QStringLiteral("+11%")), qPrintable(step));
        QVERIFY(!w.metrics_panel()->measured_text(Metric::tflops_per_gpu).isEmpty());
        QVERIFY(w.metrics_panel()->measured_text(Metric::tokens_per_s).isEmpty()); // Megatron-LM prints no token rate
        QCOMPARE(int(w.memory_view()->measured().size()), 4);
        for (int s = 0; s < 4; ++s) {
            QVERIFY(w.memory_view()->measured()[std::size_t(s)].has_value());
            QVERIFY(!w.memory_view()->measured_marker(s).isNull());
        }
        // Another plan: the run did not measure it, so its numbers leave the cards and bars (and stay in the
        // Runs panel's overlay).
        Scenario other = *w.scenario();
        other.strategy.tp = 8;
        other.strategy.dp = 1;
        w.apply_edit(other, QStringLiteral("TP 4 → 8"));
        QVERIFY(w.wait_for_evaluation());
        QTRY_VERIFY(remote->plan_overlay() == nullptr);
        QVERIFY(w.metrics_panel()->measured_text(Metric::step_time).isEmpty());
        QVERIFY(w.memory_view()->measured().empty());
        QVERIFY(!remote->panel()->overlay_view()->markers().empty());
        // Undo: the plan is the measured one again.
        w.undo_stack()->undo();
        QVERIFY(w.wait_for_evaluation());
        QTRY_VERIFY(remote->plan_overlay() != nullptr);
        QVERIFY(!w.metrics_panel()->measured_text(Metric::step_time).isEmpty());
        // Ctrl+R is the send action.
        QStringList keys;
        for (QAction* a : w.findChildren<QAction*>())
            for (const QKeySequence& k : a->shortcuts())
                keys << k.toString();
        QVERIFY(keys.contains(QStringLiteral("Ctrl+R")));
    }

    // "Calibrate from these runs": the runs of the selected run's cluster are fitted on a worker; the dialog
    // draws each run's error before and after and lists the runs it could not use, and the saved calibration
    // becomes the planner's.
    void calibrateFromTheSelectedRuns()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("runs.sqlite"));
        Scenario tp8 = preset("default");
        tp8.strategy.tp = 8;
        tp8.strategy.dp = 1;
        std::vector<std::string> fitted;
        std::string failed;
        {
            // Every run measured ~30% slower than the shipped calibration predicts: a cluster the fit must learn.
            RunStore store(path);
            for (double factor : { 1.25, 1.30, 1.35 })
                fitted.push_back(store_megatron_run(store, preset("default"), factor, 1.0).id);
            fitted.push_back(store_megatron_run(store, tp8, 1.3, 1.0).id);
            failed = store_megatron_run(store, preset("default"), 1.3, 1.0, "gpu-cluster", RunState::failed).id;
            store_megatron_run(store, preset("default"), 2.0, 1.0, "another-cluster"); // not this cluster's
        }
        app::Settings settings(dir.filePath(QStringLiteral("settings.ini")), nullptr);
        MainWindow w(window_on_store(dir, path, settings));
        QVERIFY(show_default_plan(w));
        const double shipped = w.evaluation()->prediction.tokens_per_s;
        QVERIFY(w.show_panel(QStringLiteral("runs")));
        views::RemoteRunsController* remote = w.remote();
        QVERIFY(remote->wait_until_idle(10000));
        QAction* calibrate = remote->panel()->calibrate_action();
        QVERIFY(!calibrate->isEnabled()); // nothing selected
        // A failed run that reached SLURM (job 4242) can be watched again; a completed one cannot.
        QVERIFY(remote->panel()->select_run(QString::fromStdString(failed)));
        QVERIFY(remote->panel()->attach_action()->isEnabled());
        QVERIFY(remote->panel()->select_run(QString::fromStdString(fitted.front())));
        QVERIFY(!remote->panel()->attach_action()->isEnabled());
        QVERIFY(calibrate->isEnabled());
        calibrate->trigger(); // one run: every run of its cluster
        views::CalibrationFitDialog* dialog = w.calibration_fit_dialog();
        QVERIFY(dialog && dialog->isVisible());
        QVERIFY(w.wait_for_calibration_fit(120000));
        QVERIFY2(w.calibration_fit()->calibration.has_value(), w.calibration_fit()->error.c_str());
        QCOMPARE(QString::fromStdString(w.calibration_fit()->calibration->gpu), QStringLiteral("H100-SXM5-80GB"));

        const CalibrationResiduals& r = dialog->residual_bars()->residuals();
        QCOMPARE(r.runs.size(), fitted.size());
        qInfo("RMS log error: shipped %.3f, fitted %.3f", r.rms_before, r.rms_after);
        QVERIFY(r.rms_before > 0.2); // ~ln(1.3)
        QVERIFY(r.rms_after < r.rms_before);
        for (const auto& run : r.runs) {
            QVERIFY(std::find(fitted.begin(), fitted.end(), run.run_id) != fitted.end());
            QVERIFY(run.error_before < -0.15); // measured slower than predicted
        }
        QVERIFY2(dialog->headline().contains(QStringLiteral("Fitted 4 runs of gpu-cluster")),
            qPrintable(dialog->headline()));
        QCOMPARE(dialog->rejected_list()->topLevelItemCount(), 1);
        QCOMPARE(dialog->rejected_list()->topLevelItem(0)->text(0), QString::fromStdString(failed));
        QVERIFY(dialog->rejected_list()->topLevelItem(0)->text(1).contains(QStringLiteral("state failed")));
        // The bars are drawn where the chart says: the shipped one of the first run in the bar colour.
        dialog->resize(720, 560);
        QApplication::processEvents();
        const QImage img = dialog->residual_bars()->grab().toImage();
        const QRectF bar = dialog->residual_bars()->bar_rect(0, false);
        QVERIFY(bar.height() > 10);
        QVERIFY(img.pixelColor(bar.center().toPoint()) != dialog->residual_bars()->palette().color(QPalette::Base));
        QVERIFY(dialog->save_and_use_button()->isEnabled());
        const QStringList csv = dialog->residual_bars()->csv().split(u'\n', Qt::SkipEmptyParts);
        QCOMPARE(csv.size(), 1 + int(fitted.size()));
        QVERIFY(csv.first().startsWith(QStringLiteral("run,log_error_shipped,log_error_fitted")));
        if (const QString keep = qEnvironmentVariable("PARALLAX_TEST_ARTIFACTS"); !keep.isEmpty()) {
            QDir().mkpath(keep);
            dialog->grab().save(keep + QStringLiteral("/calibration-fit-synthetic.png"));
        }

        // Saved (atomically) with its provenance, and used: the plan is H100s, so it applies.
        const QString file = dir.filePath(QStringLiteral("gpu-cluster.json"));
        QVERIFY(w.save_fitted_calibration(file, true));
        const Calibration saved
            = calibration_from_json(parse_json_text(read_text_file(file.toStdString()), "saved"), file.toStdString());
        QCOMPARE(saved.provenance["runs"].size(), fitted.size());
        QVERIFY(w.wait_for_evaluation());
        QCOMPARE(w.calibration_file(), QFileInfo(file).absoluteFilePath());
        QLabel* label = w.findChild<QLabel*>(QStringLiteral("fidelity_label"));
        QVERIFY2(label->text().contains(QStringLiteral("calibration: runs:gpu-cluster")), qPrintable(label->text()));
        QVERIFY(w.evaluation()->prediction.tokens_per_s < shipped); // it learnt the cluster is slower

        // Several runs: those runs only; none usable: nothing to save, and the dialog says why.
        w.calibrate_from_runs({ QString::fromStdString(fitted[0]), QString::fromStdString(fitted[3]) });
        QVERIFY(w.wait_for_calibration_fit(120000));
        QCOMPARE(dialog->residual_bars()->residuals().runs.size(), std::size_t(2));
        w.calibrate_from_runs({ QString::fromStdString(failed), QStringLiteral("nosuch") });
        QVERIFY(w.wait_for_calibration_fit(120000));
        QVERIFY(!w.calibration_fit()->calibration);
        QVERIFY2(dialog->headline().contains(QStringLiteral("none of these runs")), qPrintable(dialog->headline()));
        QVERIFY(!dialog->save_button()->isEnabled());
        QCOMPARE(dialog->rejected_list()->topLevelItemCount(), 1);
    }

    void lookingAtRunsCreatesNoStore()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("none/runs.sqlite"));
        QWidget window;
        views::RemoteRunsController::Options o;
        o.store_path = path;
        o.profiles_file = dir.filePath(QStringLiteral("profiles.ini"));
        views::RemoteRunsController c(o, &window);
        c.start(true);
        QVERIFY(c.wait_until_idle(10000));
        QTest::qWait(50); // the deferred re-attach
        QCOMPARE(c.panel()->model()->rowCount(), 0);
        QVERIFY(!QFileInfo::exists(path));
        QVERIFY(!QFileInfo::exists(dir.filePath(QStringLiteral("none"))));
    }

    void screenshotOfTheRunsPanel()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("runs.sqlite"));
        StoredRun stored;
        {
            RunStore store(path);
            stored = store_megatron_run(store, preset("default"), 1.10, 1.05);
        }
        const QString out = dir.filePath(QStringLiteral("runs.png"));
        QProcess p;
        p.start(QStringLiteral(PARALLAX_GUI_PATH),
            { QStringLiteral("--scenario"), QStringLiteral("default"), QStringLiteral("--panel"),
                QStringLiteral("runs"), QStringLiteral("--store"), path, QStringLiteral("--screenshot"), out });
        QVERIFY(p.waitForFinished(60000));
        QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
        const QImage image(out);
        QVERIFY(!image.isNull());
        QVERIFY(image.width() > 300 && image.height() > 150);
        // The whole window with the run selected: its numbers under the cards, its memory over the bars.
        const QString window = dir.filePath(QStringLiteral("window.png"));
        p.start(QStringLiteral(PARALLAX_GUI_PATH),
            { QStringLiteral("--scenario"), QStringLiteral("default"), QStringLiteral("--store"), path,
                QStringLiteral("--run"), QString::fromStdString(stored.id), QStringLiteral("--screenshot"), window });
        QVERIFY(p.waitForFinished(60000));
        QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
        QVERIFY(!QImage(window).isNull());
        // CI keeps the pictures when asked to (they show synthetic numbers: see store_megatron_run).
        const QString keep = qEnvironmentVariable("PARALLAX_TEST_ARTIFACTS");
        if (!keep.isEmpty()) {
            QDir().mkpath(keep);
            QFile::remove(keep + QStringLiteral("/runs-panel-synthetic.png"));
            QFile::remove(keep + QStringLiteral("/window-synthetic.png"));
            QFile::copy(out, keep + QStringLiteral("/runs-panel-synthetic.png"));
            QFile::copy(window, keep + QStringLiteral("/window-synthetic.png"));
        }
        p.start(QStringLiteral(PARALLAX_GUI_PATH),
            { QStringLiteral("--scenario"), QStringLiteral("default"), QStringLiteral("--store"), path,
                QStringLiteral("--run"), QStringLiteral("nosuch"), QStringLiteral("--screenshot"), out });
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 2);
        QVERIFY(QString::fromLocal8Bit(p.readAllStandardError()).contains(QStringLiteral("nosuch")));
    }

private:
    static std::string str(const QString& s) { return s.toStdString(); }
};

PARALLAX_PLANNER_TEST_MAIN(TestRemoteGui)

#include "tst_remote_gui.moc"

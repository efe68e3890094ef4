// The planner window end to end on the offscreen platform: item models under QAbstractItemModelTester,
// drags with QTest mouse events on the strategy handles, the cluster grid and the plots change the
// plan and the numbers, undo restores them (a drag is one step), locks and the absorbing degree,
// editors with inline validation, a bad file keeps the previous plan, save/load round trip,
// autosave recovery, pinned deltas, the HTML report, themes, layout, the search panel over a test
// engine, and the --screenshot option of the real executable.
#include "gui/autosave.hpp"
#include "gui/main_window.hpp"
#include "gui/plan_evaluator.hpp"
#include "gui/settings.hpp"
#include "gui/theme.hpp"
#include "io/number_format.hpp"
#include "io/preset_catalog.hpp"
#include "io/scenario_io.hpp"
#include "model/goodput_plan.hpp"
#include "planner/cluster_grid_view.hpp"
#include "planner/degree_slider.hpp"
#include "planner/learn_panel.hpp"
#include "planner/metrics_panel.hpp"
#include "planner/power_panel.hpp"
#include "planner/result_models.hpp"
#include "planner/scenario_forms.hpp"
#include "planner/schedule_program_editor.hpp"
#include "planner/search_panel.hpp"
#include "planner/strategy_panel.hpp"
#include "plots/breakdown_views.hpp"
#include "plots/goodput_view.hpp"
#include "plots/plan_plots.hpp"
#include "plots/plot_export.hpp"
#include "plots/qcustomplot_include.hpp"
#include "plots/scaling_plot.hpp"
#include "plots/waterfall_view.hpp"
#include "spec/framework_support.hpp"
#include "spec/strategy_label.hpp"
#include "style/view_style.hpp"
#include "timeline/timeline_view.hpp"
#include "viewdata/timeline_data.hpp"

#include "../support/planner_test_main.hpp"

#include "spec/strategy_label.hpp"
#include <QAbstractItemModelTester>
#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QLabel>
#include <QMenu>
#include <QProcess>
#include <QPushButton>
#include <QSemaphore>
#include <QSignalSpy>

#include <QSortFilterProxyModel>
#include <QStandardItemModel>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>
#include <QUndoStack>

#include <algorithm>
#include <cmath>
#include <memory>

using namespace parallax;
using parallax::app::MainWindow;

namespace {

// A window with private settings and autosave folder, shown, on the default scenario, evaluated.
struct Fixture {
    QTemporaryDir dir;
    std::unique_ptr<app::Settings> settings;
    std::unique_ptr<MainWindow> window;

    explicit Fixture(const QString& preset = QStringLiteral("default"))
    {
        settings = std::make_unique<app::Settings>(dir.filePath(QStringLiteral("settings.ini")), nullptr);
        settings->set_autosave_dir(dir.filePath(QStringLiteral("autosave")));
        MainWindow::Options o;
        o.restore_layout = false;
        o.settings = settings.get();
        window = std::make_unique<MainWindow>(o);
        window->resize(1600, 1000);
        window->show();
        if (!QTest::qWaitForWindowExposed(window.get()))
            qWarning("window not exposed");
        if (!window->open_scenario_preset(preset))
            qWarning("%s", qPrintable(window->last_error()));
        if (!window->wait_for_evaluation())
            qWarning("no evaluation");
    }
    MainWindow& w() { return *window; }
    const Strategy& strategy() { return window->scenario()->strategy; }
};

QString tokens_text(MainWindow& w)
{
    return w.metrics_panel()->value_text(Metric::tokens_per_s);
}

class FakeEngine : public views::SearchEngine {
public:
    bool wait_for_cancel = false;
    bool throw_bad_alloc = false; // as a search of a huge space would
    QSemaphore started; // released once run() is entered (on the worker)
    QString name() const override { return QStringLiteral("test engine"); }
    views::SearchReport run(const Scenario& s, int top, bool any_framework, const std::function<void(double)>& progress,
        const CancelToken& cancel) override
    {
        (void)any_framework;
        started.release();
        if (throw_bad_alloc)
            throw std::bad_alloc();
        views::SearchReport r;
        if (wait_for_cancel) {
            while (!cancel.cancelled())
                QThread::msleep(2);
            r.cancelled = true;
            return r;
        }
        const PlanContext ctx(s.model, s.training, s.cluster);
        const AnalyticModel model(ctx);
        const int tps[] = { 2, 4, 8 };
        for (int i = 0; i < 3 && i < top; ++i) {
            Strategy st = s.strategy;
            st.dp = st.dp * st.tp / tps[i];
            st.tp = tps[i];
            views::SearchRow row;
            row.strategy = st;
            row.prediction = model.predict(st);
            row.objective = row.prediction.tokens_per_s;
            row.limiter = QStringLiteral("test");
            row.explanation = QStringLiteral("tp %1").arg(tps[i]);
            r.rows.push_back(row);
            progress((i + 1) / 3.0);
        }
        r.evaluated = 3;
        r.feasible = 3;
        return r;
    }
};

} // namespace

class TestPlannerWindow : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void comparison_model_passes_tester();
    void search_results_model_passes_tester();
    void slider_drag_changes_plan_and_numbers();
    void slider_offers_valid_stops_only();
    void keyboard_steps_through_valid_stops();
    void lock_and_absorber_choose_who_moves();
    void grid_drag_changes_degree();
    void grid_colours_stages();
    void toggle_changes_plan_and_undoes();
    void offload_toggles_follow_their_rules_and_undo();
    void invalid_toggle_options_are_disabled();
    void editor_rejects_bad_value_inline();
    void editor_applies_valid_value();
    void cluster_editor_keeps_gpu_count();
    void bad_file_shows_error_and_keeps_plan();
    void save_load_round_trip();
    void save_refuses_invalid_plan();
    void autosave_recovery();
    void pinned_plan_shows_deltas();
    void sensitivity_click_applies();
    void sensitivity_names_refused_values();
    void error_band_on_cards_and_plots();
    void core_search_marks_indistinguishable_plans();
    void heatmap_click_applies_and_marks_oom();
    void plots_export();
    void report_export();
    void time_breakdown_lists_host_copies();
    void learn_tooltips_say_why();
    void latest_request_wins();
    void themes_and_layout();
    void calibration_is_chosen_shown_and_kept();
    void calibration_of_another_gpu_is_not_applied();
    void shortcuts();
    void search_panel_runs_and_applies();
    void core_search_labels_frameworks();
    void search_panel_cancels();
    void search_panel_reports_a_throwing_search();
    void core_search_engine_ranks_plans();
    void timeline_follows_the_plan();
    void power_panel_shows_the_budget_and_follows_the_cap();
    void training_editor_offers_fp32_training_and_reduction();
    void improvements_panel_draws_the_waterfall();
    void goodput_panel_follows_the_reliability_section();
    void schedule_program_editor_checks_and_applies();
    void scaling_sweep();
    void screenshot_option_writes_png_data();
    void screenshot_option_writes_png();
    void screenshot_option_rejects_bad_input();
};

void TestPlannerWindow::initTestCase()
{
    QCOMPARE(QGuiApplication::platformName(), QStringLiteral("offscreen"));
    QVERIFY(QCoreApplication::testAttribute(Qt::AA_Use96Dpi));
    QVERIFY(QStandardPaths::isTestModeEnabled());
}

void TestPlannerWindow::comparison_model_passes_tester()
{
    views::ComparisonModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    const Scenario s = load_scenario_preset("default", PresetCatalog::standard());
    const PlanContext ctx(s.model, s.training, s.cluster);
    const Prediction a = AnalyticModel(ctx).predict(s.strategy);
    Strategy t = s.strategy;
    t.tp = 8;
    t.dp = 1;
    const Prediction b = AnalyticModel(ctx).predict(t);
    QCOMPARE(model.rowCount(), 0);
    model.set_predictions(b, std::nullopt);
    QVERIFY(model.rowCount() > 10);
    QCOMPARE(model.index(0, views::ComparisonModel::pinned).data().toString(), QStringLiteral("–"));
    model.set_predictions(b, a);
    const QStringList dump = model.dump();
    QVERIFY2(dump.first().startsWith(QStringLiteral("Step time | ")), qPrintable(dump.first()));
    QVERIFY2(dump.first().contains(u'%'), qPrintable(dump.first()));
    QVERIFY(!model.index(0, 0).data(Qt::ToolTipRole).toString().isEmpty());
    model.set_predictions(std::nullopt, std::nullopt);
    QCOMPARE(model.rowCount(), 0);
}

void TestPlannerWindow::search_results_model_passes_tester()
{
    views::SearchResultsModel model;
    QSortFilterProxyModel proxy;
    proxy.setSourceModel(&model);
    proxy.setSortRole(Qt::UserRole);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QAbstractItemModelTester proxy_tester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
    std::vector<views::SearchRow> rows(3);
    const double tokens[] = { 100, 300, 200 };
    for (int i = 0; i < 3; ++i) {
        rows[i].strategy.tp = 1 << i;
        rows[i].prediction.tokens_per_s = tokens[i];
        rows[i].explanation = QStringLiteral("row %1").arg(i);
    }
    model.set_rows(rows);
    QCOMPARE(model.rowCount(), 3);
    QCOMPARE(model.columnCount(), int(views::SearchResultsModel::column_count));
    proxy.sort(views::SearchResultsModel::tokens_per_s, Qt::DescendingOrder);
    QCOMPARE(proxy.index(0, views::SearchResultsModel::tp).data().toInt(), 2);
    QCOMPARE(proxy.index(2, views::SearchResultsModel::tp).data().toInt(), 1);
    QCOMPARE(model.index(1, views::SearchResultsModel::explanation).data().toString(), QStringLiteral("row 1"));
    rows[2].indistinguishable_from_best = true;
    model.set_rows(rows);
    QCOMPARE(model.index(2, views::SearchResultsModel::rank).data().toString(), QStringLiteral("3 ≈"));
    QCOMPARE(model.index(1, views::SearchResultsModel::rank).data().toString(), QStringLiteral("2"));
    QCOMPARE(model.index(2, views::SearchResultsModel::rank).data(Qt::UserRole).toInt(), 3);
    // The tooltip names the plan in the notation every output uses, then why it ranks there; a plan above
    // every measured efficiency of its class says so.
    rows[1].prediction.mfu = 0.678;
    rows[1].prediction.interval.best_measured_mfu_exceeded = 0.563;
    model.set_rows(rows);
    const QString tip = model.index(1, views::SearchResultsModel::tp).data(Qt::ToolTipRole).toString();
    QVERIFY2(tip.startsWith(QString::fromStdString(strategy_label(rows[1].strategy))), qPrintable(tip));
    QVERIFY2(
        tip.contains(QStringLiteral("67.8% MFU predicted, the best of its class measured 56.3%")), qPrintable(tip));
    QVERIFY2(tip.endsWith(QStringLiteral("row 1")), qPrintable(tip));
    model.set_rows({});
    QCOMPARE(proxy.rowCount(), 0);
}

void TestPlannerWindow::slider_drag_changes_plan_and_numbers()
{
    Fixture f;
    MainWindow& w = f.w();
    const Strategy before = f.strategy();
    const QString tokens_before = tokens_text(w);
    QVERIFY(!tokens_before.isEmpty() && tokens_before != QStringLiteral("–"));
    QUndoStack* undo = w.undo_stack();
    const int steps = undo->count();

    views::DegreeSlider* tp = w.strategy_panel()->slider(Degree::tp);
    QCOMPARE(tp->value(), 4);
    // One gesture through several stops: 4 -> 2 -> 1 -> 8.
    QTest::mousePress(tp, Qt::LeftButton, {}, tp->stop_position(4));
    QTest::mouseMove(tp, tp->stop_position(2));
    QCOMPARE(f.strategy().tp, 2);
    QTest::mouseMove(tp, tp->stop_position(1));
    QCOMPARE(f.strategy().tp, 1);
    QTest::mouseMove(tp, tp->stop_position(8));
    QTest::mouseRelease(tp, Qt::LeftButton, {}, tp->stop_position(8));
    QCOMPARE(f.strategy().tp, 8);
    QCOMPARE(f.strategy().dp, 1); // dp absorbed the change
    QCOMPARE(f.strategy().total_gpus(), before.total_gpus());
    QCOMPARE(undo->count(), steps + 1); // the drag is one undo step

    QVERIFY(w.wait_for_evaluation());
    QCOMPARE(w.evaluation()->scenario.strategy.tp, 8);
    QVERIFY2(tokens_text(w) != tokens_before, qPrintable(tokens_text(w)));
    QCOMPARE(w.strategy_panel()->slider(Degree::dp)->value(), 1);

    undo->undo();
    QVERIFY(f.strategy() == before);
    QVERIFY(w.wait_for_evaluation());
    QCOMPARE(tokens_text(w), tokens_before);
    QCOMPARE(tp->value(), 4);
    undo->redo();
    QCOMPARE(f.strategy().tp, 8);
}

void TestPlannerWindow::slider_offers_valid_stops_only()
{
    Fixture f;
    views::DegreeSlider* tp = f.w().strategy_panel()->slider(Degree::tp);
    QStringList blocked;
    for (const views::SliderStop& s : tp->stops())
        if (!s.valid)
            blocked << QString::number(s.value) + QStringLiteral(": ") + s.tip;
    QVERIFY(!blocked.isEmpty());
    // Dragging onto a blocked stop (tp 64: 8 KV heads, and dp cannot absorb) snaps to the nearest valid one.
    QTest::mousePress(tp, Qt::LeftButton, {}, tp->stop_position(4));
    QTest::mouseMove(tp, tp->stop_position(64));
    QTest::mouseRelease(tp, Qt::LeftButton, {}, tp->stop_position(64));
    QCOMPARE(f.strategy().tp, 8);
    QVERIFY(check_strategy(plan_inputs(*f.w().scenario()), f.strategy()) == Rule::ok);
}

void TestPlannerWindow::keyboard_steps_through_valid_stops()
{
    Fixture f;
    views::DegreeSlider* pp = f.w().strategy_panel()->slider(Degree::pp);
    pp->setFocus();
    QTest::keyClick(pp, Qt::Key_Left);
    QCOMPARE(f.strategy().pp, 2);
    QCOMPARE(f.strategy().dp, 4);
    QTest::keyClick(pp, Qt::Key_Home);
    QCOMPARE(f.strategy().pp, 1);
    QCOMPARE(f.strategy().vpp, 1); // virtual stages need a pipeline
    QCOMPARE(f.strategy().schedule, Schedule::one_f_one_b);
}

void TestPlannerWindow::lock_and_absorber_choose_who_moves()
{
    Fixture f;
    MainWindow& w = f.w();
    views::StrategyPanel* panel = w.strategy_panel();
    // pp absorbs instead of dp.
    panel->absorber_button(Degree::pp)->click();
    QCOMPARE(w.evaluation_options().preferred_absorber, Degree::pp);
    views::DegreeSlider* tp = panel->slider(Degree::tp);
    QTest::mousePress(tp, Qt::LeftButton, {}, tp->stop_position(4));
    QTest::mouseRelease(tp, Qt::LeftButton, {}, tp->stop_position(8));
    QCOMPARE(f.strategy().tp, 8);
    QCOMPARE(f.strategy().pp, 2);
    QCOMPARE(f.strategy().dp, 2);
    // Locked dp: its handle is disabled; with pp locked too, cp absorbs.
    panel->lock_button(Degree::dp)->click();
    QVERIFY(!panel->slider(Degree::dp)->isEnabled());
    panel->lock_button(Degree::pp)->click();
    QTest::mousePress(tp, Qt::LeftButton, {}, tp->stop_position(8));
    QTest::mouseRelease(tp, Qt::LeftButton, {}, tp->stop_position(4));
    QCOMPARE(f.strategy().tp, 4);
    QCOMPARE(f.strategy().cp, 4);
    QCOMPARE(f.strategy().pp, 2);
    QCOMPARE(f.strategy().dp, 2);
    // The evaluation's curves use the same choice.
    QVERIFY(w.wait_for_evaluation());
    QCOMPARE(w.evaluation()->curve(Degree::tp).absorber, std::optional<Degree>(Degree::cp));
}

void TestPlannerWindow::grid_drag_changes_degree()
{
    Fixture f;
    MainWindow& w = f.w();
    w.show_panel(QStringLiteral("grid"));
    views::ClusterGridCanvas* grid = w.grid_view()->canvas();
    QCOMPARE(grid->segment(), 4LL); // one TP group of 4
    const QString tokens_before = tokens_text(w);
    const int steps = w.undo_stack()->count();
    // Grab the first TP boundary (between GPU 3 and 4 of node 0) and pull it to the node's end.
    const QPoint from = grid->boundary_point(4).toPoint();
    const QPoint end = grid->cell_right_edge(0, 7).toPoint();
    QTest::mousePress(grid, Qt::LeftButton, {}, from);
    QTest::mouseMove(grid, (from + end) / 2);
    QTest::mouseMove(grid, end);
    QTest::mouseRelease(grid, Qt::LeftButton, {}, end);
    QCOMPARE(f.strategy().tp, 8);
    QCOMPARE(f.strategy().total_gpus(), 64LL);
    QCOMPARE(w.undo_stack()->count(), steps + 1);
    QVERIFY(w.wait_for_evaluation());
    QVERIFY(tokens_text(w) != tokens_before);
    QCOMPARE(grid->segment(), 8LL);
    w.undo_stack()->undo();
    QCOMPARE(f.strategy().tp, 4);
}

void TestPlannerWindow::grid_colours_stages()
{
    Fixture f;
    views::ClusterGridView* view = f.w().grid_view();
    view->set_dimension(ParallelDim::pp);
    views::ClusterGridCanvas* grid = view->canvas();
    QCOMPARE(grid->segment(), 16LL); // a stage: 64 GPUs / pp 4
    // Pull the first stage boundary (after node 1) down to after node 3: stages of 32 GPUs, pp 2.
    const QPoint from = grid->boundary_point(16).toPoint();
    const QPoint to = grid->boundary_point(32).toPoint();
    QTest::mousePress(grid, Qt::LeftButton, {}, from);
    QTest::mouseMove(grid, to);
    QTest::mouseRelease(grid, Qt::LeftButton, {}, to);
    QCOMPARE(f.strategy().pp, 2);
    QCOMPARE(f.strategy().dp, 4);
    const QImage image = grid->grab().toImage();
    QVERIFY(!image.isNull());
}

void TestPlannerWindow::toggle_changes_plan_and_undoes()
{
    Fixture f;
    MainWindow& w = f.w();
    const QString step_before = w.metrics_panel()->value_text(Metric::step_time);
    QComboBox* recompute = w.strategy_panel()->recompute_box();
    recompute->setCurrentIndex(recompute->findText(QStringLiteral("full")));
    emit recompute->activated(recompute->currentIndex());
    QCOMPARE(f.strategy().recompute, Recompute::full);
    QVERIFY(w.wait_for_evaluation());
    QVERIFY(w.metrics_panel()->value_text(Metric::step_time) != step_before);
    QCheckBox* sp = w.strategy_panel()->sequence_parallel_box();
    QTest::mouseClick(sp, Qt::LeftButton, {}, QPoint(8, sp->height() / 2)); // on the indicator
    QVERIFY(!f.strategy().sequence_parallel);
    w.undo_stack()->undo();
    QVERIFY(f.strategy().sequence_parallel);
    w.undo_stack()->undo();
    QCOMPARE(f.strategy().recompute, Recompute::selective);

    // Megatron's recomputed modules: offered under selective recomputation, one undo step each, never none.
    QToolButton* modules = w.strategy_panel()->recompute_modules_button();
    QVERIFY(modules->isEnabled());
    QCOMPARE(modules->text(), QStringLiteral("core_attn"));
    auto action = [&](const char* name) {
        for (QAction* a : modules->menu()->actions())
            if (a->text() == QLatin1String(name))
                return a;
        return static_cast<QAction*>(nullptr);
    };
    QVERIFY(w.wait_for_evaluation());
    const QString selective_step = w.metrics_panel()->value_text(Metric::step_time);
    action("layernorm")->trigger();
    QVERIFY(f.strategy().recomputes(RecomputeModule::layernorm));
    QVERIFY(f.strategy().recomputes(RecomputeModule::core_attn));
    QCOMPARE(modules->text(), QStringLiteral("2 modules"));
    action("core_attn")->trigger();
    QVERIFY(!f.strategy().recomputes(RecomputeModule::core_attn));
    QVERIFY(w.wait_for_evaluation());
    QVERIFY(w.metrics_panel()->value_text(Metric::step_time) != selective_step);
    action("layernorm")->trigger(); // the last module stays
    QVERIFY(f.strategy().recomputes(RecomputeModule::layernorm));
    QVERIFY(action("layernorm")->isChecked());
    w.undo_stack()->undo();
    w.undo_stack()->undo();
    QCOMPARE(f.strategy().recompute_modules, kDefaultRecomputeModules);
    recompute->setCurrentIndex(recompute->findText(QStringLiteral("none")));
    emit recompute->activated(recompute->currentIndex());
    QVERIFY(!modules->isEnabled());
}

void TestPlannerWindow::invalid_toggle_options_are_disabled()
{
    Fixture f;
    views::StrategyPanel* panel = f.w().strategy_panel();
    QComboBox* schedule = panel->schedule_box();
    auto* model = qobject_cast<QStandardItemModel*>(schedule->model());
    QVERIFY(model);
    for (int i = 0; i < schedule->count(); ++i)
        QVERIFY2(model->item(i)->isEnabled(), qPrintable(schedule->itemText(i))); // 64 micro-batches, pp 4: all fit
    // 3 micro-batches on pp 4: zero-bubble and DualPipe are out of reach and say why.
    Scenario s = *f.w().scenario();
    s.training.global_batch = 6;
    s.strategy.vpp = 1;
    s.strategy.schedule = Schedule::one_f_one_b;
    f.w().apply_edit(s, QStringLiteral("small batch"));
    const QStandardItem* zb = model->item(schedule->findText(QStringLiteral("zb-h1")));
    QVERIFY(!zb->isEnabled());
    QVERIFY2(zb->toolTip().contains(QStringLiteral("zero-bubble")), qPrintable(zb->toolTip()));
    QVERIFY(!model->item(schedule->findText(QStringLiteral("dualpipe")))->isEnabled());
    QVERIFY(model->item(schedule->findText(QStringLiteral("gpipe")))->isEnabled());
    // The GPU has no fp4 tensor cores (H100); offload needs ZeRO >= 1.
    QComboBox* precision = f.w().findChild<QComboBox*>();
    Q_UNUSED(precision);
    s.strategy.zero = 0;
    f.w().apply_edit(s, QStringLiteral("zero 0"));
    QCheckBox* offload = panel->findChild<QCheckBox*>(QStringLiteral("offload_optimizer"));
    QVERIFY(offload && !offload->isEnabled());
}

// Activation and parameter offload and the EP tile overlap sit next to the optimizer offload: each
// disabled with its rule while the plan cannot take it, and each change one undo step.
void TestPlannerWindow::offload_toggles_follow_their_rules_and_undo()
{
    Fixture f;
    MainWindow& w = f.w();
    views::StrategyPanel* panel = w.strategy_panel();
    QCheckBox* params = panel->offload_params_box();
    QCheckBox* activations = panel->offload_activations_box();
    QCheckBox* tile = panel->ep_tile_overlap_box();
    // Llama 3 70B, ZeRO 1, PP 4 in Megatron-LM: none of the three applies.
    QVERIFY(!params->isEnabled());
    QVERIFY2(params->toolTip().contains(QStringLiteral("ZeRO 3")), qPrintable(params->toolTip()));
    QVERIFY(!tile->isEnabled());
    QVERIFY2(tile->toolTip().contains(QStringLiteral("EP > 1")), qPrintable(tile->toolTip()));
    QVERIFY(!activations->isEnabled());
    QVERIFY2(
        activations->toolTip().contains(QStringLiteral("Pipeline parallelism")), qPrintable(activations->toolTip()));
    // Without pipeline parallelism and recomputation Megatron-LM offloads activations.
    Scenario s = *w.scenario();
    s.strategy.pp = 1;
    s.strategy.vpp = 1;
    s.strategy.dp = 8;
    s.strategy.schedule = Schedule::one_f_one_b;
    s.strategy.recompute = Recompute::none;
    w.apply_edit(s, QStringLiteral("no pipeline"));
    QVERIFY(activations->isEnabled());
    const int steps = w.undo_stack()->count();
    QTest::mouseClick(activations, Qt::LeftButton, {}, QPoint(8, activations->height() / 2));
    QVERIFY(f.strategy().offload_activations);
    QCOMPARE(w.undo_stack()->count(), steps + 1);
    QVERIFY(w.wait_for_evaluation());
    w.undo_stack()->undo();
    QVERIFY(!f.strategy().offload_activations);
    QVERIFY(!activations->isChecked());
    // ZeRO 3 under DeepSpeed: parameter offload is allowed, and one step too.
    s.strategy.zero = 3;
    s.training.framework = Framework::megatron_deepspeed;
    w.apply_edit(s, QStringLiteral("deepspeed zero 3"));
    QVERIFY2(params->isEnabled(), qPrintable(params->toolTip()));
    QTest::mouseClick(params, Qt::LeftButton, {}, QPoint(8, params->height() / 2));
    QVERIFY(f.strategy().offload_params);
    w.undo_stack()->undo();
    QVERIFY(!f.strategy().offload_params);
}

void TestPlannerWindow::editor_rejects_bad_value_inline()
{
    Fixture f;
    MainWindow& w = f.w();
    const Scenario before = *w.scenario();
    auto* kv = qobject_cast<QDoubleSpinBox*>(w.model_editor()->field_widget(QStringLiteral("model.kv_heads")));
    QVERIFY(kv);
    kv->setValue(3); // 64 heads are not a multiple of 3
    const QString message = w.model_editor()->field_message(QStringLiteral("model.kv_heads"));
    QVERIFY2(message.contains(QStringLiteral("must divide heads")), qPrintable(message));
    QVERIFY(w.scenario()->model.kv_heads == before.model.kv_heads); // not applied
    QVERIFY(w.scenario()->refs.model == before.refs.model);
}

void TestPlannerWindow::editor_applies_valid_value()
{
    Fixture f;
    MainWindow& w = f.w();
    auto* layers = qobject_cast<QDoubleSpinBox*>(w.model_editor()->field_widget(QStringLiteral("model.layers")));
    QVERIFY(layers);
    layers->setValue(40);
    QCOMPARE(w.scenario()->model.layers, 40);
    QVERIFY(w.scenario()->refs.model.empty()); // now an inline model
    QVERIFY(w.is_modified());
    // A model change that breaks a plan rule is applied and the rule shown where the plan is edited.
    auto* kv = qobject_cast<QDoubleSpinBox*>(w.model_editor()->field_widget(QStringLiteral("model.kv_heads")));
    kv->setValue(2); // tp 4 no longer divides the KV heads
    QCOMPARE(w.scenario()->model.kv_heads, 2);
    QVERIFY(!w.strategy_panel()->violations_label()->isHidden());
    QVERIFY(w.strategy_panel()->violations_label()->text().contains(QStringLiteral("strategy.tp")));
    QVERIFY(w.wait_for_evaluation());
    QVERIFY(!w.evaluation()->valid);
    QVERIFY(w.metrics_panel()->banner_text().contains(QStringLiteral("Not a valid plan")));
    w.undo_stack()->undo();
    QVERIFY(w.wait_for_evaluation());
    QVERIFY(w.evaluation()->valid);
}

void TestPlannerWindow::cluster_editor_keeps_gpu_count()
{
    Fixture f;
    MainWindow& w = f.w();
    auto* nodes = qobject_cast<QDoubleSpinBox*>(w.cluster_editor()->field_widget(QStringLiteral("cluster.nodes")));
    QVERIFY(nodes);
    nodes->setValue(16);
    QCOMPARE(w.scenario()->cluster.total_gpus(), 128LL);
    QCOMPARE(f.strategy().total_gpus(), 128LL);
    QCOMPARE(f.strategy().dp, 4);
    QVERIFY(w.scenario()->refs.cluster.empty());
    // A GPU preset replaces the GPU and keeps the rest.
    auto* gpu = qobject_cast<QComboBox*>(w.cluster_editor()->field_widget(QStringLiteral("cluster.gpu")));
    QVERIFY(gpu);
    gpu->setCurrentIndex(gpu->findText(QStringLiteral("H200-SXM-141GB")));
    emit gpu->activated(gpu->currentIndex());
    QCOMPARE(QString::fromStdString(w.scenario()->cluster.gpu.name), QStringLiteral("H200-SXM-141GB"));
    QCOMPARE(QString::fromStdString(w.scenario()->refs.gpu), QStringLiteral("H200-SXM-141GB"));
    // A bad fabric value shows the loader's message under the field.
    auto* idle = qobject_cast<QDoubleSpinBox*>(w.cluster_editor()->field_widget(QStringLiteral("cluster.gpu.idle_W")));
    idle->setValue(5000);
    QVERIFY2(w.cluster_editor()->field_message(QStringLiteral("cluster.gpu.idle_W")).contains(QStringLiteral("tdp_W")),
        qPrintable(w.cluster_editor()->field_message(QStringLiteral("cluster.gpu.idle_W"))));
}

void TestPlannerWindow::bad_file_shows_error_and_keeps_plan()
{
    Fixture f;
    MainWindow& w = f.w();
    const Strategy before = f.strategy();
    const QString tokens_before = tokens_text(w);
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("bad.json"));
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(R"({"schema": 1, "model": "llama3-8b",
                  "cluster": {"gpu": "H100-SXM5-80GB", "nodes": 2, "gpus_per_node": 8,
                              "intra_node": "nvlink4-nvswitch", "inter_node": "ib-ndr"},
                  "training": {"global_batch": 64, "seq_len": 4096}, "strategy": {"tp": 16}})");
    file.close();
    QVERIFY(!w.open_scenario_file(path));
    QVERIFY2(w.error_text().contains(QStringLiteral("strategy.tp")), qPrintable(w.error_text()));
    QVERIFY(w.error_text().contains(path));
    QVERIFY(w.status_text().contains(path));
    QVERIFY(f.strategy() == before);
    QCOMPARE(tokens_text(w), tokens_before);
    // The next good action clears the error.
    QVERIFY(w.open_scenario_preset(QStringLiteral("default")));
    QVERIFY(w.error_text().isEmpty());
}

void TestPlannerWindow::save_load_round_trip()
{
    Fixture f;
    MainWindow& w = f.w();
    Scenario s = *w.scenario();
    s.strategy.recompute = Recompute::full;
    s.model.layers = 40;
    s.refs.model.clear();
    w.apply_edit(s, QStringLiteral("test edit"));
    QVERIFY(w.is_modified());
    QVERIFY(w.windowTitle().contains(QStringLiteral("[*]")));
    QVERIFY(w.isWindowModified());
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("plan.json"));
    QVERIFY2(w.save_as(path), qPrintable(w.last_error()));
    QVERIFY(!w.is_modified());
    QCOMPARE(w.current_path(), path);
    QVERIFY(f.settings->recent_files().contains(path));
    QVERIFY(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden).size() == 1); // no temporary left behind

    Fixture g;
    QVERIFY2(g.w().open_scenario_file(path), qPrintable(g.w().last_error()));
    const Scenario& loaded = *g.w().scenario();
    QVERIFY(loaded.strategy == w.scenario()->strategy);
    QCOMPARE(loaded.model.layers, 40);
    QCOMPARE(QString::fromStdString(scenario_to_json(loaded).dump()),
        QString::fromStdString(scenario_to_json(*w.scenario()).dump()));
    QVERIFY(g.w().wait_for_evaluation());
    QVERIFY(w.wait_for_evaluation());
    QCOMPARE(tokens_text(g.w()), tokens_text(w));
}

void TestPlannerWindow::save_refuses_invalid_plan()
{
    Fixture f;
    MainWindow& w = f.w();
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("plan.json"));
    QVERIFY(w.save_as(path));
    const QByteArray saved = [&] {
        QFile file(path);
        file.open(QIODevice::ReadOnly);
        return file.readAll();
    }();
    Scenario s = *w.scenario();
    s.model.kv_heads = 2;
    s.refs.model.clear();
    w.apply_edit(s, QStringLiteral("break it"));
    QVERIFY(!w.save());
    QVERIFY2(w.error_text().contains(QStringLiteral("strategy.tp")), qPrintable(w.error_text()));
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    QCOMPARE(file.readAll(), saved); // the file on disk is untouched
}

void TestPlannerWindow::autosave_recovery()
{
    QTemporaryDir dir;
    app::Settings settings(dir.filePath(QStringLiteral("settings.ini")), nullptr);
    settings.set_autosave_dir(dir.filePath(QStringLiteral("autosave")));
    MainWindow::Options o;
    o.restore_layout = false;
    o.settings = &settings;
    Scenario edited;
    {
        MainWindow a(o);
        QVERIFY(a.open_scenario_preset(QStringLiteral("default")));
        Scenario s = *a.scenario();
        s.strategy.tp = 8;
        s.strategy.dp = 1;
        s.description = "unsaved work";
        a.apply_edit(s, QStringLiteral("edit"));
        edited = *a.scenario();
        QString error;
        QVERIFY2(a.autosave_now(&error), qPrintable(error));
        QVERIFY(QFile::exists(a.autosave_file()));
        // While its window runs, the file is not an orphan.
        MainWindow b(o);
        QVERIFY(!b.recoverable_autosaves().contains(a.autosave_file()));
        a.abandon_autosave(); // the process "crashes": file left, lock released
        QVERIFY(b.recoverable_autosaves().contains(a.autosave_file()));
    }
    MainWindow c(o);
    const QStringList orphans = c.recoverable_autosaves();
    QCOMPARE(orphans.size(), 1);
    QVERIFY2(c.recover_autosave(orphans.first()), qPrintable(c.last_error()));
    QVERIFY(c.scenario()->strategy == edited.strategy);
    QCOMPARE(c.scenario()->description, std::string("unsaved work"));
    QVERIFY(c.is_modified());
    QVERIFY(!QFile::exists(orphans.first()));
    QVERIFY(c.recoverable_autosaves().isEmpty());
    // A clean exit leaves nothing to recover.
    {
        MainWindow d(o);
        QVERIFY(d.open_scenario_preset(QStringLiteral("default")));
        QVERIFY(d.autosave_now());
    }
    QVERIFY(c.recoverable_autosaves().isEmpty());
}

void TestPlannerWindow::pinned_plan_shows_deltas()
{
    Fixture f;
    MainWindow& w = f.w();
    QVERIFY(w.metrics_panel()->delta_text(Metric::tokens_per_s).isEmpty());
    w.pin_current();
    QVERIFY(w.pinned());
    QVERIFY2(w.metrics_panel()->delta_text(Metric::tokens_per_s).contains(QStringLiteral("±0%")),
        qPrintable(w.metrics_panel()->delta_text(Metric::tokens_per_s)));
    Scenario s = *w.scenario();
    s.strategy.recompute = Recompute::full;
    w.apply_edit(s, QStringLiteral("full recompute"));
    QVERIFY(w.wait_for_evaluation());
    const QString delta = w.metrics_panel()->delta_text(Metric::step_time);
    QVERIFY2(delta.contains(QStringLiteral("vs pinned")) && delta.contains(u'+'), qPrintable(delta));
    QVERIFY(w.comparison_model()->dump().first().contains(u'%'));
    w.clear_pin();
    QVERIFY(w.metrics_panel()->delta_text(Metric::step_time).isEmpty());
}

void TestPlannerWindow::sensitivity_click_applies()
{
    Fixture f;
    MainWindow& w = f.w();
    w.show_panel(QStringLiteral("sensitivity"));
    views::SensitivityPlot* plot = w.sensitivity_plot();
    plot->set_degree(Degree::tp);
    plot->plot()->replot();
    const QString csv = plot->csv();
    QVERIFY(csv.startsWith(QStringLiteral("degree,value,valid")));
    QVERIFY(csv.count(u'\n') > 10);
    const QPoint p = plot->point_position(8);
    QVERIFY(!p.isNull());
    QTest::mouseClick(plot->plot(), Qt::LeftButton, {}, p);
    QCOMPARE(f.strategy().tp, 8);
    QCOMPARE(f.strategy().dp, 1);
}

// Values a rule refuses have no point on the curve; the note names them instead of leaving silent gaps
// (Llama 3.1 405B on 16,384 GPUs, interleaved: with DP absorbing, TP 4 leaves 8 micro-batches for 16 stages).
void TestPlannerWindow::sensitivity_names_refused_values()
{
    Fixture f(QStringLiteral("llama3.1-405b-16k-h100"));
    MainWindow& w = f.w();
    w.show_panel(QStringLiteral("sensitivity"));
    views::SensitivityPlot* plot = w.sensitivity_plot();
    plot->set_degree(Degree::tp);
    QStringList refused;
    for (const PlanPoint& pt : w.evaluation()->curve(Degree::tp).points)
        if (!pt.valid())
            refused << QString::number(pt.option.value);
    QVERIFY(refused.contains(QStringLiteral("4")));
    QVERIFY2(plot->note_text().contains(
                 QStringLiteral("TP ") + refused.join(QStringLiteral(", ")) + QStringLiteral(": not allowed")),
        qPrintable(plot->note_text()));
    plot->set_degree(Degree::vpp);
    QVERIFY2(!plot->note_text().contains(QStringLiteral("TP ")), qPrintable(plot->note_text()));
}

namespace {

// The graph of a plot with this legend name; null if none.
QCPGraph* graph_named(QCustomPlot* plot, const QString& name)
{
    for (int i = 0; i < plot->graphCount(); ++i)
        if (plot->graph(i)->name() == name)
            return plot->graph(i);
    return nullptr;
}

} // namespace

void TestPlannerWindow::error_band_on_cards_and_plots()
{
    Fixture f;
    MainWindow& w = f.w();
    const Prediction& p = w.evaluation()->prediction;
    QCOMPARE(p.interval.level, 0.8);
    // The cards of throughput-like metrics carry the band, peak memory its own; others none.
    const QString band = w.metrics_panel()->band_text(Metric::tokens_per_s);
    QVERIFY2(band.contains(QStringLiteral("80%: ")), qPrintable(band));
    QVERIFY(band.contains(QString::fromStdString(format_grouped(p.interval.tokens_per_s_low, 3))));
    QVERIFY(!w.metrics_panel()->band_text(Metric::step_time).isEmpty());
    QVERIFY(!w.metrics_panel()->band_text(Metric::mfu).isEmpty());
    QVERIFY(w.metrics_panel()->band_text(Metric::bubble).isEmpty());
    const QString memory = w.metrics_panel()->band_text(Metric::peak_memory);
    QVERIFY2(memory.contains(QStringLiteral("80%: ")) && memory.contains(QStringLiteral("GiB")), qPrintable(memory));
    // The sensitivity plot shades the same band around every point of its curve.
    w.show_panel(QStringLiteral("sensitivity"));
    views::SensitivityPlot* plot = w.sensitivity_plot();
    plot->set_degree(Degree::tp);
    QCPGraph* upper = graph_named(plot->plot(), QStringLiteral("80% band"));
    QCPGraph* tokens = graph_named(plot->plot(), QStringLiteral("tokens/s"));
    QVERIFY(upper && tokens);
    QVERIFY(upper->data()->size() > 2);
    QCOMPARE(upper->data()->size(), tokens->data()->size());
    const double high = p.interval.tokens_per_s_high / p.tokens_per_s;
    for (int i = 0; i < tokens->data()->size(); ++i)
        QVERIFY(std::fabs(upper->data()->at(i)->value - tokens->data()->at(i)->value * high)
            < 1e-9 * upper->data()->at(i)->value);
}

void TestPlannerWindow::core_search_marks_indistinguishable_plans()
{
    Fixture f;
    views::SearchPanel* panel = f.w().search_panel();
    // The window wires its engine after the panel has its scenario: the panel does not claim it has none.
    QVERIFY2(!panel->status_text().contains(QStringLiteral("No search engine")), qPrintable(panel->status_text()));
    QSignalSpy done(panel, &views::SearchPanel::finished);
    panel->start();
    QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, 120000);
    const int n = panel->model()->rowCount();
    QVERIFY(n >= 3);
    int marked = 0;
    for (int i = 0; i < n; ++i) {
        const QModelIndex rank = panel->model()->index(i, views::SearchResultsModel::rank);
        const bool same = rank.data().toString().endsWith(QStringLiteral("≈"));
        marked += same;
        // The tooltip: the plan's label, then the explanation, which opens with the verdict.
        QCOMPARE(rank.data(Qt::ToolTipRole).toString().contains(QStringLiteral("\nnot distinguishable from #1")), same);
        // Every plan names the published run nearest it and how the model did there.
        QVERIFY(panel->model()
                    ->index(i, views::SearchResultsModel::explanation)
                    .data()
                    .toString()
                    .contains(QStringLiteral("nearest measured run: ")));
    }
    QVERIFY(!panel->model()->index(0, views::SearchResultsModel::rank).data().toString().endsWith(QStringLiteral("≈")));
    QVERIFY(marked > 0);
}

// The planner's search offers what training.framework runs, or with "Any framework" every framework's plans;
// the Frameworks column labels each row as `search --any-framework` does.
void TestPlannerWindow::core_search_labels_frameworks()
{
    Fixture f;
    views::SearchPanel* panel = f.w().search_panel();
    QSignalSpy done(panel, &views::SearchPanel::finished);
    panel->start();
    QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, 120000);
    QVERIFY2(panel->status_text().contains(QStringLiteral("plans megatron runs")), qPrintable(panel->status_text()));
    QCOMPARE(panel->model()->headerData(views::SearchResultsModel::frameworks, Qt::Horizontal).toString(),
        QStringLiteral("Frameworks"));
    QVERIFY(panel->model()->rowCount() > 0);
    for (int i = 0; i < panel->model()->rowCount(); ++i)
        QVERIFY(panel->model()
                    ->index(i, views::SearchResultsModel::frameworks)
                    .data()
                    .toString()
                    .contains(QStringLiteral("megatron")));
    panel->any_framework_box()->setChecked(true);
    panel->start();
    QTRY_COMPARE_WITH_TIMEOUT(done.count(), 2, 120000);
    QVERIFY2(panel->status_text().contains(QStringLiteral("every framework")), qPrintable(panel->status_text()));
    const Scenario& s = *f.w().scenario();
    for (int i = 0; i < panel->model()->rowCount(); ++i) {
        const views::SearchRow* r = panel->model()->row_at(i);
        QCOMPARE(panel->model()->index(i, views::SearchResultsModel::frameworks).data().toString(),
            QString::fromStdString(frameworks_label(frameworks_running(r->strategy, s.model))));
    }
}

void TestPlannerWindow::heatmap_click_applies_and_marks_oom()
{
    Fixture f(QStringLiteral("gpt3-175b-1024-a100"));
    MainWindow& w = f.w();
    w.show_panel(QStringLiteral("heatmap"));
    views::HeatmapPlot* map = w.heatmap_plot();
    map->plot()->replot();
    const QString csv = map->csv();
    QVERIFY(csv.contains(QStringLiteral(",1,,0,"))); // valid but does not fit (OOM)
    const QPoint p = map->cell_position(4, 32);
    QVERIFY(!p.isNull());
    QTest::mouseClick(map->plot(), Qt::LeftButton, {}, p);
    QCOMPARE(f.strategy().tp, 4);
    QCOMPARE(f.strategy().pp, 32);
    QCOMPARE(f.strategy().total_gpus(), 1024LL);
}

void TestPlannerWindow::plots_export()
{
    Fixture f;
    MainWindow& w = f.w();
    QTemporaryDir dir;
    QString error;
    for (const char* ext : { "png", "svg", "pdf" }) {
        for (QWidget* target :
            { static_cast<QWidget*>(w.sensitivity_plot()->plot()), static_cast<QWidget*>(w.heatmap_plot()->plot()),
                static_cast<QWidget*>(w.memory_view()), static_cast<QWidget*>(w.grid_view()) }) {
            const QString path = dir.filePath(target->objectName() + QStringLiteral(".") + QString::fromLatin1(ext));
            QVERIFY2(views::export_image(target, path, &error), qPrintable(error));
            QFile out(path);
            QVERIFY(out.open(QIODevice::ReadOnly));
            const QByteArray head = out.read(8);
            if (QByteArray(ext) == "png")
                QVERIFY(head.startsWith("\x89PNG"));
            else if (QByteArray(ext) == "pdf")
                QVERIFY(head.startsWith("%PDF"));
            else
                QVERIFY(head.startsWith("<?xml"));
        }
    }
    QVERIFY(!views::export_image(w.memory_view(), dir.filePath(QStringLiteral("x.bmpx")), &error));
    QVERIFY(error.contains(QStringLiteral("unknown picture format")));
    const QString csv = dir.filePath(QStringLiteral("memory.csv"));
    QVERIFY(views::write_text_atomically(csv, w.memory_view()->csv(), &error));
    QFile in(csv);
    QVERIFY(in.open(QIODevice::ReadOnly));
    const QList<QByteArray> lines = in.readAll().split('\n');
    QVERIFY(lines.first().startsWith("stage,layers"));
    QCOMPARE(lines.size(), 4 + 2); // header, 4 stages, trailing newline
    QVERIFY(w.time_view()->csv().startsWith(QStringLiteral("plan,compute_s")));
}

// The step-time bar shows every part of the critical path, the activation copies to host memory included, so
// its parts add up to the step (a plan that offloads activations over a slow host link).
void TestPlannerWindow::time_breakdown_lists_host_copies()
{
    Prediction p;
    p.time.compute_s = 6.876;
    p.time.exposed_dp_s = 0.010;
    p.time.optimizer_s = 0.006;
    p.time.host_copy_s = 0.398;
    p.step_time_s = p.time.total();
    views::TimeBreakdownView view;
    view.set_predictions(p, nullptr);
    const QStringList lines = view.csv().split(u'\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 2);
    const QStringList head = lines[0].split(u',');
    const QStringList row = lines[1].split(u',');
    const qsizetype host = head.indexOf(QStringLiteral("host_copies_s"));
    QVERIFY(host > 0);
    QCOMPARE(row[host].toDouble(), 0.398);
    double parts = 0;
    for (qsizetype k = 1; k + 1 < row.size(); ++k)
        parts += row[k].toDouble();
    QVERIFY(std::fabs(parts - row.last().toDouble()) < 1e-9);
    QCOMPARE(views::time_part_name(views::TimePart::host_copy), QStringLiteral("host copies"));
    QCOMPARE(views::time_metric(views::TimePart::host_copy), Metric::time_host_copy);
    QCOMPARE(metric_value(p, Metric::time_host_copy), 0.398);
}

void TestPlannerWindow::report_export()
{
    Fixture f;
    MainWindow& w = f.w();
    QTemporaryDir dir;
    const QString single = dir.filePath(QStringLiteral("report.html"));
    QString error;
    QVERIFY2(w.export_report(single, &error), qPrintable(error));
    QFile a(single);
    QVERIFY(a.open(QIODevice::ReadOnly));
    const QString html = QString::fromUtf8(a.readAll());
    QVERIFY(html.startsWith(QStringLiteral("<!DOCTYPE html>")));
    QVERIFY(html.contains(QStringLiteral("llama3-70b")));
    QVERIFY(html.contains(QStringLiteral("data:image/png;base64,")));
    QVERIFY(html.contains(QStringLiteral("Assumptions")));
    QVERIFY(html.contains(QStringLiteral("calibration")));
    QVERIFY(!html.contains(QStringLiteral("src='http"))); // self-contained
    QVERIFY(html.contains(QStringLiteral("Timeline of the simulated plan")));
    w.pin_current();
    Scenario s = *w.scenario();
    s.strategy.tp = 8;
    s.strategy.dp = 1;
    w.apply_edit(s, QStringLiteral("tp 8"));
    QVERIFY(w.wait_for_evaluation());
    const QString pair = dir.filePath(QStringLiteral("a-vs-b.html"));
    QVERIFY2(w.export_report(pair, &error), qPrintable(error));
    QFile b(pair);
    QVERIFY(b.open(QIODevice::ReadOnly));
    const QString ab = QString::fromUtf8(b.readAll());
    QVERIFY(ab.contains(QStringLiteral("plan A vs plan B")));
    QVERIFY(ab.contains(QStringLiteral("Why B differs from A")));
    QVERIFY(ab.contains(QStringLiteral("tp 4 -&gt; 8")));
}

void TestPlannerWindow::learn_tooltips_say_why()
{
    Fixture f;
    MainWindow& w = f.w();
    views::DegreeSlider* pp = w.strategy_panel()->slider(Degree::pp);
    QVERIFY(pp->toolTip().contains(QStringLiteral("Source")));
    QVERIFY(pp->toolTip().contains(QStringLiteral("bubble")));
    QVERIFY(w.strategy_panel()->zero_box()->toolTip().contains(QStringLiteral("ZeRO")));
    pp->setFocus();
    QTest::keyClick(pp, Qt::Key_Home); // pp 1: no bubble any more
    QVERIFY(w.wait_for_evaluation());
    QVERIFY2(pp->toolTip().contains(QStringLiteral("Why it moved")), qPrintable(pp->toolTip()));
    const QString learn = w.learn_panel()->latest_html();
    QVERIFY2(learn.contains(QStringLiteral("pp 4 -&gt; 1")), qPrintable(learn));
    QVERIFY(learn.contains(QStringLiteral("Step time")));
    const QList<QWidget*> cards = w.metrics_panel()->findChildren<QWidget*>(QStringLiteral("metric_card"));
    QVERIFY(!cards.isEmpty());
    bool why = false;
    for (QWidget* c : cards)
        why = why || c->toolTip().contains(QStringLiteral("Why it moved"));
    QVERIFY(why);
}

void TestPlannerWindow::latest_request_wins()
{
    const Scenario s = load_scenario_preset("gpt3-175b-1024-a100", PresetCatalog::standard());
    app::PlanEvaluator evaluator;
    QSignalSpy spy(&evaluator, &app::PlanEvaluator::evaluated);
    quint64 last = 0;
    Scenario t = s;
    for (int mb : { 1, 2, 4, 8, 1, 2, 4, 8, 1, 2, 4, 8, 1, 2, 4, 8, 1, 2, 4, 3 }) {
        t.strategy.micro_batch = mb;
        last = evaluator.request(t, PlanEvaluationOptions {});
    }
    QTRY_VERIFY_WITH_TIMEOUT(evaluator.idle(), 20000);
    QCOMPARE(evaluator.delivered_request(), last);
    QVERIFY(spy.count() >= 1);
    QVERIFY(spy.count() < 20); // stale ones were dropped
    const auto e = spy.last().first().value<std::shared_ptr<const PlanEvaluation>>();
    QCOMPARE(e->scenario.strategy.micro_batch, 3);
}

void TestPlannerWindow::themes_and_layout()
{
    Fixture f;
    MainWindow& w = f.w();
    w.set_theme(app::Theme::dark);
    QVERIFY(views::is_dark(QApplication::palette()));
    QCOMPARE(f.settings->theme(), app::Theme::dark);
    QApplication::processEvents();
    QVERIFY(views::is_dark(w.memory_view()->palette()));
    const QImage dark = w.grab().toImage();
    QVERIFY(
        qGray(dark.pixel(dark.width() / 2, dark.height() / 2)) < 128 || qGray(dark.pixel(5, dark.height() - 5)) < 128);
    w.set_theme(app::Theme::light);
    QVERIFY(!views::is_dark(QApplication::palette()));

    const QByteArray layout = w.save_layout();
    w.dock(QStringLiteral("learn"))->hide();
    const QByteArray hidden = w.save_layout();
    w.reset_layout();
    QVERIFY(!w.dock(QStringLiteral("learn"))->isHidden());
    QVERIFY(w.restore_layout(hidden));
    QVERIFY(w.dock(QStringLiteral("learn"))->isHidden());
    QVERIFY(w.restore_layout(layout));
    QVERIFY(!w.dock(QStringLiteral("learn"))->isHidden());
    for (const QString& name : MainWindow::panel_names())
        QVERIFY2(w.panel(name) != nullptr, qPrintable(name));
    QVERIFY(w.panel(QStringLiteral("nope")) == nullptr);
    QLabel* fidelity = w.findChild<QLabel*>(QStringLiteral("fidelity_label"));
    QVERIFY(fidelity->text().contains(QStringLiteral("Fidelity: analytic")));
    QVERIFY(fidelity->text().contains(QStringLiteral("calibration")));
    QVERIFY(fidelity->toolTip().contains(QStringLiteral("calibration")));
    w.set_fidelity(Fidelity::simulated);
    QVERIFY(w.wait_for_evaluation());
    QCOMPARE(w.evaluation()->prediction.fidelity, Fidelity::simulated);
    QVERIFY(w.fidelity_text().contains(QStringLiteral("simulated")));
}

namespace {

// A calibration file with Hopper GEMMs at 70% of the physics' rate (far from the shipped scales), for `gpu`.
QString write_calibration(const QTemporaryDir& dir, const std::string& name, const std::string& gpu)
{
    Calibration c = no_calibration();
    c.name = name;
    c.source = "test: Hopper GEMMs at 70%";
    c.gpu = gpu;
    c.gemm_scale[static_cast<int>(GpuArchitecture::hopper)] = 0.7;
    const QString path = dir.filePath(QString::fromStdString(name) + QStringLiteral(".json"));
    write_text_file_atomically(path.toStdString(), calibration_to_json(c).dump(2));
    return path;
}

QString shipped_label()
{
    return QStringLiteral("calibration: ") + QString::fromStdString(builtin_calibration().name);
}

QString fidelity_label_text(MainWindow& w)
{
    return w.findChild<QLabel*>(QStringLiteral("fidelity_label"))->text();
}

} // namespace

void TestPlannerWindow::calibration_is_chosen_shown_and_kept()
{
    Fixture f;
    MainWindow& w = f.w();
    QVERIFY2(fidelity_label_text(w).contains(shipped_label()), qPrintable(fidelity_label_text(w)));
    const double shipped = w.evaluation()->prediction.tokens_per_s;
    const QString path = write_calibration(f.dir, "test-h100", "H100-SXM5-80GB");

    QVERIFY(w.use_calibration_file(path));
    QVERIFY(w.wait_for_evaluation());
    QLabel* label = w.findChild<QLabel*>(QStringLiteral("fidelity_label"));
    QVERIFY2(label->text().contains(QStringLiteral("calibration: test-h100")), qPrintable(label->text()));
    QVERIFY2(label->toolTip().contains(path), qPrintable(label->toolTip())); // where it came from
    QVERIFY(label->toolTip().contains(QStringLiteral("Hopper GEMMs at 70%")));
    const double with_file = w.evaluation()->prediction.tokens_per_s;
    QVERIFY2(
        std::fabs(with_file / shipped - 1) > 0.02, qPrintable(QStringLiteral("%1 vs %2").arg(with_file).arg(shipped)));
    QCOMPARE(f.settings->calibration(), QFileInfo(path).absoluteFilePath());
    QVERIFY(w.findChild<QAction*>(QStringLiteral("use_calibration_file"))->isChecked());
    // The search ranks plans with it too.
    QSignalSpy searched(w.search_panel(), &views::SearchPanel::finished);
    w.search_panel()->start();
    QTRY_COMPARE_WITH_TIMEOUT(searched.count(), 1, 120000);
    QVERIFY2(w.search_panel()->model()->rowCount() > 0, qPrintable(w.search_panel()->status_text()));
    const std::vector<std::string>& assumed = w.search_panel()->model()->row_at(0)->prediction.assumptions;
    QVERIFY(std::any_of(assumed.begin(), assumed.end(),
        [](const std::string& a) { return a.rfind("calibration: test-h100", 0) == 0; }));

    // A file that is no calibration: an error, and the plan keeps the calibration it had.
    const QString bad = f.dir.filePath(QStringLiteral("bad.json"));
    write_text_file_atomically(bad.toStdString(), "{ \"gemm_scale\": 3 ");
    QVERIFY(!w.use_calibration_file(bad));
    QVERIFY(!w.error_text().isEmpty());
    QCOMPARE(w.calibration_file(), QFileInfo(path).absoluteFilePath());
    QCOMPARE(f.settings->calibration(), QFileInfo(path).absoluteFilePath());

    // The choice outlives the window.
    {
        MainWindow::Options o;
        o.restore_layout = false;
        o.autosave = false;
        o.settings = f.settings.get();
        MainWindow again(o);
        QVERIFY(again.open_scenario_preset(QStringLiteral("default")));
        QVERIFY(again.wait_for_evaluation());
        QCOMPARE(QString::fromStdString(again.calibration().name), QStringLiteral("test-h100"));
        QVERIFY(fidelity_label_text(again).contains(QStringLiteral("calibration: test-h100")));
        QCOMPARE(again.evaluation()->prediction.tokens_per_s, with_file);
    }

    w.use_no_calibration();
    QVERIFY(w.wait_for_evaluation());
    QVERIFY2(label->text().contains(QStringLiteral("calibration: none")), qPrintable(label->text()));
    QCOMPARE(f.settings->calibration(), QStringLiteral("none"));
    QVERIFY(w.evaluation()->prediction.tokens_per_s != shipped);
    w.use_shipped_calibration();
    QVERIFY(w.wait_for_evaluation());
    QVERIFY(label->text().contains(shipped_label()));
    QCOMPARE(w.evaluation()->prediction.tokens_per_s, shipped);
    QCOMPARE(f.settings->calibration(), QStringLiteral("shipped"));

    // A chosen file that went away: said at start, the shipped one is used, and the choice is kept.
    app::Settings gone(f.dir.filePath(QStringLiteral("gone.ini")), nullptr);
    gone.set_calibration(f.dir.filePath(QStringLiteral("moved-away.json")));
    MainWindow::Options o;
    o.restore_layout = false;
    o.autosave = false;
    o.settings = &gone;
    MainWindow missing(o);
    QVERIFY2(missing.error_text().contains(QStringLiteral("moved-away.json")), qPrintable(missing.error_text()));
    QCOMPARE(QString::fromStdString(missing.calibration().name), QString::fromStdString(builtin_calibration().name));
    QVERIFY(missing.calibration_file().isEmpty());
    QCOMPARE(gone.calibration(), f.dir.filePath(QStringLiteral("moved-away.json")));
}

void TestPlannerWindow::calibration_of_another_gpu_is_not_applied()
{
    Fixture f; // the default scenario runs on H100s
    MainWindow& w = f.w();
    const double shipped = w.evaluation()->prediction.tokens_per_s;
    QVERIFY(w.use_calibration_file(write_calibration(f.dir, "runs:dgx-b200", "B200")));
    QVERIFY(w.wait_for_evaluation());
    QLabel* label = w.findChild<QLabel*>(QStringLiteral("fidelity_label"));
    QVERIFY2(
        label->text().contains(QStringLiteral("runs:dgx-b200 NOT applied (fitted on B200")), qPrintable(label->text()));
    QVERIFY(label->text().contains(shipped_label())); // what the prediction used instead
    QVERIFY(w.calibration_note().contains(QStringLiteral("not applied to H100-SXM5-80GB")));
    QVERIFY(w.fidelity_text().contains(QStringLiteral("not applied"))); // the report says it too
    QCOMPARE(w.evaluation()->prediction.tokens_per_s, shipped);
    if (const QString keep = qEnvironmentVariable("PARALLAX_TEST_ARTIFACTS"); !keep.isEmpty()) {
        QDir().mkpath(keep);
        QApplication::processEvents(); // the label's new width
        w.statusBar()->grab().save(keep + QStringLiteral("/status-bar-calibration-not-applied.png"));
    }
    bool warned = false;
    for (const std::string& warning : w.evaluation()->prediction.warnings)
        warned = warned || warning.find("not applied to H100") != std::string::npos;
    QVERIFY(warned);
    // On a B200 plan the same file applies, and the bar says nothing more.
    Scenario b200 = *w.scenario();
    b200.cluster.gpu = resolve_gpu(nlohmann::json("B200"), "test", "gpu", PresetCatalog::standard(), nullptr);
    w.apply_edit(b200, QStringLiteral("GPU B200"));
    QVERIFY(w.wait_for_evaluation());
    QVERIFY(w.calibration_note().isEmpty());
    QVERIFY2(label->text().contains(QStringLiteral("calibration: runs:dgx-b200")), qPrintable(label->text()));
    QVERIFY(!label->text().contains(QStringLiteral("NOT applied")));
}

void TestPlannerWindow::shortcuts()
{
    Fixture f;
    QStringList keys;
    for (QAction* a : f.w().findChildren<QAction*>())
        for (const QKeySequence& k : a->shortcuts())
            keys << k.toString();
    for (const char* k :
        { "Ctrl+Z", "Ctrl+S", "Ctrl+O", "Ctrl+N", "Ctrl+P", "Ctrl+E", "Ctrl+Shift+S", "Ctrl+Shift+D", "Ctrl+1", "F1" })
        QVERIFY2(keys.contains(QString::fromLatin1(k)), k);
    // Ctrl+Z through the shortcut undoes a change.
    Scenario s = *f.w().scenario();
    s.strategy.zero = 2;
    f.w().apply_edit(s, QStringLiteral("zero 2"));
    f.w().activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&f.w()));
    QTest::keyClick(&f.w(), Qt::Key_Z, Qt::ControlModifier);
    QCOMPARE(f.strategy().zero, 1);
}

void TestPlannerWindow::search_panel_runs_and_applies()
{
    Fixture f;
    MainWindow& w = f.w();
    views::SearchPanel* panel = w.search_panel();
    QVERIFY(panel->findChild<QPushButton*>(QStringLiteral("search_start"))->isEnabled()); // the core search by default
    auto engine = std::make_shared<FakeEngine>();
    w.set_search_engine(engine);
    QAbstractItemModelTester tester(panel->model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSignalSpy done(panel, &views::SearchPanel::finished);
    panel->start();
    QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, 10000);
    QCOMPARE(panel->model()->rowCount(), 3);
    QVERIFY2(panel->status_text().contains(QStringLiteral("3 strategies evaluated")), qPrintable(panel->status_text()));
    panel->table()->sortByColumn(views::SearchResultsModel::tp, Qt::DescendingOrder);
    const QModelIndex top = panel->proxy()->index(0, 0);
    QCOMPARE(panel->proxy()->index(0, views::SearchResultsModel::tp).data().toInt(), 8);
    emit panel->table()->activated(top);
    QCOMPARE(f.strategy().tp, 8);
    QCOMPARE(f.strategy().dp, 1);
}

void TestPlannerWindow::search_panel_cancels()
{
    Fixture f;
    views::SearchPanel* panel = f.w().search_panel();
    auto engine = std::make_shared<FakeEngine>();
    engine->wait_for_cancel = true;
    f.w().set_search_engine(engine);
    QSignalSpy done(panel, &views::SearchPanel::finished);
    panel->start();
    QVERIFY(panel->running());
    QTRY_VERIFY(engine->started.available() > 0);
    panel->cancel();
    QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, 10000);
    QVERIFY(!panel->running());
    QVERIFY2(panel->status_text().startsWith(QStringLiteral("Stopped")), qPrintable(panel->status_text()));
}

void TestPlannerWindow::search_panel_reports_a_throwing_search()
{
    Fixture f;
    views::SearchPanel* panel = f.w().search_panel();
    auto engine = std::make_shared<FakeEngine>();
    engine->throw_bad_alloc = true;
    f.w().set_search_engine(engine);
    QSignalSpy done(panel, &views::SearchPanel::finished);
    panel->start();
    QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, 10000);
    QVERIFY(!panel->running());
    QVERIFY2(panel->status_text().startsWith(QStringLiteral("Search failed: ")), qPrintable(panel->status_text()));
    QVERIFY2(panel->status_text().contains(QStringLiteral("bad_alloc")), qPrintable(panel->status_text()));
    // The panel can search again afterwards.
    engine->throw_bad_alloc = false;
    panel->start();
    QTRY_COMPARE_WITH_TIMEOUT(done.count(), 2, 10000);
    QCOMPARE(panel->model()->rowCount(), 3);
}

void TestPlannerWindow::core_search_engine_ranks_plans()
{
    Fixture f;
    views::SearchPanel* panel = f.w().search_panel();
    QSignalSpy done(panel, &views::SearchPanel::finished);
    panel->start();
    QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, 120000);
    QVERIFY2(panel->model()->rowCount() > 0, qPrintable(panel->status_text()));
    const views::SearchRow* best = panel->model()->row_at(0);
    QVERIFY(best->prediction.tokens_per_s > 0);
    QVERIFY(best->explanation.startsWith(QStringLiteral("limited by")));
    QCOMPARE(best->strategy.total_gpus(), 64LL);
    emit panel->table()->activated(panel->proxy()->mapFromSource(panel->model()->index(0, 0)));
    QVERIFY(f.strategy() == best->strategy);
}

void TestPlannerWindow::timeline_follows_the_plan()
{
    Fixture f;
    MainWindow& w = f.w();
    QVERIFY(w.wait_for_timeline());
    auto data = w.timeline_view()->timeline_data();
    QVERIFY(data);
    QVERIFY(data->info.strategy.has_value());
    QCOMPARE(data->info.strategy->tp, 4);
    QCOMPARE(static_cast<int>(data->stages.size()) > 0, true);
    Scenario s = *w.scenario();
    s.strategy.tp = 8;
    s.strategy.dp = 1;
    w.apply_edit(s, QStringLiteral("tp 8"));
    QVERIFY(w.wait_for_timeline());
    QCOMPARE(w.timeline_view()->timeline_data()->info.strategy->tp, 8);
    QVERIFY(w.timeline_current());
}

void TestPlannerWindow::power_panel_shows_the_budget_and_follows_the_cap()
{
    // The Power panel: the prediction's per-GPU, node, rack and cluster figures; a cap typed into the
    // training editor throttles the plan, and the panel and the numbers say so; an out-of-range cap
    // is refused inline with core's message.
    Fixture f;
    MainWindow& w = f.w();
    QVERIFY(w.show_panel(QStringLiteral("power")));
    views::PowerPanel* panel = w.power_panel();
    const PowerEstimate& pw = w.evaluation()->prediction.power;
    const QStringList lines = panel->budget_lines();
    QCOMPARE(lines.size(), 4);
    QVERIFY2(lines[0].startsWith(QStringLiteral("GPU | 64 | ")), qPrintable(lines[0]));
    QVERIFY2(
        lines[0].contains(QString::number(std::lround(pw.avg_W_per_gpu)) + QStringLiteral(" W")), qPrintable(lines[0]));
    QVERIFY2(lines[1].contains(QStringLiteral("| 8 |")), qPrintable(lines[1]));
    QVERIFY2(
        lines[3].contains(QString::number(pw.cluster_avg_kW, 'f', 1) + QStringLiteral(" kW")), qPrintable(lines[3]));
    QVERIFY(panel->limits_text().contains(QStringLiteral("not reached")));
    QCOMPARE(panel->stage_bars()->csv().count(QLatin1Char('\n')), 1 + w.scenario()->strategy.pp);
    const double step = w.evaluation()->prediction.step_time_s;
    auto* cap
        = qobject_cast<QDoubleSpinBox*>(w.training_editor()->field_widget(QStringLiteral("training.power_cap_W")));
    QVERIFY(cap);
    cap->setValue(450);
    QCOMPARE(w.scenario()->training.power_cap_W, 450.0);
    QVERIFY(w.wait_for_evaluation());
    QVERIFY(w.evaluation()->prediction.step_time_s > step);
    QVERIFY(w.evaluation()->prediction.power.power_capped);
    QVERIFY(panel->limits_text().contains(QStringLiteral("throttles kernels")));
    cap->setValue(800); // above the H100's 700 W TDP
    QCOMPARE(w.scenario()->training.power_cap_W, 450.0);
    QVERIFY(
        w.training_editor()->field_message(QStringLiteral("training.power_cap_W")).contains(QStringLiteral("tdp_W")));
    w.undo_stack()->undo();
    QVERIFY(w.wait_for_evaluation());
    QCOMPARE(w.scenario()->training.power_cap_W, 0.0);
}

void TestPlannerWindow::training_editor_offers_fp32_training_and_reduction()
{
    // fp32 and tf32 training are in the precision list (a scenario read with them shows them), and the
    // fp32 gradient reduction is a switch; each edit is one undo step.
    Fixture f;
    MainWindow& w = f.w();
    const double step = w.evaluation()->prediction.step_time_s;
    const Precision original = w.scenario()->training.precision;
    auto* precision = qobject_cast<QComboBox*>(w.training_editor()->field_widget(QStringLiteral("training.precision")));
    QVERIFY(precision);
    QVERIFY(precision->findText(QStringLiteral("tf32")) >= 0);
    const int fp32 = precision->findText(QStringLiteral("fp32"));
    QVERIFY(fp32 >= 0);
    precision->setCurrentIndex(fp32);
    emit precision->activated(fp32);
    QVERIFY(w.scenario()->training.precision == Precision::fp32);
    QVERIFY(w.wait_for_evaluation());
    QCOMPARE(precision->currentText(), QStringLiteral("fp32"));
    QVERIFY(w.evaluation()->prediction.step_time_s > step); // the fp32 peak is a sixteenth of bf16's
    auto* reduce
        = qobject_cast<QCheckBox*>(w.training_editor()->field_widget(QStringLiteral("training.grad_reduce_in_fp32")));
    QVERIFY(reduce);
    QVERIFY(!reduce->isChecked());
    reduce->click();
    QVERIFY(w.scenario()->training.grad_reduce_in_fp32);
    w.undo_stack()->undo();
    QVERIFY(!w.scenario()->training.grad_reduce_in_fp32);
    w.undo_stack()->undo();
    QVERIFY(w.scenario()->training.precision == original);

    // DeepSpeed reduces in fp32 only without ZeRO: with ZeRO 1 the switch breaks a plan rule (shown where
    // the plan is edited); with ZeRO 0 the stages above 0 are offered disabled, saying why.
    auto* framework = qobject_cast<QComboBox*>(w.training_editor()->field_widget(QStringLiteral("training.framework")));
    QVERIFY(framework);
    const int ds = framework->findText(QStringLiteral("megatron-deepspeed"));
    framework->setCurrentIndex(ds);
    emit framework->activated(ds);
    QVERIFY(w.scenario()->training.framework == Framework::megatron_deepspeed);
    QComboBox* zero = w.strategy_panel()->zero_box();
    auto choose_zero = [&](int stage) {
        const int i = zero->findData(stage);
        zero->setCurrentIndex(i);
        emit zero->activated(i);
        QCOMPARE(w.scenario()->strategy.zero, stage);
    };
    choose_zero(1);
    reduce->click();
    QVERIFY(w.scenario()->training.grad_reduce_in_fp32);
    QVERIFY(!w.strategy_panel()->violations_label()->isHidden());
    QVERIFY(w.strategy_panel()->violations_label()->text().contains(QStringLiteral("training.grad_reduce_in_fp32")));
    choose_zero(0);
    QVERIFY(w.strategy_panel()->violations_label()->isHidden());
    auto* stages = qobject_cast<QStandardItemModel*>(zero->model());
    QVERIFY(stages);
    QVERIFY(stages->item(zero->findData(0))->isEnabled());
    for (int stage : { 1, 2, 3 }) {
        const QStandardItem* item = stages->item(zero->findData(stage));
        QVERIFY(!item->isEnabled());
        QVERIFY2(item->toolTip().contains(QStringLiteral("fp32_allreduce")), qPrintable(item->toolTip()));
    }
}

void TestPlannerWindow::improvements_panel_draws_the_waterfall()
{
    // The Improvements panel draws the evaluation's waterfall: the plan as given, each choice core lists,
    // and the plan with all of them; turning a listed choice on by hand removes it from the list.
    Fixture f;
    MainWindow& w = f.w();
    QVERIFY(w.show_panel(QStringLiteral("improvements")));
    views::WaterfallView* view = w.waterfall_view();
    const ImprovementWaterfall& iw = w.evaluation()->improvements;
    QVERIFY2(!iw.steps.empty(), "the default plan has choices left (per-stage clocks at least)");
    QCOMPARE(view->row_count(), static_cast<int>(iw.steps.size()) + 2);
    QCOMPARE(view->rows().front().step_to, w.evaluation()->prediction.step_time_s);
    QCOMPARE(view->rows().back().step_to, iw.steps.back().step_time_s);
    QCOMPARE(view->rows()[1].label, QString::fromStdString(iw.steps.front().name));
    QCOMPARE(view->csv().count(QLatin1Char('\n')), view->row_count() + 1);
    const bool had_overlap = std::any_of(
        iw.steps.begin(), iw.steps.end(), [](const Improvement& i) { return i.name == "fused TP overlap"; });
    if (had_overlap) {
        Scenario s = *w.scenario();
        s.strategy.tp_comm_overlap = true;
        w.apply_edit(s, QStringLiteral("tp overlap"));
        QVERIFY(w.wait_for_evaluation());
        for (const Improvement& i : w.evaluation()->improvements.steps)
            QVERIFY(i.name != "fused TP overlap");
    }
    const QImage shot = view->grab().toImage();
    QVERIFY(!shot.isNull());
}

void TestPlannerWindow::goodput_panel_follows_the_reliability_section()
{
    // Without a reliability section the panel says how to get one; with it, it draws goodput against the
    // checkpoint interval at the scenario's rate and at half and twice it, as core computed them.
    Fixture f;
    MainWindow& w = f.w();
    QVERIFY(w.show_panel(QStringLiteral("goodput")));
    views::GoodputView* view = w.goodput_view();
    QVERIFY(!view->curves().present);
    QVERIFY(view->summary().contains(QStringLiteral("reliability")));
    // The empty plot keeps its units: goodput up to 100%, intervals of whole minutes.
    QCOMPARE(view->plot()->yAxis->range().upper, 100.0);
    QVERIFY(view->plot()->xAxis->range().lower >= 1);
    Scenario s = *w.scenario();
    ReliabilitySpec r;
    r.failure_rate_per_gpu_hour = 1e-3;
    r.checkpoint_write_GBps_per_node = 1;
    r.checkpoint_read_GBps_per_node = 1;
    r.restart_overhead_s = 300;
    s.reliability = r;
    w.apply_edit(s, QStringLiteral("reliability"));
    QVERIFY(w.wait_for_evaluation());
    const GoodputCurves& c = view->curves();
    QVERIFY(c.present);
    const GoodputReport report = scenario_goodput(*w.scenario(), w.evaluation()->prediction);
    QCOMPARE(c.fraction_used, report.fraction_of_throughput);
    QCOMPARE(c.curves[1].interruptions_per_day, report.interruptions_per_day);
    QVERIFY(view->summary().contains(QString::number(report.interruptions_per_day, 'f', 2)));
    for (std::size_t k = 0; k < c.interval_s.size(); ++k) {
        QVERIFY(c.curves[0].fraction[k] > c.curves[1].fraction[k]); // fewer interruptions, more goodput
        QVERIFY(c.curves[1].fraction[k] > c.curves[2].fraction[k]);
        QVERIFY(c.curves[1].fraction[k] <= c.curves[1].best_fraction + 1e-12);
    }
    QCOMPARE(view->csv().count(QLatin1Char('\n')), static_cast<int>(c.interval_s.size()) + 1);
    QVERIFY(!view->grab().toImage().isNull());
}

void TestPlannerWindow::schedule_program_editor_checks_and_applies()
{
    // The editor shows the plan's built-in schedule as a program; an error is named under the text with
    // its stage's line underlined and Apply disabled; applying the unedited program gives the same step.
    Fixture f;
    MainWindow& w = f.w();
    QVERIFY(w.show_panel(QStringLiteral("schedule")));
    views::ScheduleProgramEditor* editor = w.schedule_editor();
    const Strategy plan = w.scenario()->strategy;
    QVERIFY(plan.schedule != Schedule::custom);
    QVERIFY(editor->error().isEmpty());
    QVERIFY(editor->can_apply());
    const QString program = editor->text();
    QCOMPARE(program.count(QStringLiteral("stage ")), plan.pp);
    // Stage 1 loses its first forward: a missing pass, named with its stage.
    QStringList lines = program.split(QLatin1Char('\n'));
    const int stage1 = static_cast<int>(lines.indexOf(QRegularExpression(QStringLiteral("^stage 1:.*"))));
    QVERIFY(stage1 >= 0);
    lines[stage1].replace(QRegularExpression(QStringLiteral(" F0\\.0\\b")), QString());
    editor->set_text(lines.join(QLatin1Char('\n')));
    editor->check_now();
    QVERIFY(!editor->error().isEmpty());
    QVERIFY2(editor->error().contains(QStringLiteral("stage 1")), qPrintable(editor->error()));
    QCOMPARE(editor->error_line(), stage1);
    QVERIFY(!editor->can_apply());
    editor->set_text(program);
    editor->check_now();
    QVERIFY(editor->can_apply());
    const double builtin_step = w.evaluation()->prediction.step_time_s;
    editor->apply();
    QVERIFY(w.wait_for_evaluation());
    QCOMPARE(w.scenario()->strategy.schedule, Schedule::custom);
    QVERIFY(w.scenario()->strategy.program != nullptr);
    QVERIFY(std::fabs(w.evaluation()->prediction.step_time_s / builtin_step - 1) < 1e-9);
}

void TestPlannerWindow::scaling_sweep()
{
    Fixture f;
    MainWindow& w = f.w();
    w.show_panel(QStringLiteral("scaling"));
    // Before a sweep: whole GPU counts on the axis and no current-count line drawn from nowhere.
    QCustomPlot* scaling = w.scaling_plot()->plot();
    QVERIFY(scaling->xAxis->range().lower >= 1);
    for (int i = 0; i < scaling->itemCount(); ++i)
        QVERIFY(!scaling->item(i)->visible());
    QSignalSpy done(&w, &MainWindow::scaling_finished);
    w.run_scaling();
    QVERIFY(w.scaling_running());
    QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, 300000);
    QVERIFY(!w.scaling_running());
    const auto& points = w.scaling_plot()->points();
    QCOMPARE(points.size(), std::size_t(6)); // 8 .. 256 GPUs
    QCOMPARE(points.front().gpus, 8LL);
    QCOMPARE(points.back().gpus, 256LL);
    int with_plan = 0;
    for (const views::ScalingPoint& p : points)
        with_plan += p.has_plan ? 1 : 0;
    QVERIFY(with_plan >= 3); // 70B does not fit on the smallest counts
    for (const views::ScalingPoint& p : points)
        if (p.has_plan) {
            QCOMPARE(p.band_level, 0.8); // the best plan's error band
            QVERIFY(p.tokens_per_s_low < p.tokens_per_s && p.tokens_per_s <= p.tokens_per_s_high);
        }
    QVERIFY(w.scaling_plot()->csv().count(u'\n') == 7);
    QVERIFY(w.scaling_plot()->csv().startsWith(QStringLiteral("gpus,has_plan,tokens_per_s,tokens_per_s_low,")));
    // Cancel stops a running sweep and says so.
    w.run_scaling();
    w.cancel_scaling();
    QTRY_COMPARE_WITH_TIMEOUT(done.count(), 2, 120000);
}

void TestPlannerWindow::screenshot_option_writes_png_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QSize>("size");
    QTest::addColumn<bool>("dark");
    QTest::newRow("window") << QStringList {} << QSize(1600, 1000) << false;
    QTest::newRow("window dark 2x") << QStringList { QStringLiteral("--dark"), QStringLiteral("--dpi-scale"),
        QStringLiteral("2"), QStringLiteral("--size"), QStringLiteral("1366x768") }
                                    << QSize(2732, 1536) << true;
    QTest::newRow("panel") << QStringList { QStringLiteral("--panel"), QStringLiteral("sensitivity") } << QSize()
                           << false;
}

void TestPlannerWindow::screenshot_option_writes_png()
{
    QFETCH(QStringList, args);
    QFETCH(QSize, size);
    QFETCH(bool, dark);
    QTemporaryDir dir;
    const QString out = dir.filePath(QStringLiteral("shot.png"));
    QProcess p;
    p.start(QStringLiteral(PARALLAX_GUI_PATH),
        QStringList { QStringLiteral("--scenario"), QStringLiteral("default"), QStringLiteral("--screenshot"), out }
            + args);
    QVERIFY(p.waitForFinished(60000));
    QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
    QImage image(out);
    QVERIFY(!image.isNull());
    if (size.isValid())
        QCOMPARE(image.size(), size);
    else
        QVERIFY(image.width() > 200 && image.height() > 100);
    // Mean grey over a grid of samples: dark palettes are dark overall, light ones light.
    long long sum = 0;
    int n = 0;
    for (int y = 0; y < image.height(); y += 7)
        for (int x = 0; x < image.width(); x += 7, ++n)
            sum += qGray(image.pixel(x, y));
    const int gray = static_cast<int>(sum / std::max(1, n));
    if (dark)
        QVERIFY2(gray < 110, qPrintable(QString::number(gray)));
    else
        QVERIFY2(gray > 140, qPrintable(QString::number(gray)));
}

void TestPlannerWindow::screenshot_option_rejects_bad_input()
{
    QTemporaryDir dir;
    const QString out = dir.filePath(QStringLiteral("shot.png"));
    QProcess p;
    p.start(QStringLiteral(PARALLAX_GUI_PATH),
        { QStringLiteral("--scenario"), QStringLiteral("default"), QStringLiteral("--screenshot"), out,
            QStringLiteral("--panel"), QStringLiteral("nope") });
    QVERIFY(p.waitForFinished(60000));
    QCOMPARE(p.exitCode(), 2);
    QVERIFY(QString::fromLocal8Bit(p.readAllStandardError()).contains(QStringLiteral("strategy")));
    QVERIFY(!QFile::exists(out));
    p.start(QStringLiteral(PARALLAX_GUI_PATH),
        { QStringLiteral("--scenario"), QStringLiteral("no-such-scenario"), QStringLiteral("--screenshot"), out });
    QVERIFY(p.waitForFinished(60000));
    QCOMPARE(p.exitCode(), 2);
    QVERIFY(QString::fromLocal8Bit(p.readAllStandardError()).contains(QStringLiteral("no-such-scenario")));
}

// Headless and 96 DPI so fonts and metrics are the same everywhere (STYLE.md, Tests); QStandardPaths
// in test mode so settings and autosaves never touch the user's folders.
PARALLAX_PLANNER_TEST_MAIN(TestPlannerWindow)

#include "tst_planner_window.moc"

// The planner window on a mixed cluster (docs/heterogeneous.md), offscreen: it opens the example of an
// H100 and an A100 node, shows the hetero model's numbers per stage, re-predicts when a layer moves or
// a replica's TP changes (one undo step each), keeps the plain sliders still, colours the cluster grid by
// GPU type, simulates the stages on the timeline, searches mixed plans off the GUI thread and applies one
// as one undo step, moves layers by dragging a stage boundary, and adds and removes stages and replicas
// with buttons that are in view without scrolling at the Stages dock's default width.
#include "gui/launch_export.hpp"
#include "gui/main_window.hpp"
#include "gui/settings.hpp"
#include "io/preset_catalog.hpp"
#include "io/scenario_io.hpp"
#include "model/hetero_model.hpp"
#include "planner/cluster_grid_view.hpp"
#include "planner/degree_slider.hpp"
#include "planner/group_editor.hpp"
#include "planner/group_grid_view.hpp"
#include "planner/search_panel.hpp"
#include "planner/stage_bar.hpp"
#include "planner/stage_table.hpp"
#include "planner/strategy_panel.hpp"
#include "search/hetero_search.hpp"
#include "sim/hetero_simulation.hpp"
#include "timeline/timeline_view.hpp"
#include "viewdata/timeline_data.hpp"

#include "../support/planner_test_main.hpp"

#include <QComboBox>
#include <QDockWidget>
#include <QPushButton>
#include <QScrollBar>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>
#include <QUndoStack>

#include <memory>

using namespace parallax;
using parallax::app::MainWindow;

namespace {

const QString kExample = QStringLiteral(PARALLAX_SOURCE_DIR "/docs/examples/hetero-h100-a100.json");

// A window with private settings, shown, on the mixed-cluster example, evaluated.
struct Fixture {
    QTemporaryDir dir;
    std::unique_ptr<app::Settings> settings;
    std::unique_ptr<MainWindow> window;

    Fixture()
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
    }
    MainWindow& w() { return *window; }
    // What the hetero model predicts for the window's plan, with the window's calibration.
    HeteroPrediction model() const
    {
        return predict_heterogeneous(*window->scenario(), window->evaluation_options().calibration_or_shipped());
    }
};

void compare_rows(const std::vector<StageRow>& rows, const HeteroPrediction& h)
{
    QCOMPARE(rows.size(), h.stages.size());
    for (std::size_t k = 0; k < rows.size(); ++k) {
        QCOMPARE(rows[k].layers, h.stages[k].layers);
        QCOMPARE(rows[k].busy_s, h.stages[k].busy_s);
        QCOMPARE(rows[k].microbatch_s, h.stages[k].microbatch_s);
        QCOMPARE(rows[k].critical, static_cast<int>(k) == h.critical_stage);
        QCOMPARE(rows[k].replicas.size(), h.stages[k].replicas.size());
        for (std::size_t r = 0; r < rows[k].replicas.size(); ++r) {
            QCOMPARE(rows[k].replicas[r].tp, h.stages[k].replicas[r].tp);
            QCOMPARE(rows[k].replicas[r].microbatches, h.stages[k].replicas[r].microbatches);
            QCOMPARE(rows[k].replicas[r].memory_bytes, h.stages[k].replicas[r].peak_memory_bytes);
        }
    }
}

} // namespace

class TestHeteroPlanner : public QObject {
    Q_OBJECT
private slots:
    void opensWithTheModelsStages();
    void plainSlidersStayStill();
    void movingALayerRepredicts();
    void replicaTpIsEditable();
    void gridColoursByGpuType();
    void timelineShowsStagesOfDifferentSpeeds();
    void searchFindsMixedPlansAndApplies();
    void draggingABoundaryMovesLayers();
    void addingAndRemovingStagesAndReplicas();
    void editButtonsNeedNoScroll();
    void exportWritesTheMixedPlansFiles();
    void clusterEditorEditsGroups();
    void clusterEditorSetsAGroupsNics();
    void simulatedFidelity();
};

void TestHeteroPlanner::opensWithTheModelsStages()
{
    Fixture f;
    QVERIFY2(f.w().open_scenario_file(kExample), qPrintable(f.w().last_error()));
    QVERIFY(f.w().wait_for_evaluation());
    const auto e = f.w().evaluation();
    QVERIFY(e->valid);
    const HeteroPrediction h = f.model();
    QCOMPARE(e->prediction.step_time_s, h.prediction.step_time_s);
    QCOMPARE(e->prediction.peak_memory_bytes, h.prediction.peak_memory_bytes); // the worst replica's
    compare_rows(f.w().stage_table()->rows(), h);
    const QTableWidget* table = f.w().stage_table()->table();
    QCOMPARE(table->rowCount(), 2);
    const int pacing = h.critical_stage;
    QVERIFY(table->item(pacing, views::StageTable::stage)->text().contains(QStringLiteral("pacing")));
    QVERIFY(!table->item(1 - pacing, views::StageTable::stage)->text().contains(QStringLiteral("pacing")));
    QVERIFY(table->item(0, views::StageTable::layers)->text().startsWith(QStringLiteral("16 (L0–15)")));
    QVERIFY(f.w().dock(QStringLiteral("stages"))->isVisible());
}

void TestHeteroPlanner::plainSlidersStayStill()
{
    Fixture f;
    QVERIFY(f.w().open_scenario_file(kExample));
    QVERIFY(f.w().wait_for_evaluation());
    for (Degree d : { Degree::tp, Degree::pp, Degree::dp }) {
        const views::DegreeSlider* s = f.w().strategy_panel()->slider(d);
        QVERIFY(!s->isEnabled());
        QVERIFY2(s->toolTip().contains(QStringLiteral("stage by stage")), qPrintable(s->toolTip()));
    }
    // Back on a plain plan they move again.
    QVERIFY(f.w().open_scenario_preset(QStringLiteral("default")));
    QVERIFY(f.w().strategy_panel()->slider(Degree::tp)->isEnabled());
}

void TestHeteroPlanner::movingALayerRepredicts()
{
    Fixture f;
    QVERIFY(f.w().open_scenario_file(kExample));
    QVERIFY(f.w().wait_for_evaluation());
    const double before_s = f.w().evaluation()->prediction.step_time_s;
    const int steps = f.w().undo_stack()->count();
    f.w().stage_table()->move_layer(1, 0); // stage 1's first layer to stage 0
    QVERIFY(f.w().wait_for_evaluation());
    QCOMPARE(f.w().scenario()->stages[0].layers, 17);
    QCOMPARE(f.w().scenario()->stages[1].layers, 15);
    const HeteroPrediction h = f.model();
    QCOMPARE(f.w().evaluation()->prediction.step_time_s, h.prediction.step_time_s);
    QVERIFY(h.prediction.step_time_s != before_s);
    compare_rows(f.w().stage_table()->rows(), h);
    QCOMPARE(f.w().undo_stack()->count(), steps + 1);
    f.w().undo_stack()->undo();
    QVERIFY(f.w().wait_for_evaluation());
    QCOMPARE(f.w().scenario()->stages[0].layers, 16);
    QCOMPARE(f.w().evaluation()->prediction.step_time_s, before_s);
}

void TestHeteroPlanner::replicaTpIsEditable()
{
    Fixture f;
    QVERIFY(f.w().open_scenario_file(kExample));
    QVERIFY(f.w().wait_for_evaluation());
    const double before_s = f.w().evaluation()->prediction.step_time_s;
    f.w().stage_table()->set_replica_tp(0, 0, 2); // stage 0's H100 replica on 2 GPUs instead of 4
    QVERIFY(f.w().wait_for_evaluation());
    QCOMPARE(f.w().scenario()->stages[0].replicas[0].tp, 2);
    QVERIFY(f.w().evaluation()->valid);
    QVERIFY(f.w().evaluation()->prediction.step_time_s != before_s);
    compare_rows(f.w().stage_table()->rows(), f.model());
    // Eight A100s per replica would need 12 of the group's 8 GPUs: the rules say so in the panel.
    f.w().stage_table()->set_replica_tp(0, 1, 8);
    QVERIFY(f.w().wait_for_evaluation());
    QVERIFY(!f.w().evaluation()->valid);
    QVERIFY(f.w().stage_table()->rows().empty());
}

void TestHeteroPlanner::gridColoursByGpuType()
{
    Fixture f;
    QVERIFY(f.w().open_scenario_file(kExample));
    QVERIFY(f.w().wait_for_evaluation());
    const views::GroupGridView* grid = f.w().group_grid_view();
    QVERIFY(grid->isVisible());
    QVERIFY(!f.w().grid_view()->isVisible());
    QCOMPARE(grid->grid().types.size(), std::size_t { 2 });
    QVERIFY(grid->cell_colour(0, 0, 0) != grid->cell_colour(1, 0, 0)); // an H100 and an A100
    QCOMPARE(grid->cell_colour(0, 0, 0), grid->cell_colour(0, 0, 7)); // two H100s
    const QStringList legend = grid->legend();
    QCOMPARE(legend.size(), 2);
    QVERIFY(legend[0].startsWith(QStringLiteral("H100-SXM5-80GB: 8 of 8")));
    QVERIFY(legend[1].startsWith(QStringLiteral("A100-SXM4-80GB: 8 of 8")));
    // Stage 0's H100 replica holds the first four H100s, stage 1's the next four.
    QCOMPARE(grid->grid().groups[0].nodes[0][0].stage, 0);
    QCOMPARE(grid->grid().groups[0].nodes[0][4].stage, 1);
}

void TestHeteroPlanner::timelineShowsStagesOfDifferentSpeeds()
{
    Fixture f;
    QVERIFY(f.w().open_scenario_file(kExample));
    QVERIFY(f.w().wait_for_evaluation());
    QVERIFY(f.w().show_panel(QStringLiteral("timeline")));
    QVERIFY(f.w().wait_for_timeline());
    const auto data = f.w().timeline_view()->timeline_data();
    QVERIFY(data);
    QCOMPARE(data->stages.size(), std::size_t { 2 });
    for (const TimelineStage& st : data->stages) {
        QCOMPARE(QString::fromStdString(st.gpu_types), QStringLiteral("H100+A100"));
        QCOMPARE(st.gpus(), 8LL);
    }
    // The simulated step agrees with the hetero model's within a few per cent.
    const double analytic_s = f.model().prediction.step_time_s;
    QVERIFY(std::abs(data->prediction.step_time_s - analytic_s) < 0.03 * analytic_s);
}

void TestHeteroPlanner::searchFindsMixedPlansAndApplies()
{
    Fixture f;
    QVERIFY(f.w().open_scenario_file(kExample));
    QVERIFY(f.w().wait_for_evaluation());
    views::SearchPanel* panel = f.w().search_panel();
    QVERIFY2(panel->status_text().contains(QStringLiteral("Mixed cluster")), qPrintable(panel->status_text()));
    QSignalSpy done(panel, &views::SearchPanel::finished);
    panel->start();
    QVERIFY(panel->running()); // on a worker: start() returns before the search ends
    QVERIFY(done.wait(60000));
    QVERIFY(!panel->running());
    QVERIFY(panel->model()->rowCount() > 0);
    // The panel's best plan is core's (what `parallax-cli search` prints), with its what-ifs.
    HeteroSearchOptions o;
    o.calibration = &f.w().evaluation_options().calibration_or_shipped();
    o.top = 20;
    const HeteroSearchOutcome core = search_heterogeneous(*f.w().scenario(), o);
    QVERIFY(!core.results.empty());
    const views::SearchRow* best = panel->model()->row_at(0);
    QCOMPARE(best->stages, core.results.front().stages);
    QCOMPARE(best->prediction.tokens_per_s, core.results.front().prediction.prediction.tokens_per_s);
    QVERIFY2(best->explanation.contains(QStringLiteral("would be")), qPrintable(best->explanation));
    QVERIFY(!panel->table()->isColumnHidden(views::SearchResultsModel::stages));
    QVERIFY(
        panel->model()->index(0, views::SearchResultsModel::stages).data().toString().contains(QStringLiteral(" L ")));
    // Apply: the plan's stages become the document's, as one undo step, and the window predicts them.
    const std::vector<PipelineStageSpec> before = f.w().scenario()->stages;
    QVERIFY(best->stages != before);
    const int steps = f.w().undo_stack()->count();
    panel->table()->selectRow(0);
    panel->apply_button()->click();
    QVERIFY(f.w().wait_for_evaluation());
    QCOMPARE(f.w().scenario()->stages, best->stages);
    QCOMPARE(f.w().scenario()->strategy.schedule, best->strategy.schedule);
    QCOMPARE(f.w().undo_stack()->count(), steps + 1);
    QVERIFY(f.w().evaluation()->valid);
    QCOMPARE(f.w().evaluation()->prediction.step_time_s, f.model().prediction.step_time_s);
    const double searched_s = core.results.front().prediction.prediction.step_time_s;
    QVERIFY(std::abs(f.w().evaluation()->prediction.step_time_s - searched_s) < 1e-9 * searched_s);
    f.w().undo_stack()->undo();
    QVERIFY(f.w().wait_for_evaluation());
    QCOMPARE(f.w().scenario()->stages, before);
}

void TestHeteroPlanner::draggingABoundaryMovesLayers()
{
    Fixture f;
    QVERIFY(f.w().open_scenario_file(kExample));
    QVERIFY(f.w().wait_for_evaluation());
    f.w().show_panel(QStringLiteral("stages"));
    views::StageBar* bar = f.w().stage_table()->stage_bar();
    QVERIFY(bar->isVisible());
    QCOMPARE(bar->layers(), (std::vector<int> { 16, 16 }));
    const int steps = f.w().undo_stack()->count();
    const double before_s = f.w().evaluation()->prediction.step_time_s;
    const int y = bar->height() / 2;
    auto at = [&](int layer, int offset = 0) { return QPoint(qRound(bar->x_of_layer(layer)) + offset, y); };
    QTest::mousePress(bar, Qt::LeftButton, {}, at(16));
    QVERIFY(bar->dragging());
    QTest::mouseMove(bar, at(18));
    // The prediction follows while the drag goes on.
    QVERIFY(f.w().wait_for_evaluation());
    QCOMPARE(f.w().scenario()->stages[0].layers, 18);
    QCOMPARE(f.w().evaluation()->prediction.step_time_s, f.model().prediction.step_time_s);
    QVERIFY(f.w().evaluation()->prediction.step_time_s != before_s);
    // A drop between layers snaps to the nearest whole layer.
    QTest::mouseMove(bar, at(20, 2));
    QTest::mouseRelease(bar, Qt::LeftButton, {}, at(20, 2));
    QVERIFY(!bar->dragging());
    QVERIFY(f.w().wait_for_evaluation());
    QCOMPARE(f.w().scenario()->stages[0].layers, 20);
    QCOMPARE(f.w().scenario()->stages[1].layers, 12);
    compare_rows(f.w().stage_table()->rows(), f.model());
    QCOMPARE(f.w().undo_stack()->count(), steps + 1); // the whole drag is one step
    f.w().undo_stack()->undo();
    QVERIFY(f.w().wait_for_evaluation());
    QCOMPARE(f.w().scenario()->stages[0].layers, 16);
    QCOMPARE(f.w().evaluation()->prediction.step_time_s, before_s);
}

void TestHeteroPlanner::addingAndRemovingStagesAndReplicas()
{
    Fixture f;
    QVERIFY(f.w().open_scenario_file(kExample));
    QVERIFY(f.w().wait_for_evaluation());
    views::StageTable* stages = f.w().stage_table();
    const std::vector<PipelineStageSpec> original = f.w().scenario()->stages;
    const int steps = f.w().undo_stack()->count();
    // Every H100 holds a replica already: a new stage on them is refused, the rule said beside the button.
    QVERIFY(!stages->add_stage(QStringLiteral("h100"), 4));
    QVERIFY2(stages->refusal_text().contains(QStringLiteral("group h100 has 8 GPUs and the plan's replicas hold 8")),
        qPrintable(stages->refusal_text()));
    QCOMPARE(f.w().undo_stack()->count(), steps);
    // Stage 1's A100 replica removed frees four A100s.
    QVERIFY(stages->remove_replica(1, 1));
    QVERIFY(f.w().wait_for_evaluation());
    QVERIFY(stages->refusal_text().isEmpty());
    QCOMPARE(f.w().scenario()->stages[1].replicas.size(), std::size_t { 1 });
    QVERIFY(f.w().evaluation()->valid);
    // A third stage on them takes its layers from the fullest stages: 32 layers over 3 stages.
    QVERIFY(stages->add_stage(QStringLiteral("a100"), 4));
    QVERIFY(f.w().wait_for_evaluation());
    QCOMPARE(f.w().scenario()->stages.size(), std::size_t { 3 });
    QCOMPARE(f.w().scenario()->strategy.pp, 3);
    QCOMPARE(f.w().scenario()->stages[2].layers, 10);
    QCOMPARE(f.w().scenario()->stages[0].layers + f.w().scenario()->stages[1].layers, 22);
    QVERIFY2(f.w().evaluation()->valid,
        qPrintable(QString::fromStdString(
            f.w().evaluation()->violations.empty() ? std::string() : f.w().evaluation()->violations.front().message)));
    compare_rows(stages->rows(), f.model());
    QCOMPARE(stages->table()->rowCount(), 3);
    // Removing the middle stage gives its layers to its neighbours.
    const int middle = f.w().scenario()->stages[1].layers;
    const int first = f.w().scenario()->stages[0].layers;
    QVERIFY(stages->remove_stage(1));
    QVERIFY(f.w().wait_for_evaluation());
    QCOMPARE(f.w().scenario()->stages.size(), std::size_t { 2 });
    QCOMPARE(f.w().scenario()->stages[0].layers, first + middle / 2);
    QCOMPARE(f.w().scenario()->stages[0].layers + f.w().scenario()->stages[1].layers, 32);
    // A stage's last replica stays: the rule says to remove the stage instead.
    QVERIFY(!stages->remove_replica(1, 0));
    QVERIFY(stages->refusal_text().contains(QStringLiteral("keeps at least one replica")));
    QCOMPARE(f.w().undo_stack()->count(), steps + 3); // one step per edit
    for (int i = 0; i < 3; ++i)
        f.w().undo_stack()->undo();
    QVERIFY(f.w().wait_for_evaluation());
    QCOMPARE(f.w().scenario()->stages, original);
}

// The default layout splits the bottom docks three ways, so the Stages dock is narrow: each row's edit
// buttons sit in its second column, inside the table's viewport without scrolling, and act on their row.
void TestHeteroPlanner::editButtonsNeedNoScroll()
{
    Fixture f;
    QVERIFY(f.w().open_scenario_file(kExample));
    QVERIFY(f.w().show_panel(QStringLiteral("stages")));
    QVERIFY(f.w().wait_for_evaluation());
    QTableWidget* table = f.w().stage_table()->table();
    QVERIFY(table->isVisible());
    QVERIFY(table->horizontalScrollBar()->maximum() > 0); // the whole table is wider than the dock
    QCOMPARE(table->horizontalScrollBar()->value(), 0);
    const int right
        = table->columnViewportPosition(views::StageTable::edit) + table->columnWidth(views::StageTable::edit);
    QVERIFY2(right <= table->viewport()->width(),
        qPrintable(QStringLiteral("edit column ends at %1, viewport %2").arg(right).arg(table->viewport()->width())));
    for (int r = 0; r < table->rowCount(); ++r) {
        const QWidget* cell = table->cellWidget(r, views::StageTable::edit);
        QVERIFY(cell);
        for (const char* name : { "add_replica_%1", "remove_last_replica_%1", "remove_stage_%1" })
            QVERIFY2(cell->findChild<QToolButton*>(QString::fromLatin1(name).arg(r)), name);
    }
    // Stage 1 holds an H100 and an A100 replica: its "− replica" removes the A100 one, one undo step.
    const int steps = f.w().undo_stack()->count();
    QCOMPARE(f.w().scenario()->stages[1].replicas.size(), std::size_t { 2 });
    table->cellWidget(1, views::StageTable::edit)
        ->findChild<QToolButton*>(QStringLiteral("remove_last_replica_1"))
        ->click();
    QVERIFY(f.w().wait_for_evaluation());
    QCOMPARE(f.w().scenario()->stages[1].replicas.size(), std::size_t { 1 });
    QCOMPARE(f.w().scenario()->stages[1].replicas[0].group, std::string("h100"));
    QCOMPARE(f.w().undo_stack()->count(), steps + 1);
    // A stage's last replica stays: the button is off until the stage has two again.
    QVERIFY(!table->cellWidget(1, views::StageTable::edit)
                 ->findChild<QToolButton*>(QStringLiteral("remove_last_replica_1"))
                 ->isEnabled());
}

void TestHeteroPlanner::exportWritesTheMixedPlansFiles()
{
    Fixture f;
    const QString stages_example = QStringLiteral(PARALLAX_SOURCE_DIR "/docs/examples/hetero-h100-a100-stages.json");
    QVERIFY(f.w().open_scenario_file(stages_example));
    QString error;
    QStringList written;
    const QString folder = f.dir.filePath(QStringLiteral("launch"));
    QVERIFY2(
        app::write_launch_files(*f.w().scenario(), LaunchFormat::megatron, folder, stages_example, &error, &written),
        qPrintable(error));
    QCOMPARE(written.size(), 1);
    QFile script(written.front());
    QVERIFY(script.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(script.readAll());
    QVERIFY(text.contains(QStringLiteral("--decoder-first-pipeline-num-layers 22")));
    QVERIFY(text.contains(QStringLiteral("HOSTS_H100")) && text.contains(QStringLiteral("HOSTS_A100")));
    QVERIFY(script.permissions() & QFile::ExeOwner);
    // The example whose stages share the batch by speed over H100 and A100 replicas is refused, with the rule.
    QVERIFY(f.w().open_scenario_file(kExample));
    QVERIFY(!app::write_launch_files(*f.w().scenario(), LaunchFormat::megatron, folder, kExample, &error));
    QVERIFY2(error.contains(QStringLiteral("strategy.batch_split")), qPrintable(error));
}

void TestHeteroPlanner::clusterEditorEditsGroups()
{
    Fixture f;
    QVERIFY(f.w().open_scenario_file(kExample));
    QVERIFY(f.w().wait_for_evaluation());
    views::GroupEditor* editor = f.w().group_editor();
    QCOMPARE(editor->table()->rowCount(), 2);
    QVERIFY(editor->error_text().isEmpty());
    // A third group: no replica uses it yet, so the plan stays valid and its GPUs idle.
    editor->add_group();
    QVERIFY(f.w().wait_for_evaluation());
    QCOMPARE(f.w().scenario()->cluster.groups.size(), std::size_t { 3 });
    QCOMPARE(editor->table()->rowCount(), 3);
    QVERIFY(f.w().evaluation()->valid);
    QCOMPARE(f.w().scenario()->cluster.total_gpus(), 24LL);
    // A group that holds replicas cannot go; the new one can.
    QVERIFY(!editor->table()->cellWidget(0, views::GroupEditor::remove)->isEnabled());
    editor->remove_group(2);
    QVERIFY(f.w().wait_for_evaluation());
    QCOMPARE(f.w().scenario()->cluster.groups.size(), std::size_t { 2 });
    // Too few A100s for the replicas: the rule is shown at the A100 group's row, and the plan is invalid.
    const double before_s = f.w().evaluation()->prediction.step_time_s;
    editor->set_name(1, QStringLiteral("ampere")); // renames the replicas' group too
    QVERIFY(f.w().wait_for_evaluation());
    QCOMPARE(QString::fromStdString(f.w().scenario()->stages[1].replicas[1].group), QStringLiteral("ampere"));
    QCOMPARE(f.w().evaluation()->prediction.step_time_s, before_s);
    const Scenario scenario = *f.w().scenario();
    auto* gpus = qobject_cast<QSpinBox*>(editor->table()->cellWidget(1, views::GroupEditor::gpus_per_node));
    QVERIFY(gpus);
    gpus->setValue(4);
    QVERIFY(f.w().wait_for_evaluation());
    QVERIFY(!f.w().evaluation()->valid);
    QCOMPARE(editor->error_row(), 1);
    QVERIFY2(editor->error_text().contains(QStringLiteral("ampere")), qPrintable(editor->error_text()));
    f.w().undo_stack()->undo();
    QVERIFY(f.w().wait_for_evaluation());
    QVERIFY(f.w().evaluation()->valid);
    QVERIFY(editor->error_text().isEmpty());
    QCOMPARE(f.w().scenario()->cluster.groups[1].gpus_per_node, scenario.cluster.groups[1].gpus_per_node);
}

void TestHeteroPlanner::clusterEditorSetsAGroupsNics()
{
    Fixture f;
    QVERIFY(f.w().open_scenario_file(kExample));
    QVERIFY(f.w().wait_for_evaluation());
    views::GroupEditor* editor = f.w().group_editor();
    auto* nic = qobject_cast<QComboBox*>(editor->table()->cellWidget(1, views::GroupEditor::nic));
    QVERIFY(nic);
    QCOMPARE(nic->currentText(), views::GroupEditor::kClusterNic);
    const double before_s = f.w().evaluation()->prediction.step_time_s;
    // The A100 nodes on HDR NICs: the pipeline's sends between the groups slow down, nothing speeds up.
    editor->set_nic(1, QStringLiteral("ib-hdr"));
    QVERIFY(f.w().wait_for_evaluation());
    QVERIFY(f.w().scenario()->cluster.groups[1].inter_node.has_value());
    QCOMPARE(QString::fromStdString(f.w().scenario()->cluster.groups[1].inter_node_ref), QStringLiteral("ib-hdr"));
    nic = qobject_cast<QComboBox*>(editor->table()->cellWidget(1, views::GroupEditor::nic));
    QCOMPARE(nic->currentText(), QStringLiteral("ib-hdr"));
    QVERIFY2(f.w().evaluation()->prediction.step_time_s > before_s,
        qPrintable(QStringLiteral("%1 -> %2").arg(before_s).arg(f.w().evaluation()->prediction.step_time_s)));
    editor->set_nic(1, views::GroupEditor::kClusterNic);
    QVERIFY(f.w().wait_for_evaluation());
    QVERIFY(!f.w().scenario()->cluster.groups[1].inter_node.has_value());
    QCOMPARE(f.w().evaluation()->prediction.step_time_s, before_s);
    f.w().undo_stack()->undo();
    QVERIFY(f.w().wait_for_evaluation());
    QCOMPARE(QString::fromStdString(f.w().scenario()->cluster.groups[1].inter_node_ref), QStringLiteral("ib-hdr"));
}

void TestHeteroPlanner::simulatedFidelity()
{
    Fixture f;
    QVERIFY(f.w().open_scenario_file(kExample));
    QVERIFY(f.w().wait_for_evaluation());
    f.w().set_fidelity(Fidelity::simulated);
    QVERIFY(f.w().wait_for_evaluation());
    const auto e = f.w().evaluation();
    QVERIFY(e->valid);
    QCOMPARE(e->prediction.fidelity, Fidelity::simulated);
    const HeteroModel model(*f.w().scenario(), f.w().evaluation_options().calibration_or_shipped());
    QCOMPARE(
        e->prediction.step_time_s, hetero_prediction_from_simulation(model, simulate_heterogeneous(model)).step_time_s);
    compare_rows(f.w().stage_table()->rows(), model.prediction()); // the stages stay the model's
}

PARALLAX_PLANNER_TEST_MAIN(TestHeteroPlanner)
#include "tst_hetero_planner.moc"

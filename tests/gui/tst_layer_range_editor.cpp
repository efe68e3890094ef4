// The planner's layer-range table (docs/composite-strategies.md, "In the planner"): a composite scenario
// opens with its ranges in the table and the prediction `predict` gives; an edit is checked by the
// reader's own rules as it is typed (the broken rule named, its row marked, Apply held back), applied as
// one undo step, and re-checked when the plan moves under it; an empty table makes the plan plain.
#include "gui/main_window.hpp"
#include "io/layer_ranges_check.hpp"
#include "io/preset_catalog.hpp"
#include "io/scenario_io.hpp"
#include "model/analytic_model.hpp"
#include "planner/layer_range_editor.hpp"

#include <QPushButton>
#include <QTableWidget>
#include <QTest>
#include <QUndoStack>

#include "../support/planner_test_main.hpp"
#include "../support/test_main_window.hpp"

using namespace parallax;
using Col = views::LayerRangeEditor::Column;

namespace {

const QString kExample = QStringLiteral(PARALLAX_SOURCE_DIR "/docs/examples/composite-recompute-first-stages.json");

double predicted_step_s(const Scenario& s)
{
    const PlanContext ctx(s.model, s.training, s.cluster);
    return AnalyticModel(ctx).predict(s.strategy).step_time_s;
}

void set_cell(views::LayerRangeEditor* editor, int row, int column, const QString& text)
{
    editor->table()->item(row, column)->setText(text);
}

} // namespace

class TestLayerRangeEditor : public QObject {
    Q_OBJECT
private slots:
    void compositeOpensWithItsRanges();
    void editIsCheckedThenApplied();
    void badEditIsNamedAndHeldBack();
    void rangesRecheckedWhenThePlanMoves();
    void emptyTableMakesThePlanPlain();
    void tpAndCpColumnsRegroup();
};

void TestLayerRangeEditor::compositeOpensWithItsRanges()
{
    test::TestMainWindow f;
    QVERIFY(f.window.open_scenario_file(kExample));
    QVERIFY(f.window.wait_for_evaluation(30000));
    const Scenario file = load_scenario_file(kExample.toStdString(), PresetCatalog::standard());
    QVERIFY(f.window.scenario()->strategy.layers);
    views::LayerRangeEditor* editor = f.window.layer_editor();
    QCOMPARE(editor->table()->rowCount(), 1);
    QCOMPARE(editor->table()->item(0, Col::first)->text(), QStringLiteral("0"));
    QCOMPARE(editor->table()->item(0, Col::last)->text(), QStringLiteral("24"));
    QVERIFY2(editor->table_json() == nlohmann::json::parse(R"([{"range": [0, 24], "recompute": "full"}])"),
        editor->table_json().dump().c_str());
    QVERIFY(f.window.evaluation()->valid);
    QCOMPARE(f.window.evaluation()->prediction.step_time_s, predicted_step_s(file));
    QVERIFY(!editor->apply_button()->isEnabled()); // nothing edited yet
}

void TestLayerRangeEditor::editIsCheckedThenApplied()
{
    test::TestMainWindow f;
    QVERIFY(f.window.open_scenario_file(kExample));
    QVERIFY(f.window.wait_for_evaluation(30000));
    views::LayerRangeEditor* editor = f.window.layer_editor();
    set_cell(editor, 0, Col::last, QStringLiteral("40"));
    QVERIFY2(editor->status().contains(QStringLiteral("valid")), qPrintable(editor->status()));
    QVERIFY(editor->apply_button()->isEnabled());
    const int undo_before = f.window.undo_stack()->count();
    editor->apply();
    QVERIFY(f.window.wait_for_evaluation(30000));
    const Scenario& now = *f.window.scenario();
    QVERIFY(now.strategy.layers);
    QCOMPARE(now.strategy.layers->ranges.front().last, 40);
    QCOMPARE(f.window.evaluation()->prediction.step_time_s, predicted_step_s(now));
    QCOMPARE(f.window.undo_stack()->count(), undo_before + 1);
    // More layers recomputed: slower than recomputing layers 0-24 only.
    Scenario before = now;
    before.strategy.layers
        = checked_layer_ranges(nlohmann::json::parse(R"([{"range": [0, 24], "recompute": "full"}])"), now);
    QVERIFY(predicted_step_s(now) > predicted_step_s(before));
    f.window.undo_stack()->undo();
    QVERIFY(f.window.wait_for_evaluation(30000));
    QCOMPARE(f.window.scenario()->strategy.layers->ranges.front().last, 24);
    QCOMPARE(editor->table()->item(0, Col::last)->text(), QStringLiteral("24"));
}

void TestLayerRangeEditor::badEditIsNamedAndHeldBack()
{
    test::TestMainWindow f;
    QVERIFY(f.window.open_scenario_file(kExample));
    QVERIFY(f.window.wait_for_evaluation(30000));
    views::LayerRangeEditor* editor = f.window.layer_editor();
    editor->add_range(); // starts after the last range: layers 25-79, full recompute
    QCOMPARE(editor->table()->rowCount(), 2);
    set_cell(editor, 1, Col::first, QStringLiteral("20")); // overlaps the first range
    QVERIFY2(editor->status().contains(QStringLiteral("strategy.layers[1]")), qPrintable(editor->status()));
    QVERIFY2(editor->status().contains(QStringLiteral("overlaps")), qPrintable(editor->status()));
    QCOMPARE(editor->error_row(), 1);
    QVERIFY(!editor->apply_button()->isEnabled());
    set_cell(editor, 1, Col::first, QStringLiteral("x"));
    QVERIFY2(editor->status().contains(QStringLiteral("strategy.layers[1].range")), qPrintable(editor->status()));
    set_cell(editor, 1, Col::first, QStringLiteral("25"));
    QVERIFY(editor->apply_button()->isEnabled());
    // The plan is untouched until Apply.
    QCOMPARE(f.window.scenario()->strategy.layers->ranges.size(), std::size_t(1));
}

void TestLayerRangeEditor::rangesRecheckedWhenThePlanMoves()
{
    test::TestMainWindow f;
    QVERIFY(f.window.open_scenario_file(kExample));
    QVERIFY(f.window.wait_for_evaluation(30000));
    // A model of 20 layers: the range [0, 24] no longer fits it, and the plan says so by the range's key.
    Scenario s = *f.window.scenario();
    s.model.layers = 20;
    s.strategy.first_stage_layers = 5;
    f.window.apply_edit(s, QStringLiteral("fewer layers"));
    QVERIFY(f.window.wait_for_evaluation(30000));
    const PlanEvaluation& e = *f.window.evaluation();
    QVERIFY(!e.valid);
    QVERIFY(std::any_of(e.violations.begin(), e.violations.end(),
        [](const RuleViolation& v) { return v.key == "strategy.layers[0].range"; }));
    QVERIFY2(f.window.layer_editor()->status().contains(QStringLiteral("strategy.layers[0].range")),
        qPrintable(f.window.layer_editor()->status()));
}

void TestLayerRangeEditor::emptyTableMakesThePlanPlain()
{
    test::TestMainWindow f;
    QVERIFY(f.window.open_scenario_file(kExample));
    QVERIFY(f.window.wait_for_evaluation(30000));
    views::LayerRangeEditor* editor = f.window.layer_editor();
    editor->table()->setCurrentCell(0, Col::first);
    editor->remove_selected();
    QVERIFY(editor->apply_button()->isEnabled());
    editor->apply();
    QVERIFY(f.window.wait_for_evaluation(30000));
    QVERIFY(!f.window.scenario()->strategy.layers);
    // Without its ranges the plan recomputes nothing at micro-batch 3 and no longer fits (the example's point).
    QVERIFY(!f.window.evaluation()->prediction.feasible);
}

// The TP and CP columns: a range of its own TP is applied and predicted as the reader predicts it; one the
// regrouping rules refuse is named with its key and rule.
void TestLayerRangeEditor::tpAndCpColumnsRegroup()
{
    const QString example = QStringLiteral(PARALLAX_SOURCE_DIR "/docs/examples/composite-tp4-where-memory-allows.json");
    test::TestMainWindow f;
    QVERIFY(f.window.open_scenario_file(example));
    QVERIFY(f.window.wait_for_evaluation(30000));
    views::LayerRangeEditor* editor = f.window.layer_editor();
    QCOMPARE(editor->table()->item(0, Col::tp)->text(), QStringLiteral("4"));
    const double composite_s = f.window.evaluation()->prediction.step_time_s;
    set_cell(editor, 0, Col::tp, QStringLiteral("3"));
    QVERIFY2(editor->status().contains(QStringLiteral("strategy.layers[0].tp")), qPrintable(editor->status()));
    QVERIFY2(editor->status().contains(QStringLiteral("64 attention heads")), qPrintable(editor->status()));
    QVERIFY(!editor->apply_button()->isEnabled());
    set_cell(editor, 0, Col::tp, QString());
    set_cell(editor, 0, Col::cp, QStringLiteral("2"));
    QVERIFY2(editor->status().contains(QStringLiteral("valid")), qPrintable(editor->status()));
    editor->apply();
    QVERIFY(f.window.wait_for_evaluation(30000));
    const Scenario& now = *f.window.scenario();
    QCOMPARE(now.strategy.layers->ranges.front().cp.value_or(0), 2);
    QCOMPARE(f.window.evaluation()->prediction.step_time_s, predicted_step_s(now));
    // Layers 15-79 back at TP 8 (with CP 2 for them) lose the TP 4 speed-up.
    QVERIFY(f.window.evaluation()->prediction.step_time_s > composite_s);
}

PARALLAX_PLANNER_TEST_MAIN(TestLayerRangeEditor)
#include "tst_layer_range_editor.moc"

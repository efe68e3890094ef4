#pragma once
// The Stages panel: a heterogeneous plan's pipeline, one row per stage (core/viewdata/stage_rows.hpp):
// its layers with buttons that move one layer to the neighbouring stage, its replicas with an editable
// TP each, its micro-batch and busy times, and memory per GPU of its fullest replica against the
// capacity. The stage that paces the pipeline is highlighted. Each row's second column adds or removes a
// replica or removes the stage. Above the table a bar of the stages whose
// boundaries drag layers between neighbours (stage_bar.hpp); below it a group and TP to add a stage or a
// replica with, and a row's buttons remove them; a refused edit says its rule beside those controls.
// Edits are emitted as whole scenarios, so the window applies them through its document (undo, one step
// per button or drag) and re-predicts at once.
#include "viewdata/plan_evaluation.hpp"
#include "viewdata/stage_rows.hpp"

#include <QWidget>

#include <memory>
#include <optional>

class QComboBox;
class QLabel;
class QTableWidget;

namespace parallax {
struct StageEdit;
}

namespace parallax::views {

class StageBar;

class StageTable : public QWidget {
    Q_OBJECT
public:
    explicit StageTable(QWidget* parent = nullptr);

    // The document's plan, which edits start from (an evaluation may lag behind a quick second click).
    void set_scenario(const Scenario& s);
    // Shows the evaluation's stages; a plain plan's evaluation leaves a note instead.
    void set_evaluation(std::shared_ptr<const PlanEvaluation> e);
    const std::vector<StageRow>& rows() const { return m_rows; }
    QTableWidget* table() const { return m_table; }
    // What the buttons and TP choosers do, callable from tests.
    void move_layer(int from, int to);
    void set_replica_tp(int stage, int replica, int tp);
    // Stage `boundary` + 1 to start at `first_layer`; `drag` merges a gesture's steps into one undo step.
    void move_boundary(int boundary, int first_layer, int drag = 0);
    // Structural edits; false (and the rule shown in refusal_text()) when refused.
    bool add_stage(const QString& group, int tp);
    bool remove_stage(int stage);
    bool add_replica(int stage, const QString& group, int tp);
    bool remove_replica(int stage, int replica);
    QString refusal_text() const;
    StageBar* stage_bar() const { return m_bar; }
    QComboBox* add_group_box() const { return m_add_group; }
    QComboBox* add_tp_box() const { return m_add_tp; }

    // Columns, in order. The stage's edit buttons come right after its number so that they stay in view
    // when the dock is narrow; the wide replica editors come last.
    enum Column { stage, edit, layers, microbatch, busy, memory, move, replicas, column_count };

signals:
    void edit_requested(const parallax::Scenario& s, const QString& what, int drag);

protected:
    void changeEvent(QEvent* e) override;

private:
    void rebuild();
    void fill_row(int r, const StageRow& row, bool dark);
    QWidget* move_buttons(const StageRow& row);
    QWidget* replica_editors(const StageRow& row);
    QWidget* stage_editors(const StageRow& row);
    QWidget* add_controls();
    void refresh_add_controls();
    void refresh_bar();
    bool emit_edit(const StageEdit& e, const QString& what);

    const Scenario* edit_base() const;

    std::optional<Scenario> m_scenario;
    std::shared_ptr<const PlanEvaluation> m_evaluation;
    std::vector<StageRow> m_rows;
    QLabel* m_note = nullptr;
    QTableWidget* m_table = nullptr;
    StageBar* m_bar = nullptr;
    QWidget* m_add_row = nullptr;
    QComboBox* m_add_group = nullptr;
    QComboBox* m_add_tp = nullptr;
    QLabel* m_refusal = nullptr;
};

} // namespace parallax::views

#pragma once
// The Stages panel: a heterogeneous plan's pipeline, one row per stage (core/viewdata/stage_rows.hpp):
// its layers with buttons that move one layer to the neighbouring stage, its replicas with an editable
// TP each, its micro-batch and busy times, and memory per GPU of its fullest replica against the
// capacity. The stage that paces the pipeline is highlighted. Edits are emitted as whole scenarios, so
// the window applies them through its document (undo) and re-predicts at once.
#include "viewdata/plan_evaluation.hpp"
#include "viewdata/stage_rows.hpp"

#include <QWidget>

#include <memory>
#include <optional>

class QLabel;
class QTableWidget;

namespace parallax::views {

class StageTable : public QWidget {
    Q_OBJECT
public:
    explicit StageTable(QWidget* parent = nullptr);

    // The document's plan, which edits start from (an evaluation may lag behind a quick second click).
    void set_scenario(const Scenario& s) { m_scenario = s; }
    // Shows the evaluation's stages; a plain plan's evaluation leaves a note instead.
    void set_evaluation(std::shared_ptr<const PlanEvaluation> e);
    const std::vector<StageRow>& rows() const { return m_rows; }
    QTableWidget* table() const { return m_table; }
    // What the buttons and TP choosers do, callable from tests.
    void move_layer(int from, int to);
    void set_replica_tp(int stage, int replica, int tp);

    // Columns, in order.
    enum Column { stage, layers, microbatch, busy, memory, move, replicas, column_count };

signals:
    void edit_requested(const parallax::Scenario& s, const QString& what, int drag);

protected:
    void changeEvent(QEvent* e) override;

private:
    void rebuild();
    void fill_row(int r, const StageRow& row, bool dark);
    QWidget* move_buttons(const StageRow& row);
    QWidget* replica_editors(const StageRow& row);

    const Scenario* edit_base() const;

    std::optional<Scenario> m_scenario;
    std::shared_ptr<const PlanEvaluation> m_evaluation;
    std::vector<StageRow> m_rows;
    QLabel* m_note = nullptr;
    QTableWidget* m_table = nullptr;
};

} // namespace parallax::views

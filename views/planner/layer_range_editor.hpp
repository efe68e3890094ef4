#pragma once
// The planner's layer-range table (strategy.layers, docs/composite-strategies.md): one row per range of
// layers with the settings it overrides (recompute, TP, expert TP, CP, precision, activation offload;
// an empty cell keeps the plan's value). Every edit is checked at once by the scenario reader's own
// rules; the broken rule is named under the table and its row marked. Apply hands the checked ranges to
// the window (an empty table makes the plan plain again).
#include "spec/layer_ranges.hpp"
#include "spec/scenario.hpp"

#include <nlohmann/json.hpp>

#include <QString>
#include <QWidget>

class QLabel;
class QPushButton;
class QTableWidget;

namespace parallax::views {

class LayerRangeEditor : public QWidget {
    Q_OBJECT
public:
    enum Column { first, last, recompute, tp, expert_tp, cp, precision, offload, column_count };

    explicit LayerRangeEditor(QWidget* parent = nullptr);
    // The plan the ranges apply to; its own ranges fill the table unless the user has unapplied edits.
    void set_plan(const Scenario& s);
    QTableWidget* table() const { return m_table; }
    QPushButton* apply_button() const { return m_apply; }
    QString status() const;
    int error_row() const { return m_error_row; }
    // The table as strategy.layers (tests).
    nlohmann::json table_json() const;
    void add_range();
    void remove_selected();
    void apply();

signals:
    void ranges_applied(const parallax::LayerRanges* ranges);

private:
    void fill(const LayerRanges* ranges);
    void add_row(const LayerRange& r);
    void check();
    QString cell_text(int row, int column) const;
    void show_error(const QString& message, int row);

    Scenario m_scenario;
    bool m_has_plan = false;
    bool m_filling = false;
    bool m_edited = false; // the table differs from the plan's ranges and was not applied
    const LayerRanges* m_checked = nullptr;
    bool m_valid = true;
    int m_error_row = -1;
    QTableWidget* m_table = nullptr;
    QLabel* m_status = nullptr;
    QPushButton* m_apply = nullptr;
};

} // namespace parallax::views

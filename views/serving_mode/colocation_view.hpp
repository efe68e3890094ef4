#pragma once
// The planner's co-location view: the pool with each model on its GPUs (colocation_pool_canvas), a table
// of the models (where, how resident, latencies, throughput, the slowdown against running alone, what
// preempting it costs and of what), each model's throughput against residency, and the plan's advice
// (which model to offload, preempt or keep resident, and why).
#include "viewdata/colocation_grid.hpp"

#include <QString>
#include <QWidget>

class QCustomPlot;
class QLabel;
class QTableWidget;

namespace parallax::views {

class ColocationPoolCanvas;

class ColocationView : public QWidget {
    Q_OBJECT
public:
    explicit ColocationView(QWidget* parent = nullptr);
    void set_evaluation(const ColocationEvaluation& e);
    QString summary() const;
    QString advice() const;
    QString csv() const; // every model's residency curve
    QTableWidget* table() const { return m_table; }
    ColocationPoolCanvas* pool() const { return m_pool; }
    QCustomPlot* residency_plot() const { return m_plot; }
    void refresh_colours();

protected:
    void changeEvent(QEvent* e) override;

private:
    void fill_table(const ColocationResult& r);
    void draw_curves(const ColocationResult& r);
    QLabel* m_summary = nullptr;
    ColocationPoolCanvas* m_pool = nullptr;
    QTableWidget* m_table = nullptr;
    QCustomPlot* m_plot = nullptr;
    QLabel* m_advice = nullptr;
    ColocationEvaluation m_eval;
};

} // namespace parallax::views

#pragma once
// The QCustomPlot views over an evaluation's alternatives:
// - SensitivityPlot: throughput (left axis) and peak memory (right axis, with the capacity) as one
//   degree varies with the others rebalanced; the current plan is marked, plans that do not fit are
//   crossed out, blocked values are left out.
// - HeatmapPlot: tokens/s over TP x PP (QCPColorMap) with out-of-memory cells crossed and invalid
//   cells blank; the current cell is outlined.
// Both show values on hover, make the clicked point the current plan (apply_requested) and export
// their picture (PNG/SVG/PDF) and data (CSV). Replots are queued (rpQueuedReplot).
#include "viewdata/plan_evaluation.hpp"

#include <QWidget>

#include <memory>
#include <optional>
#include <utility>

class QCustomPlot;
class QCPGraph;
class QCPColorMap;
class QCPColorScale;
class QCPItemRect;
class QCPItemStraightLine;
class QComboBox;
class QLabel;

namespace parallax::views {

class SensitivityPlot : public QWidget {
    Q_OBJECT
public:
    explicit SensitivityPlot(QWidget* parent = nullptr);
    void set_evaluation(std::shared_ptr<const PlanEvaluation> e);
    void set_degree(Degree d);
    Degree degree() const { return m_degree; }
    QCustomPlot* plot() const { return m_plot; }
    QString csv() const;
    // Pixel position of the point with this value on the throughput curve (tests click it).
    QPoint point_position(int value) const;
    // The line above the plot: who absorbs the change, and which values a rule refuses.
    QString note_text() const;
    void refresh_colours();

signals:
    void apply_requested(const parallax::Strategy& s, const QString& what);

protected:
    void changeEvent(QEvent* e) override;
    bool eventFilter(QObject* o, QEvent* e) override;

private:
    void rebuild();
    const PlanPoint* point_near(QPointF pos) const;
    QCustomPlot* m_plot = nullptr;
    QComboBox* m_choice = nullptr;
    QLabel* m_note = nullptr;
    // The prediction's throughput band as factors of its tokens/s (nullopt: none).
    std::optional<std::pair<double, double>> band_factors() const;
    QCPGraph* m_tokens = nullptr;
    // The error band around the tokens/s curve: the upper edge fills down to the lower one.
    QCPGraph* m_band_low = nullptr;
    QCPGraph* m_band_high = nullptr;
    QCPGraph* m_tokens_oom = nullptr;
    QCPGraph* m_memory = nullptr;
    QCPGraph* m_current = nullptr;
    QCPItemStraightLine* m_capacity = nullptr;
    std::shared_ptr<const PlanEvaluation> m_eval;
    bool m_dirty = false; // new data while off screen: rebuilt when next painted
    Degree m_degree = Degree::tp;
};

class HeatmapPlot : public QWidget {
    Q_OBJECT
public:
    explicit HeatmapPlot(QWidget* parent = nullptr);
    void set_evaluation(std::shared_ptr<const PlanEvaluation> e);
    QCustomPlot* plot() const { return m_plot; }
    QString csv() const;
    QPoint cell_position(int tp, int pp) const;
    void refresh_colours();

signals:
    void apply_requested(const parallax::Strategy& s, const QString& what);

protected:
    void changeEvent(QEvent* e) override;
    bool eventFilter(QObject* o, QEvent* e) override;

private:
    void rebuild();
    const PlanPoint* cell_at(QPointF pos, int* tp = nullptr, int* pp = nullptr) const;
    QCustomPlot* m_plot = nullptr;
    QLabel* m_note = nullptr;
    QCPColorMap* m_map = nullptr;
    QCPColorScale* m_scale = nullptr;
    QCPGraph* m_oom = nullptr;
    QCPGraph* m_invalid = nullptr;
    QCPItemRect* m_current = nullptr;
    std::shared_ptr<const PlanEvaluation> m_eval;
    bool m_dirty = false;
};

} // namespace parallax::views

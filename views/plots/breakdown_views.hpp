#pragma once
// Where the memory and the time go. MemoryBarsView: one stacked bar per pipeline stage (weights,
// gradients, optimizer, activations, other) against the GPU's capacity line; TimeBreakdownView: the
// step as one stacked bar (compute, recompute, bubble, exposed communication per group, optimizer,
// offload), with the pinned plan's bar under it for comparison. Both draw values from core results
// only and export their data as CSV.
#include "plots/bar_chart.hpp"
#include "plots/measured_value.hpp"
#include "viewdata/plan_evaluation.hpp"

#include <optional>
#include <vector>

namespace parallax::views {

class MemoryBarsView : public BarChart {
    Q_OBJECT
public:
    explicit MemoryBarsView(QWidget* parent = nullptr);
    void set_prediction(const Prediction& p);
    void clear();
    QString csv() const;
    int stage_count() const { return static_cast<int>(m_prediction.stages.size()); }
    // Measured memory per stage (bytes), drawn as a marker with its error bar over each stage's bar; index =
    // stage, nullopt: not measured. Empty: none.
    void set_measured(std::vector<std::optional<MeasuredValue>> per_stage);
    const std::vector<std::optional<MeasuredValue>>& measured() const { return m_measured; }
    // Where stage i's measured marker is drawn (tests); null when there is none.
    QPointF measured_marker(int stage) const;
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    bool has_data() const override;
    std::vector<LegendEntry> legend() const override;
    void paint_chart(QPainter& p) override;
    QString tooltip_at(QPointF pos) const override;

private:
    struct Layout {
        QRectF plot;
        StageSlots columns;
        double max_bytes = 1;
        double y_of(double bytes) const { return plot.bottom() - bytes / max_bytes * plot.height(); }
    };
    Layout layout() const;
    void paint_measured(QPainter& p, const Layout& l) const;
    Prediction m_prediction; // no stages: no plan
    std::vector<std::optional<MeasuredValue>> m_measured;
};

class TimeBreakdownView : public BarChart {
    Q_OBJECT
public:
    explicit TimeBreakdownView(QWidget* parent = nullptr);
    void set_predictions(const Prediction& current, const Prediction* pinned);
    void clear();
    QString csv() const;
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    bool has_data() const override { return m_current.has_value(); }
    std::vector<LegendEntry> legend() const override { return {}; }
    void paint_chart(QPainter& p) override;
    QString tooltip_at(QPointF pos) const override;

private:
    // The bars' geometry: the label column, one bar's height, the seconds the full width stands for.
    struct Layout {
        double label_w = 0;
        double bar_h = 0;
        double bar_w = 0;
        double scale_s = 0;
        double pinned_y = 0; // the pinned bar's top
    };
    Layout layout() const;
    std::optional<Prediction> m_current;
    std::optional<Prediction> m_pinned;
};

} // namespace parallax::views

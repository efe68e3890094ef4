#pragma once
// The power budget of a plan: watts per GPU, kW per node, per rack and for the cluster (the
// GPUs plus what each node draws besides them), average and peak; the limits in force (idle floor,
// power cap, thermal limit at the inlet temperature, the clocks); energy per step and per token; and
// per pipeline stage the clock and the average and peak power per GPU as bars against the cap. Shows
// core's PowerEstimate and StageReports only; no model maths.
#include "plots/bar_chart.hpp"
#include "spec/prediction.hpp"

#include <QWidget>

class QLabel;
class QTableWidget;

namespace parallax::views {

class PowerStageBars : public BarChart {
    Q_OBJECT
public:
    explicit PowerStageBars(QWidget* parent = nullptr);
    void set_prediction(const Prediction& p);
    void clear();
    QString csv() const;
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    bool has_data() const override { return !m_prediction.stages.empty(); }
    std::vector<LegendEntry> legend() const override;
    void paint_chart(QPainter& p) override;
    QString tooltip_at(QPointF pos) const override;

private:
    QRectF plot() const;
    QColor average_colour() const;
    QColor peak_colour() const;
    Prediction m_prediction; // no stages: no plan
};

class PowerPanel : public QWidget {
    Q_OBJECT
public:
    explicit PowerPanel(QWidget* parent = nullptr);
    void set_prediction(const Prediction& p);
    void clear();
    // The budget table as text lines "level | average | peak" (tests, reports).
    QStringList budget_lines() const;
    QString limits_text() const;
    PowerStageBars* stage_bars() const { return m_bars; }

private:
    QTableWidget* m_table = nullptr;
    QLabel* m_limits = nullptr;
    PowerStageBars* m_bars = nullptr;
};

} // namespace parallax::views

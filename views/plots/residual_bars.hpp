#pragma once
// How far each run's measured throughput lies from its prediction, before (the shipped calibration)
// and after a calibration was fitted to the runs: one pair of bars per run around zero, ln(measured /
// predicted) tokens/s per GPU, so that too fast and too slow look alike. Shows core's
// CalibrationResiduals only; no model maths.
#include "plots/bar_chart.hpp"
#include "viewdata/calibration_residuals.hpp"

namespace parallax::views {

class ResidualBars : public BarChart {
    Q_OBJECT
public:
    explicit ResidualBars(QWidget* parent = nullptr);
    void set_residuals(CalibrationResiduals r);
    const CalibrationResiduals& residuals() const { return m_residuals; }
    // The bar of run i (before: the shipped calibration's), in widget coordinates; empty when not drawn.
    QRectF bar_rect(int i, bool after) const;
    // One row per run: its log errors and relative errors before and after (the export menu's CSV).
    QString csv() const;
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    bool has_data() const override { return !m_residuals.empty(); }
    std::vector<LegendEntry> legend() const override;
    void paint_chart(QPainter& p) override;
    QString tooltip_at(QPointF pos) const override;
    QString placeholder() const override { return QStringLiteral("no fitted runs"); }

private:
    QRectF plot() const;
    double range() const; // the axis goes from -range() to +range()
    double y_of(const QRectF& plot, double v) const;
    QColor before_colour() const;
    QColor after_colour() const;
    CalibrationResiduals m_residuals;
};

} // namespace parallax::views

#pragma once
// The choices around the parallel degrees as a waterfall (search/improvements.hpp): one row for the
// plan as given, one per choice, floating from where the previous row ended to where this one does
// (green where it saves, red where it costs), and one for the plan with every choice; step time on
// the left, energy per step on the right. Values come from core; the view only draws them.
#include "plots/bar_chart.hpp"
#include "search/improvements.hpp"

#include <optional>

namespace parallax::views {

class WaterfallView : public BarChart {
    Q_OBJECT
public:
    explicit WaterfallView(QWidget* parent = nullptr);
    void set_waterfall(const ImprovementWaterfall& w);
    void clear();
    int row_count() const; // as given, each choice, with all (0 without a plan)
    // The row's label and its step time and energy before and after (tests, the tooltip).
    struct Row {
        QString label;
        QString detail;
        double step_from = 0, step_to = 0; // s
        double energy_from = 0, energy_to = 0; // J
        bool total = false; // a full bar from zero
    };
    const std::vector<Row>& rows() const { return m_rows; }
    QString csv() const;
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    bool has_data() const override;
    std::vector<LegendEntry> legend() const override;
    void paint_chart(QPainter& p) override;
    QString tooltip_at(QPointF pos) const override;

private:
    struct Layout {
        double top = 0, row_h = 18, label_w = 120;
        QRectF time_plot, energy_plot;
        double max_step = 1, max_energy = 1;
    };
    Layout layout() const;
    void paint_panel(QPainter& p, const QRectF& plot, double max_value, bool energy) const;
    std::vector<Row> m_rows;
};

} // namespace parallax::views

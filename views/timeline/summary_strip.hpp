#pragma once
// The summary strip over the timeline: the Prediction's time breakdown (compute, recompute, bubble,
// exposed TP/CP/EP/PP/DP, optimizer) as a stacked bar with the same numbers as the results panel, so
// the picture and the numbers agree; both plans and the difference with its causes when comparing;
// the colour legend.
#include "timeline/timeline_palette.hpp"
#include "viewdata/timeline_data.hpp"

#include <QPainter>
#include <QWidget>

#include <memory>
#include <optional>

namespace parallax::views {

class SummaryStrip : public QWidget {
    Q_OBJECT
public:
    explicit SummaryStrip(QWidget* parent = nullptr);
    void set_plans(std::shared_ptr<const TimelineData> current, std::shared_ptr<const TimelineData> baseline);
    void set_legend(std::vector<TimelineKind> kinds);
    // What the strip shows, in order (the Prediction's breakdown of the current plan).
    const std::vector<TimelineSummaryItem>& items() const { return m_items; }
    const std::optional<PlanDifference>& difference() const { return m_diff; }
    // The strip's text, line by line (for tests and accessibility).
    QStringList text_lines() const;
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void paintEvent(QPaintEvent* e) override;
    void resizeEvent(QResizeEvent* e) override;

private:
    int bar_height() const { return 18; }
    int content_width() const;
    // Each paints below `y` and returns the y under what it painted.
    int paint_plan_bar(QPainter& p, const TimelineData& d, const QString& prefix, int y, double max_step) const;
    int paint_diff(QPainter& p, int y) const;
    void paint_legend(QPainter& p, int y) const;
    int legend_lines() const;
    std::shared_ptr<const TimelineData> m_current, m_baseline;
    std::vector<TimelineSummaryItem> m_items;
    std::optional<PlanDifference> m_diff;
    std::vector<TimelineKind> m_legend;
    TimelinePalette m_palette;
};

} // namespace parallax::views

#pragma once
// Power over the simulated step, under the timeline and on its time axis: one line per
// pipeline stage (watts per GPU, the highest value in each pixel column so no spike is lost), the mean
// over all GPUs filled underneath, the power cap and the awake-idle floor as guides. The numbers come
// from core's PowerTrace (power_trace.hpp); this widget only maps them to pixels.
#include "power/power_trace.hpp"
#include "timeline/timeline_canvas.hpp"
#include "timeline/timeline_palette.hpp"

#include <QPainter>
#include <QWidget>

#include <memory>
#include <vector>

namespace parallax::views {

class PowerStrip : public QWidget {
    Q_OBJECT
public:
    // Follows `canvas`: its plan, its time range and the x position of its plot area.
    explicit PowerStrip(TimelineCanvas* canvas, QWidget* parent = nullptr);
    void set_data(std::shared_ptr<const TimelineData> data);
    const std::shared_ptr<const TimelineData>& data() const { return m_data; }
    bool has_trace() const;
    // Plot area in this widget's coordinates: its x range matches the canvas's plot area.
    QRect plot_rect() const;
    // Watts per GPU the plot shows at a time (for tests): per stage and the mean over GPUs.
    struct Sample {
        double t_s = 0;
        std::vector<double> stage_W;
        double mean_W = 0;
        double cluster_kW = 0;
    };
    Sample sample_at(double t_s) const;
    // Vertical position of a power value in the plot (for tests of the scale).
    double y_of(double watts) const;
    QString tooltip_at(QPoint pos) const;
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void paintEvent(QPaintEvent* e) override;
    bool event(QEvent* e) override;

private:
    void paint_guides(QPainter& p, const QRect& plot, const PowerTrace& trace) const;
    void paint_traces(QPainter& p, const QRect& plot, const PowerTrace& trace) const;
    void paint_legend(QPainter& p, const QRect& plot, const PowerTrace& trace) const;
    double top_W() const;
    TimelineCanvas* m_canvas = nullptr;
    std::shared_ptr<const TimelineData> m_data;
    TimelinePalette m_palette;
};

} // namespace parallax::views

#pragma once
// Measured against predicted for one or more stored runs, drawn: one row per metric (step time, tokens/s
// per GPU, TFLOP/s per GPU, peak memory, power per GPU when the log has it), the prediction of what ran as a
// bar, each run's measurement as a marker (the median of its steady-state steps) with an error bar (their
// min..max), and the relative error beside it; under them, when the log reports memory per rank, the measured
// memory of each pipeline stage over its predicted bar. Several selected runs are drawn in their own colours,
// one marker each, to compare them. A view over RunOverlay values: it computes nothing.
#include "runs/run_overlay.hpp"

#include <QColor>
#include <QRectF>
#include <QWidget>

#include <memory>
#include <optional>
#include <vector>

class QPainter;

namespace parallax::views {

class MeasuredOverlayView : public QWidget {
    Q_OBJECT
public:
    explicit MeasuredOverlayView(QWidget* parent = nullptr);
    // The first run is the primary one (its per-stage memory is drawn); empty: nothing selected.
    void set_overlays(std::vector<std::shared_ptr<const remote::RunOverlay>> runs);
    void clear() { set_overlays({}); }
    const std::vector<std::shared_ptr<const remote::RunOverlay>>& overlays() const { return m_runs; }

    // What is drawn, in widget coordinates (tests look at it; the paint uses the same geometry).
    struct Marker {
        QString run_id;
        QString metric; // step_time_s, tokens_per_s_per_gpu, tflops_per_gpu, memory_GiB, power_W, or "stage N"
        double measured = 0;
        std::optional<double> low, high, predicted, error;
        QPointF at; // the marker's centre
        QRectF error_bar; // low..high (empty width when there is no spread)
        QRectF predicted_bar; // empty when there is no prediction
    };
    std::vector<Marker> markers() const;
    // One line per drawn value: "step time | RUN | measured 212 ms (201 ms..230 ms, 3 steps) | predicted – | n/a".
    QStringList text_lines() const;
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void paintEvent(QPaintEvent*) override;
    bool event(QEvent* e) override;

private:
    struct Row {
        QString metric;
        QString title;
        double scale_max = 1;
        QRectF rect; // the whole row
        QRectF plot; // where values are drawn
        QRectF text; // the numbers on the right
    };
    struct Geometry {
        QRectF header;
        std::vector<Row> rows;
        QRectF stages; // per-stage memory of the primary run (empty when it has none)
        double stage_max = 1;
        std::vector<Marker> markers;
    };
    Geometry geometry() const;
    void add_lane_markers(Geometry& g, const Row& row, double lane_h) const;
    void add_stage_markers(Geometry& g) const;
    void paint_header(QPainter& p, const Geometry& g) const;
    void paint_lanes(QPainter& p, const Geometry& g) const;
    void paint_markers(QPainter& p, const Geometry& g) const;
    void paint_numbers(QPainter& p, const Geometry& g) const;
    void paint_stage_axis(QPainter& p, const Geometry& g) const;
    QColor grid_colour() const;
    QString value_text(const QString& metric, double v) const;
    QString header_note() const; // what the markers are compared with, or why nothing is

    std::vector<std::shared_ptr<const remote::RunOverlay>> m_runs;
};

} // namespace parallax::views

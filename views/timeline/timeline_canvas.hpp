#pragma once
// The timeline: one row per device stream (compute, TP/CP/EP under compute, pipeline sends, DP
// traffic) grouped by pipeline stage, on a zoomable time axis. Fast at 10^6 ops: rows are sorted, the
// visible range is found by binary search, each row is reduced to one LOD bin per pixel column
// (aggregate_row: nothing is lost) and drawn as one image without antialiasing; bars get borders and
// labels only when they are wide enough. Plan A (pinned) and plan B share the axis when comparing; a
// measured trace is drawn under them on the same axis.
#include "timeline/time_mapping.hpp"
#include "timeline/timeline_palette.hpp"
#include "timeline/zoom_pan_controller.hpp"
#include "viewdata/measured_trace.hpp"
#include "viewdata/timeline_data.hpp"

#include <QAbstractScrollArea>
#include <QFontMetrics>
#include <QImage>

#include <memory>
#include <optional>
#include <vector>

namespace parallax::views {

class TimelineCanvas : public QAbstractScrollArea, public ZoomPanView {
    Q_OBJECT
public:
    explicit TimelineCanvas(QWidget* parent = nullptr);

    // The plan shown (plan B when comparing). Keeps the view's zoom when the new plan's step is close
    // (dragging a slider), fits otherwise.
    void set_data(std::shared_ptr<const TimelineData> data);
    const std::shared_ptr<const TimelineData>& data() const { return m_data; }
    // Plan A, drawn above the current plan on the same time axis; nullptr ends the comparison.
    void set_baseline(std::shared_ptr<const TimelineData> baseline);
    const std::shared_ptr<const TimelineData>& baseline() const { return m_baseline; }
    // A measured trace drawn below on the same axis, shifted by offset_s; nullptr removes it.
    void set_measured(std::shared_ptr<const MeasuredTrace> trace, double offset_s = 0);
    const std::shared_ptr<const MeasuredTrace>& measured() const { return m_measured; }
    void set_measured_offset(double offset_s);

    // View.
    const TimeMapping& mapping() const { return m_map; }
    void set_time_range(double t_begin, double t_end);
    void fit() override; // the whole step (of both plans, and the measured trace) and all rows
    void zoom(double factor, std::optional<double> at_x = std::nullopt) override;
    void pan_pixels(double dx);
    void pan_by_px(double dx_px) override { pan_pixels(dx_px); }
    void drag_by_px(QPoint delta_px) override;
    int plot_width_px() const override { return plot_rect().width(); }
    void set_show_communication_rows(bool on);
    bool show_communication_rows() const { return m_show_comm; }
    void set_show_critical_path(bool on);
    void set_row_scale(double scale); // 1 = readable rows; fit() shrinks it to show every stage
    double row_scale() const { return m_row_scale; }

    // Selection: an op of the current plan (or of plan A); its predecessors and successors highlight.
    bool select_at(QPoint viewport_pos);
    void select_op(std::uint32_t op, bool in_baseline = false);
    void clear_selection() override;
    std::optional<std::uint32_t> selected_op() const { return m_selected; }
    std::vector<std::uint32_t> highlighted_predecessors() const;
    std::vector<std::uint32_t> highlighted_successors() const;

    // Hit testing and geometry (viewport coordinates), for tooltips and tests.
    QString tooltip_at(QPoint viewport_pos) const;
    QRectF op_rect(std::uint32_t op, bool in_baseline = false) const; // empty when not shown
    int display_row_count() const { return static_cast<int>(m_rows.size()); }
    const TimelineRow* display_row(int i) const;
    QRect display_row_rect(int i) const; // the row's bar area in the viewport
    QRect plot_rect() const; // where bars are drawn, in viewport coordinates
    // The LOD bins of a display row for the current view (one per pixel column of the plot).
    std::vector<LodBin> row_bins(int display_row) const;

    // Paints the viewport's content into any device of the viewport's size (export, benchmarks):
    // `vector` draws runs as rectangles (SVG, PDF) instead of writing pixels.
    void paint_to(QPainter& p, bool vector) const;
    struct FrameStats {
        std::size_t items_visited = 0; // bars the LOD pass looked at
        std::size_t rows_drawn = 0;
        std::size_t primitives = 0; // filled runs (vector) or pixel columns written (raster)
        std::size_t max_primitives_per_row = 0;
        int plot_width = 0;
    };
    const FrameStats& last_frame() const { return m_stats; }
    // The rows' image is kept while nothing that shapes it changes (a selection or a tooltip only
    // repaints the overlays); this drops it so the next paint redraws every row.
    void invalidate_cache();
    // Rows are aggregated on the global thread pool when there is enough work (on by default).
    static void set_parallel_rows(bool on);

    // Legend: the kinds present in what is shown.
    std::vector<TimelineKind> kinds_shown() const;

signals:
    void selection_changed();
    void view_changed();

protected:
    void paintEvent(QPaintEvent* e) override;
    void resizeEvent(QResizeEvent* e) override;
    void wheelEvent(QWheelEvent* e) override;
    void mousePressEvent(QMouseEvent* e) override;
    void mouseMoveEvent(QMouseEvent* e) override;
    void mouseReleaseEvent(QMouseEvent* e) override;
    void mouseDoubleClickEvent(QMouseEvent* e) override;
    void keyPressEvent(QKeyEvent* e) override;
    bool viewportEvent(QEvent* e) override;
    void scrollContentsBy(int dx, int dy) override;

private:
    enum class Section : std::uint8_t { current, baseline, measured };
    struct DisplayRow {
        const TimelineRow* row = nullptr;
        const TimelineData* data = nullptr; // nullptr for measured rows
        Section section = Section::current;
        int stage_index = -1; // into data->stages
        bool first_in_group = false;
        double offset_s = 0; // measured rows: shift on the axis
        int y = 0; // content coordinates (before vertical scroll), relative to the top of the rows area
        int h = 0;
        double max_item_s = 0; // longest bar: whether any bar can be wide enough for a label
    };
    struct Band {
        int y = 0;
        int h = 0;
        QString text;
        Section section = Section::current;
    };
    struct Hit {
        int display_row = -1;
        std::size_t item = TimelineRow::npos;
        LodBin bin; // the pixel column's aggregate
        bool crowded = false; // several ops share the pixel
    };

    void relayout();
    void zoom_to_band(const QRect& band); // a rubber band released: its time range (and rows) fill the view
    int content_height(double scale) const;
    void update_scrollbars();
    double full_begin() const;
    double full_end() const;
    int rows_top() const; // viewport y where the rows area starts
    std::optional<Hit> hit(QPoint viewport_pos) const;
    QRectF item_rect(int display_row, const TimelineItem& it, int rows_y0, int plot_x0) const;
    int display_row_of_op(std::uint32_t op, bool in_baseline) const;
    void paint_rows_raster(QPainter& p, const QRect& plot, int rows_y0) const;
    void render_rows_image(const QRect& plot, int rows_y0) const;
    void paint_rows_vector(QPainter& p, const QRect& plot, int rows_y0) const;
    void paint_overlays(QPainter& p, const QRect& plot, int rows_y0) const;
    // What the overlay painters share: the plot, the rows' origin, the time range in view, the font.
    struct OverlayFrame {
        QRect plot;
        int rows_y0 = 0;
        double t_begin = 0, t_end = 0;
        QFontMetrics fm;
    };
    void paint_label_runs(QPainter& p, const OverlayFrame& f, const DisplayRow& r) const;
    void paint_bar_details(QPainter& p, const OverlayFrame& f, int display_row) const;
    void paint_critical_connectors(QPainter& p, const OverlayFrame& f, const TimelineData* data, bool base) const;
    void paint_step_ends(QPainter& p, const OverlayFrame& f) const;
    void paint_selection(QPainter& p) const;
    void paint_axis(QPainter& p, const QRect& axis, const QRect& plot) const;
    void paint_labels(QPainter& p, const QRect& labels, int rows_y0) const;
    QRgb bin_colour(const DisplayRow& r, const LodBin& b, double bin_s, QRgb background, bool& bubble) const;

    std::shared_ptr<const TimelineData> m_data, m_baseline;
    std::shared_ptr<const MeasuredTrace> m_measured;
    double m_measured_offset = 0;
    std::vector<DisplayRow> m_rows;
    std::vector<Band> m_bands;
    std::vector<int> m_row_of_data_row, m_row_of_baseline_row; // data row -> display row (or -1)
    TimeMapping m_map;
    TimelinePalette m_palette;
    double m_row_scale = 1;
    bool m_show_comm = true;
    bool m_show_critical = true;
    std::optional<std::uint32_t> m_selected;
    bool m_selected_in_baseline = false;

    // Interaction.
    ZoomPanController m_zoom_pan { *this, *this };
    bool m_banding = false;
    QPoint m_band_end;
    bool m_syncing_scrollbar = false;

    // Reused per frame.
    mutable std::vector<LodBin> m_bins;
    mutable QImage m_image;
    mutable FrameStats m_stats;
    // What the rows' image shows.
    struct CacheKey {
        const void* data = nullptr;
        const void* baseline = nullptr;
        const void* measured = nullptr;
        double measured_offset = 0;
        double t0 = 0, px_per_s = 0, x0 = 0;
        int rows_y0 = 0;
        QSize size;
        std::uint64_t layout = 0;
        bool critical = true;
        bool operator==(const CacheKey&) const = default;
    };
    std::uint64_t m_layout_generation = 0;
    mutable CacheKey m_cache_key;
    mutable bool m_cache_valid = false;
    mutable FrameStats m_cached_stats;
};

} // namespace parallax::views

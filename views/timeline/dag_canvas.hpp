#pragma once
// The DAG view: the dependency graph of one step at stage x micro-batch-chunk granularity (one node
// per forward, backward-B, backward-W and recompute pass of a chunk; pipeline sends and gathers fold
// into the edges), laid out left to right in simulated time, one lane per stage, the critical path
// drawn through it. Double-clicking a node expands it into its layers. Made for seeing what a
// schedule does: GPipe's all-forwards-then-all-backwards, 1F1B's steady state, interleaving's
// virtual stages, ZB-H1's W passes filling the drain, DualPipe's two directions.
#include "timeline/time_mapping.hpp"
#include "timeline/timeline_palette.hpp"
#include "timeline/zoom_pan_controller.hpp"
#include "viewdata/timeline_data.hpp"

#include <QAbstractScrollArea>
#include <QFont>
#include <QFontMetrics>

#include <memory>
#include <optional>
#include <set>
#include <vector>

namespace parallax::views {

class DagCanvas : public QAbstractScrollArea, public ZoomPanView {
    Q_OBJECT
public:
    explicit DagCanvas(QWidget* parent = nullptr);

    void set_data(std::shared_ptr<const TimelineData> data);
    const std::shared_ptr<const TimelineData>& data() const { return m_data; }
    void fit() override;
    void set_time_range(double t_begin, double t_end);
    const TimeMapping& mapping() const { return m_map; }
    void zoom(double factor, std::optional<double> at_x = std::nullopt) override;
    void pan_by_px(double dx_px) override;
    void drag_by_px(QPoint delta_px) override;
    int plot_width_px() const override { return plot_rect().width(); }

    // Expansion to per-layer nodes.
    void set_expanded(std::uint32_t op, bool expanded);
    bool is_expanded(std::uint32_t op) const { return m_expanded.count(op) != 0; }
    void collapse_all();

    void select_op(std::uint32_t op);
    void clear_selection() override;
    std::optional<std::uint32_t> selected_op() const { return m_selected; }
    std::optional<std::uint32_t> node_at(QPoint viewport_pos) const;
    QRectF node_rect(std::uint32_t op) const; // viewport coordinates; empty when not a node
    QString tooltip_at(QPoint viewport_pos) const;

    struct FrameStats {
        std::size_t nodes_drawn = 0;
        std::size_t edges_drawn = 0;
        std::size_t critical_edges_drawn = 0;
        std::size_t layer_nodes_drawn = 0;
        bool aggregated = false; // too many nodes in view: drawn as LOD bins without edges
    };
    const FrameStats& last_frame() const { return m_stats; }
    void paint_to(QPainter& p, bool vector) const;

    static constexpr std::size_t kMaxNodesWithEdges = 2500;

signals:
    void selection_changed();

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

private:
    struct Lane {
        int stage_index = 0;
        const TimelineRow* row = nullptr; // the stage's compute row
        int y = 0; // content coordinates
        int h = 0;
        bool has_layers = false; // an expanded node: a second line with its layers
    };
    void relayout();
    QRect plot_rect() const;
    int lanes_top() const;
    int lane_of_op(std::uint32_t op) const;
    QRectF node_rect_in(const Lane& lane, const TimelineItem& it, int y0) const;
    void update_scrollbars();

    // What one paint works with: the plot area, the lanes' top and the time range in view.
    struct Frame {
        QRect plot;
        int y0 = 0; // viewport y of the lanes' content origin
        double t_begin = 0, t_end = 0;
        QFont small;
        QFontMetrics fm;
    };
    struct ItemRange {
        std::size_t begin = 0, end = 0; // items of a lane's row in view
    };
    std::vector<ItemRange> visible_ranges(const Frame& f, std::size_t& visible) const;
    void paint_lod_lanes(QPainter& p, const Frame& f) const;
    void paint_edges(QPainter& p, const Frame& f, const std::vector<ItemRange>& ranges, bool sparse) const;
    void paint_barrier(QPainter& p, const Frame& f) const;
    void paint_critical_chain(QPainter& p, const Frame& f) const;
    void paint_nodes(QPainter& p, const Frame& f, const std::vector<ItemRange>& ranges) const;
    void paint_layer_nodes(QPainter& p, const Frame& f, const TimelineItem& it, const QRectF& node) const;
    void paint_label_runs(QPainter& p, const Frame& f, const std::vector<ItemRange>& ranges) const;
    void paint_lane_labels(QPainter& p, const Frame& f) const;
    void paint_axis(QPainter& p, const Frame& f, int width_px) const;

    std::shared_ptr<const TimelineData> m_data;
    std::vector<Lane> m_lanes;
    std::vector<int> m_lane_of_row; // data row -> lane
    std::set<std::uint32_t> m_expanded;
    std::optional<std::uint32_t> m_selected;
    std::vector<std::uint32_t> m_critical_chain;
    std::vector<std::uint8_t> m_on_chain; // per op
    TimeMapping m_map;
    TimelinePalette m_palette;
    ZoomPanController m_zoom_pan { *this, *this };
    mutable FrameStats m_stats;
    mutable std::vector<LodBin> m_bins;
};

} // namespace parallax::views

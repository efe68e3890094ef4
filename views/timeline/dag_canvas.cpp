#include "timeline/dag_canvas.hpp"

#include "timeline/canvas_tooltip.hpp"
#include "timeline/label_runs.hpp"

#include <QKeyEvent>
#include <QMouseEvent>
#include <QPaintEngine>
#include <QPainter>
#include <QPainterPath>
#include <QScrollBar>

#include <algorithm>
#include <cmath>

namespace parallax::views {

namespace {

constexpr int kLabelWidth = 110;
constexpr int kAxisHeight = 26;
constexpr int kNodeHeight = 30;
constexpr int kLayerHeight = 20;
constexpr int kLaneGap = 16; // room for the edges between lanes
constexpr int kTopPad = 8;
constexpr double kMinNodePx = 3;

QString qs(const std::string& s)
{
    return QString::fromStdString(s);
}

QString node_label(const TimelineData& d, const TimelineItem& it)
{
    const int mb = d.graph().microbatch(it.op);
    QString s = QString::fromLatin1(short_name(it.kind));
    if (mb >= 0)
        s += QString::number(mb);
    return s;
}

QRgb darker(QRgb c, double f)
{
    return qRgb(static_cast<int>(qRed(c) * f), static_cast<int>(qGreen(c) * f), static_cast<int>(qBlue(c) * f));
}

} // namespace

DagCanvas::DagCanvas(QWidget* parent)
    : QAbstractScrollArea(parent)
{
    setMouseTracking(true);
    viewport()->setMouseTracking(true);
    setFocusPolicy(Qt::StrongFocus);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    viewport()->setAttribute(Qt::WA_OpaquePaintEvent);
    m_map.x0_px = kLabelWidth;
    setMinimumSize(420, 200);
}

QRect DagCanvas::plot_rect() const
{
    const QRect v = viewport()->rect();
    return QRect(
        kLabelWidth, kAxisHeight, std::max(1, v.width() - kLabelWidth - 8), std::max(1, v.height() - kAxisHeight));
}

int DagCanvas::lanes_top() const
{
    return kAxisHeight + kTopPad - verticalScrollBar()->value();
}

void DagCanvas::set_data(std::shared_ptr<const TimelineData> data)
{
    m_data = std::move(data);
    m_expanded.clear();
    m_selected.reset();
    m_critical_chain.clear();
    m_on_chain.clear();
    if (m_data) {
        m_critical_chain = critical_compute_chain(*m_data);
        m_on_chain.assign(m_data->op_count(), 0);
        for (std::uint32_t op : m_critical_chain)
            m_on_chain[op] = 1;
    }
    relayout();
    fit();
    emit selection_changed();
}

void DagCanvas::relayout()
{
    m_lanes.clear();
    m_lane_of_row.clear();
    if (!m_data)
        return;
    m_lane_of_row.assign(m_data->rows.size(), -1);
    int y = 0;
    for (std::size_t si = 0; si < m_data->stages.size(); ++si) {
        const TimelineStage& st = m_data->stages[si];
        if (st.rows.empty())
            continue;
        Lane lane;
        lane.stage_index = static_cast<int>(si);
        lane.row = &m_data->rows[static_cast<std::size_t>(st.rows.front())];
        for (std::uint32_t op : m_expanded)
            if (m_data->op_row[op] == static_cast<std::uint32_t>(st.rows.front()))
                lane.has_layers = true;
        lane.y = y;
        lane.h = kNodeHeight + (lane.has_layers ? kLayerHeight + 4 : 0);
        m_lane_of_row[static_cast<std::size_t>(st.rows.front())] = static_cast<int>(m_lanes.size());
        m_lanes.push_back(lane);
        y += lane.h + kLaneGap;
    }
    update_scrollbars();
}

void DagCanvas::update_scrollbars()
{
    const int content = m_lanes.empty() ? 0 : m_lanes.back().y + m_lanes.back().h + kTopPad * 2;
    verticalScrollBar()->setRange(0, std::max(0, content - plot_rect().height()));
    verticalScrollBar()->setPageStep(plot_rect().height());
}

void DagCanvas::fit()
{
    m_map.x0_px = kLabelWidth;
    m_map.fit(0, m_data ? m_data->makespan_s : 1.0, plot_rect().width(), 0.01);
    verticalScrollBar()->setValue(0);
    viewport()->update();
}

void DagCanvas::set_time_range(double t_begin, double t_end)
{
    m_map.x0_px = kLabelWidth;
    m_map.fit(t_begin, t_end, plot_rect().width());
    viewport()->update();
}

void DagCanvas::zoom(double factor, std::optional<double> at_x)
{
    m_map.zoom_at(at_x.value_or(plot_rect().center().x()), factor);
    viewport()->update();
}

void DagCanvas::set_expanded(std::uint32_t op, bool expanded)
{
    if (!m_data || op >= m_data->op_count() || m_data->op_row[op] == TimelineData::kNoRow)
        return;
    if (m_data->rows[m_data->op_row[op]].kind != TimelineRowKind::compute)
        return;
    if (expanded)
        m_expanded.insert(op);
    else
        m_expanded.erase(op);
    relayout();
    viewport()->update();
}

void DagCanvas::collapse_all()
{
    m_expanded.clear();
    relayout();
    viewport()->update();
}

void DagCanvas::select_op(std::uint32_t op)
{
    if (!m_data || op >= m_data->op_count())
        return;
    m_selected = op;
    viewport()->update();
    emit selection_changed();
}

void DagCanvas::clear_selection()
{
    if (!m_selected)
        return;
    m_selected.reset();
    viewport()->update();
    emit selection_changed();
}

int DagCanvas::lane_of_op(std::uint32_t op) const
{
    if (!m_data || op >= m_data->op_count())
        return -1;
    const std::uint32_t r = m_data->op_row[op];
    if (r == TimelineData::kNoRow || r >= m_lane_of_row.size())
        return -1;
    return m_lane_of_row[r];
}

QRectF DagCanvas::node_rect_in(const Lane& lane, const TimelineItem& it, int y0) const
{
    const double x0 = m_map.to_x(it.start_s), x1 = m_map.to_x(it.end_s);
    double w = x1 - x0;
    // A one-pixel gap between consecutive passes so each node reads as a box.
    const double inset = w > 6 ? 1.0 : 0.0;
    w = std::max(kMinNodePx, w - inset);
    return QRectF(x0 + inset * 0.5, y0 + lane.y, w, kNodeHeight);
}

QRectF DagCanvas::node_rect(std::uint32_t op) const
{
    const int l = lane_of_op(op);
    if (l < 0)
        return {};
    const TimelineItem& it = m_data->rows[m_data->op_row[op]].items[m_data->op_item[op]];
    return node_rect_in(m_lanes[static_cast<std::size_t>(l)], it, lanes_top());
}

std::optional<std::uint32_t> DagCanvas::node_at(QPoint pos) const
{
    if (!m_data || pos.x() < plot_rect().left())
        return std::nullopt;
    const int y = pos.y() - lanes_top();
    for (const Lane& lane : m_lanes) {
        if (y < lane.y || y >= lane.y + lane.h)
            continue;
        const double t = m_map.to_t(pos.x() + 0.5);
        std::size_t i = lane.row->item_at(t);
        if (i == TimelineRow::npos) {
            const double tol = 3 * m_map.s_per_px();
            const std::size_t k = lane.row->first_ending_after(t - tol);
            if (k < lane.row->items.size() && lane.row->items[k].start_s <= t + tol)
                i = k;
        }
        if (i == TimelineRow::npos)
            return std::nullopt;
        return lane.row->items[i].op;
    }
    return std::nullopt;
}

QString DagCanvas::tooltip_at(QPoint pos) const
{
    const auto op = node_at(pos);
    if (!op)
        return {};
    const TimelineRow& row = m_data->rows[m_data->op_row[*op]];
    const TimelineItem& it = row.items[m_data->op_item[*op]];
    QString s;
    // On an expanded node's layer line: that layer.
    const int l = lane_of_op(*op);
    const Lane& lane = m_lanes[static_cast<std::size_t>(l)];
    const int y = pos.y() - lanes_top();
    const auto [first, last] = m_data->layers_of(*op);
    if (is_expanded(*op) && y >= lane.y + kNodeHeight && first >= 0) {
        const int layers = last - first + 1;
        const double share = it.duration_s() / layers;
        const int k = std::clamp(static_cast<int>((m_map.to_t(pos.x()) - it.start_s) / share), 0, layers - 1);
        s = QStringLiteral("layer ") + QString::number(first + k) + QStringLiteral(" of ") + qs(m_data->op_label(*op))
            + QStringLiteral("\n~") + qs(format_duration(share))
            + QStringLiteral(
                " (the pass split evenly over its layers; the first and last stages' embedding and loss are inside)");
        return s;
    }
    s = qs(m_data->describe(row, it));
    std::vector<DagEdge> edges;
    dag_predecessors(*m_data, *op, edges);
    if (!edges.empty()) {
        s += QStringLiteral("\nwaits for:");
        for (std::size_t k = 0; k < edges.size() && k < 8; ++k)
            s += QStringLiteral(" ") + qs(m_data->op_label(edges[k].from)) + QStringLiteral(" (stage ")
                + QString::number(m_data->graph().device(edges[k].from))
                + (edges[k].via_communication ? QStringLiteral(", via send)") : QStringLiteral(")"));
        if (edges.size() > 8)
            s += QStringLiteral(" …");
    }
    s += QStringLiteral("\ndouble-click: ")
        + (is_expanded(*op) ? QStringLiteral("collapse the layers") : QStringLiteral("expand into layers"));
    return s;
}

void DagCanvas::paintEvent(QPaintEvent*)
{
    QPainter p(viewport());
    const bool vector = p.paintEngine() && p.paintEngine()->type() != QPaintEngine::Raster;
    paint_to(p, vector);
}

void DagCanvas::paint_to(QPainter& p, bool) const
{
    m_stats = {};
    const QRect all = viewport()->rect();
    p.fillRect(all, m_palette.background);
    if (!m_data) {
        p.setPen(m_palette.muted_text);
        p.drawText(all, Qt::AlignCenter, tr("No simulated plan yet"));
        return;
    }
    QFont small = font();
    small.setPointSizeF(std::max(6.5, font().pointSizeF() - 1));
    const QRect plot = plot_rect();
    const Frame f { plot, lanes_top(), m_map.to_t(plot.left()), m_map.to_t(plot.right() + 1), small,
        QFontMetrics(small) };
    std::size_t visible = 0;
    const std::vector<ItemRange> ranges = visible_ranges(f, visible);
    p.save();
    p.setClipRect(plot.adjusted(0, 0, 8, 0));
    if (visible > kMaxNodesWithEdges) {
        m_stats.aggregated = true;
        paint_lod_lanes(p, f);
        p.restore();
        p.setPen(m_palette.muted_text);
        p.drawText(plot.adjusted(8, 4, -8, -4), Qt::AlignBottom | Qt::AlignHCenter,
            tr("%1 passes in view: zoom in (wheel, or drag a box in the timeline) to see the dependency edges")
                .arg(visible));
    } else {
        p.setRenderHint(QPainter::Antialiasing, true);
        paint_edges(p, f, ranges, visible <= 400);
        paint_barrier(p, f);
        paint_critical_chain(p, f);
        p.setRenderHint(QPainter::Antialiasing, false);
        paint_nodes(p, f, ranges);
        paint_label_runs(p, f, ranges);
        p.restore();
    }
    paint_lane_labels(p, f);
    paint_axis(p, f, all.width());
}

std::vector<DagCanvas::ItemRange> DagCanvas::visible_ranges(const Frame& f, std::size_t& visible) const
{
    // Visible nodes per lane; the count stops growing well past the limit (too many: LOD bins).
    std::vector<ItemRange> ranges(m_lanes.size());
    visible = 0;
    for (std::size_t li = 0; li < m_lanes.size(); ++li) {
        const Lane& lane = m_lanes[li];
        if (f.y0 + lane.y + lane.h < f.plot.top() || f.y0 + lane.y > f.plot.bottom())
            continue;
        const auto& items = lane.row->items;
        ItemRange r;
        r.begin = lane.row->first_ending_after(f.t_begin);
        r.end = r.begin;
        while (r.end < items.size() && items[r.end].start_s < f.t_end
            && visible + (r.end - r.begin) <= kMaxNodesWithEdges * 4)
            ++r.end;
        ranges[li] = r;
        visible += r.end - r.begin;
    }
    return ranges;
}

void DagCanvas::paint_lod_lanes(QPainter& p, const Frame& f) const
{
    const QRect& plot = f.plot;
    m_bins.resize(static_cast<std::size_t>(plot.width()));
    for (const Lane& lane : m_lanes) {
        const int top = f.y0 + lane.y;
        if (top + kNodeHeight < plot.top() || top > plot.bottom())
            continue;
        aggregate_row(*lane.row, f.t_begin, m_map.s_per_px(), m_bins);
        for (int x = 0; x < plot.width(); ++x) {
            const LodBin& b = m_bins[static_cast<std::size_t>(x)];
            if (b.ops == 0 && !(b.busy_s > 0))
                continue;
            const int slot = b.dominant_slot();
            const TimelineKind k = slot >= 0 && slot < static_cast<int>(lane.row->kinds.size())
                ? lane.row->kinds[static_cast<std::size_t>(slot)]
                : TimelineKind::forward;
            p.fillRect(QRect(plot.left() + x, top, 1, kNodeHeight), QColor::fromRgb(TimelinePalette::kind_rgb(k, 0)));
        }
    }
}

void DagCanvas::paint_edges(QPainter& p, const Frame& f, const std::vector<ItemRange>& ranges, bool sparse) const
{
    // Edges under the nodes: cross-stage data flow coloured by the pass it feeds, same-stage order
    // grey (only when few nodes are in view).
    std::vector<DagEdge> edges;
    auto edge_path = [](QPointF a, QPointF b) {
        QPainterPath path(a);
        const double dx = std::max(12.0, std::fabs(b.x() - a.x()) * 0.5);
        path.cubicTo(a + QPointF(dx, 0), b - QPointF(dx, 0), b);
        return path;
    };
    for (std::size_t li = 0; li < m_lanes.size(); ++li) {
        const Lane& lane = m_lanes[li];
        for (std::size_t i = ranges[li].begin; i < ranges[li].end; ++i) {
            const TimelineItem& it = lane.row->items[i];
            const QRectF to = node_rect_in(lane, it, f.y0);
            dag_predecessors(*m_data, it.op, edges);
            const bool tail = it.kind == TimelineKind::optimizer || it.kind == TimelineKind::offload;
            // Data flow colours: activations forward (blue), gradients backward (green).
            const TimelineKind flow = it.kind == TimelineKind::recompute ? TimelineKind::backward_input : it.kind;
            for (const DagEdge& e : edges) {
                const int pl = lane_of_op(e.from);
                if (pl < 0)
                    continue;
                const QRectF from = node_rect(e.from);
                const bool cross = pl != static_cast<int>(li);
                // The optimizer waits for every stage through the gradient-norm barrier: drawn
                // once as the barrier line, not as stages x stages edges.
                if ((!cross && !sparse) || (cross && tail))
                    continue;
                QColor c = cross ? QColor::fromRgb(TimelinePalette::kind_rgb(flow, 0)) : m_palette.muted_text;
                c.setAlpha(cross ? 200 : 90);
                p.setPen(QPen(c, cross ? 1.3 : 1.0));
                if (cross) {
                    const bool down = pl < static_cast<int>(li);
                    const QPointF a(from.right(), down ? from.bottom() : from.top());
                    const QPointF b(to.left() + std::min(6.0, to.width() / 2), down ? to.top() : to.bottom());
                    p.drawPath(edge_path(a, b));
                } else {
                    p.drawLine(QPointF(from.right(), from.center().y() + 8), QPointF(to.left(), to.center().y() + 8));
                }
                ++m_stats.edges_drawn;
            }
        }
    }
}

void DagCanvas::paint_barrier(QPainter& p, const Frame& f) const
{
    // The step's tail: every stage's optimizer waits for the gradient-norm barrier.
    double barrier_t = -1;
    for (const Lane& lane : m_lanes)
        for (auto it = lane.row->items.rbegin(); it != lane.row->items.rend(); ++it)
            if (it->kind == TimelineKind::optimizer || it->kind == TimelineKind::offload) {
                barrier_t = std::max(barrier_t, it->start_s);
                break;
            }
    if (barrier_t < 0 || m_lanes.empty())
        return;
    const double x = m_map.to_x(barrier_t) - 2;
    QColor c = m_palette.muted_text;
    p.setPen(QPen(c, 1.5, Qt::DashLine));
    const double y_top = f.y0 + m_lanes.front().y - 4, y_bottom = f.y0 + m_lanes.back().y + m_lanes.back().h + 4;
    p.drawLine(QPointF(x, y_top), QPointF(x, y_bottom));
    p.setFont(f.small);
    p.setPen(m_palette.muted_text);
    const QString label = tr("barrier: gradient norm, then optimizer");
    p.drawText(QPointF(x - f.fm.horizontalAdvance(label) - 4, y_bottom + f.fm.ascent() + 2), label);
}

void DagCanvas::paint_critical_chain(QPainter& p, const Frame& f) const
{
    if (m_critical_chain.empty())
        return;
    QColor c(0xb9, 0x1c, 0x1c);
    c.setAlpha(210);
    p.setPen(QPen(c, 2.4, Qt::SolidLine, Qt::RoundCap, Qt::RoundJoin));
    QPointF prev;
    bool have_prev = false;
    for (std::uint32_t op : m_critical_chain) {
        const QRectF r = node_rect(op);
        if (r.isEmpty()) {
            have_prev = false;
            continue;
        }
        const QPointF c0(r.left() + 2, r.center().y()), c1(r.right() - 2, r.center().y());
        if (have_prev
            && (std::max(prev.x(), c0.x()) >= f.plot.left() && std::min(prev.x(), c0.x()) <= f.plot.right())) {
            p.drawLine(prev, c0);
            ++m_stats.critical_edges_drawn;
        }
        prev = c1;
        have_prev = true;
    }
}

void DagCanvas::paint_nodes(QPainter& p, const Frame& f, const std::vector<ItemRange>& ranges) const
{
    p.setFont(f.small);
    std::vector<std::uint32_t> preds, succs;
    if (m_selected) {
        std::vector<DagEdge> edges;
        dag_predecessors(*m_data, *m_selected, edges);
        for (const DagEdge& e : edges)
            preds.push_back(e.from);
        dag_successors(*m_data, *m_selected, edges);
        for (const DagEdge& e : edges)
            succs.push_back(e.from);
    }
    auto contains = [](const std::vector<std::uint32_t>& ops, std::uint32_t op) {
        return std::find(ops.begin(), ops.end(), op) != ops.end();
    };
    for (std::size_t li = 0; li < m_lanes.size(); ++li) {
        const Lane& lane = m_lanes[li];
        for (std::size_t i = ranges[li].begin; i < ranges[li].end; ++i) {
            const TimelineItem& it = lane.row->items[i];
            const QRectF r = node_rect_in(lane, it, f.y0);
            const QRgb fill = TimelinePalette::kind_rgb(it.kind, it.shade);
            p.fillRect(r, QColor::fromRgb(fill));
            // The strongest role wins the border: selection, successor, predecessor, critical path.
            QColor border = QColor::fromRgb(darker(fill, 0.7));
            double bw = 1;
            if (it.op < m_on_chain.size() && m_on_chain[it.op]) {
                border = QColor(0xb9, 0x1c, 0x1c);
                bw = 2;
            }
            if (contains(preds, it.op)) {
                border = m_palette.predecessor;
                bw = 3;
            }
            if (contains(succs, it.op)) {
                border = m_palette.successor;
                bw = 3;
            }
            if (m_selected && *m_selected == it.op) {
                border = m_palette.selection;
                bw = 3;
            }
            if (r.width() >= 4) {
                p.setPen(QPen(border, bw));
                p.drawRect(r.adjusted(bw / 2, bw / 2, -bw / 2, -bw / 2));
            }
            const QString label = node_label(*m_data, it);
            if (r.width() >= f.fm.horizontalAdvance(label) + 4) {
                p.setPen(TimelinePalette::text_on(it.kind, it.shade));
                p.drawText(r, Qt::AlignCenter, label);
            }
            ++m_stats.nodes_drawn;
            if (is_expanded(it.op))
                paint_layer_nodes(p, f, it, r);
        }
    }
}

void DagCanvas::paint_layer_nodes(QPainter& p, const Frame& f, const TimelineItem& it, const QRectF& node) const
{
    // An expanded pass: its layers on the line below, chained.
    const QRgb fill = TimelinePalette::kind_rgb(it.kind, it.shade);
    const auto [first, last] = m_data->layers_of(it.op);
    const int layers = std::max(1, last - first + 1);
    const double lw = node.width() / layers;
    for (int k = 0; k < layers; ++k) {
        const QRectF lr(node.left() + k * lw, node.bottom() + 4, std::max(1.0, lw - 1), kLayerHeight);
        p.fillRect(lr, QColor::fromRgb(TimelinePalette::kind_rgb(it.kind, it.shade + 1)));
        p.setPen(QColor::fromRgb(darker(fill, 0.7)));
        p.drawRect(lr);
        const QString ll = QStringLiteral("L") + QString::number(first + k);
        if (lw >= f.fm.horizontalAdvance(ll) + 4) {
            p.setPen(m_palette.text);
            p.drawText(lr, Qt::AlignCenter, ll);
        }
        ++m_stats.layer_nodes_drawn;
    }
}

void DagCanvas::paint_label_runs(QPainter& p, const Frame& f, const std::vector<ItemRange>& ranges) const
{
    // Pieces of one pass (bucketed backward) labelled as a group.
    const QFontMetrics& fm = f.fm;
    for (std::size_t li = 0; li < m_lanes.size(); ++li) {
        const Lane& lane = m_lanes[li];
        for_each_label_run(*m_data, *lane.row, ranges[li].begin, ranges[li].end, m_map.px_per_s,
            fm.horizontalAdvance(QStringLiteral("B00")) + 4, 0, [&](const LabelRun& run) {
                const QRectF a = node_rect_in(lane, lane.row->items[run.first], f.y0);
                const QRectF b = node_rect_in(lane, lane.row->items[run.last], f.y0);
                const QRectF band(a.left(), a.top(), b.right() - a.left(), a.height());
                const QString text = fitted_text(run, fm, band.width());
                if (text.isEmpty())
                    return;
                const int tw = fm.horizontalAdvance(text) + 6;
                QColor back = m_palette.background;
                back.setAlpha(210);
                const QRectF tr
                    = QRectF(0, 0, tw, fm.height()).translated(band.center() - QPointF(tw / 2.0, fm.height() / 2.0));
                p.fillRect(tr, back);
                p.setPen(m_palette.text);
                p.drawText(tr, Qt::AlignCenter, text);
            });
    }
}

void DagCanvas::paint_lane_labels(QPainter& p, const Frame& f) const
{
    const QRect& plot = f.plot;
    p.fillRect(QRect(0, plot.top(), kLabelWidth, plot.height()), m_palette.header_background);
    QFont bold = font();
    bold.setBold(true);
    for (const Lane& lane : m_lanes) {
        const int top = f.y0 + lane.y;
        if (top + lane.h < plot.top() || top > plot.bottom())
            continue;
        const TimelineStage& st = m_data->stages[static_cast<std::size_t>(lane.stage_index)];
        p.setFont(bold);
        p.setPen(m_palette.text);
        QString name = QStringLiteral("stage ") + QString::number(st.stage);
        if (st.members.size() > 1)
            name += QStringLiteral(" ×") + QString::number(st.members.size());
        p.drawText(QRect(6, top, kLabelWidth - 10, kNodeHeight / 2 + 2), Qt::AlignLeft | Qt::AlignBottom, name);
        p.setFont(f.small);
        p.setPen(m_palette.muted_text);
        p.drawText(QRect(6, top + kNodeHeight / 2 + 2, kLabelWidth - 10, kNodeHeight / 2), Qt::AlignLeft | Qt::AlignTop,
            QStringLiteral("bubble ") + qs(format_duration(st.bubble_s)));
    }
}

void DagCanvas::paint_axis(QPainter& p, const Frame& f, int width_px) const
{
    p.fillRect(QRect(0, 0, width_px, kAxisHeight), m_palette.header_background);
    p.setPen(m_palette.grid);
    p.drawLine(0, kAxisHeight - 1, width_px, kAxisHeight - 1);
    p.setFont(f.small);
    p.setPen(m_palette.text);
    for (const AxisTick& t : axis_ticks(f.t_begin, f.t_end, m_map.s_per_px())) {
        const double x = std::floor(m_map.to_x(t.t_s)) + 0.5;
        p.drawLine(QPointF(x, kAxisHeight - 5), QPointF(x, kAxisHeight - 1));
        const QString label = qs(t.label);
        const int lw = f.fm.horizontalAdvance(label);
        if (x - lw / 2.0 >= f.plot.left() - 2)
            p.drawText(QPointF(x - lw / 2.0, kAxisHeight - 8), label);
    }
    p.fillRect(QRect(0, 0, kLabelWidth, kAxisHeight - 1), m_palette.header_background);
    p.setPen(m_palette.muted_text);
    p.drawText(QRect(6, 0, kLabelWidth - 8, kAxisHeight - 1), Qt::AlignVCenter | Qt::AlignLeft, tr("passes by stage"));
}

void DagCanvas::resizeEvent(QResizeEvent* e)
{
    QAbstractScrollArea::resizeEvent(e);
    update_scrollbars();
}

void DagCanvas::wheelEvent(QWheelEvent* e)
{
    m_zoom_pan.wheel(e);
}

void DagCanvas::pan_by_px(double dx_px)
{
    m_map.pan_px(dx_px);
    viewport()->update();
}

void DagCanvas::drag_by_px(QPoint delta_px)
{
    m_map.pan_px(delta_px.x());
    if (m_data)
        m_map.clamp_to(0, m_data->makespan_s, plot_rect().width());
    verticalScrollBar()->setValue(verticalScrollBar()->value() - delta_px.y());
    viewport()->update();
}

void DagCanvas::mousePressEvent(QMouseEvent* e)
{
    m_zoom_pan.press(e->position().toPoint());
}

void DagCanvas::mouseMoveEvent(QMouseEvent* e)
{
    m_zoom_pan.move(e->position().toPoint(), e->buttons());
}

void DagCanvas::mouseReleaseEvent(QMouseEvent* e)
{
    const bool click = m_zoom_pan.release();
    if (e->button() == Qt::LeftButton && click) {
        if (const auto op = node_at(e->position().toPoint()))
            select_op(*op);
        else
            clear_selection();
    }
}

void DagCanvas::mouseDoubleClickEvent(QMouseEvent* e)
{
    if (const auto op = node_at(e->position().toPoint()))
        set_expanded(*op, !is_expanded(*op));
    else
        fit();
}

void DagCanvas::keyPressEvent(QKeyEvent* e)
{
    if (m_zoom_pan.key(e))
        e->accept();
    else
        QAbstractScrollArea::keyPressEvent(e);
}

bool DagCanvas::viewportEvent(QEvent* e)
{
    if (show_canvas_tooltip(e, viewport(), [this](QPoint pos) { return tooltip_at(pos); }))
        return true;
    return QAbstractScrollArea::viewportEvent(e);
}

} // namespace parallax::views

#include "planner/cluster_grid_view.hpp"

#include "planner/degree_slider.hpp"
#include "style/view_style.hpp"

#include <QButtonGroup>
#include <QHBoxLayout>
#include <QHelpEvent>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QToolButton>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace parallax::views {

namespace {

constexpr double kGrabDistance = 6; // px around a boundary line that start a drag
constexpr ParallelDim kDims[] = { ParallelDim::tp, ParallelDim::cp, ParallelDim::ep, ParallelDim::dp, ParallelDim::pp };

Degree degree_of(ParallelDim d)
{
    switch (d) {
    case ParallelDim::tp:
        return Degree::tp;
    case ParallelDim::pp:
        return Degree::pp;
    case ParallelDim::dp:
        return Degree::dp;
    case ParallelDim::cp:
        return Degree::cp;
    case ParallelDim::ep:
        return Degree::ep;
    }
    return Degree::tp;
}

QString dim_name(ParallelDim d)
{
    return QString::fromLatin1(to_string(d).data()).toUpper();
}

} // namespace

ClusterGridCanvas::ClusterGridCanvas(QWidget* parent)
    : QWidget(parent)
{
    setMouseTracking(true);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

QSize ClusterGridCanvas::sizeHint() const
{
    return { 420, 260 };
}
QSize ClusterGridCanvas::minimumSizeHint() const
{
    return { 160, 80 };
}

void ClusterGridCanvas::set_scenario(const Scenario& s, const PlanEvaluationOptions& options)
{
    m_scenario = s;
    m_options = options;
    update();
}

void ClusterGridCanvas::set_dimension(ParallelDim d)
{
    m_dim = d;
    update();
}

RankGrid ClusterGridCanvas::grid() const
{
    return RankGrid(m_scenario->strategy, m_scenario->cluster.gpus_per_node, m_dim == ParallelDim::ep);
}

long long ClusterGridCanvas::segment() const
{
    return m_scenario ? grid().segment(m_dim) : 0;
}

ClusterGridCanvas::Geometry ClusterGridCanvas::geometry() const
{
    Geometry g;
    const QFontMetrics fm = fontMetrics();
    const long long nodes = std::max(1, m_scenario->cluster.nodes);
    const long long gpn = std::max(1, m_scenario->cluster.gpus_per_node);
    const double top = fm.height() + 2;
    const double avail_h = std::max(10.0, height() - top - 2);
    // One block: node labels on the left. Folded: a caption per block above it instead.
    const double label_w = fm.horizontalAdvance(QStringLiteral("node 0000")) + 6;
    double best = -1;
    for (long long rows = nodes; rows >= 1; rows = rows > 1 ? std::min(rows - 1, (rows * 9) / 10) : 0) {
        const long long blocks = (nodes + rows - 1) / rows;
        const double gap = blocks > 1 ? 6.0 : 0.0;
        const double x0 = blocks > 1 ? 4.0 : label_w;
        const double avail_w = std::max(10.0, width() - x0 - 4 - gap * (blocks - 1));
        const double cw = avail_w / (blocks * gpn);
        const double ch = avail_h / rows;
        // Readable cells: as large as possible, not much wider than 3:1 nor taller than wide.
        const double score = std::min(cw, ch * 3.0) + std::min(ch, cw);
        if (score > best + 1e-9) {
            best = score;
            g.rows = rows;
            g.blocks = blocks;
            g.cell_h = std::min(ch, std::max(cw, 6.0));
            g.cell_w = std::min(cw, std::max(g.cell_h * 3.0, 18.0));
            g.x0 = x0;
            g.block_w = gpn * g.cell_w + gap;
        }
        if (rows == 1)
            break;
    }
    g.y0 = top;
    return g;
}

QRectF ClusterGridCanvas::cell_rect(const Geometry& g, long long node, long long gpu) const
{
    const long long block = node / g.rows;
    const long long row = node % g.rows;
    return { g.x0 + block * g.block_w + gpu * g.cell_w, g.y0 + row * g.cell_h, g.cell_w, g.cell_h };
}

long long ClusterGridCanvas::rank_at(QPointF pos) const
{
    const Geometry g = geometry();
    const long long gpn = m_scenario->cluster.gpus_per_node;
    const long long block = static_cast<long long>(std::floor((pos.x() - g.x0) / g.block_w));
    const double in_block = pos.x() - g.x0 - block * g.block_w;
    const long long col = static_cast<long long>(std::floor(in_block / g.cell_w));
    const long long row = static_cast<long long>(std::floor((pos.y() - g.y0) / g.cell_h));
    if (block < 0 || block >= g.blocks || col < 0 || col >= gpn || row < 0 || row >= g.rows)
        return -1;
    const long long node = block * g.rows + row;
    return node < m_scenario->cluster.nodes ? node * gpn + col : -1;
}

QPointF ClusterGridCanvas::boundary_point(long long p) const
{
    const Geometry g = geometry();
    const long long gpn = m_scenario->cluster.gpus_per_node;
    long long node = p / gpn;
    const long long col = p % gpn;
    if (col == 0) { // between two nodes: a horizontal line across the node (the bottom of the last one)
        const bool end = node >= m_scenario->cluster.nodes || (node % g.rows == 0 && node > 0);
        const QRectF r = cell_rect(g, end ? node - 1 : node, 0);
        return { r.left() + g.cell_w * gpn / 2.0, end ? r.bottom() : r.top() };
    }
    const QRectF r = cell_rect(g, node, col);
    return { r.left(), r.center().y() };
}

QPointF ClusterGridCanvas::cell_right_edge(long long node, long long gpu) const
{
    const Geometry g = geometry();
    const QRectF r = cell_rect(g, node, gpu);
    return { r.right() - 1, r.center().y() };
}

double ClusterGridCanvas::rank_position_at(QPointF pos, bool horizontal) const
{
    const Geometry g = geometry();
    const long long gpn = m_scenario->cluster.gpus_per_node;
    const long long nodes = m_scenario->cluster.nodes;
    const long long block
        = std::clamp<long long>(static_cast<long long>(std::floor((pos.x() - g.x0) / g.block_w)), 0, g.blocks - 1);
    if (horizontal) {
        const long long edge = std::clamp<long long>(std::llround((pos.y() - g.y0) / g.cell_h), 0, g.rows);
        return static_cast<double>(std::min(nodes, block * g.rows + edge) * gpn);
    }
    const double in_block = pos.x() - g.x0 - block * g.block_w;
    const double col = std::clamp(std::round(in_block / g.cell_w), 0.0, static_cast<double>(gpn));
    const long long row
        = std::clamp<long long>(static_cast<long long>(std::floor((pos.y() - g.y0) / g.cell_h)), 0, g.rows - 1);
    const long long node = std::min(nodes - 1, block * g.rows + row);
    return static_cast<double>(node * gpn) + col;
}

std::optional<long long> ClusterGridCanvas::boundary_near(QPointF pos) const
{
    if (!m_scenario)
        return std::nullopt;
    const RankGrid grid_of_plan = grid();
    const long long seg = grid_of_plan.segment(m_dim);
    const long long ranks = grid_of_plan.ranks();
    if (seg <= 0)
        return std::nullopt;
    const Geometry g = geometry();
    const long long gpn = m_scenario->cluster.gpus_per_node;
    std::optional<long long> best;
    double best_d = kGrabDistance;
    // Only the boundaries of the nodes near the cursor (a node can hold many TP boundaries; a stage
    // boundary can be far from any node the cursor is over).
    const long long r = rank_at(pos);
    const long long near_node = r >= 0 ? r / gpn : static_cast<long long>(rank_position_at(pos, true) / gpn);
    const long long lo = std::max<long long>(1, ((near_node - 1) * gpn) / seg);
    const long long hi = std::min<long long>(ranks / seg, ((near_node + 2) * gpn) / seg + 1);
    for (long long k = lo; k <= hi; ++k) {
        const long long p = k * seg;
        if (p <= 0 || p > ranks)
            continue;
        const QPointF b = boundary_point(p);
        const bool horizontal = p % gpn == 0;
        double d;
        if (horizontal)
            d = std::abs(b.x() - pos.x()) <= g.cell_w * gpn / 2.0 ? std::abs(pos.y() - b.y()) : 1e9;
        else
            d = std::hypot(pos.x() - b.x(), std::max(0.0, std::abs(pos.y() - b.y()) - g.cell_h / 2));
        if (d <= best_d) {
            best_d = d;
            best = k;
        }
    }
    return best;
}

void ClusterGridCanvas::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    const QPalette& pal = palette();
    const bool dark = is_dark(pal);
    p.fillRect(rect(), pal.color(QPalette::Base));
    if (!m_scenario)
        return;
    const RankGrid g = grid();
    const Geometry geo = geometry();
    const long long nodes = m_scenario->cluster.nodes;
    const long long gpn = m_scenario->cluster.gpus_per_node;
    const QFontMetrics fm = fontMetrics();
    const double gap = geo.cell_w >= 8 && geo.cell_h >= 6 ? 1.0 : 0.0;

    // Headers: GPU indices over every block where they fit; node labels (single block) or the
    // node range of each block (folded).
    p.setPen(pal.color(QPalette::Text));
    for (long long b = 0; b < geo.blocks; ++b) {
        const double bx = geo.x0 + b * geo.block_w;
        if (geo.blocks > 1) {
            const long long first = b * geo.rows;
            const long long last = std::min(nodes, first + geo.rows) - 1;
            p.drawText(QRectF(bx, 0, gpn * geo.cell_w, geo.y0), Qt::AlignCenter | Qt::TextDontClip,
                geo.block_w > fm.horizontalAdvance(QStringLiteral("n000–000"))
                    ? QStringLiteral("n%1–%2").arg(first).arg(last)
                    : QString());
        } else if (geo.cell_w >= fm.horizontalAdvance(QStringLiteral("00")) + 2) {
            for (long long c = 0; c < gpn; ++c)
                p.drawText(QRectF(bx + c * geo.cell_w, 0, geo.cell_w, geo.y0), Qt::AlignCenter, QString::number(c));
        }
    }
    if (geo.blocks == 1) {
        const long long every = std::max<long long>(1, static_cast<long long>(std::ceil(fm.height() / geo.cell_h)));
        for (long long n = 0; n < nodes; n += every)
            p.drawText(
                QRectF(0, geo.y0 + n * geo.cell_h, geo.x0 - 4, std::max(geo.cell_h, static_cast<double>(fm.height()))),
                Qt::AlignRight | Qt::AlignTop, QStringLiteral("node %1").arg(n));
    }

    // Cells: no antialiasing, one rectangle per GPU.
    p.setRenderHint(QPainter::Antialiasing, false);
    p.setPen(Qt::NoPen);
    for (long long n = 0; n < nodes; ++n) {
        for (long long c = 0; c < gpn; ++c) {
            const long long rank = n * gpn + c;
            if (rank >= g.ranks())
                break;
            const QRectF r = cell_rect(geo, n, c);
            p.fillRect(QRectF(r.left(), r.top(), std::max(1.0, r.width() - gap), std::max(1.0, r.height() - gap)),
                group_colour(g.colour_index(rank, m_dim), dark));
        }
    }

    // Boundaries: lines in the text colour, the hovered or dragged one highlighted. When they would
    // be closer than 4 px apart only the draggable first one is drawn (the colours show the rest).
    const long long seg = g.segment(m_dim);
    const long long ranks = g.ranks();
    const QColor line = pal.color(QPalette::Text);
    const QColor hot = pal.color(QPalette::Highlight);
    const double spacing = seg % gpn == 0 ? (seg / gpn) * geo.cell_h : seg * geo.cell_w;
    const bool dense = spacing < 4;
    const double width = std::clamp(std::min(geo.cell_w, geo.cell_h) / 5.0, 1.0, 2.5);
    for (long long k = 1; seg > 0 && k * seg <= ranks; ++k) {
        const long long pos = k * seg;
        const bool active = k == m_drag_k || (m_drag_k == 0 && k == m_hover_k);
        if (dense && k != 1 && !active)
            continue;
        p.setPen(QPen(active ? hot : line, active ? width + 1.5 : width, Qt::SolidLine, Qt::FlatCap));
        const QPointF b = boundary_point(pos);
        if (pos % gpn == 0)
            p.drawLine(QPointF(b.x() - gpn * geo.cell_w / 2.0, b.y()), QPointF(b.x() + gpn * geo.cell_w / 2.0, b.y()));
        else
            p.drawLine(QPointF(b.x(), b.y() - geo.cell_h / 2.0), QPointF(b.x(), b.y() + geo.cell_h / 2.0));
    }
}

void ClusterGridCanvas::mousePressEvent(QMouseEvent* e)
{
    if (e->button() != Qt::LeftButton)
        return;
    if (const auto k = boundary_near(e->position())) {
        m_drag_k = *k;
        m_drag_horizontal = (*k * segment()) % m_scenario->cluster.gpus_per_node == 0;
        m_drag = next_drag_serial();
        setCursor(m_drag_horizontal ? Qt::SplitVCursor : Qt::SplitHCursor);
        update();
    }
}

void ClusterGridCanvas::mouseMoveEvent(QMouseEvent* e)
{
    if (m_drag_k == 0) {
        const auto k = boundary_near(e->position());
        const int hover = k ? static_cast<int>(*k) : 0;
        if (hover != m_hover_k) {
            m_hover_k = hover;
            if (k)
                setCursor(
                    (*k * segment()) % m_scenario->cluster.gpus_per_node == 0 ? Qt::SplitVCursor : Qt::SplitHCursor);
            else
                unsetCursor();
            update();
        }
        return;
    }
    const RankGrid g = grid();
    const double q = rank_position_at(e->position(), m_drag_horizontal);
    if (q <= 0)
        return;
    const double wanted = g.degree_for_boundary(m_dim, m_drag_k, q);
    const Degree d = degree_of(m_dim);
    const PlanInputs in = plan_inputs(*m_scenario);
    const std::vector<DegreeOption> options
        = degree_options(in, m_scenario->strategy, d, m_options.preferred_absorber, m_options.locks);
    const DegreeOption* best = nearest_valid(options, wanted);
    if (!best || best->value == degree_value(m_scenario->strategy, d))
        return;
    Scenario next = *m_scenario;
    next.strategy = best->strategy;
    emit edit_requested(next,
        dim_name(m_dim) + QStringLiteral(" ") + QString::number(degree_value(m_scenario->strategy, d))
            + QStringLiteral(" → ") + QString::number(best->value) + QStringLiteral(" (cluster grid)"),
        m_drag);
}

void ClusterGridCanvas::mouseReleaseEvent(QMouseEvent* e)
{
    if (e->button() != Qt::LeftButton || m_drag_k == 0)
        return;
    mouseMoveEvent(e);
    m_drag_k = 0;
    unsetCursor();
    update();
}

bool ClusterGridCanvas::event(QEvent* e)
{
    if (e->type() == QEvent::ToolTip && m_scenario) {
        auto* h = static_cast<QHelpEvent*>(e);
        const long long r = rank_at(h->pos());
        if (r >= 0) {
            const RankGrid dense(m_scenario->strategy, m_scenario->cluster.gpus_per_node);
            const int gpn = m_scenario->cluster.gpus_per_node;
            QString tip = QStringLiteral("<b>GPU %1</b> (node %2, local %3)<br>").arg(r).arg(r / gpn).arg(r % gpn);
            tip += QStringLiteral("TP rank %1 · CP rank %2 · DP replica %3 · PP stage %4")
                       .arg(dense.coordinate(r, ParallelDim::tp))
                       .arg(dense.coordinate(r, ParallelDim::cp))
                       .arg(dense.coordinate(r, ParallelDim::dp))
                       .arg(dense.coordinate(r, ParallelDim::pp));
            if (m_scenario->strategy.ep > 1) {
                const RankGrid expert(m_scenario->strategy, gpn, true);
                tip += QStringLiteral(" · EP rank %1").arg(expert.coordinate(r, ParallelDim::ep));
            }
            const RankGrid g = grid();
            tip += QStringLiteral("<br>%1 %2 %3")
                       .arg(dim_name(m_dim), g.is_band(m_dim) ? QStringLiteral("stage") : QStringLiteral("group"))
                       .arg(g.colour_index(r, m_dim));
            QToolTip::showText(h->globalPos(), tip, this);
            return true;
        }
    }
    return QWidget::event(e);
}

ClusterGridView::ClusterGridView(QWidget* parent)
    : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    auto* bar = new QHBoxLayout;
    bar->addWidget(new QLabel(QStringLiteral("Colour by"), this));
    m_dims = new QButtonGroup(this);
    for (ParallelDim d : kDims) {
        auto* b = new QToolButton(this);
        b->setText(dim_name(d));
        b->setCheckable(true);
        b->setObjectName(QStringLiteral("grid_dim_") + QString::fromLatin1(to_string(d).data()));
        b->setChecked(d == ParallelDim::tp);
        m_dims->addButton(b, static_cast<int>(d));
        bar->addWidget(b);
    }
    m_legend = new QLabel(this);
    m_legend->setWordWrap(true);
    bar->addWidget(m_legend, 1);
    layout->addLayout(bar);
    m_canvas = new ClusterGridCanvas(this);
    layout->addWidget(m_canvas, 1);
    connect(m_dims, &QButtonGroup::idClicked, this, [this](int id) { set_dimension(static_cast<ParallelDim>(id)); });
    connect(m_canvas, &ClusterGridCanvas::edit_requested, this, &ClusterGridView::edit_requested);
}

void ClusterGridView::set_scenario(const Scenario& s, const PlanEvaluationOptions& options)
{
    m_scenario = s;
    m_canvas->set_scenario(s, options);
    if (QAbstractButton* ep = m_dims->button(static_cast<int>(ParallelDim::ep)))
        ep->setEnabled(s.model.is_moe());
    if (m_canvas->dimension() == ParallelDim::ep && !s.model.is_moe())
        set_dimension(ParallelDim::tp);
    refresh_legend();
}

void ClusterGridView::set_dimension(ParallelDim d)
{
    if (QAbstractButton* b = m_dims->button(static_cast<int>(d)))
        b->setChecked(true);
    m_canvas->set_dimension(d);
    refresh_legend();
}

void ClusterGridView::refresh_legend()
{
    if (!m_scenario)
        return;
    const ParallelDim d = m_canvas->dimension();
    const RankGrid g(m_scenario->strategy, m_scenario->cluster.gpus_per_node, d == ParallelDim::ep);
    const QString name = dim_name(d);
    const long long size = g.size(d);
    if (g.is_band(d))
        m_legend->setText(QStringLiteral("%1 %2: colour = stage, %3 GPUs each. Drag a thick line to resize the stages.")
                              .arg(name)
                              .arg(size)
                              .arg(g.segment(d)));
    else
        m_legend->setText(QStringLiteral("%1 %2: colour = group (%3 groups). Drag a thick line to change %1.")
                              .arg(name)
                              .arg(size)
                              .arg(g.ranks() / std::max<long long>(1, size)));
}

} // namespace parallax::views

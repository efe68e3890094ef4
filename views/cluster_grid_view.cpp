#include "cluster_grid_view.hpp"

#include "degree_slider.hpp"
#include "view_style.hpp"

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

QString dim_name(ParallelDim d) { return QString::fromLatin1(to_string(d).data()).toUpper(); }

} // namespace

ClusterGridCanvas::ClusterGridCanvas(QWidget* parent)
    : QWidget(parent)
{
    setMouseTracking(true);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

QSize ClusterGridCanvas::sizeHint() const { return { 420, 260 }; }
QSize ClusterGridCanvas::minimumSizeHint() const { return { 160, 80 }; }

void ClusterGridCanvas::set_scenario(const Scenario& s, const PlanEvaluationOptions& options)
{
    m_scenario = s;
    m_options = options;
    m_has_scenario = true;
    update();
}

void ClusterGridCanvas::set_dimension(ParallelDim d)
{
    m_dim = d;
    update();
}

RankGrid ClusterGridCanvas::grid() const
{
    return RankGrid(m_scenario.strategy, m_scenario.cluster.gpus_per_node, m_dim == ParallelDim::ep);
}

long long ClusterGridCanvas::segment() const { return m_has_scenario ? grid().segment(m_dim) : 0; }

ClusterGridCanvas::Geometry ClusterGridCanvas::geometry() const
{
    Geometry g;
    const QFontMetrics fm = fontMetrics();
    const int nodes = std::max(1, m_scenario.cluster.nodes);
    const int gpn = std::max(1, m_scenario.cluster.gpus_per_node);
    const double label_w = fm.horizontalAdvance(QStringLiteral("node 0000")) + 6;
    const double top = fm.height() + 2;
    const double avail_w = std::max(10.0, width() - label_w - 4);
    const double avail_h = std::max(10.0, height() - top - 2);
    g.cell_w = avail_w / gpn;
    g.cell_h = std::min(avail_h / nodes, std::max(g.cell_w * 0.6, 4.0));
    g.cell_w = std::min(g.cell_w, std::max(g.cell_h * 2.5, 18.0));
    g.x0 = label_w;
    g.y0 = top;
    return g;
}

long long ClusterGridCanvas::rank_at(QPointF pos) const
{
    const Geometry g = geometry();
    const int gpn = m_scenario.cluster.gpus_per_node;
    const long long col = static_cast<long long>(std::floor((pos.x() - g.x0) / g.cell_w));
    const long long row = static_cast<long long>(std::floor((pos.y() - g.y0) / g.cell_h));
    if (col < 0 || col >= gpn || row < 0 || row >= m_scenario.cluster.nodes)
        return -1;
    return row * gpn + col;
}

QPointF ClusterGridCanvas::boundary_point(long long p) const
{
    const Geometry g = geometry();
    const long long gpn = m_scenario.cluster.gpus_per_node;
    const long long row = p / gpn;
    const long long col = p % gpn;
    if (col == 0) // between two nodes: a horizontal line across the row
        return { g.x0 + g.cell_w * gpn / 2.0, g.y0 + row * g.cell_h };
    return { g.x0 + col * g.cell_w, g.y0 + (row + 0.5) * g.cell_h };
}

double ClusterGridCanvas::rank_position_at(QPointF pos, bool horizontal) const
{
    const Geometry g = geometry();
    const long long gpn = m_scenario.cluster.gpus_per_node;
    if (horizontal)
        return std::max(0.0, std::round((pos.y() - g.y0) / g.cell_h)) * static_cast<double>(gpn);
    const double row = std::clamp(std::floor((pos.y() - g.y0) / g.cell_h), 0.0, m_scenario.cluster.nodes - 1.0);
    const double col = std::clamp(std::round((pos.x() - g.x0) / g.cell_w), 0.0, static_cast<double>(gpn));
    return row * static_cast<double>(gpn) + col;
}

std::optional<long long> ClusterGridCanvas::boundary_near(QPointF pos) const
{
    if (!m_has_scenario)
        return std::nullopt;
    const RankGrid g = grid();
    const long long seg = g.segment(m_dim);
    const long long ranks = g.ranks();
    if (seg <= 0)
        return std::nullopt;
    std::optional<long long> best;
    double best_d = kGrabDistance;
    const Geometry geo = geometry();
    // The boundaries in the node under the cursor (and its edges); the cluster's end for a single band.
    const long long gpn = m_scenario.cluster.gpus_per_node;
    const long long row = std::clamp<long long>(static_cast<long long>(std::floor((pos.y() - geo.y0) / geo.cell_h)), 0,
        m_scenario.cluster.nodes - 1);
    const long long first = std::max<long long>(1, (row * gpn) / seg);
    const long long last = std::min<long long>(ranks / seg, ((row + 1) * gpn) / seg + 1);
    for (long long k = first; k <= last; ++k) {
        const long long p = k * seg;
        if (p <= 0 || p > ranks)
            continue;
        const QPointF b = boundary_point(p);
        const bool horizontal = p % gpn == 0;
        const double d = horizontal ? std::abs(pos.y() - b.y()) : std::hypot(pos.x() - b.x(), std::max(0.0, std::abs(pos.y() - b.y()) - geo.cell_h / 2));
        if (horizontal && (pos.x() < geo.x0 || pos.x() > geo.x0 + gpn * geo.cell_w))
            continue;
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
    if (!m_has_scenario)
        return;
    const RankGrid g = grid();
    const Geometry geo = geometry();
    const int nodes = m_scenario.cluster.nodes;
    const int gpn = m_scenario.cluster.gpus_per_node;
    const QFontMetrics fm = fontMetrics();
    const bool gaps = geo.cell_w >= 8 && geo.cell_h >= 6;
    const double gap = gaps ? 1.0 : 0.0;

    // GPU index header and node labels where they fit.
    p.setPen(pal.color(QPalette::Text));
    if (geo.cell_w >= fm.horizontalAdvance(QStringLiteral("00")) + 2)
        for (int c = 0; c < gpn; ++c)
            p.drawText(QRectF(geo.x0 + c * geo.cell_w, 0, geo.cell_w, geo.y0), Qt::AlignCenter, QString::number(c));
    const int label_every = std::max(1, static_cast<int>(std::ceil(fm.height() / geo.cell_h)));
    for (int n = 0; n < nodes; n += label_every)
        p.drawText(QRectF(0, geo.y0 + n * geo.cell_h, geo.x0 - 4, std::max(geo.cell_h, static_cast<double>(fm.height()))),
            Qt::AlignRight | Qt::AlignTop, QStringLiteral("node %1").arg(n));

    // Cells: no antialiasing, one rectangle per GPU, at most one row of nodes per pixel row.
    p.setRenderHint(QPainter::Antialiasing, false);
    p.setPen(Qt::NoPen);
    int last_y = -1;
    for (int n = 0; n < nodes; ++n) {
        const int y = static_cast<int>(geo.y0 + n * geo.cell_h);
        if (geo.cell_h < 1 && y == last_y)
            continue;
        last_y = y;
        const int h = std::max(1, static_cast<int>(geo.y0 + (n + 1) * geo.cell_h) - y);
        for (int c = 0; c < gpn; ++c) {
            const long long rank = static_cast<long long>(n) * gpn + c;
            if (rank >= g.ranks())
                break;
            const int x = static_cast<int>(geo.x0 + c * geo.cell_w);
            const int w = static_cast<int>(geo.x0 + (c + 1) * geo.cell_w) - x;
            p.fillRect(QRectF(x, y, w - gap, h - gap), group_colour(g.colour_index(rank, m_dim), dark));
        }
    }

    // Boundaries: thick lines in the text colour (highlighted when hovered or dragged).
    const long long seg = g.segment(m_dim);
    const long long ranks = g.ranks();
    const QColor line = pal.color(QPalette::Text);
    const QColor hot = pal.color(QPalette::Highlight);
    for (long long k = 1; seg > 0 && k * seg <= ranks; ++k) {
        const long long pos = k * seg;
        const bool active = k == m_drag_k || (m_drag_k == 0 && k == m_hover_k);
        p.setPen(QPen(active ? hot : line, active ? 3 : 2, Qt::SolidLine, Qt::FlatCap));
        const long long row = pos / gpn;
        const long long col = pos % gpn;
        if (col == 0) {
            const double y = geo.y0 + row * geo.cell_h;
            p.drawLine(QPointF(geo.x0, y), QPointF(geo.x0 + gpn * geo.cell_w, y));
        } else {
            const double x = geo.x0 + col * geo.cell_w;
            p.drawLine(QPointF(x, geo.y0 + row * geo.cell_h), QPointF(x, geo.y0 + (row + 1) * geo.cell_h));
        }
        if (geo.cell_h < 1 && seg < gpn)
            break; // too dense to draw them all: the first shows the size
    }
}

void ClusterGridCanvas::mousePressEvent(QMouseEvent* e)
{
    if (e->button() != Qt::LeftButton)
        return;
    if (const auto k = boundary_near(e->position())) {
        m_drag_k = *k;
        m_drag_horizontal = (*k * segment()) % m_scenario.cluster.gpus_per_node == 0;
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
                setCursor((*k * segment()) % m_scenario.cluster.gpus_per_node == 0 ? Qt::SplitVCursor : Qt::SplitHCursor);
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
    const PlanInputs in = plan_inputs(m_scenario);
    const std::vector<DegreeOption> options
        = degree_options(in, m_scenario.strategy, d, m_options.preferred_absorber, m_options.locks);
    const DegreeOption* best = nearest_valid(options, wanted);
    if (!best || best->value == degree_value(m_scenario.strategy, d))
        return;
    Scenario next = m_scenario;
    next.strategy = best->strategy;
    emit edit_requested(next,
        dim_name(m_dim) + QStringLiteral(" ") + QString::number(degree_value(m_scenario.strategy, d)) + QStringLiteral(" → ")
            + QString::number(best->value) + QStringLiteral(" (cluster grid)"),
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
    if (e->type() == QEvent::ToolTip && m_has_scenario) {
        auto* h = static_cast<QHelpEvent*>(e);
        const long long r = rank_at(h->pos());
        if (r >= 0) {
            const RankGrid dense(m_scenario.strategy, m_scenario.cluster.gpus_per_node);
            const int gpn = m_scenario.cluster.gpus_per_node;
            QString tip = QStringLiteral("<b>GPU %1</b> (node %2, local %3)<br>").arg(r).arg(r / gpn).arg(r % gpn);
            tip += QStringLiteral("TP rank %1 · CP rank %2 · DP replica %3 · PP stage %4")
                       .arg(dense.coordinate(r, ParallelDim::tp))
                       .arg(dense.coordinate(r, ParallelDim::cp))
                       .arg(dense.coordinate(r, ParallelDim::dp))
                       .arg(dense.coordinate(r, ParallelDim::pp));
            if (m_scenario.strategy.ep > 1) {
                const RankGrid expert(m_scenario.strategy, gpn, true);
                tip += QStringLiteral(" · EP rank %1").arg(expert.coordinate(r, ParallelDim::ep));
            }
            const RankGrid g = grid();
            tip += QStringLiteral("<br>%1 %2 %3").arg(dim_name(m_dim), g.is_band(m_dim) ? QStringLiteral("stage") : QStringLiteral("group"))
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
    m_has_scenario = true;
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
    if (!m_has_scenario)
        return;
    const ParallelDim d = m_canvas->dimension();
    const RankGrid g(m_scenario.strategy, m_scenario.cluster.gpus_per_node, d == ParallelDim::ep);
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

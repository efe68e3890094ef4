#include "planner/stage_bar.hpp"

#include "planner/degree_slider.hpp"

#include <QMouseEvent>
#include <QPainter>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace parallax::views {

namespace {

constexpr double kMargin = 6; // px left and right, so the outer edges stay visible
constexpr double kGrabDistance = 6; // px around a boundary that start a drag
constexpr int kHeight = 34; // px: two lines of the bar's small text

} // namespace

StageBar::StageBar(QWidget* parent)
    : QWidget(parent)
{
    setObjectName(QStringLiteral("stage_bar"));
    setMouseTracking(true);
    setToolTip(QStringLiteral("Drag a boundary between two stages to move layers between them (whole layers; "
                              "one undo step per drag)"));
}

QSize StageBar::sizeHint() const
{
    return { 400, kHeight };
}

QSize StageBar::minimumSizeHint() const
{
    return { 120, kHeight };
}

void StageBar::set_stages(const std::vector<int>& layers, const QStringList& labels, int critical)
{
    m_layers = layers;
    m_labels = labels;
    m_critical = critical;
    if (m_drag_boundary + 1 >= static_cast<int>(m_layers.size()))
        m_drag_boundary = -1;
    update();
}

int StageBar::total_layers() const
{
    return std::accumulate(m_layers.begin(), m_layers.end(), 0);
}

double StageBar::x_of_layer(int layer) const
{
    const int total = std::max(1, total_layers());
    return kMargin + (width() - 2 * kMargin) * static_cast<double>(layer) / total;
}

int StageBar::boundary_layer(int boundary) const
{
    return std::accumulate(m_layers.begin(), m_layers.begin() + boundary + 1, 0);
}

int StageBar::boundary_at(double x) const
{
    int best = -1;
    double best_distance = kGrabDistance;
    for (int k = 0; k + 1 < static_cast<int>(m_layers.size()); ++k) {
        const double d = std::abs(x - x_of_layer(boundary_layer(k)));
        if (d <= best_distance) {
            best = k;
            best_distance = d;
        }
    }
    return best;
}

int StageBar::layer_at(double x) const
{
    const double span = std::max(1.0, width() - 2 * kMargin);
    return static_cast<int>(std::lround((x - kMargin) / span * total_layers()));
}

void StageBar::mousePressEvent(QMouseEvent* e)
{
    if (e->button() != Qt::LeftButton)
        return QWidget::mousePressEvent(e);
    m_drag_boundary = boundary_at(e->position().x());
    if (m_drag_boundary >= 0)
        m_drag = next_drag_serial();
    update();
}

void StageBar::mouseMoveEvent(QMouseEvent* e)
{
    const double x = e->position().x();
    if (m_drag_boundary < 0) {
        setCursor(boundary_at(x) >= 0 ? Qt::SplitHCursor : Qt::ArrowCursor);
        return;
    }
    const int k = m_drag_boundary;
    const int before = boundary_layer(k) - m_layers[static_cast<std::size_t>(k)];
    const int end = boundary_layer(k + 1);
    const int layer = std::clamp(layer_at(x), before + 1, end - 1); // snapped; each side keeps a layer
    if (layer == boundary_layer(k))
        return;
    // Drawn at once; the window's evaluation follows with the prediction.
    m_layers[static_cast<std::size_t>(k)] = layer - before;
    m_layers[static_cast<std::size_t>(k + 1)] = end - layer;
    update();
    emit boundary_moved(k, layer, m_drag);
}

void StageBar::mouseReleaseEvent(QMouseEvent* e)
{
    if (e->button() == Qt::LeftButton)
        m_drag_boundary = -1;
    update();
}

void StageBar::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    const QRectF area(kMargin, 1, width() - 2 * kMargin, height() - 2);
    int first = 0;
    for (int k = 0; k < static_cast<int>(m_layers.size()); ++k) {
        const int n = m_layers[static_cast<std::size_t>(k)];
        const QRectF seg(x_of_layer(first), area.top(), x_of_layer(first + n) - x_of_layer(first), area.height());
        // Neutral fills (the grid's colours are GPU types, which a stage may mix); the pacing stage tinted.
        QColor fill = palette().color(k % 2 ? QPalette::AlternateBase : QPalette::Button);
        if (k == m_critical) {
            fill = palette().color(QPalette::Highlight);
            fill.setAlpha(70);
        }
        p.fillRect(seg, fill);
        p.setPen(QPen(palette().color(QPalette::Text), k == m_critical ? 2 : 1));
        p.drawRect(seg.adjusted(0.5, 0.5, -0.5, -0.5));
        const QString label = m_labels.value(k);
        const QString text = QStringLiteral("%1 L (L%2–%3)%4")
                                 .arg(n)
                                 .arg(first)
                                 .arg(first + n - 1)
                                 .arg(label.isEmpty() ? QString() : QStringLiteral("\n") + label);
        p.drawText(seg.adjusted(3, 0, -3, 0), Qt::AlignCenter | Qt::TextWordWrap, text);
        first += n;
    }
    // The handles: a thicker line on each boundary, highlighted while dragged.
    for (int k = 0; k + 1 < static_cast<int>(m_layers.size()); ++k) {
        const double x = x_of_layer(boundary_layer(k));
        p.setPen(QPen(k == m_drag_boundary ? palette().color(QPalette::Highlight) : palette().color(QPalette::Text),
            k == m_drag_boundary ? 4 : 3));
        p.drawLine(QPointF(x, area.top()), QPointF(x, area.bottom()));
    }
}

} // namespace parallax::views

#include "planner/degree_slider.hpp"

#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace parallax::views {

namespace {

constexpr int kMargin = 12; // room for the handle at both ends
constexpr int kHandleRadius = 7;
constexpr int kStopRadius = 4;

} // namespace

int next_drag_serial()
{
    static int serial = 0;
    return ++serial;
}

DegreeSlider::DegreeSlider(QWidget* parent)
    : QWidget(parent)
{
    setFocusPolicy(Qt::StrongFocus);
    setMouseTracking(true);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
}

void DegreeSlider::set_stops(std::vector<SliderStop> stops, int current)
{
    m_stops = std::move(stops);
    m_current = current;
    update();
}

QSize DegreeSlider::sizeHint() const
{
    return { 220, fontMetrics().height() + 2 * kHandleRadius + 8 };
}
QSize DegreeSlider::minimumSizeHint() const
{
    return { 80, fontMetrics().height() + 2 * kHandleRadius + 8 };
}

double DegreeSlider::x_of_index(int i) const
{
    const int n = static_cast<int>(m_stops.size());
    if (n <= 1)
        return width() / 2.0;
    return kMargin + (width() - 2.0 * kMargin) * i / (n - 1);
}

int DegreeSlider::index_of(int value) const
{
    for (int i = 0; i < static_cast<int>(m_stops.size()); ++i)
        if (m_stops[i].value == value)
            return i;
    return -1;
}

QPoint DegreeSlider::stop_position(int value) const
{
    const int i = index_of(value);
    const int track_y = height() - kHandleRadius - 3;
    return { static_cast<int>(std::lround(i < 0 ? 0 : x_of_index(i))), track_y };
}

int DegreeSlider::nearest_valid_index(double x) const
{
    int best = -1;
    double best_d = 0;
    for (int i = 0; i < static_cast<int>(m_stops.size()); ++i) {
        if (!m_stops[i].valid)
            continue;
        const double d = std::abs(x_of_index(i) - x);
        if (best < 0 || d < best_d) {
            best = i;
            best_d = d;
        }
    }
    return best;
}

void DegreeSlider::choose_index(int i, int drag)
{
    if (i < 0 || i >= static_cast<int>(m_stops.size()) || !m_stops[i].valid)
        return;
    if (m_stops[i].value == m_current)
        return;
    m_current = m_stops[i].value;
    update();
    emit value_chosen(m_current, drag);
}

void DegreeSlider::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    const QPalette& pal = palette();
    const bool enabled = isEnabled();
    const int track_y = height() - kHandleRadius - 3;
    const QColor accent = enabled ? pal.color(QPalette::Highlight) : pal.color(QPalette::Disabled, QPalette::Text);
    const QColor text = pal.color(enabled ? QPalette::Active : QPalette::Disabled, QPalette::Text);
    QColor muted = text;
    muted.setAlphaF(0.35f);

    p.setPen(QPen(muted, 2, Qt::SolidLine, Qt::RoundCap));
    p.drawLine(QPointF(kMargin, track_y), QPointF(width() - kMargin, track_y));

    const QFontMetrics fm = fontMetrics();
    const int n = static_cast<int>(m_stops.size());
    // Labels only where they do not collide: every k-th stop, the current one always.
    int label_every = 1;
    if (n > 1) {
        const double spacing = (width() - 2.0 * kMargin) / (n - 1);
        const int widest = fm.horizontalAdvance(QString::number(m_stops.back().value)) + 6;
        label_every = std::max(1, static_cast<int>(std::ceil(widest / std::max(1.0, spacing))));
    }
    const int cur = index_of(m_current);
    // Stops shrink when they crowd (vpp can have 20), so neighbours never touch.
    const double spacing = n > 1 ? (width() - 2.0 * kMargin) / (n - 1) : 100.0;
    const double stop_r = std::clamp(spacing * 0.3, 1.5, static_cast<double>(kStopRadius));
    for (int i = 0; i < n; ++i) {
        const SliderStop& s = m_stops[i];
        const QPointF c(x_of_index(i), track_y);
        if (s.valid) {
            p.setPen(Qt::NoPen);
            p.setBrush(accent);
            p.drawEllipse(c, stop_r, stop_r);
        } else {
            p.setPen(QPen(muted, 1.5));
            p.setBrush(Qt::NoBrush);
            p.drawEllipse(c, stop_r - 0.5, stop_r - 0.5);
        }
        const bool label = i == cur || (i % label_every == 0 && std::abs(i - cur) >= label_every);
        if (label) {
            p.setPen(s.valid ? text : muted);
            QFont f = font();
            f.setBold(i == cur);
            p.setFont(f);
            const QString t = QString::number(s.value);
            const int w = QFontMetrics(f).horizontalAdvance(t);
            const double lx = std::clamp(c.x() - w / 2.0, 0.0, static_cast<double>(width() - w));
            p.drawText(QPointF(lx, track_y - kHandleRadius - 4), t);
        }
    }
    if (cur >= 0) {
        const QPointF c(x_of_index(cur), track_y);
        p.setPen(QPen(pal.color(QPalette::Base), 2));
        p.setBrush(accent);
        p.drawEllipse(c, kHandleRadius, kHandleRadius);
    }
    if (hasFocus()) {
        p.setPen(QPen(accent, 1, Qt::DotLine));
        p.setBrush(Qt::NoBrush);
        p.drawRoundedRect(QRectF(rect()).adjusted(0.5, 0.5, -0.5, -0.5), 3, 3);
    }
}

void DegreeSlider::mousePressEvent(QMouseEvent* e)
{
    if (e->button() != Qt::LeftButton || m_stops.empty())
        return;
    m_dragging = true;
    m_drag = next_drag_serial();
    choose_index(nearest_valid_index(e->position().x()), m_drag);
}

void DegreeSlider::mouseMoveEvent(QMouseEvent* e)
{
    if (!m_dragging)
        return;
    choose_index(nearest_valid_index(e->position().x()), m_drag);
}

void DegreeSlider::mouseReleaseEvent(QMouseEvent* e)
{
    if (!m_dragging || e->button() != Qt::LeftButton)
        return;
    choose_index(nearest_valid_index(e->position().x()), m_drag);
    m_dragging = false;
    emit drag_finished(m_drag);
}

void DegreeSlider::keyPressEvent(QKeyEvent* e)
{
    const int cur = index_of(m_current);
    auto step = [&](int from, int dir) {
        for (int i = from + dir; i >= 0 && i < static_cast<int>(m_stops.size()); i += dir)
            if (m_stops[i].valid)
                return i;
        return -1;
    };
    int target = -1;
    switch (e->key()) {
    case Qt::Key_Left:
    case Qt::Key_Down:
        target = step(cur, -1);
        break;
    case Qt::Key_Right:
    case Qt::Key_Up:
        target = step(cur, +1);
        break;
    case Qt::Key_Home:
        target = step(-1, +1);
        break;
    case Qt::Key_End:
        target = step(static_cast<int>(m_stops.size()), -1);
        break;
    default:
        QWidget::keyPressEvent(e);
        return;
    }
    choose_index(target, 0);
}

bool DegreeSlider::event(QEvent* e)
{
    if (e->type() == QEvent::ToolTip) {
        auto* h = static_cast<QHelpEvent*>(e);
        int best = -1;
        for (int i = 0; i < static_cast<int>(m_stops.size()); ++i)
            if (std::abs(x_of_index(i) - h->pos().x()) <= kHandleRadius + 2)
                best = i;
        if (best >= 0) {
            const SliderStop& s = m_stops[best];
            QString tip = QStringLiteral("<b>") + QString::number(s.value) + QStringLiteral("</b>");
            if (!s.valid)
                tip += QStringLiteral(" — not allowed");
            if (!s.tip.isEmpty())
                tip += QStringLiteral("<br>") + s.tip.toHtmlEscaped();
            QToolTip::showText(h->globalPos(), tip, this);
            return true;
        }
    }
    return QWidget::event(e);
}

} // namespace parallax::views

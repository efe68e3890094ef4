#include "plots/bar_chart.hpp"

#include "style/view_style.hpp"

#include <QHelpEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace parallax::views {

namespace {

constexpr double kSwatchPx = 10;
constexpr double kSwatchTextGapPx = 4;
constexpr double kLegendEntryGapPx = 12;
constexpr double kMaxBarWidthPx = 60;
constexpr double kBarFillOfSlot = 0.7;

} // namespace

BarChart::BarChart(QWidget* parent)
    : QWidget(parent)
{
    setMouseTracking(true);
}

double BarChart::nice_step(double range, int ticks)
{
    const double raw = std::max(range, 1e-12) / std::max(1, ticks);
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    for (double f : { 1.0, 2.0, 5.0, 10.0 })
        if (raw <= f * mag)
            return f * mag;
    return 10 * mag;
}

bool BarChart::dark() const
{
    return is_dark(palette());
}

QColor BarChart::text_colour() const
{
    return palette().color(QPalette::Text);
}

double BarChart::draw_legend(QPainter& p, const std::vector<LegendEntry>& entries, QPointF top_left, bool wrap) const
{
    const QFontMetrics fm = fontMetrics();
    double x = top_left.x();
    double y = top_left.y();
    for (const LegendEntry& e : entries) {
        const double w = kSwatchPx + kSwatchTextGapPx + fm.horizontalAdvance(e.label);
        if (wrap && x + w > width() && x > top_left.x()) {
            x = top_left.x();
            y += fm.height() + 2;
        }
        p.fillRect(QRectF(x, y + (fm.height() - kSwatchPx) / 2.0, kSwatchPx, kSwatchPx), e.colour);
        p.setPen(text_colour());
        p.drawText(QPointF(x + kSwatchPx + kSwatchTextGapPx, y + fm.ascent()), e.label);
        x += w + kLegendEntryGapPx;
    }
    return y + fm.height();
}

void BarChart::draw_value_axis(
    QPainter& p, const QRectF& plot, double max_value, int ticks, const std::function<QString(double)>& label) const
{
    if (max_value <= 0)
        return;
    const QFontMetrics fm = fontMetrics();
    const QColor text = text_colour();
    QColor grid = text;
    grid.setAlphaF(0.15f);
    const double tick = nice_step(max_value, ticks);
    for (double v = 0; v <= max_value + 1e-9 * max_value; v += tick) {
        const double y = plot.bottom() - v / max_value * plot.height();
        p.setPen(grid);
        p.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y));
        p.setPen(text);
        p.drawText(QRectF(0, y - fm.height() / 2.0, plot.left() - 4, fm.height()), Qt::AlignRight | Qt::AlignVCenter,
            label(v));
    }
}

BarChart::StageSlots BarChart::stage_slots(const QRectF& plot, int stages, const QString& widest_label) const
{
    StageSlots s;
    s.left = plot.left();
    s.step = plot.width() / std::max(1, stages);
    s.bar_w = std::max(1.0, std::min(s.step * kBarFillOfSlot, kMaxBarWidthPx));
    s.label_every
        = std::max(1, static_cast<int>(std::ceil((fontMetrics().horizontalAdvance(widest_label) + 6) / s.step)));
    return s;
}

void BarChart::draw_stage_label(QPainter& p, const StageSlots& columns, int i, double y, const QString& text) const
{
    const QFontMetrics fm = fontMetrics();
    const double w = fm.horizontalAdvance(text);
    const double x = std::clamp(columns.centre_x(i) - w / 2, columns.left, std::max(columns.left, width() - w - 1));
    p.setPen(text_colour());
    p.drawText(QPointF(x, y + fm.ascent()), text);
}

int BarChart::stage_at(const StageSlots& columns, int stages, double x)
{
    const int i = static_cast<int>(std::floor((x - columns.left) / columns.step));
    return i >= 0 && i < stages ? i : -1;
}

double BarChart::draw_column(
    QPainter& p, double x, double width_px, double base_y, double px_per_unit, const std::vector<Segment>& parts) const
{
    double y = base_y;
    for (const Segment& s : parts) {
        const double h = s.value * px_per_unit;
        if (h <= 0)
            continue;
        p.fillRect(QRectF(x, y - h, width_px, h), s.colour);
        y -= h;
    }
    return y;
}

double BarChart::draw_row(
    QPainter& p, double x, double y, double height_px, double px_per_unit, const std::vector<Segment>& parts) const
{
    const QFontMetrics fm = fontMetrics();
    const QColor inside = dark() ? QColor(Qt::black) : QColor(Qt::white);
    for (const Segment& s : parts) {
        const double w = s.value * px_per_unit;
        if (w <= 0)
            continue;
        const QRectF r(x, y, w, height_px);
        p.fillRect(r, s.colour);
        if (!s.label.isEmpty() && fm.horizontalAdvance(s.label) + 6 < w) {
            p.setPen(inside);
            p.drawText(r, Qt::AlignCenter, s.label);
        }
        x += w;
    }
    return x;
}

void BarChart::draw_reference_line(
    QPainter& p, const QRectF& plot, double y, const QColor& colour, const QString& label, Qt::PenStyle style) const
{
    p.save();
    p.setRenderHint(QPainter::Antialiasing);
    p.setPen(QPen(colour, style == Qt::DashLine ? 1.5 : 1.0, style));
    p.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y));
    if (!label.isEmpty()) {
        p.setPen(colour);
        p.drawText(QPointF(plot.right() - fontMetrics().horizontalAdvance(label) - 2, y - 3), label);
    }
    p.restore();
}

void BarChart::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    p.fillRect(rect(), palette().color(QPalette::Base));
    const std::vector<LegendEntry> entries = legend();
    if (!entries.empty())
        draw_legend(p, entries, QPointF(4, 4), false);
    if (!has_data()) {
        p.setPen(text_colour());
        p.drawText(rect(), Qt::AlignCenter, placeholder());
        return;
    }
    paint_chart(p);
}

bool BarChart::event(QEvent* e)
{
    if (e->type() == QEvent::ToolTip && has_data()) {
        auto* h = static_cast<QHelpEvent*>(e);
        const QString tip = tooltip_at(h->pos());
        if (!tip.isEmpty()) {
            QToolTip::showText(h->globalPos(), tip, this);
            return true;
        }
    }
    return QWidget::event(e);
}

} // namespace parallax::views

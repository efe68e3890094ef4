#include "plots/breakdown_views.hpp"

#include "io/csv_writer.hpp"
#include "spec/units.hpp"
#include "style/view_style.hpp"

#include <QPainter>

#include <algorithm>
#include <array>
#include <cmath>

namespace parallax::views {

namespace {

std::array<double, kMemoryPartCount> memory_parts(const MemoryBreakdown& m)
{
    return { m.weights, m.gradients, m.optimizer, m.activations, m.other };
}

static_assert(kTimePartCount == static_cast<int>(kTimeBreakdownParts.size()), "a colour for every part of the step");

// In TimePart's order, which is the table's; a bubble a rounding below zero draws as none.
std::array<double, kTimePartCount> time_parts(const TimeBreakdown& t)
{
    std::array<double, kTimePartCount> seconds {};
    for (int k = 0; k < kTimePartCount; ++k)
        seconds[k] = std::max(0.0, t.*kTimeBreakdownParts[k].seconds);
    return seconds;
}

constexpr int kCsvDigits = 10;

} // namespace

MemoryBarsView::MemoryBarsView(QWidget* parent)
    : BarChart(parent)
{
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

QSize MemoryBarsView::sizeHint() const
{
    return { 420, 220 };
}
QSize MemoryBarsView::minimumSizeHint() const
{
    return { 160, 120 };
}

void MemoryBarsView::set_prediction(const Prediction& p)
{
    m_prediction = p;
    update();
}

void MemoryBarsView::clear()
{
    m_prediction = Prediction {};
    update();
}

bool MemoryBarsView::has_data() const
{
    return !m_prediction.stages.empty();
}

std::vector<BarChart::LegendEntry> MemoryBarsView::legend() const
{
    std::vector<LegendEntry> out;
    for (int i = 0; i < kMemoryPartCount; ++i) {
        const auto part = static_cast<MemoryPart>(i);
        out.push_back({ memory_colour(part, dark()), memory_part_name(part) });
    }
    return out;
}

MemoryBarsView::Layout MemoryBarsView::layout() const
{
    Layout l;
    const QFontMetrics fm = fontMetrics();
    const double left = fm.horizontalAdvance(QStringLiteral("000 GiB")) + 8;
    const double legend_h = fm.height() + 6;
    const double bottom = fm.height() + 4;
    l.plot = QRectF(
        left, legend_h + 4, std::max(10.0, width() - left - 8), std::max(10.0, height() - legend_h - bottom - 8));
    l.columns = stage_slots(l.plot, static_cast<int>(m_prediction.stages.size()), QStringLiteral("00"));
    l.max_bytes = m_prediction.capacity_bytes;
    for (const StageReport& s : m_prediction.stages)
        l.max_bytes = std::max(l.max_bytes, s.memory.total());
    for (const auto& m : m_measured)
        if (m)
            l.max_bytes = std::max(l.max_bytes, m->high.value_or(m->value));
    l.max_bytes = std::max(l.max_bytes * 1.05, 1.0);
    return l;
}

void MemoryBarsView::paint_chart(QPainter& p)
{
    const Layout l = layout();
    const double gib_max = l.max_bytes / units::kGiB;
    const double tick = nice_step(gib_max, 6);
    draw_value_axis(p, l.plot, gib_max, 6,
        [tick](double v) -> QString { return QString::number(v, 'f', tick < 1 ? 1 : 0) + QStringLiteral(" GiB"); });
    const int n = static_cast<int>(m_prediction.stages.size());
    for (int i = 0; i < n; ++i) {
        const StageReport& s = m_prediction.stages[i];
        std::vector<Segment> parts;
        const auto bytes = memory_parts(s.memory);
        for (int k = 0; k < kMemoryPartCount; ++k)
            parts.push_back({ bytes[k], memory_colour(static_cast<MemoryPart>(k), dark()), {} });
        const double x = l.columns.bar_x(i);
        const double top = draw_column(p, x, l.columns.bar_w, l.plot.bottom(), l.plot.height() / l.max_bytes, parts);
        if (s.memory.total() > m_prediction.capacity_bytes) {
            p.setPen(QPen(bad_colour(dark()), 2));
            p.setBrush(Qt::NoBrush);
            p.drawRect(QRectF(x, top, l.columns.bar_w, l.plot.bottom() - top));
        }
        if (i % l.columns.label_every == 0)
            draw_stage_label(p, l.columns, i, l.plot.bottom() + 2, QString::number(s.stage));
    }
    paint_measured(p, l);
    draw_reference_line(p, l.plot, l.y_of(m_prediction.capacity_bytes), bad_colour(dark()),
        QStringLiteral("capacity ") + format_gib(m_prediction.capacity_bytes, 0));
}

// Measured memory: a diamond at the stage's measured peak, the error bar over its ranks' spread.
void MemoryBarsView::paint_measured(QPainter& p, const Layout& l) const
{
    if (m_measured.empty())
        return;
    const QFontMetrics fm = fontMetrics();
    p.save();
    p.setRenderHint(QPainter::Antialiasing);
    const QColor mc = text_colour();
    const int n = std::min(stage_count(), static_cast<int>(m_measured.size()));
    for (int i = 0; i < n; ++i) {
        const auto& m = m_measured[static_cast<std::size_t>(i)];
        if (!m)
            continue;
        const QPointF c = measured_marker(i);
        p.setPen(QPen(mc, 1.5));
        if (m->low && m->high && *m->high > *m->low) {
            const double cap = std::min(8.0, l.columns.bar_w / 3);
            p.drawLine(QPointF(c.x(), l.y_of(*m->low)), QPointF(c.x(), l.y_of(*m->high)));
            p.drawLine(QPointF(c.x() - cap, l.y_of(*m->low)), QPointF(c.x() + cap, l.y_of(*m->low)));
            p.drawLine(QPointF(c.x() - cap, l.y_of(*m->high)), QPointF(c.x() + cap, l.y_of(*m->high)));
        }
        const double r = 5;
        const QPointF pts[]
            = { { c.x(), c.y() - r }, { c.x() + r, c.y() }, { c.x(), c.y() + r }, { c.x() - r, c.y() } };
        p.setPen(QPen(palette().color(QPalette::Base), 1));
        p.setBrush(mc);
        p.drawPolygon(pts, 4);
        p.setBrush(Qt::NoBrush);
        if (m->error) {
            p.setPen(mc);
            p.drawText(QPointF(c.x() + r + 2, c.y() + fm.ascent() / 2.0 - 1), format_percent_delta(*m->error));
        }
    }
    p.restore();
}

void MemoryBarsView::set_measured(std::vector<std::optional<MeasuredValue>> per_stage)
{
    m_measured = std::move(per_stage);
    update();
}

QPointF MemoryBarsView::measured_marker(int stage) const
{
    if (stage < 0 || stage >= static_cast<int>(m_measured.size()) || !m_measured[static_cast<std::size_t>(stage)]
        || stage >= stage_count())
        return {};
    const Layout l = layout();
    return { l.columns.centre_x(stage), l.y_of(m_measured[static_cast<std::size_t>(stage)]->value) };
}

QString MemoryBarsView::tooltip_at(QPointF pos) const
{
    const Layout l = layout();
    const int i = stage_at(l.columns, stage_count(), pos.x());
    if (i < 0)
        return {};
    const StageReport& s = m_prediction.stages[i];
    QString tip = QStringLiteral("<b>Stage %1</b> (%2 layers%3%4, %5 micro-batches in flight)<br>")
                      .arg(s.stage)
                      .arg(s.layers)
                      .arg(s.has_embedding ? QStringLiteral(", embedding") : QString())
                      .arg(s.has_output ? QStringLiteral(", output layer") : QString())
                      .arg(s.in_flight_microbatches);
    const auto parts = memory_parts(s.memory);
    for (int k = kMemoryPartCount - 1; k >= 0; --k)
        tip += memory_part_name(static_cast<MemoryPart>(k)) + QStringLiteral(": ") + format_gib(parts[k], 2)
            + QStringLiteral("<br>");
    tip += QStringLiteral("<b>total ") + format_gib(s.memory.total(), 2) + QStringLiteral("</b> of ")
        + format_gib(m_prediction.capacity_bytes, 1);
    if (i < static_cast<int>(m_measured.size()) && m_measured[static_cast<std::size_t>(i)]) {
        const MeasuredValue& m = *m_measured[static_cast<std::size_t>(i)];
        tip += QStringLiteral("<br><b>measured ") + format_gib(m.value, 2) + QStringLiteral("</b>");
        if (m.low && m.high)
            tip += QStringLiteral(" (") + format_gib(*m.low, 2) + QStringLiteral("..") + format_gib(*m.high, 2)
                + QStringLiteral(" over its ranks)");
        if (m.error)
            tip += QStringLiteral(", ") + format_percent_delta(*m.error);
        tip += QStringLiteral(" · ") + m.source.toHtmlEscaped();
    }
    return tip;
}

QString MemoryBarsView::csv() const
{
    CsvWriter out { "stage", "layers", "in_flight_microbatches", "weights_GiB", "gradients_GiB", "optimizer_GiB",
        "activations_GiB", "other_GiB", "total_GiB", "capacity_GiB" };
    for (const StageReport& s : m_prediction.stages) {
        out.integer(s.stage).integer(s.layers).integer(s.in_flight_microbatches);
        for (double v : memory_parts(s.memory))
            out.number(v / units::kGiB, kCsvDigits);
        out.number(s.memory.total() / units::kGiB, kCsvDigits)
            .number(m_prediction.capacity_bytes / units::kGiB, kCsvDigits)
            .end_row();
    }
    return QString::fromStdString(out.text());
}

TimeBreakdownView::TimeBreakdownView(QWidget* parent)
    : BarChart(parent)
{
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
}

QSize TimeBreakdownView::sizeHint() const
{
    return { 420, fontMetrics().height() * 6 + 30 };
}
QSize TimeBreakdownView::minimumSizeHint() const
{
    return { 160, fontMetrics().height() * 5 + 20 };
}

void TimeBreakdownView::set_predictions(const Prediction& current, const Prediction* pinned)
{
    m_current = current;
    m_pinned.reset();
    if (pinned)
        m_pinned = *pinned;
    update();
}

void TimeBreakdownView::clear()
{
    m_current.reset();
    m_pinned.reset();
    update();
}

TimeBreakdownView::Layout TimeBreakdownView::layout() const
{
    const QFontMetrics fm = fontMetrics();
    Layout l;
    l.label_w = fm.horizontalAdvance(QStringLiteral("pinned ")) + 6;
    l.bar_h = fm.height() * 1.4;
    l.bar_w = std::max(10.0, width() - l.label_w - 8);
    l.scale_s = std::max(m_current->step_time_s, m_pinned ? m_pinned->step_time_s : 0.0);
    l.pinned_y = 4 + l.bar_h + fm.height() + 6;
    return l;
}

void TimeBreakdownView::paint_chart(QPainter& p)
{
    const QFontMetrics fm = fontMetrics();
    const QColor text = text_colour();
    const Layout l = layout();
    const double px_per_s = l.scale_s > 0 ? l.bar_w / l.scale_s : 0;
    auto bar = [&](const Prediction& pr, double y, const QString& label) {
        p.setPen(text);
        p.drawText(QRectF(0, y, l.label_w - 4, l.bar_h), Qt::AlignRight | Qt::AlignVCenter, label);
        std::vector<Segment> parts;
        const auto seconds = time_parts(pr.time);
        for (int k = 0; k < kTimePartCount; ++k) {
            const auto part = static_cast<TimePart>(k);
            parts.push_back({ seconds[k], time_colour(part, dark()), time_part_name(part) });
        }
        draw_row(p, l.label_w, y, l.bar_h, px_per_s, parts);
        p.setPen(text);
        p.drawText(QRectF(l.label_w, y + l.bar_h, l.bar_w, fm.height() + 2), Qt::AlignRight | Qt::AlignTop,
            format_seconds(pr.step_time_s));
    };
    bar(*m_current, 4, QStringLiteral("now"));
    double y = l.pinned_y;
    if (m_pinned) {
        bar(*m_pinned, y, QStringLiteral("pinned"));
        y += l.bar_h + fm.height() + 6;
    }
    // The legend carries the seconds of each part that is present.
    std::vector<LegendEntry> entries;
    const auto seconds = time_parts(m_current->time);
    for (int k = 0; k < kTimePartCount; ++k)
        if (seconds[k] > 0) {
            const auto part = static_cast<TimePart>(k);
            entries.push_back(
                { time_colour(part, dark()), time_part_name(part) + QStringLiteral(" ") + format_seconds(seconds[k]) });
        }
    draw_legend(p, entries, QPointF(4, y), true);
}

QString TimeBreakdownView::tooltip_at(QPointF pos) const
{
    const Layout l = layout();
    const bool on_pinned = m_pinned && pos.y() > l.pinned_y && pos.y() < l.pinned_y + l.bar_h;
    if (pos.y() > 4 + l.bar_h && !on_pinned)
        return {};
    const Prediction& pr = on_pinned ? *m_pinned : *m_current;
    double x = l.label_w;
    const auto parts = time_parts(pr.time);
    for (int k = 0; k < kTimePartCount; ++k) {
        const double w = l.scale_s > 0 ? parts[k] / l.scale_s * l.bar_w : 0;
        if (w > 0 && pos.x() >= x && pos.x() < x + w) {
            const auto part = static_cast<TimePart>(k);
            const QString head = time_part_name(part) + QStringLiteral(": ") + format_seconds(parts[k])
                + QStringLiteral(" (") + QString::number(parts[k] / pr.step_time_s * 100, 'f', 1)
                + QStringLiteral("% of the step)");
            return QStringLiteral("<b>") + head.toHtmlEscaped() + QStringLiteral("</b>")
                + explanation_html(explain_metric(time_metric(part)));
        }
        x += std::max(0.0, w);
    }
    return {};
}

QString TimeBreakdownView::csv() const
{
    CsvWriter out;
    out.field("plan");
    for (int k = 0; k < kTimePartCount; ++k)
        out.field(
            QString(time_part_name(static_cast<TimePart>(k)).replace(u' ', u'_') + QStringLiteral("_s")).toStdString());
    out.field("step_time_s").end_row();
    auto row = [&out](std::string_view name, const Prediction& pr) {
        out.field(name);
        for (double v : time_parts(pr.time))
            out.number(v, kCsvDigits);
        out.number(pr.step_time_s, kCsvDigits).end_row();
    };
    if (m_current)
        row("current", *m_current);
    if (m_current && m_pinned)
        row("pinned", *m_pinned);
    return QString::fromStdString(out.text());
}

} // namespace parallax::views

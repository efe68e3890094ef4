#include "plots/breakdown_views.hpp"

#include "io/csv_writer.hpp"
#include "spec/units.hpp"
#include "style/view_style.hpp"

#include <QHelpEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>
#include <array>
#include <cmath>

namespace parallax::views {

namespace {

std::array<double, kMemoryPartCount> memory_parts(const MemoryBreakdown& m)
{
    return { m.weights, m.gradients, m.optimizer, m.activations, m.other };
}

std::array<double, kTimePartCount> time_parts(const TimeBreakdown& t)
{
    return { t.compute_s, t.recompute_s, std::max(0.0, t.bubble_s), t.exposed_tp_s, t.exposed_pp_s, t.exposed_dp_s,
        t.exposed_cp_s, t.exposed_ep_s, t.optimizer_s, t.offload_s };
}

// A "nice" axis step (1, 2, 5 x 10^k) giving about `ticks` intervals.
double nice_step(double range, int ticks)
{
    const double raw = range / std::max(1, ticks);
    const double mag = std::pow(10.0, std::floor(std::log10(std::max(raw, 1e-12))));
    for (double f : { 1.0, 2.0, 5.0, 10.0 })
        if (raw <= f * mag)
            return f * mag;
    return 10 * mag;
}

constexpr int kCsvDigits = 10;

} // namespace

MemoryBarsView::MemoryBarsView(QWidget* parent)
    : QWidget(parent)
{
    setMouseTracking(true);
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
    m_has = true;
    update();
}

void MemoryBarsView::clear()
{
    m_has = false;
    m_prediction = Prediction {};
    update();
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
    const int n = std::max(1, static_cast<int>(m_prediction.stages.size()));
    l.step = l.plot.width() / n;
    l.bar_w = std::max(1.0, std::min(l.step * 0.7, 60.0));
    l.max_bytes = m_prediction.capacity_bytes;
    for (const StageReport& s : m_prediction.stages)
        l.max_bytes = std::max(l.max_bytes, s.memory.total());
    for (const auto& m : m_measured)
        if (m)
            l.max_bytes = std::max(l.max_bytes, m->high.value_or(m->value));
    l.max_bytes = std::max(l.max_bytes * 1.05, 1.0);
    return l;
}

void MemoryBarsView::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    const QPalette& pal = palette();
    const bool dark = is_dark(pal);
    p.fillRect(rect(), pal.color(QPalette::Base));
    const QFontMetrics fm = fontMetrics();
    const QColor text = pal.color(QPalette::Text);
    // Legend.
    double lx = 4;
    for (int i = 0; i < kMemoryPartCount; ++i) {
        const auto part = static_cast<MemoryPart>(i);
        p.fillRect(QRectF(lx, 5, 10, 10), memory_colour(part, dark));
        p.setPen(text);
        const QString name = memory_part_name(part);
        p.drawText(QPointF(lx + 14, 4 + fm.ascent()), name);
        lx += 24 + fm.horizontalAdvance(name);
    }
    if (!m_has || m_prediction.stages.empty()) {
        p.setPen(text);
        p.drawText(rect(), Qt::AlignCenter, QStringLiteral("no plan"));
        return;
    }
    const Layout l = layout();
    // Axis with GiB ticks.
    const double gib_max = l.max_bytes / units::kGiB;
    const double tick = nice_step(gib_max, 6);
    QColor grid = text;
    grid.setAlphaF(0.15f);
    for (double v = 0; v <= gib_max + 1e-9; v += tick) {
        const double y = l.plot.bottom() - v * units::kGiB / l.max_bytes * l.plot.height();
        p.setPen(grid);
        p.drawLine(QPointF(l.plot.left(), y), QPointF(l.plot.right(), y));
        p.setPen(text);
        p.drawText(QRectF(0, y - fm.height() / 2.0, l.plot.left() - 4, fm.height()), Qt::AlignRight | Qt::AlignVCenter,
            QString::number(v, 'f', tick < 1 ? 1 : 0) + QStringLiteral(" GiB"));
    }
    // Bars (no antialiasing: boxes).
    const int n = static_cast<int>(m_prediction.stages.size());
    const int label_every
        = std::max(1, static_cast<int>(std::ceil((fm.horizontalAdvance(QStringLiteral("00")) + 4) / l.step)));
    for (int i = 0; i < n; ++i) {
        const StageReport& s = m_prediction.stages[i];
        const double x = l.plot.left() + i * l.step + (l.step - l.bar_w) / 2;
        double y = l.plot.bottom();
        const auto parts = memory_parts(s.memory);
        for (int k = 0; k < kMemoryPartCount; ++k) {
            const double h = parts[k] / l.max_bytes * l.plot.height();
            if (h <= 0)
                continue;
            p.fillRect(QRectF(x, y - h, l.bar_w, h), memory_colour(static_cast<MemoryPart>(k), dark));
            y -= h;
        }
        if (s.memory.total() > m_prediction.capacity_bytes) {
            p.setPen(QPen(bad_colour(dark), 2));
            p.setBrush(Qt::NoBrush);
            p.drawRect(QRectF(x, y, l.bar_w, l.plot.bottom() - y));
        }
        if (i % label_every == 0) {
            p.setPen(text);
            p.drawText(QRectF(l.plot.left() + i * l.step, l.plot.bottom() + 2, l.step * label_every, fm.height()),
                Qt::AlignHCenter | Qt::AlignTop, QString::number(s.stage));
        }
    }
    // Measured memory: a diamond at the stage's measured peak, the error bar over its ranks' spread.
    if (!m_measured.empty()) {
        p.setRenderHint(QPainter::Antialiasing);
        const QColor mc = text;
        for (int i = 0; i < n && i < static_cast<int>(m_measured.size()); ++i) {
            const auto& m = m_measured[static_cast<std::size_t>(i)];
            if (!m)
                continue;
            const QPointF c = measured_marker(i);
            const auto y_of = [&](double b) { return l.plot.bottom() - b / l.max_bytes * l.plot.height(); };
            p.setPen(QPen(mc, 1.5));
            if (m->low && m->high && *m->high > *m->low) {
                const double cap = std::min(8.0, l.bar_w / 3);
                p.drawLine(QPointF(c.x(), y_of(*m->low)), QPointF(c.x(), y_of(*m->high)));
                p.drawLine(QPointF(c.x() - cap, y_of(*m->low)), QPointF(c.x() + cap, y_of(*m->low)));
                p.drawLine(QPointF(c.x() - cap, y_of(*m->high)), QPointF(c.x() + cap, y_of(*m->high)));
            }
            const double r = 5;
            const QPointF pts[]
                = { { c.x(), c.y() - r }, { c.x() + r, c.y() }, { c.x(), c.y() + r }, { c.x() - r, c.y() } };
            p.setPen(QPen(pal.color(QPalette::Base), 1));
            p.setBrush(mc);
            p.drawPolygon(pts, 4);
            p.setBrush(Qt::NoBrush);
            if (m->error) {
                p.setPen(mc);
                p.drawText(QPointF(c.x() + r + 2, c.y() + fm.ascent() / 2.0 - 1), format_percent_delta(*m->error));
            }
        }
        p.setRenderHint(QPainter::Antialiasing, false);
    }
    // Capacity line.
    const double cy = l.plot.bottom() - m_prediction.capacity_bytes / l.max_bytes * l.plot.height();
    p.setRenderHint(QPainter::Antialiasing);
    p.setPen(QPen(bad_colour(dark), 1.5, Qt::DashLine));
    p.drawLine(QPointF(l.plot.left(), cy), QPointF(l.plot.right(), cy));
    p.setPen(bad_colour(dark));
    const QString cap = QStringLiteral("capacity ") + format_gib(m_prediction.capacity_bytes, 0);
    p.drawText(QPointF(l.plot.right() - fm.horizontalAdvance(cap) - 2, cy - 3), cap);
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
    const double x = l.plot.left() + stage * l.step + l.step / 2;
    const double v = m_measured[static_cast<std::size_t>(stage)]->value;
    return { x, l.plot.bottom() - v / l.max_bytes * l.plot.height() };
}

bool MemoryBarsView::event(QEvent* e)
{
    if (e->type() == QEvent::ToolTip && m_has && !m_prediction.stages.empty()) {
        auto* h = static_cast<QHelpEvent*>(e);
        const Layout l = layout();
        const int i = static_cast<int>(std::floor((h->pos().x() - l.plot.left()) / l.step));
        if (i >= 0 && i < static_cast<int>(m_prediction.stages.size())) {
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
            QToolTip::showText(h->globalPos(), tip, this);
            return true;
        }
    }
    return QWidget::event(e);
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
    : QWidget(parent)
{
    setMouseTracking(true);
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
    m_has = true;
    update();
}

void TimeBreakdownView::clear()
{
    m_has = false;
    update();
}

void TimeBreakdownView::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    const QPalette& pal = palette();
    const bool dark = is_dark(pal);
    p.fillRect(rect(), pal.color(QPalette::Base));
    const QColor text = pal.color(QPalette::Text);
    const QFontMetrics fm = fontMetrics();
    if (!m_has) {
        p.setPen(text);
        p.drawText(rect(), Qt::AlignCenter, QStringLiteral("no plan"));
        return;
    }
    const double label_w = fm.horizontalAdvance(QStringLiteral("pinned ")) + 6;
    const double bar_h = fm.height() * 1.4;
    const double scale_s = std::max(m_current.step_time_s, m_pinned ? m_pinned->step_time_s : 0.0);
    const double bar_w = std::max(10.0, width() - label_w - 8);
    auto bar = [&](const Prediction& pr, double y, const QString& label) {
        p.setPen(text);
        p.drawText(QRectF(0, y, label_w - 4, bar_h), Qt::AlignRight | Qt::AlignVCenter, label);
        double x = label_w;
        const auto parts = time_parts(pr.time);
        for (int k = 0; k < kTimePartCount; ++k) {
            const double w = scale_s > 0 ? parts[k] / scale_s * bar_w : 0;
            if (w <= 0)
                continue;
            const QRectF r(x, y, w, bar_h);
            p.fillRect(r, time_colour(static_cast<TimePart>(k), dark));
            const QString t = time_part_name(static_cast<TimePart>(k));
            if (fm.horizontalAdvance(t) + 6 < w) {
                p.setPen(dark ? QColor(Qt::black) : QColor(Qt::white));
                p.drawText(r, Qt::AlignCenter, t);
            }
            x += w;
        }
        p.setPen(text);
        const QString total = format_seconds(pr.step_time_s);
        p.drawText(QRectF(label_w, y + bar_h, bar_w, fm.height() + 2), Qt::AlignRight | Qt::AlignTop, total);
    };
    bar(m_current, 4, QStringLiteral("now"));
    double y = 4 + bar_h + fm.height() + 6;
    if (m_pinned) {
        bar(*m_pinned, y, QStringLiteral("pinned"));
        y += bar_h + fm.height() + 6;
    }
    // Legend with the seconds of each part that is present.
    double lx = 4;
    double ly = y;
    const auto parts = time_parts(m_current.time);
    for (int k = 0; k < kTimePartCount; ++k) {
        if (parts[k] <= 0)
            continue;
        const auto part = static_cast<TimePart>(k);
        const QString t = time_part_name(part) + QStringLiteral(" ") + format_seconds(parts[k]);
        const double w = 18 + fm.horizontalAdvance(t);
        if (lx + w > width() && lx > 4) {
            lx = 4;
            ly += fm.height() + 2;
        }
        p.fillRect(QRectF(lx, ly + (fm.height() - 10) / 2.0, 10, 10), time_colour(part, dark));
        p.setPen(text);
        p.drawText(QPointF(lx + 14, ly + fm.ascent()), t);
        lx += w + 8;
    }
}

bool TimeBreakdownView::event(QEvent* e)
{
    if (e->type() == QEvent::ToolTip && m_has) {
        auto* h = static_cast<QHelpEvent*>(e);
        const QFontMetrics fm = fontMetrics();
        const double label_w = fm.horizontalAdvance(QStringLiteral("pinned ")) + 6;
        const double bar_h = fm.height() * 1.4;
        const double scale_s = std::max(m_current.step_time_s, m_pinned ? m_pinned->step_time_s : 0.0);
        const double bar_w = std::max(10.0, width() - label_w - 8);
        const bool on_pinned
            = m_pinned && h->pos().y() > 4 + bar_h + fm.height() + 6 && h->pos().y() < 4 + 2 * bar_h + fm.height() + 6;
        const Prediction& pr = on_pinned ? *m_pinned : m_current;
        if (h->pos().y() <= 4 + bar_h || on_pinned) {
            double x = label_w;
            const auto parts = time_parts(pr.time);
            for (int k = 0; k < kTimePartCount; ++k) {
                const double w = scale_s > 0 ? parts[k] / scale_s * bar_w : 0;
                if (w > 0 && h->pos().x() >= x && h->pos().x() < x + w) {
                    const auto part = static_cast<TimePart>(k);
                    const QString head = time_part_name(part) + QStringLiteral(": ") + format_seconds(parts[k])
                        + QStringLiteral(" (") + QString::number(parts[k] / pr.step_time_s * 100, 'f', 1)
                        + QStringLiteral("% of the step)");
                    QToolTip::showText(h->globalPos(),
                        QStringLiteral("<b>") + head.toHtmlEscaped() + QStringLiteral("</b>")
                            + explanation_html(explain_metric(time_metric(part))),
                        this);
                    return true;
                }
                x += std::max(0.0, w);
            }
        }
    }
    return QWidget::event(e);
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
    if (m_has)
        row("current", m_current);
    if (m_has && m_pinned)
        row("pinned", *m_pinned);
    return QString::fromStdString(out.text());
}

} // namespace parallax::views

#include "timeline/summary_strip.hpp"

#include "ir/schedule_program.hpp"

#include <QLocale>
#include <QPainter>

#include <algorithm>
#include <cmath>

namespace parallax::views {

namespace {

QString qs(const std::string& s)
{
    return QString::fromStdString(s);
}

QString plan_line(const TimelineData& d, const QString& prefix)
{
    const Prediction& p = d.prediction;
    QString s = prefix + qs(d.info.title);
    s += QStringLiteral("   step ") + qs(format_duration(p.step_time_s));
    s += QStringLiteral("   bubble ") + QString::number(p.bubble_fraction * 100, 'f', 1) + QStringLiteral("%");
    s += QStringLiteral("   ") + QString::number(d.total_gpus()) + QStringLiteral(" GPUs, ")
        + QString::number(d.stages.size()) + QStringLiteral(" stage rows");
    s += p.fidelity == Fidelity::simulated ? QStringLiteral("   (simulated)")
                                           : QStringLiteral("   (analytic numbers; the picture is simulated)");
    // A step too long to simulate whole: the picture is its steady-state window, the step time extrapolated.
    if (d.sim && d.sim->window.extrapolated())
        s += QStringLiteral("   showing %1 of %2 micro-batches, step extrapolated")
                 .arg(QLocale().toString(d.sim->window.simulated_microbatches),
                     QLocale().toString(d.sim->window.step_microbatches));
    return s;
}

} // namespace

SummaryStrip::SummaryStrip(QWidget* parent)
    : QWidget(parent)
{
    setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Fixed);
}

void SummaryStrip::set_plans(std::shared_ptr<const TimelineData> current, std::shared_ptr<const TimelineData> baseline)
{
    m_current = std::move(current);
    m_baseline = std::move(baseline);
    m_items = m_current ? m_current->summary : std::vector<TimelineSummaryItem> {};
    m_diff.reset();
    if (m_current && m_baseline)
        m_diff = compare_plans(*m_baseline, *m_current);
    updateGeometry();
    update();
}

void SummaryStrip::set_legend(std::vector<TimelineKind> kinds)
{
    m_legend = std::move(kinds);
    updateGeometry();
    update();
}

void SummaryStrip::resizeEvent(QResizeEvent* e)
{
    QWidget::resizeEvent(e);
    updateGeometry(); // the legend may wrap differently
}

QStringList SummaryStrip::text_lines() const
{
    QStringList lines;
    if (!m_current)
        return lines;
    if (m_baseline)
        lines << plan_line(*m_baseline, QStringLiteral("A  "));
    lines << plan_line(*m_current, m_baseline ? QStringLiteral("B  ") : QString());
    QString parts;
    for (const TimelineSummaryItem& it : m_items) {
        if (!(it.seconds > 0))
            continue;
        if (!parts.isEmpty())
            parts += QStringLiteral(" + ");
        parts += qs(it.label) + QStringLiteral(" ") + qs(format_duration(it.seconds));
    }
    lines << parts + QStringLiteral(" = ") + qs(format_duration(m_current->prediction.time.total()));
    if (m_diff) {
        lines << qs(m_diff->headline());
        if (!m_diff->strategy_changes.empty()) {
            QString c = QStringLiteral("changed: ");
            for (std::size_t k = 0; k < m_diff->strategy_changes.size(); ++k)
                c += (k ? QStringLiteral(", ") : QString()) + qs(m_diff->strategy_changes[k]);
            lines << c;
        }
    }
    return lines;
}

QSize SummaryStrip::sizeHint() const
{
    const int line = fontMetrics().height();
    const int bars = m_baseline ? 2 : 1;
    const int diff_lines = m_diff ? (m_diff->strategy_changes.empty() ? 1 : 2) : 0;
    return QSize(600, 8 + bars * (line + bar_height() + 4) + diff_lines * line + legend_lines() * (line + 2) + 8);
}

int SummaryStrip::legend_lines() const
{
    // The legend's width at the strip's width: the same layout as paintEvent.
    QFont small = font();
    small.setPointSizeF(std::max(6.5, font().pointSizeF() - 1));
    const QFontMetrics fms(small);
    const int width = std::max(100, this->width() - 16);
    int x = 0, lines = 1;
    auto add = [&](const QString& name) {
        const int w = 10 + 4 + fms.horizontalAdvance(name) + 12;
        if (x + w > width) {
            x = 0;
            ++lines;
        }
        x += w;
    };
    for (TimelineKind k : m_legend)
        add(QString::fromUtf8(to_string(k)));
    for (const QString& s : { tr("bubble"), tr("exposed communication"), tr("critical path"),
             tr("lighter: the reverse-direction pipeline") })
        add(s);
    return lines;
}

QSize SummaryStrip::minimumSizeHint() const
{
    return QSize(200, sizeHint().height());
}

namespace {

constexpr int kLeft = 8; // px of padding on each side

QFont smaller(const QFont& f)
{
    QFont small = f;
    small.setPointSizeF(std::max(6.5, f.pointSizeF() - 1));
    return small;
}

QFont bolder(const QFont& f)
{
    QFont bold = f;
    bold.setBold(true);
    return bold;
}

} // namespace

int SummaryStrip::content_width() const
{
    return std::max(100, width() - 2 * kLeft);
}

void SummaryStrip::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    p.fillRect(rect(), m_palette.header_background);
    if (!m_current)
        return;
    int y = 6;
    const double max_step
        = std::max(m_current->prediction.step_time_s, m_baseline ? m_baseline->prediction.step_time_s : 0.0);
    if (m_baseline)
        y = paint_plan_bar(p, *m_baseline, QStringLiteral("A  "), y, max_step);
    y = paint_plan_bar(p, *m_current, m_baseline ? QStringLiteral("B  ") : QString(), y, max_step);
    if (m_diff)
        y = paint_diff(p, y);
    paint_legend(p, y);
}

// A plan's line and its stacked bar: the breakdown, to scale on the common axis of both plans.
int SummaryStrip::paint_plan_bar(
    QPainter& p, const TimelineData& d, const QString& prefix, int y, double max_step) const
{
    const QFontMetrics fm = fontMetrics();
    const QFont small = smaller(font());
    const QFontMetrics fms(small);
    const int line = fm.height(), width = content_width();
    p.setFont(bolder(font()));
    p.setPen(m_palette.text);
    p.drawText(QRect(kLeft, y, width, line), Qt::AlignLeft | Qt::AlignVCenter,
        fm.elidedText(plan_line(d, prefix), Qt::ElideRight, width));
    y += line + 2;
    double x = kLeft;
    const double scale = max_step > 0 ? width / max_step : 0;
    p.setFont(small);
    for (const TimelineSummaryItem& it : timeline_summary(d.prediction)) {
        if (!(it.seconds > 0))
            continue;
        const double w = it.seconds * scale;
        const QRectF r(x, y, w, bar_height());
        if (it.is_bubble) {
            p.fillRect(r, m_palette.bubble);
            p.fillRect(r, QBrush(m_palette.bubble_hatch, Qt::BDiagPattern));
        } else {
            p.fillRect(r, TimelinePalette::kind(it.colour));
        }
        const QString label = qs(it.label) + QStringLiteral(" ") + qs(format_duration(it.seconds));
        const QString shortl = qs(format_duration(it.seconds));
        p.setPen(it.is_bubble ? m_palette.text : TimelinePalette::text_on(it.colour, 0));
        if (w >= fms.horizontalAdvance(label) + 6)
            p.drawText(r, Qt::AlignCenter, label);
        else if (w >= fms.horizontalAdvance(shortl) + 4)
            p.drawText(r, Qt::AlignCenter, shortl);
        x += w;
    }
    return y + bar_height() + 4;
}

// The comparison's headline (green when B is faster) and what changed between the plans.
int SummaryStrip::paint_diff(QPainter& p, int y) const
{
    const QFontMetrics fm = fontMetrics();
    const int line = fm.height(), width = content_width();
    p.setFont(bolder(font()));
    p.setPen(m_diff->delta_s() <= 0 ? QColor(0x15, 0x80, 0x3d) : QColor(0xb9, 0x1c, 0x1c));
    p.drawText(QRect(kLeft, y, width, line), Qt::AlignLeft | Qt::AlignVCenter,
        fm.elidedText(qs(m_diff->headline()), Qt::ElideRight, width));
    y += line;
    if (m_diff->strategy_changes.empty())
        return y;
    p.setFont(font());
    p.setPen(m_palette.muted_text);
    QString c = QStringLiteral("changed: ");
    for (std::size_t k = 0; k < m_diff->strategy_changes.size(); ++k)
        c += (k ? QStringLiteral(", ") : QString()) + qs(m_diff->strategy_changes[k]);
    p.drawText(QRect(kLeft, y, width, line), Qt::AlignLeft | Qt::AlignVCenter, fm.elidedText(c, Qt::ElideRight, width));
    return y + line;
}

// Legend: kinds shown, then the marks; wraps to a second line.
void SummaryStrip::paint_legend(QPainter& p, int y) const
{
    const QFont small = smaller(font());
    const QFontMetrics fms(small);
    const int line = fontMetrics().height(), width = content_width();
    p.setFont(small);
    int x = kLeft;
    const int sw = 10;
    auto entry = [&](const QString& name, auto&& swatch) {
        const int w = sw + 4 + fms.horizontalAdvance(name) + 12;
        if (x + w > kLeft + width) {
            x = kLeft;
            y += fms.height() + 2;
        }
        swatch(QRect(x, y + (line - sw) / 2, sw, sw));
        p.setPen(m_palette.text);
        p.drawText(QRect(x + sw + 4, y, w, line), Qt::AlignLeft | Qt::AlignVCenter, name);
        x += w;
    };
    for (TimelineKind k : m_legend)
        entry(QString::fromUtf8(to_string(k)), [&](const QRect& r) { p.fillRect(r, TimelinePalette::kind(k)); });
    entry(tr("bubble"), [&](const QRect& r) {
        p.fillRect(r, m_palette.bubble);
        p.fillRect(r, QBrush(m_palette.bubble_hatch, Qt::BDiagPattern));
    });
    entry(tr("exposed communication"),
        [&](const QRect& r) { p.fillRect(r.adjusted(0, r.height() - 3, 0, 0), m_palette.exposed); });
    entry(tr("critical path"),
        [&](const QRect& r) { p.fillRect(r.adjusted(0, 0, 0, -(r.height() - 3)), m_palette.critical); });
    const bool dual = m_current->info.strategy && runs_dualpipe(*m_current->info.strategy);
    if (m_current->chunks_per_device > 1)
        entry(dual ? tr("lighter: the reverse-direction pipeline") : tr("lighter: the device's later virtual stage"),
            [&](const QRect& r) {
                p.fillRect(r.adjusted(0, 0, -r.width() / 2, 0), TimelinePalette::kind(TimelineKind::forward, 0));
                p.fillRect(r.adjusted(r.width() / 2, 0, 0, 0), TimelinePalette::kind(TimelineKind::forward, 1));
            });
}

} // namespace parallax::views

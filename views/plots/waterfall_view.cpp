#include "plots/waterfall_view.hpp"

#include "style/view_style.hpp"

#include <QPainter>

#include <algorithm>
#include <cmath>

namespace parallax::views {

namespace {

QString qs(const std::string& s)
{
    return QString::fromStdString(s);
}

QString format_energy(double joules)
{
    return joules >= 1e6 ? QString::number(joules / 1e6, 'f', 2) + QStringLiteral(" MJ")
                         : QString::number(joules / 1e3, 'f', 1) + QStringLiteral(" kJ");
}

} // namespace

WaterfallView::WaterfallView(QWidget* parent)
    : BarChart(parent)
{
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

void WaterfallView::set_waterfall(const ImprovementWaterfall& w)
{
    m_rows.clear();
    Row given;
    given.label = QStringLiteral("as given");
    given.detail = w.baseline_feasible ? QStringLiteral("the plan as set") : QStringLiteral("does not fit in memory");
    given.step_to = w.baseline_step_time_s;
    given.energy_to = w.baseline_energy_J;
    given.total = true;
    m_rows.push_back(given);
    double step = w.baseline_step_time_s;
    double energy = w.baseline_energy_J;
    for (const Improvement& i : w.steps) {
        Row r;
        r.label = qs(i.name);
        r.detail = (i.change.empty() ? QString() : qs(i.change) + QStringLiteral(": ")) + qs(i.note);
        // From what the plan would be without this choice to what it is with it (a price floats below).
        r.step_from = i.step_time_s + i.step_time_s_saved;
        r.step_to = i.step_time_s;
        r.energy_from = i.energy_J + i.energy_J_saved;
        r.energy_to = i.energy_J;
        step = i.step_time_s;
        energy = i.energy_J;
        m_rows.push_back(r);
    }
    if (!w.steps.empty()) {
        Row all;
        all.label = QStringLiteral("with all");
        all.detail = QStringLiteral("every choice above applied");
        all.step_to = step;
        all.energy_to = energy;
        all.total = true;
        m_rows.push_back(all);
    }
    updateGeometry();
    update();
}

void WaterfallView::clear()
{
    m_rows.clear();
    update();
}

int WaterfallView::row_count() const
{
    return static_cast<int>(m_rows.size());
}

bool WaterfallView::has_data() const
{
    return !m_rows.empty();
}

std::vector<BarChart::LegendEntry> WaterfallView::legend() const
{
    return { { time_colour(TimePart::compute, dark()), QStringLiteral("plan") },
        { good_colour(dark()), QStringLiteral("saves") }, { bad_colour(dark()), QStringLiteral("costs") } };
}

QSize WaterfallView::sizeHint() const
{
    return { 560, 60 + 22 * std::max(3, row_count()) };
}

QSize WaterfallView::minimumSizeHint() const
{
    return { 320, 120 };
}

WaterfallView::Layout WaterfallView::layout() const
{
    Layout l;
    const QFontMetrics fm = fontMetrics();
    l.top = fm.height() * 2 + 10; // under the legend and the panel titles
    for (const Row& r : m_rows)
        l.label_w = std::max<double>(l.label_w, fm.horizontalAdvance(r.label) + 12);
    const double h = std::max(1.0, height() - l.top - fm.height() - 6);
    l.row_h = std::min(26.0, h / std::max(1, row_count()));
    const double panel_w = std::max(40.0, (width() - l.label_w - 24) / 2);
    l.time_plot = QRectF(l.label_w, l.top, panel_w, l.row_h * row_count());
    l.energy_plot = QRectF(l.label_w + panel_w + 24, l.top, panel_w, l.row_h * row_count());
    for (const Row& r : m_rows) {
        l.max_step = std::max({ l.max_step, r.step_from, r.step_to });
        l.max_energy = std::max({ l.max_energy, r.energy_from, r.energy_to });
    }
    return l;
}

void WaterfallView::paint_panel(QPainter& p, const QRectF& plot, double max_value, bool energy) const
{
    const QColor text = text_colour();
    const double row_h = plot.height() / std::max(1, row_count());
    // The bars leave room at the right for the widest value label.
    const double label_room = fontMetrics().horizontalAdvance(QStringLiteral("−888.8 kJ")) + 8;
    const double bar_w = std::max(10.0, plot.width() - label_room);
    p.setPen(text);
    p.drawText(QRectF(plot.left(), plot.top() - fontMetrics().height() - 2, plot.width(), fontMetrics().height()),
        Qt::AlignLeft, energy ? QStringLiteral("energy per step, all GPUs") : QStringLiteral("step time"));
    for (int i = 0; i < row_count(); ++i) {
        const Row& r = m_rows[static_cast<std::size_t>(i)];
        const double from = energy ? r.energy_from : r.step_from;
        const double to = energy ? r.energy_to : r.step_to;
        const double a = r.total ? 0.0 : std::min(from, to);
        const double b = r.total ? to : std::max(from, to);
        const double x0 = plot.left() + a / max_value * bar_w;
        const double x1 = plot.left() + b / max_value * bar_w;
        const QColor c = r.total ? time_colour(TimePart::compute, dark())
                                 : (to <= from ? good_colour(dark()) : bad_colour(dark()));
        const QRectF bar(x0, plot.top() + i * row_h + 3, std::max(1.0, x1 - x0), row_h - 6);
        p.fillRect(bar, c);
        const double delta = std::fabs(to - from);
        const QString value = r.total ? (energy ? format_energy(to) : format_seconds(to))
                                      : (to > from ? QStringLiteral("+") : QStringLiteral("−"))
                + (energy ? format_energy(delta) : format_seconds(delta));
        p.setPen(text);
        p.drawText(QRectF(x1 + 4, bar.top(), label_room, bar.height()), Qt::AlignLeft | Qt::AlignVCenter, value);
    }
}

void WaterfallView::paint_chart(QPainter& p)
{
    const Layout l = layout();
    p.setPen(text_colour());
    for (int i = 0; i < row_count(); ++i)
        p.drawText(QRectF(0, l.top + i * l.row_h, l.label_w - 6, l.row_h), Qt::AlignRight | Qt::AlignVCenter,
            m_rows[static_cast<std::size_t>(i)].label);
    paint_panel(p, l.time_plot, l.max_step, false);
    paint_panel(p, l.energy_plot, l.max_energy, true);
}

QString WaterfallView::tooltip_at(QPointF pos) const
{
    const Layout l = layout();
    const int i = static_cast<int>((pos.y() - l.top) / std::max(1.0, l.row_h));
    if (pos.y() < l.top || i < 0 || i >= row_count())
        return {};
    const Row& r = m_rows[static_cast<std::size_t>(i)];
    return QStringLiteral("<b>%1</b><br>%2<br>step %3 → %4, energy %5 → %6")
        .arg(r.label.toHtmlEscaped(), r.detail.toHtmlEscaped(), format_seconds(r.total ? r.step_to : r.step_from),
            format_seconds(r.step_to), format_energy(r.total ? r.energy_to : r.energy_from),
            format_energy(r.energy_to));
}

QString WaterfallView::csv() const
{
    QString out = QStringLiteral("choice,step_from_s,step_to_s,energy_from_J,energy_to_J,detail\n");
    for (const Row& r : m_rows) {
        QString detail = r.detail;
        detail.replace(QLatin1Char('"'), QStringLiteral("\"\""));
        out += QStringLiteral("%1,%2,%3,%4,%5,\"%6\"\n")
                   .arg(r.label)
                   .arg(r.total ? r.step_to : r.step_from, 0, 'g', 10)
                   .arg(r.step_to, 0, 'g', 10)
                   .arg(r.total ? r.energy_to : r.energy_from, 0, 'g', 10)
                   .arg(r.energy_to, 0, 'g', 10)
                   .arg(detail);
    }
    return out;
}

} // namespace parallax::views

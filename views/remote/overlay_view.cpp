#include "remote/overlay_view.hpp"

#include "style/view_style.hpp"

#include <QHelpEvent>
#include <QPainter>
#include <QPainterPath>
#include <QToolTip>

#include <algorithm>
#include <cmath>
#include <optional>

namespace parallax::views {

namespace {

struct MetricInfo {
    const char* key;
    const char* title;
};
// The order of the rows; the keys are compare_run's metric names.
constexpr MetricInfo kMetrics[] = { { "step_time_s", "Step time" }, { "tokens_per_s_per_gpu", "Tokens/s per GPU" },
    { "tflops_per_gpu", "TFLOP/s per GPU" }, { "memory_GiB", "Peak memory" }, { "power_W", "Power per GPU" } };

// Beyond these the error is drawn as a miss (docs/accuracy.md's tables quote ±10%).
constexpr double kGoodError = 0.10;
constexpr double kFairError = 0.25;
// Head room right of the largest value so markers and caps stay inside the plot.
constexpr double kHeadroom = 1.12;
constexpr double kStageChartHeight = 96;
constexpr double kMargin = 6; // around the header and the rows

QString qs(const std::string& s)
{
    return QString::fromStdString(s);
}

QColor error_colour(double e, const QPalette& pal)
{
    const bool dark = is_dark(pal);
    if (std::abs(e) <= kGoodError)
        return good_colour(dark);
    if (std::abs(e) > kFairError)
        return bad_colour(dark);
    return pal.color(QPalette::Text);
}

QString source_text(const remote::RunComparison& c)
{
    if (c.prediction_source == "workload")
        return QStringLiteral(
            "predicted: the probe's workload (its layers, micro-batches, GPipe), analytic, at dispatch");
    if (c.prediction_source == "plan")
        return QStringLiteral("predicted: the plan as sent, analytic, at dispatch");
    return QStringLiteral("not compared with a prediction: ") + qs(c.why);
}

} // namespace

MeasuredOverlayView::MeasuredOverlayView(QWidget* parent)
    : QWidget(parent)
{
    setObjectName(QStringLiteral("measured_overlay"));
    setMouseTracking(true);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
}

void MeasuredOverlayView::set_overlays(std::vector<std::shared_ptr<const remote::RunOverlay>> runs)
{
    runs.erase(std::remove(runs.begin(), runs.end(), nullptr), runs.end());
    m_runs = std::move(runs);
    updateGeometry();
    update();
}

QSize MeasuredOverlayView::minimumSizeHint() const
{
    return { 260, 80 };
}

QSize MeasuredOverlayView::sizeHint() const
{
    const Geometry g = geometry();
    double bottom = g.header.bottom();
    if (!g.rows.empty())
        bottom = g.rows.back().rect.bottom();
    if (!g.stages.isEmpty())
        bottom = g.stages.bottom() + fontMetrics().height() + 4;
    return { 520, static_cast<int>(std::ceil(bottom)) + 6 };
}

QString MeasuredOverlayView::value_text(const QString& metric, double v) const
{
    if (metric == QLatin1String("step_time_s"))
        return format_seconds(v);
    if (metric == QLatin1String("tokens_per_s_per_gpu"))
        return format_count(v);
    if (metric == QLatin1String("tflops_per_gpu"))
        return v >= 10 ? QString::number(v, 'f', 1) : QString::number(v, 'g', 3); // CPU ranks reach 0.0123
    if (metric == QLatin1String("power_W"))
        return QString::number(v, 'f', 0) + QStringLiteral(" W");
    return QString::number(v, 'f', v < 10 ? 2 : 1) + QStringLiteral(" GiB"); // memory
}

QString MeasuredOverlayView::header_note() const
{
    if (m_runs.empty())
        return {};
    bool measured = false;
    for (const auto& run : m_runs)
        for (const auto& m : run->comparison.metrics)
            measured = measured || m.measured.has_value();
    const QString src = source_text(m_runs.front()->comparison);
    return measured
        ? src
        : QStringLiteral("No steady-state step logged yet (the first step is start-up and not counted). ") + src;
}

namespace {

// The largest value a metric's row must show over every run, or nothing when no run measured it (power
// only when the log has it; a measured row brings its predictions along).
std::optional<double> metric_row_top(
    const std::vector<std::shared_ptr<const remote::RunOverlay>>& runs, const char* key)
{
    double top = 0;
    bool any = false;
    for (const auto& run : runs) {
        const remote::MetricComparison* m = run->metric(key);
        if (m && m->measured)
            any = true;
        if (!m || (!m->measured && !m->predicted))
            continue;
        for (const auto& v : { m->measured, m->spread_high, m->predicted })
            if (v && std::isfinite(*v))
                top = std::max(top, *v);
    }
    if (!any)
        return std::nullopt;
    return top;
}

} // namespace

MeasuredOverlayView::Geometry MeasuredOverlayView::geometry() const
{
    Geometry g;
    const QFontMetricsF fm(font());
    const double w = std::max(200.0, static_cast<double>(width()));
    // Header: which run(s), and what the markers are measured against.
    double header_h = fm.height() + 4;
    if (!m_runs.empty()) {
        const QString src = header_note();
        header_h += fm.boundingRect(QRectF(0, 0, w - 2 * kMargin, 1000), Qt::TextWordWrap, src).height() + 2;
        if (m_runs.size() > 1)
            header_h += fm.height() + 2;
    }
    g.header = QRectF(kMargin, kMargin, w - 2 * kMargin, header_h);
    if (m_runs.empty())
        return g;
    const double label_w = fm.horizontalAdvance(QStringLiteral("Tokens/s per GPU")) + 10;
    const double text_w = std::clamp(w * 0.42, 160.0,
        fm.horizontalAdvance(QStringLiteral("212.4 ms (201.3 ms–230.9 ms, 12 steps) · pred 180.2 ms · +17.8%")) + 8);
    double y = g.header.bottom() + 4;
    const double lane_h = fm.height() + 3;
    const double row_h = static_cast<double>(m_runs.size()) * lane_h + 6;
    for (const MetricInfo& info : kMetrics) {
        const std::optional<double> top = metric_row_top(m_runs, info.key);
        if (!top)
            continue;
        Row row;
        row.metric = QLatin1String(info.key);
        row.title = QLatin1String(info.title);
        row.scale_max = *top > 0 ? *top * kHeadroom : 1.0;
        row.rect = QRectF(kMargin, y, w - 2 * kMargin, row_h);
        row.plot = QRectF(kMargin + label_w, y + 3, std::max(20.0, w - 2 * kMargin - label_w - text_w - 6), row_h - 6);
        row.text = QRectF(row.plot.right() + 6, y + 3, text_w, row_h - 6);
        add_lane_markers(g, row, lane_h);
        g.rows.push_back(row);
        y += row_h + 2;
    }
    if (!m_runs.front()->stages.empty()) {
        const double title_h = fm.height() + 4;
        g.stages = QRectF(
            kMargin + label_w, y + title_h + 2, std::max(40.0, w - 2 * kMargin - label_w - 8), kStageChartHeight);
        add_stage_markers(g);
    }
    return g;
}

// One marker per run in a metric's row: the measurement with its spread and the prediction's bar, or the
// bar alone for a run that has not logged a steady step yet (those after the measured ones, as drawn).
void MeasuredOverlayView::add_lane_markers(Geometry& g, const Row& row, double lane_h) const
{
    const auto x_of = [&](double v) { return row.plot.left() + v / row.scale_max * row.plot.width(); };
    const std::string key = row.metric.toStdString();
    for (const bool measured_pass : { true, false })
        for (std::size_t k = 0; k < m_runs.size(); ++k) {
            const remote::MetricComparison* m = m_runs[k]->metric(key);
            if (!m || (measured_pass ? !m->measured : (m->measured || !m->predicted)))
                continue;
            Marker mk;
            mk.run_id = qs(m_runs[k]->run_id);
            mk.metric = row.metric;
            mk.measured = m->measured.value_or(std::nan(""));
            mk.predicted = m->predicted;
            const double cy = row.plot.top() + (static_cast<double>(k) + 0.5) * lane_h;
            mk.at = QPointF(m->measured ? x_of(mk.measured) : std::nan(""), cy);
            if (measured_pass) {
                mk.low = m->spread_low;
                mk.high = m->spread_high;
                mk.error = m->error();
                if (mk.low && mk.high)
                    mk.error_bar
                        = QRectF(QPointF(x_of(*mk.low), cy - lane_h * 0.3), QPointF(x_of(*mk.high), cy + lane_h * 0.3));
            }
            if (mk.predicted)
                mk.predicted_bar
                    = QRectF(row.plot.left(), cy - lane_h * 0.32, x_of(*mk.predicted) - row.plot.left(), lane_h * 0.64);
            g.markers.push_back(mk);
        }
}

// Per-stage memory of the primary run: a bar per stage for the prediction, the measurement with its spread.
void MeasuredOverlayView::add_stage_markers(Geometry& g) const
{
    const remote::RunOverlay& primary = *m_runs.front();
    double top = 0;
    for (const auto& s : primary.stages)
        for (const auto& v : { s.measured_GiB, s.high_GiB, s.predicted_GiB })
            if (v)
                top = std::max(top, *v);
    g.stage_max = top > 0 ? top * kHeadroom : 1.0;
    const auto n = static_cast<double>(primary.stages.size());
    const double step = g.stages.width() / n;
    const double bar_w = std::clamp(step * 0.55, 3.0, 48.0);
    const auto y_of = [&](double v) { return g.stages.bottom() - v / g.stage_max * g.stages.height(); };
    for (std::size_t i = 0; i < primary.stages.size(); ++i) {
        const remote::StageMemoryComparison& s = primary.stages[i];
        const double cx = g.stages.left() + (static_cast<double>(i) + 0.5) * step;
        Marker mk;
        mk.run_id = qs(primary.run_id);
        mk.metric = QStringLiteral("stage %1").arg(s.stage);
        mk.measured = s.measured_GiB.value_or(std::nan(""));
        mk.low = s.low_GiB;
        mk.high = s.high_GiB;
        mk.predicted = s.predicted_GiB;
        mk.error = s.error();
        mk.at = QPointF(cx, s.measured_GiB ? y_of(*s.measured_GiB) : std::nan(""));
        if (s.low_GiB && s.high_GiB)
            mk.error_bar
                = QRectF(QPointF(cx - bar_w * 0.25, y_of(*s.high_GiB)), QPointF(cx + bar_w * 0.25, y_of(*s.low_GiB)));
        if (s.predicted_GiB)
            mk.predicted_bar
                = QRectF(cx - bar_w / 2, y_of(*s.predicted_GiB), bar_w, g.stages.bottom() - y_of(*s.predicted_GiB));
        g.markers.push_back(mk);
    }
}

std::vector<MeasuredOverlayView::Marker> MeasuredOverlayView::markers() const
{
    return geometry().markers;
}

QStringList MeasuredOverlayView::text_lines() const
{
    QStringList out;
    for (const Marker& m : markers()) {
        QString title = m.metric;
        for (const MetricInfo& info : kMetrics)
            if (m.metric == QLatin1String(info.key))
                title = QString::fromLatin1(info.title).toLower();
        const QString unit_metric
            = m.metric.startsWith(QLatin1String("stage")) ? QStringLiteral("memory_GiB") : m.metric;
        QString measured = QStringLiteral("measured –");
        if (std::isfinite(m.measured)) {
            measured = QStringLiteral("measured ") + value_text(unit_metric, m.measured);
            if (m.low && m.high)
                measured += QStringLiteral(" (") + value_text(unit_metric, *m.low) + QStringLiteral("..")
                    + value_text(unit_metric, *m.high) + QStringLiteral(")");
        }
        const QString predicted = m.predicted ? QStringLiteral("predicted ") + value_text(unit_metric, *m.predicted)
                                              : QStringLiteral("predicted –");
        const QString error = m.error ? format_percent_delta(*m.error) : QStringLiteral("n/a");
        out << QStringList { title, m.run_id, measured, predicted, error }.join(QStringLiteral(" | "));
    }
    return out;
}

void MeasuredOverlayView::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    const QPalette& pal = palette();
    p.fillRect(rect(), pal.color(QPalette::Base));
    const Geometry g = geometry();
    if (m_runs.empty()) {
        p.setPen(pal.color(QPalette::Text));
        p.drawText(rect(), Qt::AlignCenter | Qt::TextWordWrap,
            QStringLiteral("Select a run to see its measurements over the predictions"));
        return;
    }
    paint_header(p, g);
    paint_lanes(p, g);
    paint_markers(p, g);
    paint_numbers(p, g);
    if (!g.stages.isEmpty())
        paint_stage_axis(p, g);
}

QColor MeasuredOverlayView::grid_colour() const
{
    QColor grid = palette().color(QPalette::Text);
    grid.setAlphaF(0.15f);
    return grid;
}

// The title line, the runs' colour legend (when several are compared) and what they are compared with.
void MeasuredOverlayView::paint_header(QPainter& p, const Geometry& g) const
{
    const QPalette& pal = palette();
    const bool dark = is_dark(pal);
    const QColor text = pal.color(QPalette::Text);
    const QFontMetricsF fm(font());
    const remote::RunOverlay& primary = *m_runs.front();
    QFont bold = font();
    bold.setBold(true);
    p.setFont(bold);
    p.setPen(text);
    QRectF line(g.header.left(), g.header.top(), g.header.width(), fm.height());
    const QString what = m_runs.size() == 1
        ? QStringLiteral("Measured vs predicted · run %1 · %2 %3 on %4 · %5 · %6 steps")
              .arg(qs(primary.run_id), qs(primary.framework), qs(primary.layout), qs(primary.cluster),
                  QLatin1String(remote::to_string(primary.state)))
              .arg(primary.steps)
        : QStringLiteral("Measured vs predicted · %1 runs compared").arg(m_runs.size());
    p.drawText(line, Qt::AlignLeft | Qt::AlignVCenter, fm.elidedText(what, Qt::ElideRight, line.width()));
    p.setFont(font());
    double y = line.bottom() + 2;
    if (m_runs.size() > 1) {
        double x = g.header.left();
        for (std::size_t k = 0; k < m_runs.size(); ++k) {
            p.fillRect(QRectF(x, y + 3, 10, fm.height() - 6), group_colour(static_cast<long long>(k), dark));
            p.setPen(text);
            const QString id = qs(m_runs[k]->run_id)
                + (m_runs[k]->layout.empty() ? QString()
                                             : QStringLiteral(" (") + qs(m_runs[k]->layout) + QStringLiteral(")"));
            p.drawText(QPointF(x + 14, y + fm.ascent()), id);
            x += 24 + fm.horizontalAdvance(id);
        }
        y += fm.height() + 2;
    }
    const QString src = header_note();
    QColor note = text;
    if (primary.comparison.prediction_source == "none")
        note = bad_colour(dark);
    p.setPen(note);
    p.drawText(QRectF(g.header.left(), y, g.header.width(), g.header.bottom() - y), Qt::TextWordWrap, src);
}

// Each metric's lane: its title, the axis and the baseline.
void MeasuredOverlayView::paint_lanes(QPainter& p, const Geometry& g) const
{
    const QColor text = palette().color(QPalette::Text);
    const QColor grid = grid_colour();
    for (const Row& row : g.rows) {
        p.setPen(text);
        p.drawText(QRectF(row.rect.left(), row.rect.top(), row.plot.left() - row.rect.left() - 4, row.rect.height()),
            Qt::AlignLeft | Qt::AlignVCenter, row.title);
        p.setPen(grid);
        p.drawLine(QPointF(row.plot.left(), row.plot.top()), QPointF(row.plot.left(), row.plot.bottom()));
        p.drawLine(QPointF(row.plot.left(), row.rect.bottom()), QPointF(row.plot.right(), row.rect.bottom()));
    }
}

void MeasuredOverlayView::paint_markers(QPainter& p, const Geometry& g) const
{
    const QPalette& pal = palette();
    const bool dark = is_dark(pal);
    const QColor text = pal.color(QPalette::Text);
    const QFontMetricsF fm(font());
    QColor bar = pal.color(QPalette::Mid);
    bar.setAlphaF(0.45f);
    // Predicted bars first (under the markers), then error bars and markers, then the numbers.
    for (const Marker& m : g.markers)
        if (!m.predicted_bar.isEmpty())
            p.fillRect(m.predicted_bar, bar);
    p.setRenderHint(QPainter::Antialiasing);
    for (const Marker& m : g.markers) {
        std::size_t k = 0;
        for (std::size_t i = 0; i < m_runs.size(); ++i)
            if (qs(m_runs[i]->run_id) == m.run_id)
                k = i;
        const QColor c = group_colour(static_cast<long long>(k), dark);
        if (!m.predicted_bar.isEmpty()) {
            // The prediction's value as a line at the end of (or on top of) its bar.
            p.setPen(QPen(text, 1.5));
            if (m.metric.startsWith(QLatin1String("stage")))
                p.drawLine(m.predicted_bar.topLeft(), m.predicted_bar.topRight());
            else
                p.drawLine(m.predicted_bar.topRight(), m.predicted_bar.bottomRight());
        }
        if (!std::isfinite(m.at.x()) || !std::isfinite(m.at.y()))
            continue;
        p.setPen(QPen(c, 1.5));
        if (!m.error_bar.isEmpty() || m.error_bar.width() > 0 || m.error_bar.height() > 0) {
            const QRectF e = m.error_bar;
            if (m.metric.startsWith(QLatin1String("stage"))) {
                p.drawLine(QPointF(m.at.x(), e.top()), QPointF(m.at.x(), e.bottom()));
                p.drawLine(e.topLeft(), e.topRight());
                p.drawLine(e.bottomLeft(), e.bottomRight());
            } else {
                p.drawLine(QPointF(e.left(), m.at.y()), QPointF(e.right(), m.at.y()));
                p.drawLine(e.topLeft(), e.bottomLeft());
                p.drawLine(e.topRight(), e.bottomRight());
            }
        }
        // A diamond: the median of the steady-state steps.
        const double r = std::max(3.5, fm.height() * 0.28);
        QPainterPath diamond;
        diamond.moveTo(m.at.x(), m.at.y() - r);
        diamond.lineTo(m.at.x() + r, m.at.y());
        diamond.lineTo(m.at.x(), m.at.y() + r);
        diamond.lineTo(m.at.x() - r, m.at.y());
        diamond.closeSubpath();
        p.setPen(QPen(pal.color(QPalette::Base), 1));
        p.setBrush(c);
        p.drawPath(diamond);
        p.setBrush(Qt::NoBrush);
    }
    p.setRenderHint(QPainter::Antialiasing, false);
}

void MeasuredOverlayView::paint_numbers(QPainter& p, const Geometry& g) const
{
    const QPalette& pal = palette();
    const QColor text = pal.color(QPalette::Text);
    const QFontMetricsF fm(font());
    // The numbers of each lane.
    for (const Row& row : g.rows) {
        for (const Marker& m : g.markers) {
            if (m.metric != row.metric)
                continue;
            QString t;
            if (std::isfinite(m.measured)) {
                t = value_text(row.metric, m.measured);
                if (m.low && m.high && *m.high > *m.low)
                    t += QStringLiteral(" (") + value_text(row.metric, *m.low) + QStringLiteral("–")
                        + value_text(row.metric, *m.high) + QStringLiteral(")");
            } else {
                t = QStringLiteral("not measured");
            }
            if (m.predicted)
                t += QStringLiteral(" · pred ") + value_text(row.metric, *m.predicted);
            const QRectF lane(row.text.left(), m.at.y() - fm.height() / 2, row.text.width(), fm.height());
            p.setPen(text);
            const QString main
                = fm.elidedText(t, Qt::ElideRight, lane.width() - fm.horizontalAdvance(QStringLiteral(" +00.0%")));
            p.drawText(lane, Qt::AlignLeft | Qt::AlignVCenter, main);
            if (m.error) {
                QFont b = font();
                b.setBold(true);
                p.setFont(b);
                p.setPen(error_colour(*m.error, pal));
                p.drawText(lane, Qt::AlignRight | Qt::AlignVCenter, format_percent_delta(*m.error));
                p.setFont(font());
            }
        }
    }
}

// The per-stage memory panel's title and axis labels (its bars and markers are among the markers).
void MeasuredOverlayView::paint_stage_axis(QPainter& p, const Geometry& g) const
{
    const QColor text = palette().color(QPalette::Text);
    const QColor grid = grid_colour();
    const QFontMetricsF fm(font());
    const remote::RunOverlay& primary = *m_runs.front();
    p.setPen(text);
    const QRectF title(g.header.left(), g.stages.top() - fm.height() - 4, g.header.width(), fm.height());
    p.drawText(title, Qt::AlignLeft | Qt::AlignVCenter,
        fm.elidedText(
            QStringLiteral("Memory per pipeline stage: ") + qs(primary.stage_note), Qt::ElideRight, title.width()));
    p.setPen(grid);
    p.drawLine(g.stages.bottomLeft(), g.stages.bottomRight());
    p.setPen(text);
    p.drawText(QRectF(g.header.left(), g.stages.top(), g.stages.left() - g.header.left() - 4, fm.height()),
        Qt::AlignRight | Qt::AlignTop, value_text(QStringLiteral("memory_GiB"), g.stage_max));
    p.drawText(
        QRectF(g.header.left(), g.stages.bottom() - fm.height(), g.stages.left() - g.header.left() - 4, fm.height()),
        Qt::AlignRight | Qt::AlignBottom, QStringLiteral("0"));
    const int n = static_cast<int>(primary.stages.size());
    const double step = g.stages.width() / std::max(1, n);
    const int every = std::max(1, static_cast<int>(std::ceil((fm.horizontalAdvance(QStringLiteral("00")) + 4) / step)));
    for (int i = 0; i < n; i += every)
        p.drawText(QRectF(g.stages.left() + i * step, g.stages.bottom() + 1, step * every, fm.height()),
            Qt::AlignHCenter | Qt::AlignTop, QString::number(primary.stages[static_cast<std::size_t>(i)].stage));
}

bool MeasuredOverlayView::event(QEvent* e)
{
    if (e->type() == QEvent::ToolTip) {
        auto* h = static_cast<QHelpEvent*>(e);
        for (const Marker& m : markers()) {
            QRectF hit = m.error_bar.united(QRectF(m.at - QPointF(6, 6), QSizeF(12, 12)));
            if (!std::isfinite(m.at.x()))
                hit = m.predicted_bar;
            if (!hit.contains(h->pos()))
                continue;
            const QString unit_metric
                = m.metric.startsWith(QLatin1String("stage")) ? QStringLiteral("memory_GiB") : m.metric;
            QString tip = QStringLiteral("<b>%1</b> · run %2<br>").arg(m.metric, m.run_id);
            if (std::isfinite(m.measured))
                tip += (m.metric == QLatin1String("memory_GiB")
                               ? QStringLiteral("measured (peak of the logged steps): ")
                               : m.metric.startsWith(QLatin1String("stage"))
                               ? QStringLiteral("measured (largest of the stage's ranks): ")
                               : QStringLiteral("measured (median of the steady-state steps): "))
                    + value_text(unit_metric, m.measured) + QStringLiteral("<br>");
            if (m.low && m.high)
                tip += QStringLiteral("spread: ") + value_text(unit_metric, *m.low) + QStringLiteral(" .. ")
                    + value_text(unit_metric, *m.high) + QStringLiteral("<br>");
            if (m.predicted)
                tip += QStringLiteral("predicted: ") + value_text(unit_metric, *m.predicted) + QStringLiteral("<br>");
            if (m.error)
                tip += QStringLiteral("error: ") + format_percent_delta(*m.error);
            QToolTip::showText(h->globalPos(), tip, this);
            return true;
        }
        QToolTip::hideText();
        e->ignore();
        return true;
    }
    return QWidget::event(e);
}

} // namespace parallax::views

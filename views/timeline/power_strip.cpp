#include "timeline/power_strip.hpp"

#include "power/power_trace.hpp"
#include "sim/simulated_model.hpp"

#include <QEvent>
#include <QHelpEvent>
#include <QPainter>
#include <QPainterPath>
#include <QScrollBar>
#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace parallax::views {

namespace {

constexpr int kHeight = 130;
constexpr int kTopPad = 16; // room for the title and the cap's label
constexpr int kBottomPad = 6;

// Distinct line colours for stages (cycled): readable on white and on the dark palette.
const QColor kStageColours[]
    = { QColor(0x25, 0x63, 0xeb), QColor(0x16, 0xa3, 0x4a), QColor(0xd9, 0x77, 0x06), QColor(0x93, 0x33, 0xea),
          QColor(0x08, 0x91, 0xb2), QColor(0xdb, 0x27, 0x77), QColor(0x65, 0xa3, 0x0d), QColor(0x47, 0x55, 0x69) };

const PowerTrace* trace_of(const TimelineData* d)
{
    if (!d || !d->sim || d->sim->power.devices.empty())
        return nullptr;
    return &d->sim->power;
}

double value_at(const std::vector<PowerStep>& steps, double t)
{
    if (steps.empty())
        return 0;
    auto it = std::upper_bound(steps.begin(), steps.end(), t, [](double x, const PowerStep& s) { return x < s.t_s; });
    return it == steps.begin() ? steps.front().W : std::prev(it)->W;
}

} // namespace

PowerStrip::PowerStrip(TimelineCanvas* canvas, QWidget* parent)
    : QWidget(parent)
    , m_canvas(canvas)
{
    setObjectName(QStringLiteral("power_strip"));
    setMouseTracking(true);
    setAttribute(Qt::WA_OpaquePaintEvent);
    connect(m_canvas, &TimelineCanvas::view_changed, this, qOverload<>(&QWidget::update));
}

void PowerStrip::set_data(std::shared_ptr<const TimelineData> data)
{
    m_data = std::move(data);
    update();
}

bool PowerStrip::has_trace() const
{
    return trace_of(m_data.get()) != nullptr;
}

QSize PowerStrip::sizeHint() const
{
    return { 400, kHeight };
}
QSize PowerStrip::minimumSizeHint() const
{
    return { 100, kHeight };
}

QRect PowerStrip::plot_rect() const
{
    // The canvas's plot area, mapped into this widget: the two share one time axis.
    const QRect cp = m_canvas->plot_rect();
    const QPoint left = mapFromGlobal(m_canvas->viewport()->mapToGlobal(cp.topLeft()));
    const int x0 = std::max(0, left.x());
    const int w = std::max(1, std::min(cp.width(), width() - x0));
    return { x0, kTopPad, w, std::max(1, height() - kTopPad - kBottomPad) };
}

double PowerStrip::top_W() const
{
    const PowerTrace* trace = trace_of(m_data.get());
    if (!trace)
        return 1;
    const PowerEstimate& p = m_data->prediction.power;
    // Headroom over the cap so the cap line stays visible.
    return 1.08 * std::max({ p.cap_W, trace->peak_W_per_gpu, 1.0 });
}

double PowerStrip::y_of(double watts) const
{
    const QRect r = plot_rect();
    return r.bottom() - (watts / top_W()) * (r.height() - 1);
}

PowerStrip::Sample PowerStrip::sample_at(double t_s) const
{
    Sample s;
    s.t_s = t_s;
    const PowerTrace* trace = trace_of(m_data.get());
    if (!trace)
        return s;
    double sum = 0;
    for (const DevicePower& d : trace->devices) {
        s.stage_W.push_back(value_at(d.steps, t_s));
        sum += s.stage_W.back();
    }
    s.mean_W = trace->devices.empty() ? 0 : sum / trace->devices.size();
    s.cluster_kW = value_at(trace->cluster_W, t_s) / 1000;
    return s;
}

void PowerStrip::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    p.fillRect(rect(), m_palette.background);
    const QRect plot = plot_rect();
    p.fillRect(QRect(0, 0, plot.left(), height()), m_palette.header_background);
    p.setPen(m_palette.grid);
    p.drawLine(0, 0, width(), 0);
    QFont small = font();
    small.setPointSizeF(std::max(6.0, small.pointSizeF() * 0.85));
    p.setFont(small);
    p.setPen(m_palette.text);
    p.drawText(
        QRect(4, 2, std::max(10, plot.left() - 8), 14), Qt::AlignLeft | Qt::AlignVCenter, tr("Power per GPU by stage"));
    const PowerTrace* trace = trace_of(m_data.get());
    if (!trace) {
        p.setPen(m_palette.muted_text);
        p.drawText(plot, Qt::AlignCenter, tr("no power trace"));
        return;
    }
    paint_guides(p, plot, *trace);
    p.setClipRect(plot);
    paint_traces(p, plot, *trace);
    p.setClipping(false);
    paint_legend(p, plot, *trace);
}

// Horizontal guides: 0, the awake-idle floor, the cap; tick labels at the left.
void PowerStrip::paint_guides(QPainter& p, const QRect& plot, const PowerTrace& trace) const
{
    const PowerEstimate& pw = m_data->prediction.power;
    auto guide = [&](double w, const QColor& c, Qt::PenStyle style, const QString& label) {
        const double y = std::floor(y_of(w)) + 0.5;
        p.setPen(QPen(c, 1, style));
        p.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y));
        p.setPen(m_palette.muted_text);
        p.drawText(QRectF(2, y - 7, plot.left() - 6, 14), Qt::AlignRight | Qt::AlignVCenter, label);
    };
    guide(0, m_palette.grid, Qt::SolidLine, QStringLiteral("0"));
    const double waiting = trace.devices.empty() ? 0 : trace.devices.front().min_W;
    guide(waiting, m_palette.grid, Qt::DotLine, QString::number(std::lround(waiting)));
    guide(pw.cap_W, m_palette.exposed, Qt::DashLine, QString::number(std::lround(pw.cap_W)));
    p.setPen(m_palette.exposed);
    p.drawText(QRectF(plot.left() + 4, y_of(pw.cap_W) - 14, 200, 13), Qt::AlignLeft | Qt::AlignVCenter,
        tr("cap %1 W").arg(std::lround(pw.cap_W)));
}

// The mean over the GPUs filled, and one line per stage whose column maxima keep every spike.
void PowerStrip::paint_traces(QPainter& p, const QRect& plot, const PowerTrace& trace) const
{
    const TimeMapping& map = m_canvas->mapping();
    const QRect cp = m_canvas->plot_rect();
    const double t0 = map.to_t(cp.left());
    const double t1 = map.to_t(cp.left() + plot.width());
    const int n = plot.width();
    std::vector<PowerTrace::Buckets> per;
    per.reserve(trace.devices.size());
    for (int d = 0; d < static_cast<int>(trace.devices.size()); ++d)
        per.push_back(trace.bucketed(d, t0, t1, n));
    QPainterPath area;
    area.moveTo(plot.left(), y_of(0));
    for (int i = 0; i < n; ++i) {
        double sum = 0;
        for (const auto& b : per)
            sum += b.mean_W[static_cast<std::size_t>(i)];
        const double mean = per.empty() ? 0 : sum / per.size();
        area.lineTo(plot.left() + i, y_of(mean));
        area.lineTo(plot.left() + i + 1, y_of(mean));
    }
    area.lineTo(plot.left() + n, y_of(0));
    area.closeSubpath();
    QColor fill = kStageColours[0];
    fill.setAlpha(40);
    p.fillPath(area, fill);
    p.setRenderHint(QPainter::Antialiasing, false);
    for (std::size_t d = 0; d < per.size(); ++d) {
        QPen pen(kStageColours[d % std::size(kStageColours)], 1);
        p.setPen(pen);
        QPolygonF line;
        line.reserve(2 * n);
        for (int i = 0; i < n; ++i) {
            const double y = y_of(per[d].max_W[static_cast<std::size_t>(i)]);
            line << QPointF(plot.left() + i, y) << QPointF(plot.left() + i + 1, y);
        }
        p.drawPolyline(line);
    }
}

// The averages at the top right; the stage colours in the label column, under the title.
void PowerStrip::paint_legend(QPainter& p, const QRect& plot, const PowerTrace& trace) const
{
    const QString legend = tr("avg %1 W, peak %2 W per GPU · cluster %3 kW avg, %4 kW peak")
                               .arg(std::lround(trace.avg_W_per_gpu))
                               .arg(std::lround(trace.peak_W_per_gpu))
                               .arg(QString::number(m_data->prediction.power.cluster_avg_kW, 'f', 1))
                               .arg(QString::number(trace.cluster_peak_W / 1000, 'f', 1));
    p.setPen(m_palette.muted_text);
    const int lx = plot.left() + 110;
    p.drawText(QRect(lx, 1, std::max(10, plot.right() - lx), 14), Qt::AlignRight | Qt::AlignVCenter, legend);
    const int per_row = std::max(1, (plot.left() - 90) / 34);
    const int shown = std::min<int>(static_cast<int>(trace.devices.size()), per_row * 4);
    for (int d = 0; d < shown; ++d) {
        const int x = 4 + (d % per_row) * 34;
        const int y = kTopPad + 4 + (d / per_row) * 14;
        p.fillRect(QRect(x, y + 3, 8, 8), kStageColours[static_cast<std::size_t>(d) % std::size(kStageColours)]);
        p.setPen(m_palette.muted_text);
        p.drawText(QRect(x + 10, y, 24, 14), Qt::AlignLeft | Qt::AlignVCenter, QString::number(d));
    }
    if (shown < static_cast<int>(trace.devices.size())) {
        p.drawText(QRect(4, kTopPad + 4 + 4 * 14, 80, 14), Qt::AlignLeft | Qt::AlignVCenter,
            tr("+%1 stages").arg(static_cast<int>(trace.devices.size()) - shown));
    }
}

QString PowerStrip::tooltip_at(QPoint pos) const
{
    const PowerTrace* trace = trace_of(m_data.get());
    const QRect plot = plot_rect();
    if (!trace || !plot.contains(pos))
        return {};
    const TimeMapping& map = m_canvas->mapping();
    const double t = map.to_t(m_canvas->plot_rect().left() + (pos.x() - plot.left()));
    const Sample s = sample_at(t);
    QString out = tr("t = %1").arg(QString::fromStdString(format_duration(t)));
    for (std::size_t d = 0; d < s.stage_W.size(); ++d)
        out += tr("\nstage %1: %2 W per GPU").arg(d).arg(std::lround(s.stage_W[d]));
    out += tr("\nmean %1 W per GPU · cluster %2 kW")
               .arg(std::lround(s.mean_W))
               .arg(QString::number(s.cluster_kW, 'f', 1));
    return out;
}

bool PowerStrip::event(QEvent* e)
{
    if (e->type() == QEvent::ToolTip) {
        auto* he = static_cast<QHelpEvent*>(e);
        const QString text = tooltip_at(he->pos());
        if (text.isEmpty())
            QToolTip::hideText();
        else
            QToolTip::showText(he->globalPos(), text, this);
        return true;
    }
    return QWidget::event(e);
}

} // namespace parallax::views

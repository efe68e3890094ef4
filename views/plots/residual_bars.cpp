#include "plots/residual_bars.hpp"

#include "io/csv_writer.hpp"
#include "plots/plot_export.hpp"
#include "style/view_style.hpp"

#include <QPainter>

#include <algorithm>
#include <cmath>

namespace parallax::views {

namespace {

constexpr double kAxisWidthPx = 48;
constexpr double kMinRange = 0.05; // a fit that is already close still shows its bars at a readable size
constexpr int kTicksPerSide = 2;
constexpr int kCsvDigits = 10;

QString signed_number(double v)
{
    return (v > 0 ? QStringLiteral("+") : QString()) + QString::number(v, 'f', 2);
}

} // namespace

ResidualBars::ResidualBars(QWidget* parent)
    : BarChart(parent)
{
    setObjectName(QStringLiteral("residual_bars"));
    install_export_menu(this, QStringLiteral("calibration-residuals"), [this] { return csv(); });
}

QString ResidualBars::csv() const
{
    CsvWriter out { "run", "log_error_shipped", "log_error_fitted", "error_shipped", "error_fitted" };
    for (const auto& r : m_residuals.runs)
        out.field(r.run_id)
            .number(r.log_before, kCsvDigits)
            .number(r.log_after, kCsvDigits)
            .number(r.error_before, kCsvDigits)
            .number(r.error_after, kCsvDigits)
            .end_row();
    return QString::fromStdString(out.text());
}

void ResidualBars::set_residuals(CalibrationResiduals r)
{
    m_residuals = std::move(r);
    update();
}

QSize ResidualBars::sizeHint() const
{
    return { 480, 240 };
}

QSize ResidualBars::minimumSizeHint() const
{
    return { 240, 160 };
}

std::vector<BarChart::LegendEntry> ResidualBars::legend() const
{
    return { { before_colour(), QStringLiteral("shipped calibration") }, { after_colour(), QStringLiteral("fitted") } };
}

QColor ResidualBars::before_colour() const
{
    QColor c = text_colour();
    c.setAlphaF(0.35f);
    return c;
}

QColor ResidualBars::after_colour() const
{
    return group_colour(0, dark());
}

QRectF ResidualBars::plot() const
{
    const QFontMetrics fm = fontMetrics();
    // Legend and the RMS line above, the run labels below.
    const double top = 4 + 2.0 * (fm.height() + 2) + 4;
    return QRectF(kAxisWidthPx, top, std::max(10.0, width() - kAxisWidthPx - 8),
        std::max(10.0, height() - top - fm.height() - 8));
}

double ResidualBars::range() const
{
    // A round bound above the largest error, so the ticks are round numbers too.
    const double step = nice_step(std::max(kMinRange, m_residuals.max_abs_log), kTicksPerSide);
    return step * std::ceil(std::max(kMinRange, m_residuals.max_abs_log) / step);
}

double ResidualBars::y_of(const QRectF& plot, double v) const
{
    return plot.center().y() - v / range() * plot.height() / 2;
}

QRectF ResidualBars::bar_rect(int i, bool after) const
{
    const int n = static_cast<int>(m_residuals.runs.size());
    if (i < 0 || i >= n)
        return {};
    const QRectF area = plot();
    const StageSlots columns = stage_slots(area, n, QString());
    const auto& run = m_residuals.runs[static_cast<std::size_t>(i)];
    const double v = after ? run.log_after : run.log_before;
    const double half = columns.bar_w / 2;
    const double x = columns.bar_x(i) + (after ? half : 0);
    const double y0 = y_of(area, 0);
    const double y1 = y_of(area, std::clamp(v, -range(), range()));
    return QRectF(x, std::min(y0, y1), half, std::max(1.0, std::fabs(y1 - y0)));
}

void ResidualBars::paint_chart(QPainter& p)
{
    const QRectF area = plot();
    const QFontMetrics fm = fontMetrics();
    p.setPen(text_colour());
    p.drawText(QPointF(4, 4 + fm.height() + 2 + fm.ascent()),
        QStringLiteral("RMS ln(measured / predicted): shipped %1 → fitted %2")
            .arg(m_residuals.rms_before, 0, 'f', 3)
            .arg(m_residuals.rms_after, 0, 'f', 3));
    QColor grid = text_colour();
    grid.setAlphaF(0.15f);
    const double r = range();
    const double tick = nice_step(r, kTicksPerSide);
    for (double v = -r; v <= r + 1e-9; v += tick) {
        const double y = y_of(area, v);
        p.setPen(std::fabs(v) < 1e-9 ? text_colour() : grid);
        p.drawLine(QPointF(area.left(), y), QPointF(area.right(), y));
        p.setPen(text_colour());
        p.drawText(QRectF(0, y - fm.height() / 2.0, area.left() - 4, fm.height()), Qt::AlignRight | Qt::AlignVCenter,
            std::fabs(v) < 1e-9 ? QStringLiteral("0") : signed_number(v));
    }
    // Every run gets its label, cut from the left to its slot: run ids differ at their ends (the full id
    // is in the tooltip).
    const int n = static_cast<int>(m_residuals.runs.size());
    const StageSlots columns = stage_slots(area, n, QString());
    for (int i = 0; i < n; ++i) {
        p.fillRect(bar_rect(i, false), before_colour());
        p.fillRect(bar_rect(i, true), after_colour());
        const QString id = QString::fromStdString(m_residuals.runs[static_cast<std::size_t>(i)].run_id);
        draw_stage_label(p, columns, i, area.bottom() + 3,
            fm.elidedText(id, Qt::ElideLeft, static_cast<int>(std::max(8.0, columns.step - 6))));
    }
}

QString ResidualBars::tooltip_at(QPointF pos) const
{
    const int n = static_cast<int>(m_residuals.runs.size());
    const int i = stage_at(stage_slots(plot(), n, QString()), n, pos.x());
    if (i < 0)
        return {};
    const auto& run = m_residuals.runs[static_cast<std::size_t>(i)];
    return QStringLiteral("<b>%1</b><br>measured vs predicted tokens/s per GPU<br>shipped calibration: %2 (ln %3)"
                          "<br>fitted: %4 (ln %5)")
        .arg(QString::fromStdString(run.run_id).toHtmlEscaped(), format_percent_delta(run.error_before),
            signed_number(run.log_before), format_percent_delta(run.error_after), signed_number(run.log_after));
}

} // namespace parallax::views

#include "serving_mode/serving_curve_view.hpp"

#include "io/csv_writer.hpp"
#include "plots/plot_export.hpp"
#include "plots/plot_style.hpp"
#include "plots/qcustomplot_include.hpp"
#include "style/view_style.hpp"

#include <QLabel>
#include <QVBoxLayout>

#include <algorithm>

namespace parallax::views {

namespace {

// A point counts as on the plateau once it is within this share of the best throughput per GPU.
constexpr double kPlateauShare = 0.95;
// Room beyond the largest value, so the end points and their markers are not cut at the edge.
constexpr double kAxisHeadroom = 1.08;

QCPGraph* add_scatter(QCustomPlot* plot, const QString& name)
{
    QCPGraph* g = plot->addGraph();
    g->setName(name);
    g->setLineStyle(QCPGraph::lsNone);
    return g;
}

} // namespace

ServingCurveView::ServingCurveView(QWidget* parent)
    : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    m_summary = new QLabel(this);
    m_summary->setObjectName(QStringLiteral("serving_curve_summary"));
    m_summary->setWordWrap(true);
    m_summary->setTextFormat(Qt::PlainText);
    layout->addWidget(m_summary);
    m_plot = new QCustomPlot(this);
    m_plot->setObjectName(QStringLiteral("serving_curve_plot"));
    m_plot->setMinimumSize(200, 150);
    layout->addWidget(m_plot, 1);
    m_plot->xAxis->setLabel(QStringLiteral("output tokens/s per user (1000 / TPOT)"));
    m_plot->yAxis->setLabel(QStringLiteral("output tokens/s per GPU"));
    m_band_low = m_plot->addGraph();
    m_band_low->removeFromLegend();
    m_band_high = m_plot->addGraph();
    m_band_high->setChannelFillGraph(m_band_low);
    m_band_high->setName(QStringLiteral("80% band"));
    m_curve = m_plot->addGraph();
    m_curve->setName(QStringLiteral("this deployment over concurrency"));
    m_met = add_scatter(m_plot, QStringLiteral("meets the SLO"));
    m_missed = add_scatter(m_plot, QStringLiteral("misses it"));
    m_here = add_scatter(m_plot, QStringLiteral("the scenario's load"));
    m_front = m_plot->addGraph();
    m_front->setName(QStringLiteral("best deployments (search)"));
    m_front->setVisible(false);
    legend_above_axes(m_plot, font());
    install_export_menu(m_plot, QStringLiteral("serving-curve"), [this] { return csv(); });
    refresh_colours();
}

void ServingCurveView::refresh_colours()
{
    const bool dark = is_dark(palette());
    style_plot(m_plot);
    const QColor line = dimension_colour(ParallelDim::tp, dark);
    m_curve->setPen(QPen(line, 2));
    QColor band = line;
    band.setAlphaF(0.18f);
    m_band_low->setPen(Qt::NoPen);
    m_band_high->setPen(Qt::NoPen);
    m_band_high->setBrush(band);
    m_met->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, line, line, 7));
    m_missed->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(bad_colour(dark), 1.5), Qt::NoBrush, 7));
    m_here->setScatterStyle(
        QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(palette().color(QPalette::Highlight), 2.5), Qt::NoBrush, 15));
    m_front->setPen(QPen(palette().color(QPalette::Text), 1.2, Qt::DashLine));
    m_front->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDiamond, palette().color(QPalette::Text), 9));
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void ServingCurveView::changeEvent(QEvent* e)
{
    if (e->type() == QEvent::PaletteChange)
        refresh_colours();
    QWidget::changeEvent(e);
}

void ServingCurveView::set_evaluation(const ServingEvaluation& e)
{
    m_points = e.curve;
    m_here_concurrency
        = e.scenario.serving.workload.load == LoadKind::concurrency ? e.scenario.serving.workload.concurrency : 0;
    QVector<double> x, y, met_x, met_y, missed_x, missed_y, here_x, here_y, band_x, band_low, band_high;
    for (const ServingCurvePoint& p : m_points) {
        if (!p.feasible)
            continue;
        x << p.tokens_per_s_per_user;
        y << p.tokens_per_s_per_gpu;
        if (p.tokens_per_s_per_gpu_high > 0) {
            band_x << p.tokens_per_s_per_user;
            band_low << p.tokens_per_s_per_gpu_low;
            band_high << p.tokens_per_s_per_gpu_high;
        }
        (p.slo_met ? met_x : missed_x) << p.tokens_per_s_per_user;
        (p.slo_met ? met_y : missed_y) << p.tokens_per_s_per_gpu;
        if (p.concurrency == m_here_concurrency) {
            here_x << p.tokens_per_s_per_user;
            here_y << p.tokens_per_s_per_gpu;
        }
    }
    // Parametric in concurrency: keep the points in their order rather than sorted by x.
    m_curve->setData(x, y, true);
    m_curve->setLineStyle(QCPGraph::lsLine);
    // The band shades tokens/s per GPU at each point's tokens/s per user (sorted by it for the fill).
    m_band_low->setData(band_x, band_low);
    m_band_high->setData(band_x, band_high);
    if (band_x.isEmpty())
        m_band_high->removeFromLegend();
    else if (!m_plot->legend->hasItemWithPlottable(m_band_high))
        m_band_high->addToLegend();
    m_met->setData(met_x, met_y);
    m_missed->setData(missed_x, missed_y);
    // Another load (a request rate, offline, static batches) is not a point of the concurrency curve: mark
    // the scenario's own prediction where it lies.
    if (m_here_concurrency == 0 && e.valid && e.prediction.feasible) {
        here_x << e.prediction.output_tokens_per_s_per_user;
        here_y << e.prediction.output_tokens_per_s_per_gpu;
    }
    m_here->setData(here_x, here_y);
    fit_axes();
    m_summary->setText(summary_of(e));
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void ServingCurveView::set_front(const std::vector<ServingFrontPoint>& front)
{
    QVector<double> x, y;
    for (const ServingFrontPoint& p : front) {
        x << p.tokens_per_s_per_user;
        y << p.tokens_per_s_per_gpu;
    }
    m_front->setData(x, y);
    m_front->setVisible(!front.empty());
    fit_axes();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void ServingCurveView::fit_axes()
{
    m_plot->rescaleAxes(true); // visible graphs only: a hidden front does not stretch the axes
    for (QCPAxis* axis : { m_plot->xAxis, m_plot->yAxis }) {
        axis->setRangeLower(0);
        axis->setRangeUpper(axis->range().upper * kAxisHeadroom);
    }
}

QString ServingCurveView::summary_of(const ServingEvaluation& e) const
{
    if (!e.valid)
        return QStringLiteral("No curve: the deployment breaks a rule.");
    const ServingCurvePoint* best = nullptr;
    const ServingCurvePoint* last_met = nullptr;
    for (const ServingCurvePoint& p : m_points) {
        if (!p.feasible)
            continue;
        if (!best || p.tokens_per_s_per_gpu > best->tokens_per_s_per_gpu)
            best = &p;
        if (p.slo_met)
            last_met = &p;
    }
    if (!best)
        return QStringLiteral("No feasible point: the deployment does not fit at any concurrency.");
    const ServingCurvePoint* plateau = best;
    for (const ServingCurvePoint& p : m_points)
        if (p.feasible && p.tokens_per_s_per_gpu >= kPlateauShare * best->tokens_per_s_per_gpu) {
            plateau = &p;
            break;
        }
    QString text = QStringLiteral("Throughput per GPU levels off at %1 tokens/s from concurrency %2 on (%3 tokens/s "
                                  "per user there). ")
                       .arg(format_count(best->tokens_per_s_per_gpu))
                       .arg(plateau->concurrency)
                       .arg(plateau->tokens_per_s_per_user, 0, 'f', 1);
    if (e.scenario.serving.slo.ttft_ms || e.scenario.serving.slo.tpot_ms)
        text += last_met ? QStringLiteral("The SLO holds up to concurrency %1.").arg(last_met->concurrency)
                         : QStringLiteral("The SLO is missed at every concurrency.");
    return text;
}

QString ServingCurveView::summary() const
{
    return m_summary->text();
}

QString ServingCurveView::csv() const
{
    CsvWriter w;
    for (const char* h : { "concurrency", "feasible", "slo_met", "ttft_ms", "tpot_ms", "output_tokens_per_s_per_gpu",
             "output_tokens_per_s_per_user", "output_tokens_per_s_per_gpu_low", "output_tokens_per_s_per_gpu_high" })
        w.field(h);
    w.end_row();
    for (const ServingCurvePoint& p : m_points) {
        w.number(static_cast<double>(p.concurrency), 12);
        w.field(p.feasible ? "true" : "false");
        w.field(p.slo_met ? "true" : "false");
        w.number(p.ttft_ms, 6);
        w.number(p.tpot_ms, 6);
        w.number(p.tokens_per_s_per_gpu, 6);
        w.number(p.tokens_per_s_per_user, 6);
        w.number(p.tokens_per_s_per_gpu_low, 6);
        w.number(p.tokens_per_s_per_gpu_high, 6);
        w.end_row();
    }
    return QString::fromStdString(w.text());
}

} // namespace parallax::views

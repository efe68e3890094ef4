#include "plots/goodput_view.hpp"

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

constexpr double kSecondsPerMinute = 60;

QString rate_name(double factor)
{
    if (factor == 1)
        return QStringLiteral("this scenario's rate");
    return factor < 1 ? QStringLiteral("half the rate") : QStringLiteral("%1× the rate").arg(factor);
}

QString minutes(double s)
{
    return s < kSecondsPerMinute ? QStringLiteral("%1 s").arg(s, 0, 'f', 0)
                                 : QStringLiteral("%1 min").arg(s / kSecondsPerMinute, 0, 'f', 1);
}

} // namespace

GoodputView::GoodputView(QWidget* parent)
    : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    m_summary = new QLabel(this);
    m_summary->setObjectName(QStringLiteral("goodput_summary"));
    m_summary->setWordWrap(true);
    m_summary->setTextFormat(Qt::PlainText);
    layout->addWidget(m_summary);
    m_plot = new QCustomPlot(this);
    m_plot->setObjectName(QStringLiteral("goodput_plot"));
    m_plot->setMinimumSize(200, 150);
    layout->addWidget(m_plot, 1);
    m_plot->xAxis->setLabel(QStringLiteral("checkpoint interval (minutes)"));
    m_plot->xAxis->setScaleType(QCPAxis::stLogarithmic);
    m_plot->xAxis->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
    m_plot->xAxis->setNumberFormat(QStringLiteral("g"));
    m_plot->yAxis->setLabel(QStringLiteral("goodput (% of throughput)"));
    for (double factor : kGoodputRateFactors) {
        QCPGraph* g = m_plot->addGraph();
        g->setName(rate_name(factor));
        m_graphs.push_back(g);
    }
    m_used = new QCPItemStraightLine(m_plot);
    m_best = new QCPItemStraightLine(m_plot);
    legend_above_axes(m_plot, font());
    install_export_menu(m_plot, QStringLiteral("goodput"), [this] { return csv(); });
    refresh_colours();
    clear();
}

void GoodputView::refresh_colours()
{
    const bool dark = is_dark(palette());
    style_plot(m_plot);
    // The scenario's rate bold; a better rate in the helping colour, a worse one in the hurting colour.
    for (std::size_t i = 0; i < m_graphs.size(); ++i) {
        const double factor = kGoodputRateFactors[i];
        if (factor == 1)
            m_graphs[i]->setPen(QPen(dimension_colour(ParallelDim::dp, dark), 2.5));
        else
            m_graphs[i]->setPen(
                QPen(factor < 1 ? good_colour(dark) : bad_colour(dark), 1.5, factor < 1 ? Qt::DotLine : Qt::DashLine));
    }
    m_used->setPen(QPen(palette().color(QPalette::Highlight), 1.5, Qt::DotLine));
    m_best->setPen(QPen(palette().color(QPalette::Text), 1, Qt::DashDotLine));
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void GoodputView::changeEvent(QEvent* e)
{
    if (e->type() == QEvent::PaletteChange)
        refresh_colours();
    QWidget::changeEvent(e);
}

void GoodputView::clear()
{
    m_curves = {};
    for (QCPGraph* g : m_graphs)
        g->data()->clear();
    m_used->setVisible(false);
    m_best->setVisible(false);
    // An empty plot still reads in its units: minutes to days of checkpoint interval, 0-100% goodput.
    m_plot->xAxis->setRange(1, 10000);
    m_plot->yAxis->setRange(0, 100);
    m_summary->setText(QStringLiteral("No goodput: the scenario has no \"reliability\" section (failure rate, "
                                      "checkpoint interval and storage; docs/goodput.md)."));
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void GoodputView::set_curves(const GoodputCurves& curves)
{
    if (!curves.present) {
        clear();
        return;
    }
    m_curves = curves;
    double lo = 100;
    for (std::size_t i = 0; i < m_graphs.size(); ++i) {
        QVector<double> x, y;
        for (std::size_t k = 0; k < curves.interval_s.size(); ++k) {
            x.push_back(curves.interval_s[k] / kSecondsPerMinute);
            y.push_back(100 * curves.curves[i].fraction[k]);
            lo = std::min(lo, y.back());
        }
        m_graphs[i]->setData(x, y, true);
    }
    const GoodputCurve& here = curves.curves[1];
    m_used->setVisible(true);
    m_used->point1->setCoords(curves.interval_used_s / kSecondsPerMinute, 0);
    m_used->point2->setCoords(curves.interval_used_s / kSecondsPerMinute, 1);
    m_best->setVisible(true);
    m_best->point1->setCoords(here.best_interval_s / kSecondsPerMinute, 0);
    m_best->point2->setCoords(here.best_interval_s / kSecondsPerMinute, 1);
    m_plot->xAxis->setRange(
        curves.interval_s.front() / kSecondsPerMinute, curves.interval_s.back() / kSecondsPerMinute);
    m_plot->yAxis->setRange(std::max(0.0, lo - 2), 100);
    m_summary->setText(summary());
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

QString GoodputView::summary() const
{
    if (!m_curves.present)
        return m_summary->text();
    const GoodputCurve& here = m_curves.curves[1];
    return QStringLiteral("%1 interruptions a day. Checkpointing every %2 (dotted) keeps %3% of the throughput; "
                          "the best interval, %4 (dash-dot), keeps %5%. A checkpoint takes %6 to write.")
        .arg(here.interruptions_per_day, 0, 'f', 2)
        .arg(minutes(m_curves.interval_used_s))
        .arg(100 * m_curves.fraction_used, 0, 'f', 1)
        .arg(minutes(here.best_interval_s))
        .arg(100 * here.best_fraction, 0, 'f', 1)
        .arg(minutes(m_curves.checkpoint_write_s));
}

QString GoodputView::csv() const
{
    CsvWriter w;
    w.field("checkpoint_interval_s");
    for (const GoodputCurve& c : m_curves.curves)
        w.field("goodput_fraction_at_" + CsvWriter::format_number(c.rate_factor, 3) + "x_rate");
    w.end_row();
    for (std::size_t k = 0; k < m_curves.interval_s.size(); ++k) {
        w.number(m_curves.interval_s[k], 6);
        for (const GoodputCurve& c : m_curves.curves)
            w.number(c.fraction[k], 6);
        w.end_row();
    }
    return QString::fromStdString(w.text());
}

} // namespace parallax::views

#include "plots/scaling_plot.hpp"

#include "io/csv_writer.hpp"
#include "io/strategy_csv.hpp"
#include "plots/plot_export.hpp"
#include "plots/plot_style.hpp"
#include "plots/qcustomplot_include.hpp"
#include "style/view_style.hpp"

#include <QHBoxLayout>
#include <QHelpEvent>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QToolTip>
#include <QVBoxLayout>

#include <cmath>

namespace parallax::views {

ScalingPlot::ScalingPlot(QWidget* parent)
    : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    auto* bar = new QHBoxLayout;
    m_run = new QPushButton(QStringLiteral("Sweep GPU counts"), this);
    m_run->setObjectName(QStringLiteral("scaling_run"));
    m_run->setToolTip(
        QStringLiteral("Runs a full strategy search at 1/8, 1/4, 1/2, 1, 2 and 4 times the cluster's GPUs "
                       "(whole nodes) and plots the best plan of each"));
    m_cancel = new QPushButton(QStringLiteral("Cancel"), this);
    m_cancel->setEnabled(false);
    m_progress = new QProgressBar(this);
    m_progress->setRange(0, 1000);
    m_progress->setTextVisible(false);
    m_status = new QLabel(this);
    m_status->setWordWrap(true);
    bar->addWidget(m_run);
    bar->addWidget(m_cancel);
    bar->addWidget(m_progress, 1);
    layout->addLayout(bar);
    layout->addWidget(m_status);
    m_plot = new QCustomPlot(this);
    m_plot->setObjectName(QStringLiteral("scaling_plot"));
    m_plot->setMinimumSize(200, 150);
    layout->addWidget(m_plot, 1);
    m_plot->xAxis->setLabel(QStringLiteral("GPUs"));
    m_plot->xAxis->setScaleType(QCPAxis::stLogarithmic);
    auto ticker = QSharedPointer<QCPAxisTickerLog>::create();
    ticker->setLogBase(2);
    m_plot->xAxis->setTicker(ticker);
    m_plot->xAxis->setNumberFormat(QStringLiteral("f"));
    m_plot->xAxis->setNumberPrecision(0);
    // Before the first sweep: a range of whole GPU counts, not the log axis's default (0..5, labelled 0 0 0 1 4).
    m_plot->xAxis->setRange(1, 1024);
    m_plot->yAxis->setLabel(QStringLiteral("tokens/s (best plan)"));
    m_plot->yAxis2->setVisible(true);
    m_plot->yAxis2->setLabel(QStringLiteral("per-GPU efficiency (%)"));
    m_plot->yAxis2->setRange(0, 110);
    m_band_low = m_plot->addGraph(m_plot->xAxis, m_plot->yAxis);
    m_band_low->removeFromLegend();
    m_band_high = m_plot->addGraph(m_plot->xAxis, m_plot->yAxis);
    m_band_high->setChannelFillGraph(m_band_low);
    m_band_high->setName(QStringLiteral("80% band"));
    m_band_high->removeFromLegend(); // until a sweep brings a band
    m_total = m_plot->addGraph(m_plot->xAxis, m_plot->yAxis);
    m_total->setName(QStringLiteral("tokens/s"));
    m_efficiency = m_plot->addGraph(m_plot->xAxis, m_plot->yAxis2);
    m_efficiency->setName(QStringLiteral("efficiency"));
    m_notes = m_plot->addGraph(m_plot->xAxis, m_plot->yAxis);
    m_notes->setName(QStringLiteral("stops paying / new family"));
    m_notes->setLineStyle(QCPGraph::lsNone);
    m_current = new QCPItemStraightLine(m_plot);
    m_current->setVisible(false); // the current GPU count's line comes with the first sweep
    legend_above_axes(m_plot, font());
    m_plot->installEventFilter(this);
    connect(m_run, &QPushButton::clicked, this, &ScalingPlot::run_requested);
    connect(m_cancel, &QPushButton::clicked, this, &ScalingPlot::cancel_requested);
    install_export_menu(m_plot, QStringLiteral("scaling"), [this] { return csv(); });
    refresh_colours();
    m_status->setText(QStringLiteral("Where does adding GPUs stop paying? Run a sweep."));
}

void ScalingPlot::refresh_colours()
{
    const bool dark = is_dark(palette());
    style_plot(m_plot);
    const QColor c = dimension_colour(ParallelDim::dp, dark);
    m_total->setPen(QPen(c, 2));
    m_total->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, c, c, 7));
    QColor band = c;
    band.setAlphaF(0.18f);
    m_band_low->setPen(Qt::NoPen);
    m_band_high->setPen(Qt::NoPen);
    m_band_high->setBrush(band);
    const QColor e = dimension_colour(ParallelDim::pp, dark);
    m_efficiency->setPen(QPen(e, 1.5, Qt::DashLine));
    m_efficiency->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssSquare, e, 6));
    m_notes->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(bad_colour(dark), 2), QBrush(), 14));
    m_current->setPen(QPen(palette().color(QPalette::Highlight), 1.5, Qt::DotLine));
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void ScalingPlot::changeEvent(QEvent* e)
{
    if (e->type() == QEvent::PaletteChange)
        refresh_colours();
    QWidget::changeEvent(e);
}

void ScalingPlot::set_running(bool running, const QString& status)
{
    m_run->setEnabled(!running);
    m_cancel->setEnabled(running);
    if (running)
        m_progress->setValue(0);
    m_status->setText(status);
}

void ScalingPlot::set_progress(double fraction)
{
    m_progress->setValue(static_cast<int>(std::lround(fraction * 1000)));
}

void ScalingPlot::set_points(std::vector<ScalingPoint> points, long long current_gpus)
{
    m_points = std::move(points);
    m_current_gpus = current_gpus;
    rebuild();
}

void ScalingPlot::rebuild()
{
    QVector<double> x, total, eff, nx, ny, band_x, band_low, band_high;
    double band_level = 0;
    double hi = 1, lo_x = 1e18, hi_x = 1;
    for (const ScalingPoint& p : m_points) {
        if (!p.has_plan)
            continue;
        const double g = static_cast<double>(p.gpus);
        x << g;
        total << p.tokens_per_s;
        if (p.band_level > 0) {
            band_x << g;
            band_low << p.tokens_per_s_low;
            band_high << p.tokens_per_s_high;
            band_level = p.band_level;
            hi = std::max(hi, p.tokens_per_s_high / 1.1);
        }
        eff << p.scaling_efficiency * 100;
        hi = std::max(hi, p.tokens_per_s);
        lo_x = std::min(lo_x, g);
        hi_x = std::max(hi_x, g);
        if (!p.notes.isEmpty()) {
            nx << g;
            ny << p.tokens_per_s;
        }
    }
    m_total->setData(x, total, true);
    m_band_low->setData(band_x, band_low, true);
    m_band_high->setData(band_x, band_high, true);
    if (band_x.isEmpty()) {
        m_band_high->removeFromLegend();
    } else {
        m_band_high->setName(QString::number(std::lround(100 * band_level)) + QStringLiteral("% band"));
        m_band_high->addToLegend();
    }
    m_efficiency->setData(x, eff, true);
    m_notes->setData(nx, ny, true);
    if (!x.isEmpty()) {
        m_plot->xAxis->setRange(lo_x / 1.4, hi_x * 1.4);
        m_plot->yAxis->setRange(0, hi * 1.15);
    }
    m_current->setVisible(m_current_gpus > 0 && !x.isEmpty());
    m_current->point1->setCoords(static_cast<double>(m_current_gpus), 0);
    m_current->point2->setCoords(static_cast<double>(m_current_gpus), 1);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

bool ScalingPlot::eventFilter(QObject* o, QEvent* e)
{
    if (o == m_plot && e->type() == QEvent::ToolTip) {
        auto* h = static_cast<QHelpEvent*>(e);
        const ScalingPoint* best = nullptr;
        double best_d = 12;
        for (const ScalingPoint& p : m_points) {
            if (!p.has_plan)
                continue;
            const double d = std::abs(m_plot->xAxis->coordToPixel(static_cast<double>(p.gpus)) - h->pos().x());
            if (d < best_d) {
                best_d = d;
                best = &p;
            }
        }
        if (best) {
            QString tip
                = QStringLiteral("<b>%1 GPUs</b>: %2 tokens/s<br>best plan: %3<br>per-GPU efficiency %4%, marginal %5%")
                      .arg(best->gpus)
                      .arg(format_count(best->tokens_per_s), best->family.toHtmlEscaped())
                      .arg(best->scaling_efficiency * 100, 0, 'f', 0)
                      .arg(best->marginal_efficiency * 100, 0, 'f', 0);
            if (!best->notes.isEmpty())
                tip += QStringLiteral("<br><b>") + best->notes.toHtmlEscaped() + QStringLiteral("</b>");
            QToolTip::showText(h->globalPos(), tip, m_plot);
        } else {
            QToolTip::hideText();
        }
        return true;
    }
    return QWidget::eventFilter(o, e);
}

QString ScalingPlot::csv() const
{
    CsvWriter out { "gpus", "has_plan", "tokens_per_s", "tokens_per_s_low", "tokens_per_s_high", "scaling_efficiency",
        "marginal_efficiency", "family", "notes", "tp", "pp", "dp", "cp", "ep", "vpp", "micro_batch" };
    for (const ScalingPoint& p : m_points) {
        const Strategy& s = p.strategy;
        // The family and notes are free text: always quoted.
        out.integer(p.gpus)
            .integer(p.has_plan ? 1 : 0)
            .number(p.tokens_per_s, 10)
            .number(p.tokens_per_s_low, 10)
            .number(p.tokens_per_s_high, 10)
            .number(p.scaling_efficiency, 6)
            .number(p.marginal_efficiency, 6)
            .quoted_field(p.family.toStdString())
            .quoted_field(p.notes.toStdString());
        degree_fields(out, s).end_row();
    }
    return QString::fromStdString(out.text());
}

} // namespace parallax::views

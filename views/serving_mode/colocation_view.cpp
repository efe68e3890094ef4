#include "serving_mode/colocation_view.hpp"

#include "io/csv_writer.hpp"
#include "plots/plot_export.hpp"
#include "plots/plot_style.hpp"
#include "plots/qcustomplot_include.hpp"
#include "serving_mode/colocation_pool_canvas.hpp"
#include "style/view_style.hpp"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QScrollArea>
#include <QTableWidget>
#include <QVBoxLayout>

namespace parallax::views {

namespace {

constexpr double kPercent = 100;

const QStringList& column_titles()
{
    static const QStringList titles = { QStringLiteral("Model"), QStringLiteral("GPUs"),
        QStringLiteral("TP × replicas"), QStringLiteral("Resident"), QStringLiteral("TTFT"), QStringLiteral("TPOT"),
        QStringLiteral("Tokens/s"), QStringLiteral("vs alone"), QStringLiteral("SLO"),
        QStringLiteral("Loss at 50% resident"), QStringLiteral("Preemption: weights + KV + warm-up") };
    return titles;
}

QTableWidgetItem* cell(const QString& text, bool number = true)
{
    auto* item = new QTableWidgetItem(text);
    if (number)
        item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    return item;
}

QString seconds(double s)
{
    return QString::number(s, 'f', s < 10 ? 1 : 0);
}

} // namespace

ColocationView::ColocationView(QWidget* parent)
    : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    m_summary = new QLabel(this);
    m_summary->setObjectName(QStringLiteral("colocation_summary"));
    m_summary->setWordWrap(true);
    m_summary->setTextFormat(Qt::PlainText);
    layout->addWidget(m_summary);
    auto* top = new QHBoxLayout;
    m_pool = new ColocationPoolCanvas(this);
    auto* scroll = new QScrollArea(this);
    scroll->setWidget(m_pool);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    top->addWidget(scroll, 1);
    m_plot = new QCustomPlot(this);
    m_plot->setObjectName(QStringLiteral("colocation_residency_plot"));
    m_plot->setMinimumSize(320, 220);
    m_plot->xAxis->setLabel(QStringLiteral("layers resident on the GPU (%)"));
    m_plot->yAxis->setLabel(QStringLiteral("throughput (% of fully resident)"));
    m_plot->xAxis->setRangeReversed(true); // from fully resident (left) to everything offloaded
    legend_above_axes(m_plot, font());
    install_export_menu(m_plot, QStringLiteral("colocation-residency"), [this] { return csv(); });
    top->addWidget(m_plot, 1);
    layout->addLayout(top, 1);
    m_table = new QTableWidget(0, static_cast<int>(column_titles().size()), this);
    m_table->setObjectName(QStringLiteral("colocation_table"));
    m_table->setHorizontalHeaderLabels(column_titles());
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->verticalHeader()->setVisible(false);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setStretchLastSection(true);
    layout->addWidget(m_table);
    m_advice = new QLabel(this);
    m_advice->setObjectName(QStringLiteral("colocation_advice"));
    m_advice->setWordWrap(true);
    m_advice->setTextFormat(Qt::PlainText);
    layout->addWidget(m_advice);
    refresh_colours();
}

void ColocationView::refresh_colours()
{
    style_plot(m_plot);
    if (!m_eval.result.models.empty())
        draw_curves(m_eval.result);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void ColocationView::changeEvent(QEvent* e)
{
    if (e->type() == QEvent::PaletteChange)
        refresh_colours();
    QWidget::changeEvent(e);
}

void ColocationView::set_evaluation(const ColocationEvaluation& e)
{
    m_eval = e;
    const ColocationResult& r = e.result;
    m_summary->setText(QStringLiteral("%1 models on %2 node groups: %3 meet their SLO%4. %5 placements predicted in "
                                      "%6 s.")
                           .arg(r.models.size())
                           .arg(e.grid.size())
                           .arg(r.slo_met)
                           .arg(r.feasible ? QString() : QStringLiteral(" (not every model is placed and meets it)"))
                           .arg(r.evaluated)
                           .arg(r.seconds, 0, 'f', 2));
    m_pool->set_evaluation(e);
    fill_table(r);
    draw_curves(r);
    QStringList lines;
    for (const std::string& s : r.suggestion)
        lines << QStringLiteral("• ") + QString::fromStdString(s);
    for (const std::string& w : r.warnings)
        lines << QStringLiteral("⚠ ") + QString::fromStdString(w);
    m_advice->setText(lines.join(QLatin1Char('\n')));
}

void ColocationView::fill_table(const ColocationResult& r)
{
    m_table->setRowCount(static_cast<int>(r.models.size()));
    for (int row = 0; row < static_cast<int>(r.models.size()); ++row) {
        const PlacedModel& m = r.models[static_cast<std::size_t>(row)];
        const ServingPrediction& p = m.offloaded.prediction;
        const PreemptionCost& c = m.preemption;
        const QStringList values = { QString::fromStdString(m.name),
            m.placed ? QStringLiteral("%1 × %2").arg(m.placement.gpus()).arg(QString::fromStdString(m.gpu))
                     : QStringLiteral("–"),
            QStringLiteral("%1 × %2").arg(m.placement.tp).arg(m.placement.replicas),
            QStringLiteral("%1%").arg(kPercent * m.placement.residency, 0, 'f', 0),
            QStringLiteral("%1 ms").arg(p.ttft_ms, 0, 'f', 0), QStringLiteral("%1 ms").arg(p.tpot_ms, 0, 'f', 1),
            format_count(p.output_tokens_per_s), QStringLiteral("%1×").arg(m.slowdown_vs_alone, 0, 'f', 2),
            p.feasible && p.slo_met ? QStringLiteral("met") : QStringLiteral("missed"),
            QStringLiteral("%1%").arg(kPercent * m.loss_at_half_residency, 0, 'f', 0),
            QStringLiteral("%1 s = %2 + %3 + %4")
                .arg(seconds(c.total_s()), seconds(c.weights_reload_s), seconds(c.kv_s), seconds(c.warm_up_s)) };
        for (int col = 0; col < values.size(); ++col)
            m_table->setItem(row, col, cell(values[col], col > 0 && col + 1 < values.size()));
        m_table->item(row, 0)->setForeground(group_colour(row, is_dark(palette())));
        m_table->item(row, 0)->setToolTip(QString::fromStdString(m.explanation));
    }
}

void ColocationView::draw_curves(const ColocationResult& r)
{
    m_plot->clearGraphs();
    const bool dark = is_dark(palette());
    for (std::size_t i = 0; i < r.models.size(); ++i) {
        QVector<double> x, y;
        for (const ResidencyPoint& pt : r.models[i].curve.points) {
            x << kPercent * pt.residency;
            y << kPercent * pt.relative_throughput;
        }
        QCPGraph* g = m_plot->addGraph();
        g->setName(QString::fromStdString(r.models[i].name));
        g->setData(x, y, true);
        g->setPen(QPen(group_colour(static_cast<long long>(i), dark), 2));
        g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 5));
    }
    m_plot->xAxis->setRange(0, kPercent);
    m_plot->yAxis->setRange(0, kPercent * 1.05);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

QString ColocationView::csv() const
{
    CsvWriter w;
    w.field("model").field("residency").field("relative_throughput").field("output_tokens_per_s").end_row();
    for (const PlacedModel& m : m_eval.result.models)
        for (const ResidencyPoint& pt : m.curve.points) {
            w.field(m.name);
            w.number(pt.residency, 6);
            w.number(pt.relative_throughput, 6);
            w.number(pt.output_tokens_per_s, 6);
            w.end_row();
        }
    return QString::fromStdString(w.text());
}

QString ColocationView::summary() const
{
    return m_summary->text();
}

QString ColocationView::advice() const
{
    return m_advice->text();
}

} // namespace parallax::views

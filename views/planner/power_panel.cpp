#include "planner/power_panel.hpp"

#include "io/csv_writer.hpp"
#include "style/view_style.hpp"

#include <QEvent>
#include <QHeaderView>
#include <QLabel>
#include <QPainter>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace parallax::views {

namespace {

QString watts(double w)
{
    if (std::fabs(w) >= 1e6)
        return QString::number(w / 1e6, 'f', 2) + QStringLiteral(" MW");
    if (std::fabs(w) >= 1e3)
        return QString::number(w / 1e3, 'f', std::fabs(w) >= 1e5 ? 0 : 1) + QStringLiteral(" kW");
    return QString::number(std::lround(w)) + QStringLiteral(" W");
}

QString joules(double j)
{
    if (j >= 3.6e6)
        return QString::number(j / 3.6e6, 'f', 2) + QStringLiteral(" kWh");
    if (j >= 1e3)
        return QString::number(j / 1e3, 'f', 1) + QStringLiteral(" kJ");
    return QString::number(j, 'f', j < 10 ? 3 : 1) + QStringLiteral(" J");
}

} // namespace

PowerStageBars::PowerStageBars(QWidget* parent)
    : BarChart(parent)
{
    setObjectName(QStringLiteral("power_stage_bars"));
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

QSize PowerStageBars::sizeHint() const
{
    return { 420, 200 };
}
QSize PowerStageBars::minimumSizeHint() const
{
    return { 160, 120 };
}

void PowerStageBars::set_prediction(const Prediction& p)
{
    m_prediction = p;
    update();
}

void PowerStageBars::clear()
{
    m_prediction = Prediction {};
    update();
}

QRectF PowerStageBars::plot() const
{
    const QFontMetrics fm = fontMetrics();
    const double left = fm.horizontalAdvance(QStringLiteral("0000 W")) + 8;
    const double top = fm.height() + 8;
    const double bottom = 2 * fm.height() + 6;
    return { left, top, std::max(10.0, width() - left - 8), std::max(10.0, height() - top - bottom) };
}

QColor PowerStageBars::average_colour() const
{
    return group_colour(0, dark());
}

QColor PowerStageBars::peak_colour() const
{
    QColor c = average_colour();
    c.setAlphaF(0.35f);
    return c;
}

std::vector<BarChart::LegendEntry> PowerStageBars::legend() const
{
    return { { average_colour(), QStringLiteral("average per GPU") },
        { peak_colour(), QStringLiteral("peak (pass level)") } };
}

void PowerStageBars::paint_chart(QPainter& p)
{
    const QFontMetrics fm = fontMetrics();
    const QColor text = text_colour();
    const QRectF r = plot();
    const PowerEstimate& w = m_prediction.power;
    double top = std::max(w.cap_W, w.peak_W_per_gpu) * 1.08;
    for (const StageReport& s : m_prediction.stages)
        top = std::max(top, s.peak_W * 1.05);
    auto y_of = [&](double v) { return r.bottom() - v / top * r.height(); };
    draw_value_axis(
        p, r, top, 5, [](double v) -> QString { return QString::number(std::lround(v)) + QStringLiteral(" W"); });
    const int n = static_cast<int>(m_prediction.stages.size());
    const StageSlots columns = stage_slots(r, n, QStringLiteral("0000"));
    const double px_per_W = r.height() / top;
    for (int i = 0; i < n; ++i) {
        const StageReport& s = m_prediction.stages[i];
        // The peak behind, the average in front: two columns from the axis, not a stack.
        draw_column(p, columns.bar_x(i), columns.bar_w, r.bottom(), px_per_W, { { s.peak_W, peak_colour(), {} } });
        draw_column(p, columns.bar_x(i), columns.bar_w, r.bottom(), px_per_W, { { s.avg_W, average_colour(), {} } });
        if (i % columns.label_every == 0) {
            draw_stage_label(p, columns, i, r.bottom() + 2, QString::number(s.stage));
            draw_stage_label(p, columns, i, r.bottom() + 2 + fm.height(), QString::number(std::lround(s.clock_MHz)));
        }
    }
    p.setPen(text);
    p.drawText(
        QRectF(0, r.bottom() + 2, r.left() - 4, fm.height()), Qt::AlignRight | Qt::AlignTop, QStringLiteral("stage"));
    p.drawText(QRectF(0, r.bottom() + 2 + fm.height(), r.left() - 4, fm.height()), Qt::AlignRight | Qt::AlignTop,
        QStringLiteral("MHz"));
    draw_reference_line(p, r, y_of(w.cap_W), bad_colour(dark()), QStringLiteral("cap ") + watts(w.cap_W));
    draw_reference_line(p, r, y_of(w.idle_W), text, {}, Qt::DotLine);
}

QString PowerStageBars::tooltip_at(QPointF pos) const
{
    const int n = static_cast<int>(m_prediction.stages.size());
    const int i = stage_at(stage_slots(plot(), n, QStringLiteral("0000")), n, pos.x());
    if (i < 0)
        return {};
    const StageReport& s = m_prediction.stages[i];
    return QStringLiteral("<b>Stage %1</b> (%2 layers) at %3 MHz<br>average %4 per GPU, peak %5")
        .arg(s.stage)
        .arg(s.layers)
        .arg(std::lround(s.clock_MHz))
        .arg(watts(s.avg_W), watts(s.peak_W));
}

QString PowerStageBars::csv() const
{
    constexpr int digits = 8;
    CsvWriter out { "stage", "layers", "clock_MHz", "avg_W_per_gpu", "peak_W_per_gpu" };
    for (const StageReport& s : m_prediction.stages)
        out.integer(s.stage)
            .integer(s.layers)
            .number(s.clock_MHz, digits)
            .number(s.avg_W, digits)
            .number(s.peak_W, digits)
            .end_row();
    return QString::fromStdString(out.text());
}

PowerPanel::PowerPanel(QWidget* parent)
    : QWidget(parent)
{
    setObjectName(QStringLiteral("power_panel"));
    auto* v = new QVBoxLayout(this);
    v->setContentsMargins(4, 4, 4, 4);
    auto* split = new QSplitter(Qt::Horizontal, this);
    auto* left = new QWidget(split);
    auto* lv = new QVBoxLayout(left);
    lv->setContentsMargins(0, 0, 0, 0);
    lv->addWidget(new QLabel(QStringLiteral("<b>Power budget</b> (IT power: GPUs + node overhead)"), left));
    m_table = new QTableWidget(4, 4, left);
    m_table->setObjectName(QStringLiteral("power_budget_table"));
    m_table->setHorizontalHeaderLabels(
        { QStringLiteral("level"), QStringLiteral("count"), QStringLiteral("average"), QStringLiteral("peak") });
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    m_table->horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionMode(QAbstractItemView::NoSelection);
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 6);
    m_table->setMaximumHeight(5 * (m_table->fontMetrics().height() + 6) + 8);
    lv->addWidget(m_table);
    m_limits = new QLabel(left);
    m_limits->setObjectName(QStringLiteral("power_limits"));
    m_limits->setWordWrap(true);
    m_limits->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_limits->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    lv->addWidget(m_limits, 1);
    auto* right = new QWidget(split);
    auto* rv = new QVBoxLayout(right);
    rv->setContentsMargins(0, 0, 0, 0);
    rv->addWidget(new QLabel(QStringLiteral("<b>Power per GPU by pipeline stage</b> and its clock"), right));
    m_bars = new PowerStageBars(right);
    rv->addWidget(m_bars, 1);
    split->addWidget(left);
    split->addWidget(right);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 1);
    v->addWidget(split, 1);
    clear();
}

void PowerPanel::clear()
{
    for (int r = 0; r < m_table->rowCount(); ++r)
        for (int c = 0; c < m_table->columnCount(); ++c)
            m_table->setItem(r, c, new QTableWidgetItem(c == 0 ? QString() : QStringLiteral("–")));
    m_limits->setText(QStringLiteral("no plan"));
    m_bars->clear();
}

void PowerPanel::set_prediction(const Prediction& p)
{
    const PowerEstimate& w = p.power;
    struct Row {
        QString level, count, avg, peak;
    };
    const double gpus = w.gpus;
    const Row rows[] = {
        { QStringLiteral("GPU"), QString::number(static_cast<long long>(gpus)), watts(w.avg_W_per_gpu),
            watts(w.peak_W_per_gpu) },
        { QStringLiteral("node (GPUs + %1)").arg(watts(w.node_overhead_W)),
            QString::number(static_cast<long long>(w.nodes)), watts(w.avg_W_per_node), watts(w.peak_W_per_node) },
        { QStringLiteral("rack (%1 nodes)").arg(static_cast<long long>(w.nodes_per_rack)),
            QString::number(static_cast<long long>(w.racks)), watts(w.rack_avg_kW * 1000),
            watts(w.rack_peak_kW * 1000) },
        { QStringLiteral("cluster"), QStringLiteral("1"), watts(w.cluster_avg_kW * 1000),
            watts(w.cluster_peak_kW * 1000) },
    };
    for (int r = 0; r < 4; ++r) {
        const QString cells[] = { rows[r].level, rows[r].count, rows[r].avg, rows[r].peak };
        for (int c = 0; c < 4; ++c) {
            auto* item = new QTableWidgetItem(cells[c]);
            if (c > 0)
                item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            m_table->setItem(r, c, item);
        }
    }
    QString limits;
    limits += QStringLiteral("Energy: <b>%1</b> per token, %2 per step per GPU, %3 per step in all.<br>")
                  .arg(joules(w.energy_J_per_token), joules(w.energy_J_per_step_per_gpu), joules(w.energy_J_per_step));
    limits += QStringLiteral("Clock %1 MHz (mean over stages); kernels busy %2% of the step.<br>")
                  .arg(std::lround(w.clock_MHz))
                  .arg(std::lround(100 * w.busy_fraction));
    limits += QStringLiteral("Floor: idle %1. Cap %2%3.<br>")
                  .arg(watts(w.idle_W), watts(w.cap_W),
                      w.power_capped ? QStringLiteral(
                          ": <span style='color:#dc2626'>it throttles kernels, +%1% kernel time</span>")
                                           .arg(QString::number(100 * w.cap_slowdown, 'f', 1))
                                     : QStringLiteral(" (not reached)"));
    limits += w.thermal_clock > 0 ? QStringLiteral("<span style='color:#dc2626'>Thermal limit %1 per GPU at this inlet "
                                                   "temperature: clock down to %2% of nominal.</span>")
                                        .arg(watts(w.thermal_limit_W))
                                        .arg(std::lround(100 * w.thermal_clock))
                                  : QStringLiteral("Thermal limit %1 per GPU at this inlet temperature (not reached).")
                                        .arg(watts(w.thermal_limit_W));
    m_limits->setText(limits);
    m_bars->set_prediction(p);
}

QStringList PowerPanel::budget_lines() const
{
    QStringList out;
    for (int r = 0; r < m_table->rowCount(); ++r) {
        QStringList cells;
        for (int c = 0; c < m_table->columnCount(); ++c)
            cells << (m_table->item(r, c) ? m_table->item(r, c)->text() : QString());
        out << cells.join(QStringLiteral(" | "));
    }
    return out;
}

QString PowerPanel::limits_text() const
{
    return m_limits->text();
}

} // namespace parallax::views

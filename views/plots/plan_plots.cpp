#include "plots/plan_plots.hpp"

#include "io/csv_writer.hpp"
#include "plots/plot_export.hpp"
#include "plots/plot_style.hpp"
#include "plots/qcustomplot_include.hpp"
#include "search/plan_explain.hpp"
#include "spec/units.hpp"
#include "style/view_style.hpp"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHelpEvent>
#include <QLabel>
#include <QToolTip>
#include <QVBoxLayout>

#include <cmath>
#include <limits>

namespace parallax::views {

namespace {

QString qs(std::string_view s)
{
    return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size()));
}

QString degree_title(Degree d)
{
    switch (d) {
    case Degree::micro_batch:
        return QStringLiteral("micro-batch");
    default:
        return qs(to_string(d)).toUpper();
    }
}

constexpr int kCsvDigits = 10;

// The valid, rule and feasible columns both exports share.
void write_validity(CsvWriter& out, const PlanPoint& p)
{
    out.integer(p.valid() ? 1 : 0).field(p.valid() ? "" : rule_key(p.option.rule)).integer(p.feasible ? 1 : 0);
}

QString point_summary(const PlanPoint& p, Degree d, const Strategy& current)
{
    QString s = QStringLiteral("<b>") + degree_title(d) + QStringLiteral(" ") + QString::number(p.option.value)
        + QStringLiteral("</b>");
    const std::string moves = describe_strategy_change(current, p.option.strategy);
    if (!moves.empty())
        s += QStringLiteral("<br>") + QString::fromStdString(moves).toHtmlEscaped();
    if (!p.valid())
        return s + QStringLiteral("<br>not allowed: ") + QString::fromStdString(p.option.why).toHtmlEscaped();
    s += QStringLiteral("<br>") + format_count(p.tokens_per_s) + QStringLiteral(" tokens/s · step ")
        + format_seconds(p.step_time_s) + QStringLiteral(" · MFU ") + QString::number(p.mfu * 100, 'f', 1)
        + QStringLiteral("%<br>peak memory ") + format_gib(p.peak_memory_bytes);
    if (!p.feasible)
        s += QStringLiteral(" — <b>does not fit</b>");
    return s;
}

QCPColorGradient viridis()
{
    // Viridis (van der Walt & Smith 2015): perceptually uniform, readable in grey and by most
    // colour-blind viewers.
    QCPColorGradient g;
    g.clearColorStops();
    g.setColorStopAt(0.0, QColor(0x44, 0x01, 0x54));
    g.setColorStopAt(0.25, QColor(0x3b, 0x52, 0x8b));
    g.setColorStopAt(0.5, QColor(0x21, 0x91, 0x8c));
    g.setColorStopAt(0.75, QColor(0x5e, 0xc9, 0x62));
    g.setColorStopAt(1.0, QColor(0xfd, 0xe7, 0x25));
    g.setNanHandling(QCPColorGradient::nhTransparent);
    return g;
}

} // namespace

SensitivityPlot::SensitivityPlot(QWidget* parent)
    : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    auto* bar = new QHBoxLayout;
    bar->addWidget(new QLabel(QStringLiteral("Vary"), this));
    m_choice = new QComboBox(this);
    m_choice->setObjectName(QStringLiteral("sensitivity_degree"));
    for (Degree d : kAllDegrees)
        m_choice->addItem(degree_title(d), static_cast<int>(d));
    bar->addWidget(m_choice);
    m_note = new QLabel(this);
    // The note can list many refused values: it wraps rather than widening the dock and the window.
    m_note->setWordWrap(true);
    m_note->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    bar->addWidget(m_note, 1);
    layout->addLayout(bar);
    m_plot = new QCustomPlot(this);
    m_plot->setObjectName(QStringLiteral("sensitivity_plot"));
    m_plot->setMinimumSize(200, 150);
    m_plot->setNotAntialiasedElements(QCP::aeAll);
    m_plot->setAntialiasedElements(QCP::aePlottables | QCP::aeScatters);
    layout->addWidget(m_plot, 1);

    m_plot->yAxis->setLabel(QStringLiteral("tokens/s"));
    m_plot->yAxis2->setVisible(true);
    m_plot->yAxis2->setLabel(QStringLiteral("peak memory (GiB)"));
    m_plot->xAxis->setLabel(QStringLiteral("TP"));
    m_band_low = m_plot->addGraph(m_plot->xAxis, m_plot->yAxis);
    m_band_high = m_plot->addGraph(m_plot->xAxis, m_plot->yAxis);
    m_band_high->setChannelFillGraph(m_band_low);
    m_band_high->setName(QStringLiteral("80% band"));
    m_tokens = m_plot->addGraph(m_plot->xAxis, m_plot->yAxis);
    m_tokens->setName(QStringLiteral("tokens/s"));
    m_memory = m_plot->addGraph(m_plot->xAxis, m_plot->yAxis2);
    m_memory->setName(QStringLiteral("peak memory"));
    m_tokens_oom = m_plot->addGraph(m_plot->xAxis, m_plot->yAxis);
    m_tokens_oom->setName(QStringLiteral("does not fit"));
    m_tokens_oom->setLineStyle(QCPGraph::lsNone);
    m_current = m_plot->addGraph(m_plot->xAxis, m_plot->yAxis);
    m_current->setName(QStringLiteral("current plan"));
    m_current->setLineStyle(QCPGraph::lsNone);
    m_capacity = new QCPItemStraightLine(m_plot);
    m_capacity->point1->setAxes(m_plot->xAxis, m_plot->yAxis2);
    m_capacity->point2->setAxes(m_plot->xAxis, m_plot->yAxis2);
    legend_above_axes(m_plot, font());
    m_plot->legend->setIconSize(22, 14);
    m_plot->legend->setMargins(QMargins(4, 2, 4, 2));
    m_plot->installEventFilter(this);
    refresh_colours();

    connect(m_choice, &QComboBox::activated, this,
        [this](int i) { set_degree(static_cast<Degree>(m_choice->itemData(i).toInt())); });
    connect(m_plot, &QCustomPlot::mousePress, this, [this](QMouseEvent* e) {
        if (e->button() != Qt::LeftButton || !m_eval)
            return;
        const PlanPoint* p = point_near(e->position());
        if (p && p->valid() && p->option.value != m_eval->curve(m_degree).current)
            emit apply_requested(p->option.strategy,
                degree_title(m_degree) + QStringLiteral(" ") + QString::number(p->option.value)
                    + QStringLiteral(" (sensitivity plot)"));
    });
    install_export_menu(m_plot, QStringLiteral("sensitivity"), [this] { return csv(); });
}

void SensitivityPlot::refresh_colours()
{
    const bool dark = is_dark(palette());
    style_plot(m_plot);
    const QColor tokens = dimension_colour(ParallelDim::tp, dark);
    const QColor memory = memory_colour(MemoryPart::activations, dark);
    m_tokens->setPen(QPen(tokens, 2));
    QColor band = tokens;
    band.setAlphaF(0.18f);
    m_band_low->setPen(Qt::NoPen);
    m_band_high->setPen(Qt::NoPen);
    m_band_high->setBrush(band);
    m_tokens->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, tokens, tokens, 7));
    m_memory->setPen(QPen(memory, 1.5, Qt::DashLine));
    m_memory->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssSquare, memory, 6));
    m_tokens_oom->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCross, QPen(bad_colour(dark), 2.5), QBrush(), 12));
    const QColor hl = palette().color(QPalette::Highlight);
    m_current->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(hl, 2.5), QBrush(), 14));
    m_capacity->setPen(QPen(bad_colour(dark), 1.2, Qt::DotLine));
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void SensitivityPlot::changeEvent(QEvent* e)
{
    if (e->type() == QEvent::PaletteChange)
        refresh_colours();
    QWidget::changeEvent(e);
}

// Plots behind another tab stay "visible" but off screen: their replot waits until they are painted.
namespace {
bool on_screen(const QWidget* w)
{
    return w->isVisible() && !w->visibleRegion().isEmpty();
}
} // namespace

void SensitivityPlot::set_evaluation(std::shared_ptr<const PlanEvaluation> e)
{
    m_eval = std::move(e);
    m_dirty = !on_screen(m_plot);
    if (!m_dirty)
        rebuild();
}

void SensitivityPlot::set_degree(Degree d)
{
    m_degree = d;
    m_choice->setCurrentIndex(m_choice->findData(static_cast<int>(d)));
    rebuild();
    m_dirty = false;
}

std::optional<std::pair<double, double>> SensitivityPlot::band_factors() const
{
    if (!m_eval)
        return std::nullopt;
    const auto t = metric_interval(m_eval->prediction, Metric::tokens_per_s);
    const double tokens = m_eval->prediction.tokens_per_s;
    if (!t || !(tokens > 0))
        return std::nullopt;
    return std::pair { t->first / tokens, t->second / tokens };
}

void SensitivityPlot::rebuild()
{
    QVector<double> x, tokens, mem, ox, oy, band_low, band_high;
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    m_plot->xAxis->setLabel(degree_title(m_degree));
    double cx = std::numeric_limits<double>::quiet_NaN(), cy = cx;
    if (m_eval && !m_eval->curve(m_degree).points.empty()) {
        const SensitivityCurve& c = m_eval->curve(m_degree);
        QStringList not_allowed; // values a rule refuses: no point, so the note says why the curve has gaps
        for (int i = 0; i < static_cast<int>(c.points.size()); ++i) {
            const PlanPoint& p = c.points[i];
            ticker->addTick(i, QString::number(p.option.value));
            if (!p.valid()) {
                not_allowed << QString::number(p.option.value);
                continue;
            }
            x << i;
            tokens << p.tokens_per_s;
            // The band is the workload's (the same factors for every point of the curve).
            if (const auto f = band_factors()) {
                band_low << p.tokens_per_s * f->first;
                band_high << p.tokens_per_s * f->second;
            }
            mem << p.peak_memory_bytes / units::kGiB;
            if (!p.feasible) {
                ox << i;
                oy << p.tokens_per_s;
            }
            if (p.option.value == c.current) {
                cx = i;
                cy = p.tokens_per_s;
            }
        }
        m_plot->xAxis->setRange(-0.5, c.points.size() - 0.5);
        QString note = c.absorber ? QStringLiteral("%1 absorbs the change; click a point to apply it")
                                        .arg(qs(to_string(*c.absorber)).toUpper())
                                  : QStringLiteral("click a point to apply it");
        if (!not_allowed.isEmpty())
            note += QStringLiteral("; %1 %2: not allowed (hover for the rule)")
                        .arg(degree_title(m_degree), not_allowed.join(QStringLiteral(", ")));
        m_note->setText(note);
        const double cap = m_eval->prediction.capacity_bytes > 0 ? m_eval->prediction.capacity_bytes
                                                                 : m_eval->scenario.cluster.gpu.memory_bytes;
        m_capacity->point1->setCoords(0, cap / units::kGiB);
        m_capacity->point2->setCoords(1, cap / units::kGiB);
        m_capacity->setVisible(true);
        double max_mem = cap / units::kGiB;
        for (double v : mem)
            max_mem = std::max(max_mem, v);
        m_plot->yAxis2->setRange(0, max_mem * 1.1);
        double max_tok = 1;
        for (double v : tokens)
            max_tok = std::max(max_tok, v);
        for (double v : band_high)
            max_tok = std::max(max_tok, v / 1.1);
        m_plot->yAxis->setRange(0, max_tok * 1.15);
    } else {
        m_note->setText(QStringLiteral("no plan"));
        m_capacity->setVisible(false);
    }
    m_plot->xAxis->setTicker(ticker);
    m_tokens->setData(x, tokens, true);
    const QVector<double> band_x = band_low.isEmpty() ? QVector<double>() : x;
    m_band_low->setData(band_x, band_low, true);
    m_band_high->setData(band_x, band_high, true);
    m_band_low->removeFromLegend();
    m_band_high->setVisible(!band_low.isEmpty());
    if (band_low.isEmpty())
        m_band_high->removeFromLegend();
    else
        m_band_high->addToLegend();
    if (!band_low.isEmpty())
        m_band_high->setName(
            QString::number(std::lround(100 * m_eval->prediction.interval.level)) + QStringLiteral("% band"));
    m_memory->setData(x, mem, true);
    m_tokens_oom->setData(ox, oy, true);
    QVector<double> curx, cury;
    if (!std::isnan(cx)) {
        curx << cx;
        cury << cy;
    }
    m_current->setData(curx, cury, true);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

QString SensitivityPlot::note_text() const
{
    return m_note->text();
}

const PlanPoint* SensitivityPlot::point_near(QPointF pos) const
{
    if (!m_eval)
        return nullptr;
    const SensitivityCurve& c = m_eval->curve(m_degree);
    const double key = m_plot->xAxis->pixelToCoord(pos.x());
    const int i = static_cast<int>(std::lround(key));
    if (i < 0 || i >= static_cast<int>(c.points.size()) || std::abs(key - i) > 0.4)
        return nullptr;
    return &c.points[i];
}

QPoint SensitivityPlot::point_position(int value) const
{
    if (m_dirty) { // the axes must describe the latest data before pixels are computed
        auto* self = const_cast<SensitivityPlot*>(this);
        self->m_dirty = false;
        self->rebuild();
    }
    if (!m_eval)
        return {};
    const SensitivityCurve& c = m_eval->curve(m_degree);
    for (int i = 0; i < static_cast<int>(c.points.size()); ++i)
        if (c.points[i].option.value == value)
            return QPoint(static_cast<int>(m_plot->xAxis->coordToPixel(i)),
                static_cast<int>(m_plot->yAxis->coordToPixel(c.points[i].tokens_per_s)));
    return {};
}

bool SensitivityPlot::eventFilter(QObject* o, QEvent* e)
{
    if (o == m_plot && e->type() == QEvent::Paint && m_dirty) {
        m_dirty = false;
        rebuild();
    }
    if (o == m_plot && e->type() == QEvent::ToolTip && m_eval) {
        auto* h = static_cast<QHelpEvent*>(e);
        if (const PlanPoint* p = point_near(h->pos())) {
            QToolTip::showText(h->globalPos(), point_summary(*p, m_degree, m_eval->scenario.strategy), m_plot);
            return true;
        }
        QToolTip::hideText();
        return true;
    }
    return QWidget::eventFilter(o, e);
}

QString SensitivityPlot::csv() const
{
    CsvWriter out { "degree", "value", "valid", "rule", "feasible", "tokens_per_s", "step_time_s", "tflops_per_gpu",
        "mfu", "bubble_fraction", "peak_memory_GiB", "power_W_per_gpu", "tp", "pp", "dp", "cp", "ep", "vpp",
        "micro_batch" };
    if (!m_eval)
        return QString::fromStdString(out.text());
    for (Degree d : kAllDegrees) {
        for (const PlanPoint& p : m_eval->curve(d).points) {
            out.field(to_string(d)).integer(p.option.value);
            write_validity(out, p);
            out.number(p.tokens_per_s, kCsvDigits)
                .number(p.step_time_s, kCsvDigits)
                .number(p.tflops_per_gpu, kCsvDigits)
                .number(p.mfu, kCsvDigits)
                .number(p.bubble_fraction, kCsvDigits)
                .number(p.peak_memory_bytes / units::kGiB, kCsvDigits)
                .number(p.power_W_per_gpu, kCsvDigits);
            for (Degree k : kAllDegrees)
                out.integer(degree_value(p.option.strategy, k));
            out.end_row();
        }
    }
    return QString::fromStdString(out.text());
}

HeatmapPlot::HeatmapPlot(QWidget* parent)
    : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    m_note = new QLabel(this);
    m_note->setWordWrap(true);
    layout->addWidget(m_note);
    m_plot = new QCustomPlot(this);
    m_plot->setObjectName(QStringLiteral("heatmap_plot"));
    m_plot->setMinimumSize(200, 150);
    layout->addWidget(m_plot, 1);
    m_plot->xAxis->setLabel(QStringLiteral("TP"));
    m_plot->yAxis->setLabel(QStringLiteral("PP"));
    m_map = new QCPColorMap(m_plot->xAxis, m_plot->yAxis);
    m_map->setInterpolate(false);
    m_map->setTightBoundary(false);
    m_scale = new QCPColorScale(m_plot);
    m_plot->plotLayout()->addElement(0, 1, m_scale);
    m_scale->setType(QCPAxis::atRight);
    m_scale->axis()->setLabel(QStringLiteral("tokens/s"));
    m_map->setColorScale(m_scale);
    m_map->setGradient(viridis());
    auto* group = new QCPMarginGroup(m_plot);
    m_plot->axisRect()->setMarginGroup(QCP::msBottom | QCP::msTop, group);
    m_scale->setMarginGroup(QCP::msBottom | QCP::msTop, group);
    m_oom = m_plot->addGraph();
    m_oom->setLineStyle(QCPGraph::lsNone);
    m_oom->setName(QStringLiteral("does not fit"));
    m_invalid = m_plot->addGraph();
    m_invalid->setLineStyle(QCPGraph::lsNone);
    m_invalid->setName(QStringLiteral("not allowed"));
    m_current = new QCPItemRect(m_plot);
    m_current->setBrush(Qt::NoBrush);
    m_plot->installEventFilter(this);
    refresh_colours();
    connect(m_plot, &QCustomPlot::mousePress, this, [this](QMouseEvent* e) {
        if (e->button() != Qt::LeftButton || !m_eval)
            return;
        int tp = 0, pp = 0;
        const PlanPoint* p = cell_at(e->position(), &tp, &pp);
        if (p && p->valid() && p->option.strategy != m_eval->scenario.strategy)
            emit apply_requested(p->option.strategy, QStringLiteral("TP %1 × PP %2 (heatmap)").arg(tp).arg(pp));
    });
    install_export_menu(m_plot, QStringLiteral("tp-pp-heatmap"), [this] { return csv(); });
}

void HeatmapPlot::refresh_colours()
{
    const bool dark = is_dark(palette());
    style_plot(m_plot);
    const QColor text = palette().color(QPalette::Text);
    m_scale->axis()->setBasePen(QPen(text));
    m_scale->axis()->setTickPen(QPen(text));
    m_scale->axis()->setSubTickPen(QPen(text));
    m_scale->axis()->setTickLabelColor(text);
    m_scale->axis()->setLabelColor(text);
    m_oom->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCross, QPen(bad_colour(dark), 2.5), QBrush(), 14));
    QColor muted = text;
    muted.setAlphaF(0.35f);
    m_invalid->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDot, QPen(muted, 3), QBrush(), 4));
    m_current->setPen(QPen(palette().color(QPalette::Highlight), 3));
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void HeatmapPlot::changeEvent(QEvent* e)
{
    if (e->type() == QEvent::PaletteChange)
        refresh_colours();
    QWidget::changeEvent(e);
}

void HeatmapPlot::set_evaluation(std::shared_ptr<const PlanEvaluation> e)
{
    m_eval = std::move(e);
    m_dirty = !on_screen(m_plot);
    if (!m_dirty)
        rebuild();
}

void HeatmapPlot::rebuild()
{
    auto xt = QSharedPointer<QCPAxisTickerText>::create();
    auto yt = QSharedPointer<QCPAxisTickerText>::create();
    QVector<double> ox, oy, ix, iy;
    const TpPpHeatmap* h = m_eval ? &m_eval->heatmap : nullptr;
    if (!h || h->cells.empty()) {
        m_map->data()->clear();
        m_current->setVisible(false);
        m_note->setText(QStringLiteral("no plan"));
    } else {
        const int nt = static_cast<int>(h->tp_values.size());
        const int np = static_cast<int>(h->pp_values.size());
        m_map->data()->setSize(nt, np);
        m_map->data()->setRange(QCPRange(0, std::max(1, nt - 1)), QCPRange(0, std::max(1, np - 1)));
        double lo = std::numeric_limits<double>::max(), hi = 0;
        for (int j = 0; j < np; ++j) {
            for (int i = 0; i < nt; ++i) {
                const PlanPoint& p = h->at(i, j);
                double v = std::numeric_limits<double>::quiet_NaN();
                if (p.valid() && p.feasible) {
                    v = p.tokens_per_s;
                    lo = std::min(lo, v);
                    hi = std::max(hi, v);
                } else if (p.valid()) {
                    ox << i;
                    oy << j;
                } else {
                    ix << i;
                    iy << j;
                }
                m_map->data()->setCell(i, j, v);
            }
        }
        for (int i = 0; i < nt; ++i)
            xt->addTick(i, QString::number(h->tp_values[i]));
        for (int j = 0; j < np; ++j)
            yt->addTick(j, QString::number(h->pp_values[j]));
        if (hi > 0)
            m_map->setDataRange(QCPRange(lo < hi ? lo : 0, hi));
        m_plot->xAxis->setRange(-0.5, nt - 0.5);
        m_plot->yAxis->setRange(-0.5, np - 0.5);
        const Strategy& s = m_eval->scenario.strategy;
        int ci = -1, cj = -1;
        for (int i = 0; i < nt; ++i)
            if (h->tp_values[i] == s.tp)
                ci = i;
        for (int j = 0; j < np; ++j)
            if (h->pp_values[j] == s.pp)
                cj = j;
        m_current->setVisible(ci >= 0 && cj >= 0);
        m_current->topLeft->setCoords(ci - 0.5, cj + 0.5);
        m_current->bottomRight->setCoords(ci + 0.5, cj - 0.5);
        m_note->setText(
            QStringLiteral("Tokens/s for each TP × PP, %1 absorbing the GPU count; × does not fit in memory, "
                           "· breaks a rule. Click a cell to apply it.")
                .arg(h->absorber ? qs(to_string(*h->absorber)).toUpper() : QStringLiteral("nothing")));
    }
    m_plot->xAxis->setTicker(xt);
    m_plot->yAxis->setTicker(yt);
    m_oom->setData(ox, oy, true);
    m_invalid->setData(ix, iy, true);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

const PlanPoint* HeatmapPlot::cell_at(QPointF pos, int* tp, int* pp) const
{
    if (!m_eval || m_eval->heatmap.cells.empty())
        return nullptr;
    const TpPpHeatmap& h = m_eval->heatmap;
    const int i = static_cast<int>(std::lround(m_plot->xAxis->pixelToCoord(pos.x())));
    const int j = static_cast<int>(std::lround(m_plot->yAxis->pixelToCoord(pos.y())));
    if (i < 0 || j < 0 || i >= static_cast<int>(h.tp_values.size()) || j >= static_cast<int>(h.pp_values.size()))
        return nullptr;
    if (tp)
        *tp = h.tp_values[i];
    if (pp)
        *pp = h.pp_values[j];
    return &h.at(i, j);
}

QPoint HeatmapPlot::cell_position(int tp, int pp) const
{
    if (m_dirty) { // the axes must describe the latest data before pixels are computed
        auto* self = const_cast<HeatmapPlot*>(this);
        self->m_dirty = false;
        self->rebuild();
    }
    if (!m_eval)
        return {};
    const TpPpHeatmap& h = m_eval->heatmap;
    for (int i = 0; i < static_cast<int>(h.tp_values.size()); ++i)
        for (int j = 0; j < static_cast<int>(h.pp_values.size()); ++j)
            if (h.tp_values[i] == tp && h.pp_values[j] == pp)
                return QPoint(
                    static_cast<int>(m_plot->xAxis->coordToPixel(i)), static_cast<int>(m_plot->yAxis->coordToPixel(j)));
    return {};
}

bool HeatmapPlot::eventFilter(QObject* o, QEvent* e)
{
    if (o == m_plot && e->type() == QEvent::Paint && m_dirty) {
        m_dirty = false;
        rebuild();
    }
    if (o == m_plot && e->type() == QEvent::ToolTip && m_eval) {
        auto* h = static_cast<QHelpEvent*>(e);
        int tp = 0, pp = 0;
        if (const PlanPoint* p = cell_at(h->pos(), &tp, &pp)) {
            QString tip = QStringLiteral("<b>TP %1 × PP %2</b>").arg(tp).arg(pp);
            const Strategy& s = p->option.strategy;
            tip += QStringLiteral(" (DP %1, CP %2)").arg(s.dp).arg(s.cp);
            if (!p->valid())
                tip += QStringLiteral("<br>not allowed: ") + QString::fromStdString(p->option.why).toHtmlEscaped();
            else
                tip += QStringLiteral("<br>") + format_count(p->tokens_per_s) + QStringLiteral(" tokens/s · MFU ")
                    + QString::number(p->mfu * 100, 'f', 1) + QStringLiteral("%<br>peak memory ")
                    + format_gib(p->peak_memory_bytes)
                    + (p->feasible ? QString() : QStringLiteral(" — <b>does not fit</b>"));
            QToolTip::showText(h->globalPos(), tip, m_plot);
            return true;
        }
        QToolTip::hideText();
        return true;
    }
    return QWidget::eventFilter(o, e);
}

QString HeatmapPlot::csv() const
{
    CsvWriter out { "tp", "pp", "dp", "cp", "valid", "rule", "feasible", "tokens_per_s", "step_time_s", "mfu",
        "peak_memory_GiB" };
    if (!m_eval)
        return QString::fromStdString(out.text());
    const TpPpHeatmap& h = m_eval->heatmap;
    for (std::size_t j = 0; j < h.pp_values.size(); ++j) {
        for (std::size_t i = 0; i < h.tp_values.size(); ++i) {
            const PlanPoint& p = h.at(i, j);
            out.integer(h.tp_values[i])
                .integer(h.pp_values[j])
                .integer(p.option.strategy.dp)
                .integer(p.option.strategy.cp);
            write_validity(out, p);
            out.number(p.tokens_per_s, kCsvDigits)
                .number(p.step_time_s, kCsvDigits)
                .number(p.mfu, kCsvDigits)
                .number(p.peak_memory_bytes / units::kGiB, kCsvDigits)
                .end_row();
        }
    }
    return QString::fromStdString(out.text());
}

} // namespace parallax::views

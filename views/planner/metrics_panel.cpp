#include "planner/metrics_panel.hpp"

#include "io/number_format.hpp"
#include "style/view_style.hpp"

#include <QFrame>
#include <QGridLayout>
#include <QLabel>
#include <QVBoxLayout>

#include <cmath>

namespace parallax::views {

namespace {

QString short_title(Metric m)
{
    switch (m) {
    case Metric::step_time:
        return QStringLiteral("Step time");
    case Metric::tokens_per_s:
        return QStringLiteral("Tokens/s");
    case Metric::tflops_per_gpu:
        return QStringLiteral("TFLOP/s per GPU");
    case Metric::mfu:
        return QStringLiteral("MFU");
    case Metric::bubble:
        return QStringLiteral("Bubble");
    case Metric::power:
        return QStringLiteral("Power per GPU");
    case Metric::energy_per_token:
        return QStringLiteral("Energy per token");
    case Metric::peak_memory:
        return QStringLiteral("Peak memory");
    default:
        return QString::fromStdString(explain_metric(m).title);
    }
}

} // namespace

const std::vector<Metric>& MetricsPanel::shown_metrics()
{
    static const std::vector<Metric> m = { Metric::step_time, Metric::tokens_per_s, Metric::tflops_per_gpu, Metric::mfu,
        Metric::bubble, Metric::power, Metric::energy_per_token, Metric::peak_memory };
    return m;
}

MetricsPanel::MetricsPanel(QWidget* parent)
    : QWidget(parent)
{
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(4, 4, 4, 4);
    outer->setSpacing(4);
    m_banner = new QLabel(this);
    m_banner->setObjectName(QStringLiteral("banner"));
    m_banner->setWordWrap(true);
    m_banner->hide();
    outer->addWidget(m_banner);
    auto* grid = new QGridLayout;
    grid->setSpacing(6);
    int i = 0;
    for (Metric m : shown_metrics()) {
        Card c;
        c.metric = m;
        auto* frame = new QFrame(this);
        frame->setFrameShape(QFrame::StyledPanel);
        frame->setObjectName(QStringLiteral("metric_card"));
        auto* v = new QVBoxLayout(frame);
        v->setContentsMargins(8, 4, 8, 4);
        v->setSpacing(0);
        c.frame = frame;
        c.title = new QLabel(short_title(m), frame);
        c.value = new QLabel(QStringLiteral("–"), frame);
        QFont big = c.value->font();
        big.setPointSizeF(big.pointSizeF() * 1.45);
        big.setBold(true);
        c.value->setFont(big);
        c.band = new QLabel(frame);
        c.band->setObjectName(QStringLiteral("band"));
        c.band->setTextFormat(Qt::RichText);
        c.band->hide();
        c.delta = new QLabel(frame);
        c.delta->setTextFormat(Qt::RichText);
        v->addWidget(c.title);
        v->addWidget(c.value);
        v->addWidget(c.band);
        v->addWidget(c.delta);
        grid->addWidget(frame, i / 4, i % 4);
        const QString tip = explanation_html(explain_metric(m));
        frame->setToolTip(tip);
        m_cards.push_back(c);
        ++i;
    }
    outer->addLayout(grid);
}

void MetricsPanel::clear()
{
    for (Card& c : m_cards) {
        c.value->setText(QStringLiteral("–"));
        c.delta->clear();
        c.band->hide();
    }
    m_banner->hide();
}

void MetricsPanel::show_band(Card& c, const Prediction& p)
{
    const auto band = metric_interval(p, c.metric);
    if (!band || !p.feasible) {
        c.band->hide();
        return;
    }
    const bool dark = is_dark(palette());
    QColor muted = palette().color(QPalette::Text);
    muted.setAlphaF(0.65f);
    const bool memory = c.metric == Metric::peak_memory;
    const QString level = QString::number(std::lround(100 * (memory ? p.interval.memory_level : p.interval.level)))
        + QStringLiteral("%");
    // Three significant digits: the band is not known better than that.
    auto end = [&](double v) {
        return c.metric == Metric::tokens_per_s ? QString::fromStdString(format_grouped(v, 3))
                                                : format_metric(c.metric, v);
    };
    QString text = QStringLiteral("<span style='color:%1'>%2: %3–%4</span>")
                       .arg(muted.name(QColor::HexArgb), level, end(band->first), end(band->second));
    if (p.interval.far_from_validation && !memory)
        text += QStringLiteral(" <span style='color:%1'>far from validation</span>").arg(bad_colour(dark).name());
    c.band->setText(text);
    c.band->setToolTip(QStringLiteral("The %1 error band: the measured value should fall inside it %1 of the time, "
                                      "judged by the model's out-of-sample errors on ")
                           .arg(level)
        + QString::fromStdString(memory ? p.interval.memory_basis : p.interval.basis).toHtmlEscaped());
    c.band->show();
}

QString MetricsPanel::band_text(Metric m) const
{
    for (const Card& c : m_cards)
        if (c.metric == m)
            return c.band->isHidden() ? QString() : c.band->text();
    return {};
}

void MetricsPanel::set_evaluation(const PlanEvaluation& e, const Prediction* pinned, const Prediction* previous)
{
    const bool dark = is_dark(palette());
    const Prediction& p = e.prediction;
    if (!e.valid) {
        QString text = QStringLiteral("<b>Not a valid plan.</b> ");
        QStringList rules;
        for (const RuleViolation& v : e.violations)
            rules << QStringLiteral("<code>") + QString::fromStdString(v.key) + QStringLiteral("</code>: ")
                    + QString::fromStdString(v.message).toHtmlEscaped();
        m_banner->setText(text + rules.join(QStringLiteral("<br>")));
        m_banner->setStyleSheet(QStringLiteral("color: %1;").arg(bad_colour(dark).name()));
        m_banner->show();
        for (Card& c : m_cards) {
            c.value->setText(QStringLiteral("–"));
            c.delta->clear();
            c.band->hide();
        }
        return;
    }
    if (!p.feasible) {
        m_banner->setText(
            QStringLiteral("<b>Out of memory:</b> ") + QString::fromStdString(p.infeasible_reason).toHtmlEscaped());
        m_banner->setStyleSheet(QStringLiteral("color: %1;").arg(bad_colour(dark).name()));
        m_banner->show();
    } else {
        m_banner->hide();
    }
    for (Card& c : m_cards) {
        const double v = metric_value(p, c.metric);
        QString value = format_metric(c.metric, v);
        if (c.metric == Metric::peak_memory)
            value += QStringLiteral(" / ") + format_gib(p.capacity_bytes, 0);
        c.value->setText(value);
        show_band(c, p);
        const bool oom = c.metric == Metric::peak_memory && !p.feasible;
        c.value->setStyleSheet(oom ? QStringLiteral("color: %1;").arg(bad_colour(dark).name()) : QString());
        QString delta;
        if (pinned && pinned->step_time_s > 0) {
            const double base = metric_value(*pinned, c.metric);
            if (std::abs(base) > 0) {
                const double f = (v - base) / std::abs(base);
                const bool better = metric_higher_is_better(c.metric) ? f > 0 : f < 0;
                const bool neutral = std::abs(f) < 0.0005 || c.metric == Metric::power;
                const QColor col
                    = neutral ? palette().color(QPalette::Text) : (better ? good_colour(dark) : bad_colour(dark));
                delta = QStringLiteral("<span style='color:%1'>%2 vs pinned</span>")
                            .arg(col.name(),
                                neutral && std::abs(f) < 0.0005 ? QStringLiteral("±0%") : format_percent_delta(f));
            }
        }
        c.delta->setText(delta);
        const QString why = previous ? QString::fromStdString(why_moved(c.metric, *previous, p)) : QString();
        QString tip = explanation_html(explain_metric(c.metric), why);
        if (c.metric == Metric::peak_memory && p.host_memory_bytes_per_node > 0)
            tip += QStringLiteral("<p>Host memory: %1 per node of %2 (%3 offloaded per GPU)</p>")
                       .arg(format_gib(p.host_memory_bytes_per_node, 1), format_gib(p.host_capacity_bytes_per_node, 0),
                           format_gib(p.memory.host, 1));
        c.frame->setToolTip(tip);
    }
}

void MetricsPanel::set_measured(Metric m, const std::optional<MeasuredValue>& v)
{
    for (Card& c : m_cards) {
        if (c.metric != m)
            continue;
        if (!v) {
            if (c.measured)
                c.measured->hide();
            return;
        }
        if (!c.measured) {
            c.measured = new QLabel(c.frame);
            c.measured->setObjectName(QStringLiteral("measured"));
            c.measured->setTextFormat(Qt::RichText);
            c.frame->layout()->addWidget(c.measured);
        }
        QString text = QStringLiteral("◆ measured ") + format_metric(m, v->value);
        if (v->low && v->high && *v->high > *v->low)
            text += QStringLiteral(" (") + format_metric(m, *v->low) + QStringLiteral("–") + format_metric(m, *v->high)
                + QStringLiteral(")");
        if (v->error) {
            const bool dark = is_dark(palette());
            // Within ±10% (the accuracy docs/accuracy.md's tables quote) is a hit.
            const QColor col = std::abs(*v->error) <= 0.10 ? good_colour(dark) : bad_colour(dark);
            text += QStringLiteral(" <span style='color:%1'><b>%2</b></span>")
                        .arg(col.name(), format_percent_delta(*v->error));
        }
        c.measured->setText(text);
        c.measured->setToolTip(QStringLiteral("Measured by ") + v->source
            + QStringLiteral(": median of the steady-state steps (all but the first), min..max in brackets; the error "
                             "is against the prediction made at dispatch"));
        c.measured->show();
        return;
    }
}

QString MetricsPanel::measured_text(Metric m) const
{
    for (const Card& c : m_cards)
        if (c.metric == m)
            return c.measured && !c.measured->isHidden() ? c.measured->text() : QString();
    return {};
}

QString MetricsPanel::value_text(Metric m) const
{
    for (const Card& c : m_cards)
        if (c.metric == m)
            return c.value->text();
    return {};
}

QString MetricsPanel::delta_text(Metric m) const
{
    for (const Card& c : m_cards)
        if (c.metric == m)
            return c.delta->text();
    return {};
}

QString MetricsPanel::banner_text() const
{
    return m_banner->isHidden() ? QString() : m_banner->text();
}

} // namespace parallax::views

#include "serving_mode/serving_metrics_panel.hpp"

#include "style/view_style.hpp"

#include <QColor>
#include <QFrame>
#include <QGridLayout>
#include <QLabel>
#include <QVBoxLayout>

#include <cmath>
#include <optional>
#include <utility>

namespace parallax::views {

namespace {

constexpr int kCardsPerRow = 4;
constexpr double kMsPerS = 1000;

struct CardInfo {
    ServingMetricsPanel::Card card;
    const char* title;
    const char* tip;
};

const std::vector<CardInfo>& card_infos()
{
    using C = ServingMetricsPanel::Card;
    static const std::vector<CardInfo> infos = {
        { C::ttft, "TTFT",
            "Time to first token: queueing, the prompt's prefill (chunked with other requests' decode "
            "steps) and the first step's output, mean over requests." },
        { C::tpot, "TPOT",
            "Time per output token after the first: one decode step, with other requests' prompts "
            "riding along in some steps, mean over requests." },
        { C::e2e, "End to end", "TTFT + (output tokens - 1) x TPOT." },
        { C::tokens_per_s, "Output tokens/s", "Output tokens per second of the whole deployment." },
        { C::tokens_per_s_per_gpu, "Tokens/s per GPU", "Output tokens per second per GPU (the cost axis)." },
        { C::tokens_per_s_per_user, "Tokens/s per user", "1000 / TPOT: how fast one request's output streams." },
        { C::requests_per_s, "Requests/s", "Completed requests per second over the deployment." },
        { C::batch, "Running batch",
            "Requests running at once per instance, and the most the KV cache and the "
            "engine's admission rule allow." },
        { C::memory, "Memory per GPU",
            "Weights, KV-cache pool, activation buffers and the rest, on the busiest GPU, "
            "against its capacity." },
        { C::power, "Power per GPU", "Average board power over a step." },
        { C::energy, "Energy per token", "Joules per output token, all GPUs of the deployment." },
    };
    return infos;
}

QString ms(double v)
{
    return v >= kMsPerS ? QStringLiteral("%1 s").arg(v / kMsPerS, 0, 'f', 2)
                        : QStringLiteral("%1 ms").arg(v, 0, 'f', v < 10 ? 2 : 1);
}

// "37.2 ms: compute 9.2 · memory 4.8 (20.4 GB read) · collectives 11.8 · overhead 11.4 ms (host wait 7.1)".
QString step_parts(const StepCost& c)
{
    const auto part = [](double s) { return QString::number(s * kMsPerS, 'f', s * kMsPerS < 10 ? 2 : 1); };
    return QStringLiteral("%1: compute %2 · memory %3 (%4 GB read) · collectives %5 · overhead %6 ms (host wait %7)")
        .arg(ms(c.time_s * kMsPerS), part(c.compute_bound_s), part(c.memory_bound_s),
            QString::number(c.hbm_bytes / 1e9, 'f', 1), part(c.comm_s), part(c.overhead_s), part(c.host_wait_s));
}

QString value_of(ServingMetricsPanel::Card c, const ServingPrediction& p)
{
    using C = ServingMetricsPanel::Card;
    switch (c) {
    case C::ttft:
        return ms(p.ttft_ms);
    case C::tpot:
        return ms(p.tpot_ms);
    case C::e2e:
        return ms(p.e2e_latency_ms);
    case C::tokens_per_s:
        return format_count(p.output_tokens_per_s);
    case C::tokens_per_s_per_gpu:
        return format_count(p.output_tokens_per_s_per_gpu);
    case C::tokens_per_s_per_user:
        return QStringLiteral("%1").arg(p.output_tokens_per_s_per_user, 0, 'f', 1);
    case C::requests_per_s:
        return QStringLiteral("%1").arg(p.requests_per_s, 0, 'f', 2);
    case C::batch:
        return QStringLiteral("%1 / %2").arg(p.running_batch, 0, 'f', 1).arg(p.max_batch_by_memory);
    case C::memory:
        return QStringLiteral("%1 / %2").arg(format_gib(p.memory.peak_B()), format_gib(p.memory.capacity_B, 0));
    case C::power:
        return QStringLiteral("%1 W").arg(p.avg_W_per_gpu, 0, 'f', 0);
    case C::energy:
        return QStringLiteral("%1 J").arg(p.energy_J_per_token, 0, 'f', 3);
    }
    return {};
}

// The card's band as [low, high] in its own unit, when the prediction has one and the card shows a banded value.
std::optional<std::pair<double, double>> band_of(ServingMetricsPanel::Card c, const ServingPrediction& p)
{
    using C = ServingMetricsPanel::Card;
    const ServingInterval& i = p.interval;
    if (i.level <= 0 || !p.feasible)
        return std::nullopt;
    switch (c) {
    case C::ttft:
        return std::pair { i.ttft_ms_low, i.ttft_ms_high };
    case C::tpot:
        return std::pair { i.tpot_ms_low, i.tpot_ms_high };
    case C::tokens_per_s:
        return std::pair { i.tokens_per_s_low, i.tokens_per_s_high };
    case C::tokens_per_s_per_gpu:
        return std::pair { i.tokens_per_s_per_gpu_low, i.tokens_per_s_per_gpu_high };
    default:
        return std::nullopt;
    }
}

QString band_end(ServingMetricsPanel::Card c, double v)
{
    using C = ServingMetricsPanel::Card;
    return c == C::ttft || c == C::tpot ? ms(v) : format_count(v);
}

} // namespace

ServingMetricsPanel::ServingMetricsPanel(QWidget* parent)
    : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    m_banner = new QLabel(this);
    m_banner->setObjectName(QStringLiteral("serving_banner"));
    m_banner->setWordWrap(true);
    m_banner->setTextFormat(Qt::PlainText);
    layout->addWidget(m_banner);
    auto* grid = new QGridLayout;
    layout->addLayout(grid);
    int i = 0;
    for (const CardInfo& info : card_infos()) {
        auto* frame = new QFrame(this);
        frame->setFrameShape(QFrame::StyledPanel);
        frame->setObjectName(QStringLiteral("metric_card"));
        frame->setToolTip(QString::fromUtf8(info.tip));
        auto* v = new QVBoxLayout(frame);
        CardWidgets w { info.card, new QLabel(QString::fromUtf8(info.title), frame),
            new QLabel(QStringLiteral("–"), frame), new QLabel(frame) };
        w.band->setObjectName(QStringLiteral("metric_band"));
        w.band->hide();
        QFont big = w.value->font();
        big.setPointSizeF(big.pointSizeF() * 1.5);
        big.setBold(true);
        w.value->setFont(big);
        v->addWidget(w.title);
        v->addWidget(w.value);
        v->addWidget(w.band);
        grid->addWidget(frame, i / kCardsPerRow, i % kCardsPerRow);
        m_cards.push_back(w);
        ++i;
    }
    m_memory = new QLabel(this);
    m_memory->setObjectName(QStringLiteral("serving_memory"));
    m_warnings = new QLabel(this);
    m_warnings->setObjectName(QStringLiteral("serving_warnings"));
    m_warnings->setWordWrap(true);
    m_warnings->setTextFormat(Qt::PlainText);
    m_steps = new QLabel(this);
    m_steps->setObjectName(QStringLiteral("serving_steps"));
    m_steps->setToolTip(QStringLiteral("Where a step's time goes on one GPU: kernels bound by the tensor cores, "
                                       "kernels bound by HBM (weights and KV cache read), collectives, and the "
                                       "kernel gaps and host time (of which the GPU waits for the host)"));
    layout->addWidget(m_memory);
    layout->addWidget(m_steps);
    layout->addWidget(m_warnings);
    layout->addStretch(1);
}

void ServingMetricsPanel::set_evaluation(const ServingEvaluation& e)
{
    show_banner(e);
    if (!e.valid) {
        for (CardWidgets& w : m_cards) {
            w.value->setText(QStringLiteral("–"));
            w.band->hide();
        }
        m_memory->clear();
        m_steps->clear();
        m_warnings->clear();
        return;
    }
    show_values(e.prediction);
}

void ServingMetricsPanel::show_values(const ServingPrediction& p)
{
    QColor muted = palette().color(QPalette::Text);
    muted.setAlphaF(0.65f);
    const QString level = QString::number(std::lround(100 * p.interval.level)) + QStringLiteral("%");
    for (CardWidgets& w : m_cards) {
        w.value->setText(value_of(w.card, p));
        const auto band = band_of(w.card, p);
        w.band->setVisible(band.has_value());
        if (!band)
            continue;
        w.band->setText(
            QStringLiteral("%1: %2–%3").arg(level, band_end(w.card, band->first), band_end(w.card, band->second)));
        w.band->setStyleSheet(QStringLiteral("color: %1;").arg(muted.name(QColor::HexArgb)));
        w.band->setToolTip(QStringLiteral("The %1 error band: the measured value should fall inside it %1 of the time, "
                                          "judged by the serving model's errors on %2")
                               .arg(level, QString::fromStdString(p.interval.basis).toHtmlEscaped()));
    }
    const ServingMemory& m = p.memory;
    m_memory->setText(QStringLiteral("Memory per GPU: weights %1 · KV cache %2 · activations %3 · other %4")
                          .arg(format_gib(m.weights_B), format_gib(std::max(0.0, m.kv_pool_B)),
                              format_gib(m.activations_B), format_gib(m.other_B)));
    QStringList steps;
    if (p.decode_step.time_s > 0)
        steps << QStringLiteral("Decode step ") + step_parts(p.decode_step);
    if (p.prefill_step.time_s > 0)
        steps << QStringLiteral("Prefill step ") + step_parts(p.prefill_step);
    m_steps->setText(steps.join(QLatin1Char('\n')));
    QStringList lines;
    for (const std::string& warning : p.warnings)
        lines << QStringLiteral("• ") + QString::fromStdString(warning);
    m_warnings->setText(lines.join(QLatin1Char('\n')));
}

void ServingMetricsPanel::show_banner(const ServingEvaluation& e)
{
    const bool dark = is_dark(palette());
    QString text;
    if (!e.valid)
        text = QString::fromStdString(e.error_key + ": " + e.error);
    else if (!e.prediction.feasible)
        text = QStringLiteral("Not feasible: ")
            + QString::fromStdString(e.prediction.warnings.empty() ? std::string() : e.prediction.warnings.front());
    else if (!e.prediction.slo_met)
        text = QStringLiteral("Misses its SLO (the warnings below say which limit).");
    m_banner->setText(text);
    m_banner->setVisible(!text.isEmpty());
    m_banner->setStyleSheet(QStringLiteral("color: %1;").arg(bad_colour(dark).name()));
}

QString ServingMetricsPanel::value_text(Card c) const
{
    for (const CardWidgets& w : m_cards)
        if (w.card == c)
            return w.value->text();
    return {};
}

QString ServingMetricsPanel::band_text(Card c) const
{
    for (const CardWidgets& w : m_cards)
        if (w.card == c)
            return w.band->isHidden() ? QString() : w.band->text();
    return {};
}

QString ServingMetricsPanel::banner_text() const
{
    return m_banner->text();
}

QString ServingMetricsPanel::memory_text() const
{
    return m_memory->text();
}

QString ServingMetricsPanel::steps_text() const
{
    return m_steps->text();
}

QString ServingMetricsPanel::warnings_text() const
{
    return m_warnings->text();
}

} // namespace parallax::views

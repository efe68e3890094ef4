#include "style/view_style.hpp"

#include "spec/units.hpp"

#include <QLocale>

#include <array>
#include <cmath>

namespace parallax::views {

namespace {

// Tableau 10 (Maureen Stone, 2007): distinguishable hues in light and dark themes.
constexpr std::array<QRgb, 10> kTableau
    = { 0x4e79a7, 0xf28e2b, 0x59a14f, 0xe15759, 0x76b7b2, 0xedc948, 0xb07aa1, 0xff9da7, 0x9c755f, 0xbab0ac };

QColor tint(QRgb rgb, bool dark)
{
    QColor c = QColor::fromRgb(rgb);
    return dark ? c.lighter(115) : c;
}

} // namespace

bool is_dark(const QPalette& p)
{
    return p.color(QPalette::Window).lightness() < 128;
}

QColor group_colour(long long index, bool dark)
{
    const auto n = static_cast<long long>(kTableau.size());
    const long long i = ((index % n) + n) % n;
    QColor c = tint(kTableau[static_cast<std::size_t>(i)], dark);
    // Every second lap of the palette is a shade darker so neighbours 10 apart still differ.
    if ((index / n) % 2 == 1)
        c = dark ? c.darker(130) : c.lighter(130);
    return c;
}

QColor dimension_colour(ParallelDim d, bool dark)
{
    switch (d) {
    case ParallelDim::tp:
        return tint(kTableau[0], dark);
    case ParallelDim::pp:
        return tint(kTableau[1], dark);
    case ParallelDim::dp:
        return tint(kTableau[2], dark);
    case ParallelDim::cp:
        return tint(kTableau[6], dark);
    case ParallelDim::ep:
        return tint(kTableau[4], dark);
    }
    return tint(kTableau[9], dark);
}

QColor memory_colour(MemoryPart p, bool dark)
{
    static constexpr std::array<QRgb, kMemoryPartCount> c = { 0x4e79a7, 0xf28e2b, 0x59a14f, 0xe15759, 0xbab0ac };
    return tint(c[static_cast<int>(p)], dark);
}

QString memory_part_name(MemoryPart p)
{
    switch (p) {
    case MemoryPart::weights:
        return QStringLiteral("weights");
    case MemoryPart::gradients:
        return QStringLiteral("gradients");
    case MemoryPart::optimizer:
        return QStringLiteral("optimizer");
    case MemoryPart::activations:
        return QStringLiteral("activations");
    case MemoryPart::other:
        return QStringLiteral("other");
    }
    return {};
}

Metric memory_metric(MemoryPart p)
{
    switch (p) {
    case MemoryPart::weights:
        return Metric::memory_weights;
    case MemoryPart::gradients:
        return Metric::memory_gradients;
    case MemoryPart::optimizer:
        return Metric::memory_optimizer;
    case MemoryPart::activations:
        return Metric::memory_activations;
    case MemoryPart::other:
        return Metric::memory_other;
    }
    return Metric::peak_memory;
}

QColor time_colour(TimePart p, bool dark)
{
    static constexpr std::array<QRgb, kTimePartCount> c = { 0x4e79a7, 0xa0cbe8, 0xbab0ac, 0xf28e2b, 0xedc948, 0x59a14f,
        0xb07aa1, 0x76b7b2, 0x9c755f, 0xff9da7, 0x7f7f7f, 0xd37295 };
    return tint(c[static_cast<int>(p)], dark);
}

QString time_part_name(TimePart p)
{
    switch (p) {
    case TimePart::compute:
        return QStringLiteral("compute");
    case TimePart::recompute:
        return QStringLiteral("recompute");
    case TimePart::bubble:
        return QStringLiteral("bubble");
    case TimePart::tp:
        return QStringLiteral("TP comm");
    case TimePart::pp:
        return QStringLiteral("PP comm");
    case TimePart::dp:
        return QStringLiteral("DP comm");
    case TimePart::cp:
        return QStringLiteral("CP comm");
    case TimePart::ep:
        return QStringLiteral("EP comm");
    case TimePart::optimizer:
        return QStringLiteral("optimizer");
    case TimePart::offload:
        return QStringLiteral("offload");
    case TimePart::data_stall:
        return QStringLiteral("data stall");
    case TimePart::host_copy:
        return QStringLiteral("host copies");
    }
    return {};
}

Metric time_metric(TimePart p)
{
    switch (p) {
    case TimePart::compute:
        return Metric::time_compute;
    case TimePart::recompute:
        return Metric::time_recompute;
    case TimePart::bubble:
        return Metric::time_bubble;
    case TimePart::tp:
        return Metric::time_tp;
    case TimePart::pp:
        return Metric::time_pp;
    case TimePart::dp:
        return Metric::time_dp;
    case TimePart::cp:
        return Metric::time_cp;
    case TimePart::ep:
        return Metric::time_ep;
    case TimePart::optimizer:
        return Metric::time_optimizer;
    case TimePart::offload:
        return Metric::time_offload;
    case TimePart::data_stall:
        return Metric::time_data_stall;
    case TimePart::host_copy:
        return Metric::time_host_copy;
    }
    return Metric::step_time;
}

QColor good_colour(bool dark)
{
    return dark ? QColor(0x7f, 0xd1, 0x7f) : QColor(0x1b, 0x7f, 0x2a);
}
QColor bad_colour(bool dark)
{
    return dark ? QColor(0xff, 0x80, 0x80) : QColor(0xc0, 0x1c, 0x28);
}

QString format_seconds(double s)
{
    if (!std::isfinite(s))
        return QStringLiteral("–");
    if (std::abs(s) >= 100)
        return QString::number(s, 'f', 1) + QStringLiteral(" s");
    if (std::abs(s) >= 1)
        return QString::number(s, 'f', 3) + QStringLiteral(" s");
    if (std::abs(s) >= 1e-3)
        return QString::number(s * 1e3, 'f', 1) + QStringLiteral(" ms");
    return QString::number(s * 1e6, 'f', 0) + QStringLiteral(" µs");
}

QString format_gib(double bytes, int decimals)
{
    return QString::number(bytes / units::kGiB, 'f', decimals) + QStringLiteral(" GiB");
}

QString format_count(double v)
{
    QLocale c(QLocale::English);
    return c.toString(static_cast<qlonglong>(std::llround(v)));
}

QString format_percent_delta(double fraction)
{
    const QString sign = fraction >= 0 ? QStringLiteral("+") : QString();
    return sign + QString::number(fraction * 100, 'f', std::abs(fraction) < 0.1 ? 1 : 0) + QStringLiteral("%");
}

QString format_metric(Metric m, double v)
{
    switch (m) {
    case Metric::tokens_per_s:
        return format_count(v);
    case Metric::tflops_per_gpu:
        return QString::number(v, 'f', 1);
    case Metric::mfu:
    case Metric::bubble:
        return QString::number(v * 100, 'f', 1) + QStringLiteral("%");
    case Metric::power:
        return QString::number(v, 'f', 0) + QStringLiteral(" W");
    case Metric::energy_per_token:
        return QString::number(v, 'f', 3) + QStringLiteral(" J");
    case Metric::peak_memory:
    case Metric::memory_weights:
    case Metric::memory_gradients:
    case Metric::memory_optimizer:
    case Metric::memory_activations:
    case Metric::memory_other:
        return format_gib(v);
    default:
        return format_seconds(v);
    }
}

QString explanation_html(const Explanation& e, const QString& why)
{
    QString html = QStringLiteral("<p style='white-space:normal'><b>") + QString::fromStdString(e.title).toHtmlEscaped()
        + QStringLiteral("</b></p><p>") + QString::fromStdString(e.what).toHtmlEscaped()
        + QStringLiteral("</p><p><code>") + QString::fromStdString(e.formula).toHtmlEscaped()
        + QStringLiteral("</code></p><p><i>Source: ") + QString::fromStdString(e.source).toHtmlEscaped()
        + QStringLiteral("</i></p>");
    if (!why.isEmpty())
        html += QStringLiteral("<p><b>Why it moved:</b> ") + why.toHtmlEscaped() + QStringLiteral("</p>");
    return html;
}

} // namespace parallax::views

#include "timeline/timeline_palette.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace parallax::views {

namespace {

// Forward blue, backward green (B) and purple (W, the zero-bubble split), recompute amber: the
// colours of the schedule figures in the 1F1B, interleaved and zero-bubble papers, so the picture
// reads like them. Communication in reds/greys/cyans, the optimizer brown.
constexpr std::array<QRgb, kTimelineKindCount> kBase = {
    0xff3b7dd8, // forward
    0xff2e9e5b, // backward_input
    0xff8e5cc8, // backward_weight
    0xffe0a100, // recompute
    0xff7c8797, // pp_send
    0xff0e8fa8, // dp_reduce
    0xff1aa6a0, // param_gather
    0xff38b2d6, // zero3_gather
    0xff15637a, // zero3_reduce_scatter
    0xff8a5a2b, // optimizer
    0xffb07d1a, // offload
    0xffd9466f, // tp_comm
    0xffc2418f, // cp_comm
    0xffa53fc9, // ep_comm
    0xff5b6f8a, // measured_kernel
    0xffd0643a, // measured_comm
    0xff9aa3ad, // measured_other
};

QRgb lighten(QRgb c, int shade)
{
    if (shade <= 0)
        return c;
    // Each further virtual stage mixes 38% more white in, up to three levels.
    const double f = 1.0 - std::pow(0.62, std::min(shade, 3));
    auto mix = [&](int v) { return static_cast<int>(v + (255 - v) * f + 0.5); };
    return qRgb(mix(qRed(c)), mix(qGreen(c)), mix(qBlue(c)));
}

} // namespace

QRgb TimelinePalette::kind_rgb(TimelineKind k, int shade)
{
    // Looked up per pixel column when painting: computed once.
    static const auto table = [] {
        std::array<std::array<QRgb, 4>, kTimelineKindCount> t {};
        for (int i = 0; i < kTimelineKindCount; ++i)
            for (int s = 0; s < 4; ++s)
                t[static_cast<std::size_t>(i)][static_cast<std::size_t>(s)]
                    = lighten(kBase[static_cast<std::size_t>(i)], s);
        return t;
    }();
    const int i = static_cast<int>(k);
    if (i < 0 || i >= kTimelineKindCount)
        return lighten(0xff888888, shade);
    return table[static_cast<std::size_t>(i)][static_cast<std::size_t>(std::clamp(shade, 0, 3))];
}

QColor TimelinePalette::kind(TimelineKind k)
{
    return QColor::fromRgb(kind_rgb(k, 0));
}

QColor TimelinePalette::kind(TimelineKind k, int shade)
{
    return QColor::fromRgb(kind_rgb(k, shade));
}

QColor TimelinePalette::text_on(TimelineKind k, int shade)
{
    const QColor c = kind(k, shade);
    const double luminance = 0.2126 * c.redF() + 0.7152 * c.greenF() + 0.0722 * c.blueF();
    return luminance > 0.55 ? QColor(0x11, 0x18, 0x27) : QColor(Qt::white);
}

QString TimelinePalette::legend_name(TimelineKind k)
{
    return QString::fromUtf8(to_string(k));
}

} // namespace parallax::views

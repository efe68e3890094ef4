#pragma once
// Colours and number formats shared by the views, so a TP group, an optimizer-state bar and a
// bubble look the same everywhere, in light and dark palettes. Formatting only: no model maths.
#include "search/plan_explain.hpp"
#include "spec/strategy.hpp"

#include <QColor>
#include <QPalette>
#include <QString>

namespace parallax::views {

bool is_dark(const QPalette& p);

// A qualitative palette (Tableau 10) for groups; `index` cycles, dark palettes get lighter tints.
QColor group_colour(long long index, bool dark);
// The colour that stands for a parallel dimension in legends and headings.
QColor dimension_colour(ParallelDim d, bool dark);

enum class MemoryPart : unsigned char { weights, gradients, optimizer, activations, other };
inline constexpr int kMemoryPartCount = 5;
QColor memory_colour(MemoryPart p, bool dark);
QString memory_part_name(MemoryPart p);
Metric memory_metric(MemoryPart p);

enum class TimePart : unsigned char {
    compute,
    recompute,
    bubble,
    tp,
    pp,
    dp,
    cp,
    ep,
    optimizer,
    offload,
    data_stall,
    host_copy
};
inline constexpr int kTimePartCount = 12;
QColor time_colour(TimePart p, bool dark);
QString time_part_name(TimePart p);
Metric time_metric(TimePart p);

QColor good_colour(bool dark); // deltas that help
QColor bad_colour(bool dark); // deltas that hurt, rule violations, OOM

// "14.36 s", "820 ms"
QString format_seconds(double s);
// "66.5 GiB"
QString format_gib(double bytes, int decimals = 1);
// "73,042" with thousands separators
QString format_count(double v);
// "+12.3%" (fraction 0.123)
QString format_percent_delta(double fraction);
// A metric formatted in its unit ("55.5%", "14.36 s", "612 W", "0.482 J").
QString format_metric(Metric m, double value);
// Rich-text tooltip of an explanation (title, what, formula, source) plus an optional "why it moved".
QString explanation_html(const Explanation& e, const QString& why = QString());

} // namespace parallax::views

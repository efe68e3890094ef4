#pragma once
// Runs of bars too narrow for a label of their own that belong together: the pieces of one pass (the
// last micro-batch's backward split into gradient buckets so the DP reduction overlaps it). Labelled
// once as a group ("B7+W7 x12") so the picture still says what they are.
#include "viewdata/timeline_data.hpp"

#include <QFontMetrics>
#include <QString>

#include <functional>

namespace parallax::views {

struct LabelRun {
    std::size_t first = 0, last = 0; // item indices, inclusive
    QString text;
    std::size_t pieces = 0;
};

// The run's label for `width_px` of room: with the piece count when it fits, empty when nothing fits.
inline QString fitted_text(const LabelRun& run, const QFontMetrics& fm, double width_px)
{
    const QString full = run.text + QStringLiteral(" ×") + QString::number(run.pieces);
    if (fm.horizontalAdvance(full) + 6 <= width_px)
        return full;
    if (fm.horizontalAdvance(run.text) + 6 <= width_px)
        return run.text;
    return {};
}

// Calls `callback` for each run of at least two consecutive narrow compute bars of one micro-batch and
// chunk in items [begin, end) whose total width (px_per_s) reaches min_px.
inline void for_each_label_run(const TimelineData& d, const TimelineRow& row, std::size_t begin, std::size_t end,
    double px_per_s, double narrow_px, double min_px, const std::function<void(const LabelRun&)>& callback)
{
    const ExecutionGraph& g = d.graph();
    const double gap_s = 1.0 / px_per_s; // bars closer than a pixel are one run
    std::size_t i = begin;
    while (i < end) {
        const TimelineItem& a = row.items[i];
        if (a.duration_s() * px_per_s >= narrow_px || (a.flags & TimelineItem::kCompanion)) {
            ++i;
            continue;
        }
        const int mb = g.microbatch(a.op);
        const int chunk = g.chunk(a.op);
        std::size_t j = i;
        bool kinds[kTimelineKindCount] = {};
        kinds[static_cast<int>(a.kind)] = true;
        while (j + 1 < end) {
            const TimelineItem& b = row.items[j + 1];
            if (b.duration_s() * px_per_s >= narrow_px || g.microbatch(b.op) != mb || g.chunk(b.op) != chunk
                || b.start_s - row.items[j].end_s > gap_s)
                break;
            kinds[static_cast<int>(b.kind)] = true;
            ++j;
        }
        const double width = (row.items[j].end_s - a.start_s) * px_per_s;
        if (j > i && mb >= 0 && width >= min_px) {
            LabelRun run;
            run.first = i;
            run.last = j;
            // "R/B/W7": the passes in the group (recompute first, as it runs) and the micro-batch.
            for (TimelineKind k : { TimelineKind::recompute, TimelineKind::forward, TimelineKind::backward_input,
                     TimelineKind::backward_weight })
                if (kinds[static_cast<int>(k)])
                    run.text
                        += (run.text.isEmpty() ? QString() : QStringLiteral("/")) + QString::fromLatin1(short_name(k));
            run.text += QString::number(mb);
            run.pieces = j - i + 1;
            callback(run);
        }
        i = j + 1;
    }
}

} // namespace parallax::views

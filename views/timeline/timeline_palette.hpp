#pragma once
// Colours of the timeline and DAG views: one per op kind (the legend), a lighter shade per virtual
// stage on a device, and the marks (bubbles, exposed communication, critical path, selection).
#include "viewdata/timeline_data.hpp"

#include <QColor>
#include <QString>

namespace parallax::views {

struct TimelinePalette {
    QColor background { 0xff, 0xff, 0xff };
    QColor header_background { 0xf3, 0xf4, 0xf6 };
    QColor grid { 0xe5, 0xe7, 0xeb };
    QColor text { 0x11, 0x18, 0x27 };
    QColor muted_text { 0x6b, 0x72, 0x80 };
    QColor row_background { 0xfa, 0xfa, 0xfb };
    QColor bubble { 0xf1, 0xe4, 0xe4 }; // idle inside the pipeline
    QColor bubble_hatch { 0xd9, 0xb8, 0xb8 };
    QColor exposed { 0xdc, 0x26, 0x26 }; // communication nothing hides
    QColor critical { 0x11, 0x11, 0x11 };
    QColor selection { 0xf5, 0x9e, 0x0b };
    QColor predecessor { 0x25, 0x63, 0xeb };
    QColor successor { 0x16, 0xa3, 0x4a };

    static QColor kind(TimelineKind k);
    // Lighter for the second and later virtual stages (chunks) of a device.
    static QColor kind(TimelineKind k, int shade);
    static QRgb kind_rgb(TimelineKind k, int shade);
    // Text colour readable on the kind's fill.
    static QColor text_on(TimelineKind k, int shade);
    static QString legend_name(TimelineKind k);
};

} // namespace parallax::views

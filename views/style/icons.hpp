#pragma once
// Small icons drawn in code (crisp at any device pixel ratio, no image plugins needed).
#include <QColor>
#include <QIcon>

namespace parallax::views {

QIcon lock_icon(const QColor& colour); // closed lock (checked) and open lock (unchecked) states
QIcon absorb_icon(const QColor& colour); // two arrows: "this degree takes up the change"
QIcon pin_icon(const QColor& colour);

} // namespace parallax::views

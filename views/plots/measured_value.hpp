#pragma once
// A measured value to draw over a prediction: the marker (median of a run's steady-state steps, or a peak),
// its error bar (min..max) and the relative error against the prediction it is compared with. Plain data,
// in the unit of the view that draws it.
#include <QString>

#include <optional>

namespace parallax::views {

struct MeasuredValue {
    double value = 0;
    std::optional<double> low;
    std::optional<double> high;
    std::optional<double> error; // (measured - predicted) / predicted
    QString source; // "run 20250101-120000-abcdef"
};

} // namespace parallax::views

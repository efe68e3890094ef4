#pragma once
// The planner's look for QCustomPlot widgets: axes, ticks, labels and grid in the palette's text colour,
// the plot on the palette's base, the legend framed like the grid. Called again on a palette change.
class QCustomPlot;

namespace parallax::views {

void style_plot(QCustomPlot* plot);

} // namespace parallax::views

#pragma once
// The planner's look for QCustomPlot widgets: axes, ticks, labels and grid in the palette's text colour,
// the plot on the palette's base, the legend framed like the grid. Called again on a palette change.
class QCustomPlot;
class QFont;

namespace parallax::views {

void style_plot(QCustomPlot* plot);
// The legend visible, in a row of its own above the axes (so it never covers a point), filled column-wise.
void legend_above_axes(QCustomPlot* plot, const QFont& font);

} // namespace parallax::views

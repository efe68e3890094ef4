#pragma once
// Tooltips of a canvas's viewport: on a ToolTip event, show the text for the pointer's position or
// hide the tooltip when there is none. Shared by the timeline and DAG canvases.
#include <QString>

#include <functional>

class QEvent;
class QPoint;
class QWidget;

namespace parallax::views {

// True when `e` was a tooltip request (answered); false: the caller handles the event.
bool show_canvas_tooltip(QEvent* e, QWidget* viewport, const std::function<QString(QPoint)>& text_at);

} // namespace parallax::views

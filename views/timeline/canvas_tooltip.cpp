#include "timeline/canvas_tooltip.hpp"

#include <QHelpEvent>
#include <QToolTip>

namespace parallax::views {

bool show_canvas_tooltip(QEvent* e, QWidget* viewport, const std::function<QString(QPoint)>& text_at)
{
    if (e->type() != QEvent::ToolTip)
        return false;
    auto* he = static_cast<QHelpEvent*>(e);
    const QString text = text_at(he->pos());
    if (text.isEmpty())
        QToolTip::hideText();
    else
        QToolTip::showText(he->globalPos(), text, viewport);
    return true;
}

} // namespace parallax::views

#include "timeline/zoom_pan_controller.hpp"

#include <QAbstractScrollArea>
#include <QKeyEvent>
#include <QScrollBar>
#include <QWheelEvent>

#include <cmath>

namespace parallax::views {

ZoomPanController::ZoomPanController(QAbstractScrollArea& area, ZoomPanView& view)
    : m_area(area)
    , m_view(view)
{
}

void ZoomPanController::wheel(QWheelEvent* e)
{
    const QPoint d = e->angleDelta();
    if (e->modifiers() & Qt::ShiftModifier) {
        m_area.verticalScrollBar()->setValue(m_area.verticalScrollBar()->value() - d.y() / 2);
    } else {
        if (d.x() != 0)
            m_view.pan_by_px(d.x() / 2.0);
        if (d.y() != 0)
            m_view.zoom(std::pow(kWheelZoomBase, d.y()), e->position().x());
    }
    e->accept();
}

void ZoomPanController::press(QPoint pos)
{
    m_press_pos = m_last_pos = pos;
    m_dragging = false;
}

void ZoomPanController::move(QPoint pos, Qt::MouseButtons buttons)
{
    if (buttons & Qt::LeftButton) {
        if (!m_dragging && (pos - m_press_pos).manhattanLength() > kDragThresholdPx)
            m_dragging = true;
        if (m_dragging)
            m_view.drag_by_px(pos - m_last_pos);
    }
    m_last_pos = pos;
}

bool ZoomPanController::release()
{
    const bool click = !m_dragging;
    m_dragging = false;
    return click;
}

bool ZoomPanController::key(QKeyEvent* e)
{
    const double page_px = m_view.plot_width_px() * 0.2;
    switch (e->key()) {
    case Qt::Key_Home:
    case Qt::Key_F:
        m_view.fit();
        return true;
    case Qt::Key_Plus:
    case Qt::Key_Equal:
    case Qt::Key_W:
        m_view.zoom(1.25);
        return true;
    case Qt::Key_Minus:
    case Qt::Key_S:
        m_view.zoom(0.8);
        return true;
    case Qt::Key_Left:
    case Qt::Key_A:
        m_view.pan_by_px(page_px);
        return true;
    case Qt::Key_Right:
    case Qt::Key_D:
        m_view.pan_by_px(-page_px);
        return true;
    case Qt::Key_Escape:
        m_view.clear_selection();
        return true;
    default:
        return false;
    }
}

} // namespace parallax::views

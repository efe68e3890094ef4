#pragma once
// Zoom and pan on a time-axis canvas (the timeline, the DAG), shared so that both answer the wheel,
// a drag and the keys the same way. The canvas says what zooming, panning and fitting do to its time
// mapping (ZoomPanView); the controller turns events into those calls and keeps the drag's state.
#include <QPoint>
#include <QtCore/qnamespace.h>

#include <optional>

class QAbstractScrollArea;
class QKeyEvent;
class QWheelEvent;

namespace parallax::views {

// What a canvas does when it is navigated. Plain interface (not a QObject), mixed into the canvas.
class ZoomPanView {
public:
    virtual void fit() = 0;
    virtual void zoom(double factor, std::optional<double> at_x = std::nullopt) = 0;
    // Pans the time axis by dx_px pixels (positive: later times move right) from the wheel or a key.
    virtual void pan_by_px(double dx_px) = 0;
    // A drag moved by delta_px: pan the axis by its x, scroll the rows by its y.
    virtual void drag_by_px(QPoint delta_px) = 0;
    virtual int plot_width_px() const = 0;
    virtual void clear_selection() = 0;

protected:
    ~ZoomPanView() = default;
};

class ZoomPanController {
public:
    // `area` is the canvas's scroll area (Shift-wheel scrolls its rows); both outlive the controller.
    ZoomPanController(QAbstractScrollArea& area, ZoomPanView& view);

    // Shift scrolls the rows; otherwise a horizontal delta pans and a vertical one zooms at the pointer.
    void wheel(QWheelEvent* e);

    // A press starts a possible drag; moves with the left button held past a few pixels pan the view.
    void press(QPoint pos);
    void move(QPoint pos, Qt::MouseButtons buttons);
    // Ends the drag; true when the press was a click (no drag), for selection.
    bool release();
    bool dragging() const { return m_dragging; }
    QPoint press_pos() const { return m_press_pos; }

    // Home/F fit, +/=/W and -/S zoom, Left/A and Right/D pan a fifth of the plot, Escape clears the
    // selection. False when the key is none of these (the caller passes it on).
    bool key(QKeyEvent* e);

    static constexpr double kWheelZoomBase = 1.0015; // zoom factor per unit of wheel angle delta
    static constexpr int kDragThresholdPx = 3; // movement that turns a press into a drag

private:
    QAbstractScrollArea& m_area;
    ZoomPanView& m_view;
    QPoint m_press_pos;
    QPoint m_last_pos;
    bool m_dragging = false;
};

} // namespace parallax::views

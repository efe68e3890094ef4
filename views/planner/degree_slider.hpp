#pragma once
// A handle that only rests on valid values: the stops of one degree (ascending), each valid or
// blocked by a rule. Dragging snaps to the nearest valid stop and reports every change while the
// drag goes on; blocked stops are drawn hollow and say why on hover. Keyboard: Left/Right move to
// the previous/next valid stop, Home/End to the first/last.
#include <QString>
#include <QWidget>

#include <vector>

namespace parallax::views {

struct SliderStop {
    int value = 1;
    bool valid = true;
    QString tip; // why it is blocked, or what else moves with it
};

class DegreeSlider : public QWidget {
    Q_OBJECT
public:
    explicit DegreeSlider(QWidget* parent = nullptr);

    void set_stops(std::vector<SliderStop> stops, int current);
    int value() const { return m_current; }
    const std::vector<SliderStop>& stops() const { return m_stops; }
    bool dragging() const { return m_dragging; }
    // Centre of the stop with this value, in widget coordinates (tests drive drags with it).
    QPoint stop_position(int value) const;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

signals:
    // A new valid value, chosen by the user. `drag` is the serial of the gesture (one undo step),
    // 0 for a single keyboard step.
    void value_chosen(int value, int drag);
    void drag_finished(int drag);

protected:
    void paintEvent(QPaintEvent*) override;
    void mousePressEvent(QMouseEvent*) override;
    void mouseMoveEvent(QMouseEvent*) override;
    void mouseReleaseEvent(QMouseEvent*) override;
    void keyPressEvent(QKeyEvent*) override;
    bool event(QEvent*) override;

private:
    double x_of_index(int i) const;
    int nearest_valid_index(double x) const;
    int index_of(int value) const;
    void choose_index(int i, int drag);

    std::vector<SliderStop> m_stops;
    int m_current = 1;
    bool m_dragging = false;
    int m_drag = 0;
};

// A fresh serial for one drag gesture (shared by all views so undo merging never mixes gestures).
int next_drag_serial();

} // namespace parallax::views

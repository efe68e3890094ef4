#pragma once
// The Stages panel's pipeline bar: one segment per stage, as wide as its share of the model's layers,
// labelled with its layers; the pacing stage outlined. The boundaries between stages are handles: a drag
// moves the boundary to the nearest whole layer and asks for that split at every step (one drag serial
// for the gesture, so the window's undo merges it into one step and re-predicts as it goes).
#include <QStringList>
#include <QWidget>

#include <vector>

namespace parallax::views {

class StageBar : public QWidget {
    Q_OBJECT
public:
    explicit StageBar(QWidget* parent = nullptr);

    // The stages' layer counts, a short label each ("h100 TP8") and the pacing stage (-1: none).
    void set_stages(const std::vector<int>& layers, const QStringList& labels, int critical);
    const std::vector<int>& layers() const { return m_layers; }
    // Where layer `layer`'s left edge is drawn, in widget pixels: tests and the handles share it.
    double x_of_layer(int layer) const;
    bool dragging() const { return m_drag_boundary >= 0; }

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

signals:
    // Boundary `boundary` (between stages boundary and boundary + 1) dragged so that stage boundary + 1
    // starts at layer `first_layer`; `drag` names the gesture.
    void boundary_moved(int boundary, int first_layer, int drag);

protected:
    void paintEvent(QPaintEvent* e) override;
    void mousePressEvent(QMouseEvent* e) override;
    void mouseMoveEvent(QMouseEvent* e) override;
    void mouseReleaseEvent(QMouseEvent* e) override;

private:
    int total_layers() const;
    int boundary_layer(int boundary) const; // first layer of stage boundary + 1
    int boundary_at(double x) const; // -1 when no handle is within reach
    int layer_at(double x) const;

    std::vector<int> m_layers;
    QStringList m_labels;
    int m_critical = -1;
    int m_drag_boundary = -1;
    int m_drag = 0;
};

} // namespace parallax::views

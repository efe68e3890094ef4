#pragma once
// The cluster grid of a mixed cluster (core/viewdata/group_grid.hpp): every group's nodes as rows of
// GPU cells, each coloured by its GPU type and labelled with the stage and replica that hold it (idle
// GPUs faded), under a legend of the GPU types with how many of their GPUs the plan uses.
#include "viewdata/group_grid.hpp"

#include <QWidget>

namespace parallax::views {

class GroupGridView : public QWidget {
    Q_OBJECT
public:
    explicit GroupGridView(QWidget* parent = nullptr);

    void set_scenario(const Scenario& s);
    const GroupGrid& grid() const { return m_grid; }
    // The fill of one GPU's cell: its type's colour, faded when no replica holds it.
    QColor cell_colour(int group, int node, int gpu) const;
    QColor type_colour(int type) const;
    // The legend's lines, "H100-SXM5-80GB: 8 of 8 GPUs hold a replica".
    QStringList legend() const;
    QSize sizeHint() const override;

protected:
    void paintEvent(QPaintEvent* e) override;

private:
    int paint_legend(QPainter& p, int y);

    GroupGrid m_grid;
};

} // namespace parallax::views

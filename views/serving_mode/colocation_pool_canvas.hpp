#pragma once
// The pool of a co-location plan, drawn GPU by GPU: one block per node group (its name, GPU type and
// shape), a square per GPU filled in the colour of the model placed on it, idle GPUs hatched. An
// offloaded model's squares are filled only up to its residency (the share of its layers on the GPU),
// with the percentage written in. The legend under the blocks names the models.
#include "viewdata/colocation_grid.hpp"

#include <QString>
#include <QWidget>

namespace parallax::views {

class ColocationPoolCanvas : public QWidget {
    Q_OBJECT
public:
    explicit ColocationPoolCanvas(QWidget* parent = nullptr);
    void set_evaluation(const ColocationEvaluation& e);
    QSize sizeHint() const override;
    // The model drawn on GPU `gpu` of group `group` ("" when idle), for tests.
    QString model_at(int group, int gpu) const;

protected:
    void paintEvent(QPaintEvent*) override;

private:
    int paint_group(QPainter& p, const ColocationGridGroup& g, int top) const;
    void paint_legend(QPainter& p, int top) const;
    ColocationEvaluation m_eval;
};

} // namespace parallax::views

#pragma once
// The cluster as a grid (a row per node, a column per GPU) coloured by the parallel groups of one
// dimension: TP, CP, DP and EP groups as tiles, PP stages as bands (rank_grid.hpp). Thick lines
// mark group boundaries; dragging one changes that degree, snapped to a valid value with the
// absorbing degree taking up the GPU count, exactly as the strategy handles do.
#include "spec/scenario.hpp"
#include "viewdata/plan_evaluation.hpp"
#include "viewdata/rank_grid.hpp"

#include <QWidget>

#include <optional>

class QButtonGroup;
class QLabel;

namespace parallax::views {

class ClusterGridCanvas : public QWidget {
    Q_OBJECT
public:
    explicit ClusterGridCanvas(QWidget* parent = nullptr);
    void set_scenario(const Scenario& s, const PlanEvaluationOptions& options);
    void set_dimension(ParallelDim d);
    ParallelDim dimension() const { return m_dim; }
    // Where the boundary at rank position p (0 < p < ranks) is drawn, in widget coordinates (the
    // middle of its line); tests and the benchmark drive drags with it.
    QPointF boundary_point(long long p) const;
    // The rank position a drag at this point asks for (the nearest cell edge).
    double rank_position_at(QPointF pos, bool horizontal) const;
    // Where the right edge of GPU `gpu` of node `node` is (tests and the benchmark drag to it).
    QPointF cell_right_edge(long long node, long long gpu) const;
    long long segment() const;
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

signals:
    void edit_requested(const parallax::Scenario& s, const QString& what, int drag);

protected:
    void paintEvent(QPaintEvent*) override;
    void mousePressEvent(QMouseEvent*) override;
    void mouseMoveEvent(QMouseEvent*) override;
    void mouseReleaseEvent(QMouseEvent*) override;
    bool event(QEvent*) override;

private:
    // Nodes are rows; when there are more nodes than fit at a readable height they fold into
    // several blocks of `rows` nodes side by side (node n: block n / rows, row n % rows).
    struct Geometry {
        double x0 = 0, y0 = 0, cell_w = 1, cell_h = 1;
        long long rows = 1; // nodes per block
        long long blocks = 1;
        double block_w = 1; // gpus_per_node * cell_w + the gap between blocks
    };
    Geometry geometry() const;
    QRectF cell_rect(const Geometry& g, long long node, long long gpu) const;
    RankGrid grid() const;
    std::optional<long long> boundary_near(QPointF pos) const; // the k of the nearest boundary
    long long rank_at(QPointF pos) const; // -1 outside

    std::optional<Scenario> m_scenario;
    PlanEvaluationOptions m_options;
    ParallelDim m_dim = ParallelDim::tp;
    long long m_drag_k = 0; // the boundary being dragged (k-th), 0 = none
    bool m_drag_horizontal = false;
    int m_drag = 0;
    int m_hover_k = 0;
};

class ClusterGridView : public QWidget {
    Q_OBJECT
public:
    explicit ClusterGridView(QWidget* parent = nullptr);
    void set_scenario(const Scenario& s, const PlanEvaluationOptions& options);
    void set_dimension(ParallelDim d);
    ClusterGridCanvas* canvas() const { return m_canvas; }

signals:
    void edit_requested(const parallax::Scenario& s, const QString& what, int drag);

private:
    void refresh_legend();
    ClusterGridCanvas* m_canvas = nullptr;
    QButtonGroup* m_dims = nullptr;
    QLabel* m_legend = nullptr;
    std::optional<Scenario> m_scenario;
};

} // namespace parallax::views

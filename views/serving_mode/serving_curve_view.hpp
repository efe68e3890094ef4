#pragma once
// The latency-throughput curve of a serving deployment: output tokens/s per GPU (the cost) against
// tokens/s per user (the speed each request streams at), one point per closed-loop concurrency, as
// serving benchmarks publish it. Points that meet the SLO are filled, the others hollow; the scenario's
// own point is ringed; a deployment search's Pareto front can be drawn over it for comparison.
#include "viewdata/serving_evaluation.hpp"

#include <QString>
#include <QWidget>

#include <vector>

class QCustomPlot;
class QCPGraph;
class QLabel;

namespace parallax::views {

struct ServingFrontPoint {
    double tokens_per_s_per_user = 0;
    double tokens_per_s_per_gpu = 0;
};

class ServingCurveView : public QWidget {
    Q_OBJECT
public:
    explicit ServingCurveView(QWidget* parent = nullptr);
    void set_evaluation(const ServingEvaluation& e);
    // The Pareto front of a deployment search (other deployments), drawn dashed; empty hides it.
    void set_front(const std::vector<ServingFrontPoint>& front);
    QString summary() const; // the line above the plot
    QString csv() const;
    QCustomPlot* plot() const { return m_plot; }
    const std::vector<ServingCurvePoint>& points() const { return m_points; }
    void refresh_colours();

protected:
    void changeEvent(QEvent* e) override;

private:
    QString summary_of(const ServingEvaluation& e) const;
    void fit_axes();
    QCustomPlot* m_plot = nullptr;
    QCPGraph* m_band_low = nullptr; // the error band of tokens/s per GPU, shaded between these two
    QCPGraph* m_band_high = nullptr;
    QCPGraph* m_curve = nullptr; // the line through every feasible point
    QCPGraph* m_met = nullptr; // points meeting the SLO
    QCPGraph* m_missed = nullptr;
    QCPGraph* m_here = nullptr; // the scenario's own concurrency
    QCPGraph* m_front = nullptr;
    QLabel* m_summary = nullptr;
    std::vector<ServingCurvePoint> m_points;
    long long m_here_concurrency = 0;
};

} // namespace parallax::views

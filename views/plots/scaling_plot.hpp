#pragma once
// The scaling curve: the best plan's throughput at each GPU count (a sweep, each point a full
// search), per-GPU efficiency on the right axis, the current GPU count marked, and the points where
// adding GPUs stops paying or the winning strategy family changes labelled. The sweep itself runs
// elsewhere (run_requested); this view only shows its points and exports them.
#include "spec/strategy.hpp"

#include <QString>
#include <QWidget>

#include <vector>

class QCustomPlot;
class QCPGraph;
class QCPItemStraightLine;
class QLabel;
class QProgressBar;
class QPushButton;

namespace parallax::views {

struct ScalingPoint {
    long long gpus = 0;
    bool has_plan = false;
    double tokens_per_s = 0;
    // The best plan's error band (band_level 0: none).
    double band_level = 0;
    double tokens_per_s_low = 0;
    double tokens_per_s_high = 0;
    double scaling_efficiency = 1; // per-GPU throughput vs the first point
    double marginal_efficiency = 1;
    QString family; // "TP 8 × PP 4 × DP"
    QString notes; // inflection points, family changes
    Strategy strategy;
};

class ScalingPlot : public QWidget {
    Q_OBJECT
public:
    explicit ScalingPlot(QWidget* parent = nullptr);
    void set_points(std::vector<ScalingPoint> points, long long current_gpus);
    void set_running(bool running, const QString& status);
    void set_progress(double fraction);
    const std::vector<ScalingPoint>& points() const { return m_points; }
    QCustomPlot* plot() const { return m_plot; }
    QString csv() const;
    void refresh_colours();

signals:
    void run_requested();
    void cancel_requested();

protected:
    void changeEvent(QEvent* e) override;
    bool eventFilter(QObject* o, QEvent* e) override;

private:
    void rebuild();
    QCustomPlot* m_plot = nullptr;
    QCPGraph* m_total = nullptr;
    QCPGraph* m_band_low = nullptr; // the band: the upper edge fills down to the lower
    QCPGraph* m_band_high = nullptr;
    QCPGraph* m_efficiency = nullptr;
    QCPGraph* m_notes = nullptr;
    QCPItemStraightLine* m_current = nullptr;
    QPushButton* m_run = nullptr;
    QPushButton* m_cancel = nullptr;
    QProgressBar* m_progress = nullptr;
    QLabel* m_status = nullptr;
    std::vector<ScalingPoint> m_points;
    long long m_current_gpus = 0;
};

} // namespace parallax::views

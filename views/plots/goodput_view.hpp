#pragma once
// The goodput panel: expected goodput (share of the uninterrupted throughput) against the checkpoint
// interval, at the scenario's interruption rate and at half and twice it, with the interval in use and
// the best one marked (viewdata/goodput_curves.hpp). Without a reliability section it says how to get one.
#include "viewdata/goodput_curves.hpp"

#include <QString>
#include <QWidget>

#include <vector>

class QCustomPlot;
class QCPGraph;
class QCPItemStraightLine;
class QLabel;

namespace parallax::views {

class GoodputView : public QWidget {
    Q_OBJECT
public:
    explicit GoodputView(QWidget* parent = nullptr);
    void set_curves(const GoodputCurves& curves);
    void clear();
    const GoodputCurves& curves() const { return m_curves; }
    QString summary() const; // the line above the plot (tests)
    QString csv() const;
    QCustomPlot* plot() const { return m_plot; }
    void refresh_colours();

protected:
    void changeEvent(QEvent* e) override;

private:
    QCustomPlot* m_plot = nullptr;
    std::vector<QCPGraph*> m_graphs; // one per rate factor
    QCPItemStraightLine* m_used = nullptr;
    QCPItemStraightLine* m_best = nullptr;
    QLabel* m_summary = nullptr;
    GoodputCurves m_curves;
};

} // namespace parallax::views

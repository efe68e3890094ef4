#pragma once
// The timeline and DAG views of a simulated plan, with the summary strip, a toolbar (fit, zoom,
// streams, critical path, compare, measured overlay, export) and the API the main window uses:
//
//   view->set_simulation(sim, prediction, timeline_plan_info(scenario)); // the plan to show
//   view->pin_current_as_baseline();         // plan A; the next set_simulation() is plan B
//   view->set_comparison(sim_a, pred_a);     // or give plan A directly
//   view->load_measured_trace(path);         // a PyTorch/Perfetto trace on the same axis
//   view->export_png(path); export_svg(path); export_chrome_trace(path);
//
// Building the view data of a 10^6-op plan takes ~0.1 s; callers that want it off the GUI thread
// call build_timeline_data() there and hand the result to set_timeline_data().
#include "timeline/dag_canvas.hpp"
#include "timeline/power_strip.hpp"
#include "timeline/summary_strip.hpp"
#include "timeline/timeline_canvas.hpp"

#include <QWidget>

#include <memory>

class QStackedWidget;
class QToolBar;
class QAction;

namespace parallax::views {

class TimelineView : public QWidget {
    Q_OBJECT
public:
    enum class Mode { timeline, dag };
    explicit TimelineView(QWidget* parent = nullptr);

    void set_simulation(const SimulatedPlan& sim, const Prediction& prediction, const TimelinePlanInfo& info = {});
    void set_simulation(
        std::shared_ptr<const SimulatedPlan> sim, const Prediction& prediction, const TimelinePlanInfo& info = {});
    void set_timeline_data(std::shared_ptr<const TimelineData> data);
    std::shared_ptr<const TimelineData> timeline_data() const { return m_timeline->data(); }
    void clear();

    // Comparison: plan A on the same time axis as the current plan (B).
    void set_comparison(const SimulatedPlan& a, const Prediction& prediction_a, const TimelinePlanInfo& info = {});
    void set_comparison(std::shared_ptr<const TimelineData> a);
    void pin_current_as_baseline();
    void clear_comparison();
    bool comparing() const { return m_timeline->baseline() != nullptr; }
    std::optional<PlanDifference> difference() const { return m_summary->difference(); }

    // Measured overlay (Chrome trace / Perfetto JSON). On failure returns false and says why.
    bool load_measured_trace(const QString& path, QString* error = nullptr);
    // A trace already read (off the GUI thread: load_measured_trace() of core); nullptr removes it.
    void set_measured_trace(std::shared_ptr<const MeasuredTrace> trace);
    void clear_measured_trace();
    void set_measured_offset(double seconds);

    void set_mode(Mode mode);
    Mode mode() const { return m_mode; }
    void fit();

    // Export: the view as shown (PNG, SVG as vectors), and the plan's Chrome trace.
    bool export_png(const QString& path, QString* error = nullptr);
    bool export_svg(const QString& path, QString* error = nullptr);
    bool export_chrome_trace(const QString& path, QString* error = nullptr);
    QImage render_image(); // the whole view at its current size

    TimelineCanvas* timeline() const { return m_timeline; }
    DagCanvas* dag() const { return m_dag; }
    SummaryStrip* summary() const { return m_summary; }
    PowerStrip* power() const { return m_power; } // power over the step, on the timeline's axis
    void set_show_power(bool on);
    QToolBar* toolbar() const { return m_toolbar; }

signals:
    void plan_changed();
    void error(const QString& message);

private:
    void refresh_summary();
    void export_dialog(const QString& kind);

    QToolBar* m_toolbar = nullptr;
    SummaryStrip* m_summary = nullptr;
    QStackedWidget* m_stack = nullptr;
    TimelineCanvas* m_timeline = nullptr;
    DagCanvas* m_dag = nullptr;
    PowerStrip* m_power = nullptr;
    QAction* m_power_action = nullptr;
    QAction* m_mode_timeline = nullptr;
    QAction* m_mode_dag = nullptr;
    QAction* m_compare = nullptr;
    Mode m_mode = Mode::timeline;
};

} // namespace parallax::views

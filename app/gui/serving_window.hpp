#pragma once
// The planner's serving mode: one serving scenario (docs/serving.md) with its controls (deployment
// sliders, workload, engine, precision, SLO), its live numbers, the latency-throughput curve over
// concurrency and the deployment search. Every edit is one undo step; evaluations and searches run off
// the GUI thread ("latest request wins"); Save writes the scenario back as a file; closing with unsaved
// edits asks first.
#include "jobs/latest_request.hpp"
#include "serving/serving_search.hpp"
#include "viewdata/serving_evaluation.hpp"

#include <QMainWindow>
#include <QThreadPool>

#include <memory>

class QLabel;
class QTabWidget;
class QUndoStack;

namespace parallax::views {
class ServingControls;
class ServingCurveView;
class ServingMetricsPanel;
class ServingSearchTable;
} // namespace parallax::views

namespace parallax::app {

class ServingWindow : public QMainWindow {
    Q_OBJECT
public:
    // `interactive` false: no dialogs (tests, screenshots); a save without a path fails instead of asking.
    explicit ServingWindow(bool interactive = true, QWidget* parent = nullptr);
    ~ServingWindow() override;

    // Loads a serving scenario file; on bad input shows the error (naming file, key and rule) and
    // returns false, keeping what was open.
    bool open_file(const QString& path);
    void set_scenario(const ServingScenario& s, const QString& path);
    const ServingScenario& scenario() const { return m_scenario; }
    QString path() const { return m_path; }
    bool is_modified() const;
    bool save();
    bool save_as(const QString& path);
    // An edit as one undo step (what the controls and the search's Apply do).
    void apply_edit(const ServingScenario& s, const QString& what);
    void start_search();
    // Writes the engine's launch script (and its companions) into `folder`, as `parallax-cli export` does.
    bool export_launch(ServingEngine engine, const QString& folder);

    // The latest evaluation shown (null before the first arrives); idle() when none is pending.
    const ServingEvaluation* evaluation() const { return m_evaluation.get(); }
    bool idle() const { return m_delivered == m_latest.latest(); }
    bool search_running() const { return m_search_running; }
    QUndoStack* undo_stack() const { return m_undo; }
    views::ServingControls* controls() const { return m_controls; }
    views::ServingMetricsPanel* metrics() const { return m_metrics; }
    views::ServingCurveView* curve() const { return m_curve; }
    views::ServingSearchTable* search_table() const { return m_search; }
    QString last_error() const { return m_error; }

    // For --screenshot and tests: the parts a screenshot can show, and waits that keep the GUI alive.
    static QStringList panel_names();
    QWidget* panel(const QString& name);
    bool wait_for_evaluation(int timeout_ms);
    bool wait_for_search(int timeout_ms);

signals:
    void evaluated();
    void searched();

protected:
    void closeEvent(QCloseEvent* e) override;

private:
    friend class ServingEditCommand;
    void build_menus();
    void show_scenario(const ServingScenario& s);
    void request_evaluation();
    void show_evaluation(std::shared_ptr<const ServingEvaluation> e);
    void show_search(const ServingSearchResult& r);
    void report_error(const QString& message);
    void update_title();
    bool confirm_discard();

    bool m_interactive = true;
    ServingScenario m_scenario;
    QString m_path;
    QUndoStack* m_undo = nullptr;
    views::ServingControls* m_controls = nullptr;
    views::ServingMetricsPanel* m_metrics = nullptr;
    views::ServingCurveView* m_curve = nullptr;
    views::ServingSearchTable* m_search = nullptr;
    QLabel* m_status = nullptr;
    QTabWidget* m_tabs = nullptr;
    QThreadPool m_pool;
    LatestRequest m_latest;
    quint64 m_delivered = 0;
    std::shared_ptr<const ServingEvaluation> m_evaluation;
    bool m_search_running = false;
    CancelToken m_search_cancel;
    QString m_error;
};

} // namespace parallax::app

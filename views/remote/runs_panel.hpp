#pragma once
// The Runs dock: the runs of the run store in a sortable, filterable table (text and state filters), the
// measured-vs-predicted overlay of the selected runs (several selected: compared in one picture) and the log
// of the selected run as it streams in. Buttons are actions a controller (RemoteRunsController) connects;
// the panel itself reads nothing and sends nothing.
#include "remote/overlay_view.hpp"
#include "remote/runs_model.hpp"

#include <QWidget>

class QAction;
class QComboBox;
class QHBoxLayout;
class QLabel;
class QToolBar;
class QLineEdit;
class QPlainTextEdit;
class QTableView;

namespace parallax::views {

class RunsPanel : public QWidget {
    Q_OBJECT
public:
    explicit RunsPanel(QWidget* parent = nullptr);

    RunsModel* model() const { return m_model; }
    RunsFilterModel* proxy() const { return m_proxy; }
    QTableView* table() const { return m_table; }
    MeasuredOverlayView* overlay_view() const { return m_overlay; }
    QPlainTextEdit* log_view() const { return m_log; }
    QLineEdit* filter_edit() const { return m_filter; }
    QComboBox* state_filter() const { return m_state; }

    QAction* send_action() const { return m_send; }
    QAction* cancel_action() const { return m_cancel; }
    QAction* attach_action() const { return m_attach; }
    QAction* trace_action() const { return m_trace; }
    // Fits a calibration to the selected runs (one run: every run of its cluster); the planner connects it.
    QAction* calibrate_action() const { return m_calibrate; }
    QAction* profiles_action() const { return m_profiles; }
    QAction* refresh_action() const { return m_refresh; }

    // Selected runs in table order (the first is the primary one).
    QStringList selected_run_ids() const;
    bool select_run(const QString& run_id); // false when it is not in the (filtered) table
    bool select_runs(const QStringList& run_ids); // several, to compare them; false when one is missing
    void set_status(const QString& text, bool error = false);
    QString status_text() const;
    // The log pane: a run's log from its start (replaces), or more of it (appends).
    void set_log(const QString& run_id, const QString& text, bool truncated);
    void append_log(const QString& run_id, const QString& text);
    QString log_run() const { return m_log_run; }

Q_SIGNALS:
    void selection_changed(QStringList run_ids);

private:
    QToolBar* build_toolbar();
    QHBoxLayout* build_filters();
    void build_table();
    QWidget* build_views(); // the table over the overlay and the log
    void update_actions();

    RunsModel* m_model = nullptr;
    RunsFilterModel* m_proxy = nullptr;
    QTableView* m_table = nullptr;
    MeasuredOverlayView* m_overlay = nullptr;
    QPlainTextEdit* m_log = nullptr;
    QLabel* m_log_title = nullptr;
    QLineEdit* m_filter = nullptr;
    QComboBox* m_state = nullptr;
    QLabel* m_status = nullptr;
    QAction* m_send = nullptr;
    QAction* m_cancel = nullptr;
    QAction* m_attach = nullptr;
    QAction* m_trace = nullptr;
    QAction* m_calibrate = nullptr;
    QAction* m_profiles = nullptr;
    QAction* m_refresh = nullptr;
    QString m_log_run;
};

} // namespace parallax::views

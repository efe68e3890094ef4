#pragma once
// The GUI half of remote validation, wired: the Runs panel, the dialogs (send, profiles, SSH questions,
// cancel confirmation) and the remote layer's front door (RemoteRunner, whose workers do every network step
// on their own threads). Nothing here waits for the network or reads the store on the GUI thread: the run
// table, the overlay and the log are read on the thread pool (each its own RunCatalog connection; latest
// request wins) and handed over as values; runner signals arrive queued and only schedule such reads.
//
//   RemoteRunsController remote({store, profiles}, window);
//   dock->setWidget(remote.panel());
//   remote.set_plan(scenario, label);          // what "Send as validation run" sends
//   remote.start(true);                        // list the runs, re-attach to every unfinished one
//   connect(&remote, &RemoteRunsController::overlay_changed, ...);  // plan_overlay(): markers for the planner
#include "jobs/latest_request.hpp"
#include "remote/dispatch_dialog.hpp"
#include "remote/profile_editor.hpp"
#include "remote/runs_panel.hpp"
#include "runs/run_overlay.hpp"
#include "spec/scenario.hpp"
#include "store/run_record.hpp"
#include "viewdata/measured_trace.hpp"

#include <QElapsedTimer>
#include <QMap>
#include <QObject>
#include <QPointer>

#include <memory>
#include <optional>

class QTimer;
class QWidget;

namespace parallax::remote {
class PromptBridge;
class RemoteRunner;
} // namespace parallax::remote

namespace parallax::views {

class RemoteRunsController : public QObject {
    Q_OBJECT
public:
    struct Options {
        QString store_path; // empty: RunCatalog::default_store_path()
        QString profiles_file; // empty: the user's settings
        QString trace_dir; // where fetched traces go; empty: <cache>/traces
        bool interactive = true; // ask before discarding unsaved profile edits
    };
    RemoteRunsController(const Options& options, QWidget* window);
    ~RemoteRunsController() override;

    RunsPanel* panel() const { return m_panel; }
    remote::RemoteRunner* runner() const { return m_runner.get(); }
    remote::PromptBridge* prompts() const { return m_bridge.get(); }
    const QString& store_path() const { return m_opts.store_path; }
    const QString& profiles_file() const { return m_opts.profiles_file; }

    // The plan that "Send as validation run" sends and that the overlay is matched against.
    void set_plan(const Scenario& s, const QString& label);
    // Lists the store's runs; with attach, resumes watching every unfinished run (after a restart).
    void start(bool attach_unfinished);
    // Stops the runner (cancels what is in flight, refuses open SSH questions); safe to call twice.
    void shutdown();

    DispatchDialog* open_dispatch_dialog(); // nullptr without a plan
    ProfileEditorDialog* open_profile_editor();
    void dispatch(remote::RunRequest request);
    void request_cancel(const QString& run_id); // asks first
    void attach(const QString& run_id);
    void fetch_trace(const QString& run_id);
    void reload(); // the run table, soon (coalesced)

    // Background reads in flight (table, overlay, log); tests and --screenshot wait for none.
    bool idle() const { return m_inflight == 0 && !m_reload_pending; }
    bool wait_until_idle(int timeout_ms);
    // The selected runs' overlays (the first is the primary one).
    const std::vector<std::shared_ptr<const remote::RunOverlay>>& overlays() const { return m_overlays; }
    // The primary overlay when it measured the plan on screen (a framework run of this very plan, compared
    // with the plan's prediction): the planner draws it over its own numbers. Else null.
    std::shared_ptr<const remote::RunOverlay> plan_overlay() const { return m_plan_overlay; }
    // Seconds from dispatch() to the run's stored end, for runs sent from this window.
    std::optional<double> dispatch_to_finished_s(const QString& run_id) const;

Q_SIGNALS:
    void rows_loaded();
    void overlay_changed();
    void trace_loaded(std::shared_ptr<const parallax::MeasuredTrace> trace, QString run_id, QString path);
    void trace_failed(QString message);
    void run_finished(QString run_id, parallax::remote::RunState state);
    void cancel_requested(QString run_id);
    void dispatch_failed(QString message);
    void status_message(QString text);
    // A run is on its way (the window shows the Runs panel).
    void sending(QString run_id);

private:
    void connect_runner();
    void connect_prompts();
    void show_fetched_traces(const QString& id, const QStringList& paths, const QString& message, const QString& error);
    void load_rows();
    void load_overlays();
    void load_log(bool from_start);
    void selection_changed(const QStringList& ids);
    void update_plan_overlay();
    void schedule_overlay();
    void status(const QString& text, bool error = false);

    Options m_opts;
    QPointer<QWidget> m_window;
    QPointer<RunsPanel> m_panel;
    std::shared_ptr<remote::PromptBridge> m_bridge;
    std::unique_ptr<remote::RemoteRunner> m_runner;
    std::optional<Scenario> m_plan;
    QString m_plan_label;
    // scenario_to_json of the plan, all degrees written out (as a run stores it); made when first needed.
    std::optional<std::string> m_plan_json;

    QTimer* m_reload_timer = nullptr;
    QTimer* m_overlay_timer = nullptr;
    QTimer* m_log_timer = nullptr;
    bool m_reload_pending = false;
    int m_inflight = 0;
    // Latest request wins: a read that comes back after a newer one started is dropped. The log's request
    // spans its follow-up reads (they continue it); a new selection starts a new one.
    LatestRequest m_rows_request;
    LatestRequest m_overlay_request;
    LatestRequest m_log_request;
    LatestRequest::Ticket m_log_ticket;
    bool m_log_reading = false;
    bool m_log_more = false;
    QString m_log_run;
    qint64 m_log_offset = 0;
    QStringList m_selected;
    std::vector<std::shared_ptr<const remote::RunOverlay>> m_overlays;
    std::shared_ptr<const remote::RunOverlay> m_plan_overlay;
    bool m_overlays_changed = false; // new overlay values arrived: the planner redraws even if the run is the same
    QMap<QString, QElapsedTimer> m_dispatch_clock;
    QMap<QString, double> m_dispatch_to_finished;
    QString m_last_refusal_host;
    QString m_last_profile; // the profile of the last send, preselected the next time
    int m_last_framework = -1;
    bool m_shut = false;
};

} // namespace parallax::views

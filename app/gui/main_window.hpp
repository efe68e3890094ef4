#pragma once
// The planner's main window: dockable panels around the live results, wired to one document (the
// open scenario with its undo stack), one background evaluator (latest request wins) and one
// Settings object. Views never compute: they get the scenario synchronously after each edit (to
// show it and to know which values are reachable) and the evaluation when it arrives.
//
// Panels (dock or central widget names, for --panel and tests): scenario, model, cluster, training,
// strategy, grid, sensitivity, heatmap, timeline, power, scaling, improvements, search, learn, runs; results,
// memory, time, compare;
// window (everything). The runs panel and the remote dialogs (views/remote) send the plan to a cluster
// and draw what it measured over the predictions.
#include "gui/report_export.hpp"
#include "gui/settings.hpp"
#include "spec/scenario.hpp"
#include "viewdata/plan_evaluation.hpp"

#include <QMainWindow>
#include <QMap>
#include <QPointer>

#include <functional>
#include <memory>
#include <optional>

class QComboBox;
class QDragEnterEvent;
class QDropEvent;
class QDockWidget;
class QLabel;
class QListWidget;
class QMenu;
class QTableView;
class QTimer;
class QUndoStack;
class QAction;

class QStackedWidget;

namespace parallax::views {
class StrategyPanel;
class ClusterGridView;
class GroupGridView;
class GroupEditor;
class StageTable;
class MetricsPanel;
class MemoryBarsView;
class TimeBreakdownView;
class SensitivityPlot;
class HeatmapPlot;
class ScenarioForm;
class SearchPanel;
class SearchEngine;
class LearnPanel;
class ComparisonModel;
class ScalingPlot;
class TimelineView;
class PowerPanel;
class GoodputView;
class ScheduleProgramEditor;
class LayerRangeEditor;
class WaterfallView;
class RemoteRunsController;
class CalibrationFitDialog;
} // namespace parallax::views

namespace parallax::remote {
struct StoreFit;
} // namespace parallax::remote

namespace parallax::app {

class PlanDocument;
class PlanEvaluator;
class AutosaveController;
class ReportController;
class ScalingController;
class TimelineController;
class CalibrationController;
class CoreSearchEngine;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    struct Options {
        bool restore_layout = true; // from Settings (window geometry and dock state)
        bool autosave = true;
        bool interactive = false; // dialogs: confirm on close, offer recovery
        Settings* settings = nullptr; // nullptr: the user's settings
        QString run_store; // remote runs (SQLite); empty: RunStore::default_path()
        QString profiles_file; // cluster profiles (QSettings file); empty: the user's settings
        bool attach_runs = false; // on start, resume watching every unfinished run of the store
    };
    explicit MainWindow(QWidget* parent = nullptr);
    explicit MainWindow(const Options& options, QWidget* parent = nullptr);
    ~MainWindow() override;

    // Loads and predicts; on bad input shows the error and keeps the previous plan. Returns success.
    bool open_scenario_file(const QString& path);
    bool open_scenario_preset(const QString& name);
    // Imports a training launch configuration (a Megatron-LM script, NeMo / Megatron-Bridge YAML, torchtitan
    // TOML, DeepSpeed JSON or Hugging Face config.json; core's io/import) as a new, unsaved plan and shows what
    // became of each of its keys (a dialog when interactive, the status bar, last_import_report()). On bad input
    // shows the error and keeps the previous plan.
    bool import_launch_config(const QString& path);
    QString last_import_report() const { return m_import_report; }
    // A file dropped on the window: a scenario opens as with File > Open, anything else is imported.
    bool open_dropped_file(const QString& path);
    const std::optional<Scenario>& scenario() const;
    QString last_error() const { return m_last_error; }

    // The document.
    void new_scenario();
    bool save(); // to the current path; asks for one when there is none (interactive only)
    bool save_as(const QString& path);
    QString current_path() const;
    bool is_modified() const;
    QUndoStack* undo_stack() const;
    void apply_edit(const Scenario& s, const QString& what, int drag = 0);

    // The evaluation shown now (null before the first one arrives) and the pinned baseline.
    std::shared_ptr<const PlanEvaluation> evaluation() const { return m_current; }
    bool wait_for_evaluation(int timeout_ms = 10000);
    void set_fidelity(Fidelity f);
    Fidelity fidelity() const { return m_options.fidelity; }
    void pin_current();
    void clear_pin();
    std::shared_ptr<const PlanEvaluation> pinned() const { return m_pinned; }
    const PlanEvaluationOptions& evaluation_options() const { return m_options; }
    void set_evaluation_options(const PlanEvaluationOptions& o);

    // The calibration the plan is evaluated with, kept in Settings: the shipped one (default), none (the
    // physics alone) or a calibration file. One fitted on another GPU than the plan's is not applied (core
    // falls back to the shipped one) and the status bar says so. A file that cannot be read is an error
    // and the previous choice stays.
    bool use_calibration_file(const QString& path);
    void use_shipped_calibration();
    void use_no_calibration();
    const Calibration& calibration() const { return m_options.calibration_or_shipped(); }
    QString calibration_file() const { return m_calibration_path; } // empty unless a file is in use
    // Why the chosen calibration is not applied to the evaluated plan; empty when it is.
    QString calibration_note() const;

    // "Calibrate from these runs": fits the runs (empty: those selected in the Runs panel; one run: every
    // run of its cluster) off the GUI thread and shows the result in a dialog (residuals, rejected runs).
    void calibrate_from_runs(QStringList run_ids = {});
    bool wait_for_calibration_fit(int timeout_ms = 60000);
    std::shared_ptr<const remote::StoreFit> calibration_fit() const { return m_fit; }
    views::CalibrationFitDialog* calibration_fit_dialog() const;
    // Writes the fitted calibration to `path` (atomically); with `use`, the planner evaluates with it.
    bool save_fitted_calibration(const QString& path, bool use);

    // Panels.
    static QStringList panel_names();
    QWidget* panel(const QString& name) const; // nullptr for an unknown name
    QDockWidget* dock(const QString& name) const;
    bool show_panel(const QString& name);
    views::StrategyPanel* strategy_panel() const { return m_strategy; }
    views::ClusterGridView* grid_view() const { return m_grid; }
    views::GroupGridView* group_grid_view() const { return m_group_grid; } // a mixed cluster's grid
    views::StageTable* stage_table() const { return m_stages; }
    views::GroupEditor* group_editor() const { return m_group_editor; } // a mixed cluster's editor
    views::MetricsPanel* metrics_panel() const { return m_metrics; }
    views::MemoryBarsView* memory_view() const { return m_memory; }
    views::TimeBreakdownView* time_view() const { return m_time; }
    views::SensitivityPlot* sensitivity_plot() const { return m_sensitivity; }
    views::HeatmapPlot* heatmap_plot() const { return m_heatmap; }
    views::ScenarioForm* model_editor() const { return m_model_form; }
    views::ScenarioForm* cluster_editor() const { return m_cluster_form; }
    views::ScenarioForm* training_editor() const { return m_training_form; }
    views::SearchPanel* search_panel() const { return m_search; }
    views::LearnPanel* learn_panel() const { return m_learn; }
    views::ComparisonModel* comparison_model() const { return m_comparison; }
    views::ScalingPlot* scaling_plot() const { return m_scaling; }
    views::PowerPanel* power_panel() const { return m_power; }
    views::WaterfallView* waterfall_view() const { return m_waterfall; }
    views::GoodputView* goodput_view() const { return m_goodput; }
    views::ScheduleProgramEditor* schedule_editor() const { return m_schedule_editor; }
    views::LayerRangeEditor* layer_editor() const { return m_layer_editor; }
    views::TimelineView* timeline_view() const { return m_timeline; }
    views::RemoteRunsController* remote() const { return m_remote; }
    // The timeline follows the evaluation (simulated off the GUI thread, latest request wins) while
    // its panel is visible.
    bool wait_for_timeline(int timeout_ms = 20000);
    bool timeline_current() const { return !m_timeline_stale; }
    // The scaling sweep (a full search per GPU count) off the GUI thread; cancel_scaling() stops it.
    void run_scaling();
    void cancel_scaling();
    bool scaling_running() const;
    void set_search_engine(std::shared_ptr<views::SearchEngine> engine);

    // Autosave and crash recovery.
    bool autosave_now(QString* error = nullptr);
    QString autosave_file() const;
    QStringList recoverable_autosaves() const;
    bool recover_autosave(const QString& file);
    void offer_recovery(); // asks (interactive)
    void abandon_autosave(); // leaves the autosave file as a crash would (tests)

    // Appearance and layout.
    void set_theme(Theme t);
    void reset_layout();
    QByteArray save_layout() const;
    bool restore_layout(const QByteArray& state);
    Settings* settings() const { return m_settings; }

    // Help menu. The dialogs are not modal (tests find them by object name: "about_box", "shortcuts_dialog").
    void show_about();
    void show_keyboard_shortcuts(); // every shortcut, read from the window's actions
    bool open_documentation(); // the README through QDesktopServices; false when none is found
    // Recent files: open one (a file that vanished is dropped from the list, with a message).
    bool open_recent_file(const QString& path);
    // A measured Chrome / Perfetto trace under the timeline (also by dropping the file on the window).
    bool load_measured_trace(const QString& path);

    // Reports, status.
    bool export_report(const QString& path, QString* error = nullptr);
    QString fidelity_text() const;
    QString status_text() const;
    QString error_text() const; // the error banner, empty when hidden

signals:
    void evaluated();
    void timeline_updated();
    void scaling_finished();
    void calibration_fitted();

protected:
    void closeEvent(QCloseEvent* e) override;
    void showEvent(QShowEvent* e) override;
    void dragEnterEvent(QDragEnterEvent* e) override;
    void dropEvent(QDropEvent* e) override;

private:
    void apply_program(const ScheduleProgram* program);
    void apply_layer_ranges(const LayerRanges* ranges);
    void build_panels();
    void build_results(); // the central widget
    QWidget* build_scenario_picker();
    void create_views();
    void build_docks(QWidget* picker);
    QDockWidget* build_runs_dock();
    void connect_panels(); // edits and strategy picks from the panels into the document
    void apply_default_sizes();
    // The actions the toolbar shares with the menus.
    struct MainActions {
        QAction* new_scenario = nullptr;
        QAction* open = nullptr;
        QAction* save = nullptr;
        QAction* pin = nullptr;
        QAction* report = nullptr;
    };
    void build_actions();
    MainActions build_file_and_edit_menus();
    void build_runs_menu();
    void build_view_menu();
    void build_toolbar(const MainActions& actions);
    void build_status_bar();
    void build_help_menu();
    void install_file_drops(); // scenario files open, Chrome traces go under the timeline
    void build_calibration_menu(QMenu* runs);
    void set_calibration(std::shared_ptr<const Calibration> c, const QString& choice);
    void restore_calibration(); // the choice kept in Settings
    void update_calibration_actions();
    QString calibration_details() const; // the chosen calibration's name, source and provenance
    QString fidelity_base_text() const; // fidelity and the calibration the prediction used
    void show_calibration_fit(std::shared_ptr<const remote::StoreFit> fit);
    void save_calibration_dialog(bool use);
    void scenario_changed(const Scenario& s, const QString& what);
    void show_cluster_kind(const Scenario& s);
    void show_evaluation(std::shared_ptr<const PlanEvaluation> e); // a new evaluation arrived
    void display(); // shows m_current against m_previous and the pin
    bool wait_until(const std::function<bool()>& done, void (MainWindow::*signal)(), int timeout_ms);
    void report_error(const QString& message);
    void clear_error();
    void update_title();
    void update_fidelity_label();
    void rebuild_recent_menu();
    void open_dialog();
    void import_dialog();
    bool save_as_dialog();
    void export_report_dialog();
    bool confirm_discard();
    void apply_strategy(const Strategy& s, const QString& what);
    void request_timeline(bool force = false);
    void connect_jobs(); // the background jobs' results into the panels
    ReportInputs report_inputs(); // numbers and pictures of what the window shows now
    void show_plan_overlay(); // a run's measurement of this plan over the cards and memory bars
    QDockWidget* add_dock(const QString& name, const QString& title, QWidget* w, Qt::DockWidgetArea area);

    Options m_opts;
    Settings* m_settings = nullptr;
    PlanDocument* m_doc = nullptr;
    PlanEvaluator* m_evaluator = nullptr;
    TimelineController* m_timeline_jobs = nullptr;
    ScalingController* m_scaling_jobs = nullptr;
    AutosaveController* m_autosave = nullptr;
    ReportController* m_reports = nullptr;
    CalibrationController* m_calibration_jobs = nullptr;
    std::shared_ptr<CoreSearchEngine> m_core_search; // the search panel's engine unless a test replaced it
    QString m_calibration_path;
    QAction* m_calibration_actions[3] = {}; // shipped, none, file
    QPointer<views::CalibrationFitDialog> m_fit_dialog;
    std::shared_ptr<const remote::StoreFit> m_fit;
    PlanEvaluationOptions m_options;
    std::shared_ptr<const PlanEvaluation> m_current;
    std::shared_ptr<const PlanEvaluation> m_previous;
    std::shared_ptr<const PlanEvaluation> m_pinned;
    QString m_pinned_label;
    QString m_change_text;
    QString m_last_error;
    QString m_import_report; // the last import's report, as core writes it
    QByteArray m_default_layout;
    bool m_layout_restored = false;
    bool m_sized = false;
    QWidget* m_compare_box = nullptr;

    QComboBox* m_presets = nullptr;
    QListWidget* m_preset_list = nullptr;
    QListWidget* m_recent_list = nullptr;
    QLabel* m_error_banner = nullptr;
    QLabel* m_fidelity_label = nullptr;
    QLabel* m_timing_label = nullptr;
    QMenu* m_recent_menu = nullptr;
    QAction* m_simulated_action = nullptr;
    QAction* m_theme_actions[3] = {};
    views::StrategyPanel* m_strategy = nullptr;
    views::ClusterGridView* m_grid = nullptr;
    views::GroupGridView* m_group_grid = nullptr;
    QStackedWidget* m_grid_stack = nullptr; // the plain grid, or a mixed cluster's groups
    views::StageTable* m_stages = nullptr;
    views::GroupEditor* m_group_editor = nullptr;
    QStackedWidget* m_cluster_stack = nullptr; // the plain cluster form, or the node groups
    views::MetricsPanel* m_metrics = nullptr;
    views::MemoryBarsView* m_memory = nullptr;
    views::TimeBreakdownView* m_time = nullptr;
    views::WaterfallView* m_waterfall = nullptr;
    views::GoodputView* m_goodput = nullptr;
    views::ScheduleProgramEditor* m_schedule_editor = nullptr;
    views::LayerRangeEditor* m_layer_editor = nullptr;
    views::SensitivityPlot* m_sensitivity = nullptr;
    views::HeatmapPlot* m_heatmap = nullptr;
    views::ScenarioForm* m_model_form = nullptr;
    views::ScenarioForm* m_cluster_form = nullptr;
    views::ScenarioForm* m_training_form = nullptr;
    views::SearchPanel* m_search = nullptr;
    views::LearnPanel* m_learn = nullptr;
    views::ComparisonModel* m_comparison = nullptr;
    views::ScalingPlot* m_scaling = nullptr;
    views::PowerPanel* m_power = nullptr;
    views::TimelineView* m_timeline = nullptr;
    views::RemoteRunsController* m_remote = nullptr;
    bool m_timeline_stale = true;
    QWidget* m_results = nullptr;
    QWidget* m_timeline_slot = nullptr;
    QMap<QString, QDockWidget*> m_docks;
};

} // namespace parallax::app

#include "gui/main_window.hpp"

#include "gui/autosave_controller.hpp"
#include "gui/calibration_controller.hpp"
#include "gui/colocation_window.hpp"
#include "gui/core_search_engine.hpp"
#include "gui/event_wait.hpp"
#include "gui/file_drop.hpp"
#include "gui/help.hpp"
#include "gui/launch_export.hpp"
#include "gui/plan_document.hpp"
#include "gui/plan_evaluator.hpp"
#include "gui/report_controller.hpp"
#include "gui/scaling_controller.hpp"
#include "gui/serving_window.hpp"
#include "gui/theme.hpp"
#include "gui/timeline_controller.hpp"
#include "io/csv_writer.hpp"
#include "io/import/import_scenario.hpp"
#include "io/json_reader.hpp"
#include "io/preset_catalog.hpp"
#include "io/scenario_io.hpp"
#include "io/scenario_kind.hpp"
#include "io/serving_io.hpp"
#include "ir/schedule_program.hpp"
#include "planner/cluster_grid_view.hpp"
#include "planner/group_editor.hpp"
#include "planner/group_grid_view.hpp"
#include "planner/layer_range_editor.hpp"
#include "planner/learn_panel.hpp"
#include "planner/metrics_panel.hpp"
#include "planner/power_panel.hpp"
#include "planner/result_models.hpp"
#include "planner/scenario_forms.hpp"
#include "planner/schedule_program_editor.hpp"
#include "planner/search_panel.hpp"
#include "planner/stage_table.hpp"
#include "planner/strategy_panel.hpp"
#include "plots/breakdown_views.hpp"
#include "plots/goodput_view.hpp"
#include "plots/plan_plots.hpp"
#include "plots/plot_export.hpp"
#include "plots/qcustomplot_include.hpp"
#include "plots/scaling_plot.hpp"
#include "plots/waterfall_view.hpp"
#include "remote/calibration_fit_dialog.hpp"
#include "remote/remote_controller.hpp"
#include "search/hetero_search.hpp"
#include "search/plan_explain.hpp"
#include "spec/input_error.hpp"
#include "spec/strategy_label.hpp"
#include "spec/strategy_rules.hpp"
#include "spec/units.hpp"
#include "style/view_style.hpp"
#include "timeline/timeline_view.hpp"
#include "viewdata/calibration_residuals.hpp"
#include "viewdata/rank_grid.hpp"
#include "viewdata/timeline_data.hpp"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QBuffer>
#include <QCloseEvent>
#include <QComboBox>
#include <QDesktopServices>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPushButton>
#include <QScrollArea>
#include <QShowEvent>
#include <QSplitter>
#include <QStackedWidget>
#include <QStatusBar>
#include <QTableView>
#include <QTimer>
#include <QToolBar>
#include <QUndoStack>
#include <QVBoxLayout>

#ifndef PARALLAX_VERSION
#define PARALLAX_VERSION "dev"
#endif

namespace parallax::app {

namespace {

// The panels in the order of panel_names(); docks are named "dock_<name>" for saveState().
const QStringList kDockNames = { QStringLiteral("scenario"), QStringLiteral("model"), QStringLiteral("cluster"),
    QStringLiteral("training"), QStringLiteral("strategy"), QStringLiteral("grid"), QStringLiteral("sensitivity"),
    QStringLiteral("heatmap"), QStringLiteral("timeline"), QStringLiteral("power"), QStringLiteral("scaling"),
    QStringLiteral("search"), QStringLiteral("learn"), QStringLiteral("runs"), QStringLiteral("improvements"),
    QStringLiteral("goodput"), QStringLiteral("schedule"), QStringLiteral("layers"), QStringLiteral("stages") };
const QStringList kCentralNames
    = { QStringLiteral("results"), QStringLiteral("memory"), QStringLiteral("time"), QStringLiteral("compare") };

QWidget* titled(const QString& title, QWidget* content, QWidget* parent)
{
    auto* box = new QWidget(parent);
    auto* v = new QVBoxLayout(box);
    v->setContentsMargins(2, 2, 2, 2);
    v->setSpacing(2);
    auto* label = new QLabel(QStringLiteral("<b>") + title + QStringLiteral("</b>"), box);
    v->addWidget(label);
    v->addWidget(content, 1);
    return box;
}

QWidget* scrolled(QWidget* content, QWidget* parent)
{
    auto* area = new QScrollArea(parent);
    area->setWidgetResizable(true);
    area->setFrameShape(QFrame::NoFrame);
    area->setWidget(content);
    return area;
}

QString grid_csv(const Scenario& s)
{
    CsvWriter out { "rank", "node", "local_gpu", "tp_rank", "cp_rank", "dp_rank", "pp_stage", "ep_rank" };
    const RankGrid dense(s.strategy, s.cluster.gpus_per_node);
    const RankGrid expert(s.strategy, s.cluster.gpus_per_node, true);
    const long long gpn = s.cluster.gpus_per_node;
    for (long long r = 0; r < dense.ranks(); ++r)
        out.integer(r)
            .integer(r / gpn)
            .integer(r % gpn)
            .integer(dense.coordinate(r, ParallelDim::tp))
            .integer(dense.coordinate(r, ParallelDim::cp))
            .integer(dense.coordinate(r, ParallelDim::dp))
            .integer(dense.coordinate(r, ParallelDim::pp))
            .integer(expert.coordinate(r, ParallelDim::ep))
            .end_row();
    return QString::fromStdString(out.text());
}

} // namespace

MainWindow::MainWindow(QWidget* parent)
    : MainWindow(Options {}, parent)
{
}

MainWindow::MainWindow(const Options& options, QWidget* parent)
    : QMainWindow(parent)
    , m_opts(options)
{
    setObjectName(QStringLiteral("parallax_main_window"));
    m_settings = options.settings ? options.settings : new Settings(this);
    m_doc = new PlanDocument(this);
    m_evaluator = new PlanEvaluator(this);
    m_timeline_jobs = new TimelineController(this);
    m_scaling_jobs = new ScalingController(this);
    m_autosave = new AutosaveController(m_settings, m_doc, options.autosave, this);
    m_reports = new ReportController(this);
    m_calibration_jobs = new CalibrationController(this);
    setWindowTitle(QStringLiteral("Parallax"));
    setDockNestingEnabled(true);
    setAcceptDrops(true); // scenario files open, launch configurations are imported
    build_panels();
    build_actions();
    restore_calibration(); // before the first evaluation, so that it already uses the chosen calibration

    connect(m_doc, &PlanDocument::scenario_changed, this, &MainWindow::scenario_changed);
    connect(m_doc, &PlanDocument::modified_changed, this, [this](bool) { update_title(); });
    connect(m_evaluator, &PlanEvaluator::evaluated, this, &MainWindow::show_evaluation);
    connect(m_calibration_jobs, &CalibrationController::fitted, this, &MainWindow::show_calibration_fit);
    connect_jobs();
    install_file_drops();

    resize(1600, 1000);
    m_remote->start(options.attach_runs);
    m_default_layout = saveState(Settings::kLayoutVersion);
    if (options.restore_layout) {
        restoreGeometry(m_settings->window_geometry());
        m_layout_restored = restoreState(m_settings->window_state(), Settings::kLayoutVersion);
    }
    update_title();
    statusBar()->showMessage(QStringLiteral("Open a scenario preset or file"));
}

MainWindow::~MainWindow()
{
    // Background work outlives nothing: a running sweep stops at its next check, a pending
    // simulation is stale.
    m_scaling_jobs->cancel();
    m_timeline_jobs->cancel_all();
    // Remote workers close their connections on their threads; open SSH questions are answered "no".
    m_remote->shutdown();
}

// ---------------------------------------------------------------------------------------------
// Panels

QDockWidget* MainWindow::add_dock(const QString& name, const QString& title, QWidget* w, Qt::DockWidgetArea area)
{
    auto* d = new QDockWidget(title, this);
    d->setObjectName(QStringLiteral("dock_") + name);
    d->setWidget(w);
    d->setFeatures(QDockWidget::DockWidgetClosable | QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
    addDockWidget(area, d);
    m_docks.insert(name, d);
    return d;
}

void MainWindow::build_panels()
{
    build_results();
    QWidget* picker = build_scenario_picker();
    create_views();
    build_docks(picker);
    connect_panels();
}

void MainWindow::build_results()
{
    // Centre: the live numbers, memory per stage and the time breakdown.
    m_results = new QWidget(this);
    m_results->setObjectName(QStringLiteral("results"));
    auto* rv = new QVBoxLayout(m_results);
    rv->setContentsMargins(4, 4, 4, 4);
    m_error_banner = new QLabel(m_results);
    m_error_banner->setObjectName(QStringLiteral("error_banner"));
    m_error_banner->setWordWrap(true);
    m_error_banner->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_error_banner->hide();
    rv->addWidget(m_error_banner);
    m_metrics = new views::MetricsPanel(m_results);
    rv->addWidget(m_metrics);
    auto* split = new QSplitter(Qt::Horizontal, m_results);
    m_memory = new views::MemoryBarsView(split);
    m_memory->setObjectName(QStringLiteral("memory"));
    m_time = new views::TimeBreakdownView(split);
    m_time->setObjectName(QStringLiteral("time"));
    m_comparison = new views::ComparisonModel(this);
    auto* compare = new QTableView(split);
    compare->setObjectName(QStringLiteral("comparison_table"));
    compare->setModel(m_comparison);
    compare->verticalHeader()->hide();
    compare->verticalHeader()->setDefaultSectionSize(compare->fontMetrics().height() + 4);
    compare->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
    compare->setAlternatingRowColors(true);
    compare->setSelectionMode(QAbstractItemView::NoSelection);
    auto* right = new QSplitter(Qt::Vertical, split);
    right->addWidget(titled(QStringLiteral("Where the step time goes (critical path)"), m_time, right));
    m_compare_box = titled(QStringLiteral("Pinned plan A vs current plan B (Ctrl+P pins)"), compare, right);
    right->addWidget(m_compare_box);
    right->setStretchFactor(0, 0);
    right->setStretchFactor(1, 1);
    split->addWidget(titled(QStringLiteral("Memory per GPU by pipeline stage"), m_memory, split));
    split->addWidget(right);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 1);
    rv->addWidget(split, 1);
    setCentralWidget(m_results);
    views::install_export_menu(m_memory, QStringLiteral("memory-per-stage"), [this] { return m_memory->csv(); });
    views::install_export_menu(m_time, QStringLiteral("time-breakdown"), [this] { return m_time->csv(); });
}

QWidget* MainWindow::build_scenario_picker()
{
    // Presets and recent files.
    auto* picker = new QWidget(this);
    auto* pv = new QVBoxLayout(picker);
    pv->setContentsMargins(4, 4, 4, 4);
    pv->addWidget(new QLabel(QStringLiteral("Scenario presets (double-click to open)"), picker));
    m_preset_list = new QListWidget(picker);
    m_preset_list->setObjectName(QStringLiteral("preset_list"));
    for (const auto* e : PresetCatalog::standard().entries(PresetKind::scenarios)) {
        auto* item = new QListWidgetItem(QString::fromStdString(e->name), m_preset_list);
        if (e->json.contains("description") && e->json["description"].is_string())
            item->setToolTip(QString::fromStdString(e->json["description"].get<std::string>()));
    }
    pv->addWidget(m_preset_list, 2);
    pv->addWidget(new QLabel(QStringLiteral("Recent files"), picker));
    m_recent_list = new QListWidget(picker);
    m_recent_list->setObjectName(QStringLiteral("recent_list"));
    pv->addWidget(m_recent_list, 1);
    auto* open_button = new QPushButton(QStringLiteral("Open file..."), picker);
    pv->addWidget(open_button);
    connect(m_preset_list, &QListWidget::itemActivated, this,
        [this](QListWidgetItem* i) { open_scenario_preset(i->text()); });
    connect(m_recent_list, &QListWidget::itemActivated, this, [this](QListWidgetItem* i) {
        if (confirm_discard())
            open_recent_file(i->data(Qt::UserRole).toString());
    });
    connect(open_button, &QPushButton::clicked, this, &MainWindow::open_dialog);
    return picker;
}

void MainWindow::create_views()
{
    m_model_form = views::make_model_editor(this);
    m_cluster_form = views::make_cluster_editor(this);
    m_training_form = views::make_training_editor(this);
    m_strategy = new views::StrategyPanel(this);
    m_grid = new views::ClusterGridView(this);
    // A mixed cluster is drawn by its node groups instead, coloured by GPU type.
    m_group_grid = new views::GroupGridView(this);
    m_grid_stack = new QStackedWidget(this);
    m_grid_stack->addWidget(m_grid);
    m_grid_stack->addWidget(scrolled(m_group_grid, this));
    m_stages = new views::StageTable(this);
    m_group_editor = new views::GroupEditor(this);
    m_cluster_stack = new QStackedWidget(this);
    m_cluster_stack->addWidget(m_cluster_form);
    m_cluster_stack->addWidget(m_group_editor);
    m_sensitivity = new views::SensitivityPlot(this);
    m_heatmap = new views::HeatmapPlot(this);
    m_search = new views::SearchPanel(this);
    m_learn = new views::LearnPanel(this);
    // The per-device timeline of the simulated plan (views/timeline).
    m_timeline = new views::TimelineView(this);
    m_timeline->setObjectName(QStringLiteral("timeline_view"));
    m_timeline_slot = scrolled(m_timeline, this); // its minimum height would otherwise set the window's
    m_scaling = new views::ScalingPlot(this);
    m_power = new views::PowerPanel(this);
    m_waterfall = new views::WaterfallView(this);
    m_waterfall->setObjectName(QStringLiteral("waterfall"));
    m_goodput = new views::GoodputView(this);
    m_goodput->setObjectName(QStringLiteral("goodput_view"));
    m_schedule_editor = new views::ScheduleProgramEditor(this);
    m_schedule_editor->setObjectName(QStringLiteral("schedule_editor"));
    connect(m_schedule_editor, &views::ScheduleProgramEditor::program_applied, this, &MainWindow::apply_program);
    m_layer_editor = new views::LayerRangeEditor(this);
    m_layer_editor->setObjectName(QStringLiteral("layer_range_editor"));
    connect(m_layer_editor, &views::LayerRangeEditor::ranges_applied, this, &MainWindow::apply_layer_ranges);
}

void MainWindow::build_docks(QWidget* picker)
{
    add_dock(
        QStringLiteral("strategy"), QStringLiteral("Strategy"), scrolled(m_strategy, this), Qt::LeftDockWidgetArea);
    QDockWidget* scenario_dock
        = add_dock(QStringLiteral("scenario"), QStringLiteral("Scenario"), picker, Qt::RightDockWidgetArea);
    QDockWidget* model
        = add_dock(QStringLiteral("model"), QStringLiteral("Model"), m_model_form, Qt::RightDockWidgetArea);
    QDockWidget* cluster
        = add_dock(QStringLiteral("cluster"), QStringLiteral("Cluster"), m_cluster_stack, Qt::RightDockWidgetArea);
    QDockWidget* training
        = add_dock(QStringLiteral("training"), QStringLiteral("Training"), m_training_form, Qt::RightDockWidgetArea);
    tabifyDockWidget(scenario_dock, model);
    QDockWidget* schedule = add_dock(
        QStringLiteral("schedule"), QStringLiteral("Schedule program"), m_schedule_editor, Qt::RightDockWidgetArea);
    tabifyDockWidget(model, cluster);
    tabifyDockWidget(cluster, training);
    tabifyDockWidget(training, schedule);
    QDockWidget* layers
        = add_dock(QStringLiteral("layers"), QStringLiteral("Layer ranges"), m_layer_editor, Qt::RightDockWidgetArea);
    tabifyDockWidget(schedule, layers);
    scenario_dock->raise();
    QDockWidget* grid
        = add_dock(QStringLiteral("grid"), QStringLiteral("Cluster grid"), m_grid_stack, Qt::BottomDockWidgetArea);
    QDockWidget* sensitivity = add_dock(
        QStringLiteral("sensitivity"), QStringLiteral("Sensitivity"), m_sensitivity, Qt::BottomDockWidgetArea);
    QDockWidget* heatmap
        = add_dock(QStringLiteral("heatmap"), QStringLiteral("TP × PP"), m_heatmap, Qt::BottomDockWidgetArea);
    QDockWidget* timeline_dock
        = add_dock(QStringLiteral("timeline"), QStringLiteral("Timeline"), m_timeline_slot, Qt::BottomDockWidgetArea);
    QDockWidget* power_dock
        = add_dock(QStringLiteral("power"), QStringLiteral("Power"), m_power, Qt::BottomDockWidgetArea);
    QDockWidget* scaling_dock
        = add_dock(QStringLiteral("scaling"), QStringLiteral("Scaling"), m_scaling, Qt::BottomDockWidgetArea);
    QDockWidget* improvements_dock = add_dock(
        QStringLiteral("improvements"), QStringLiteral("Improvements"), m_waterfall, Qt::BottomDockWidgetArea);
    QDockWidget* goodput_dock
        = add_dock(QStringLiteral("goodput"), QStringLiteral("Goodput"), m_goodput, Qt::BottomDockWidgetArea);
    QDockWidget* stages
        = add_dock(QStringLiteral("stages"), QStringLiteral("Stages"), m_stages, Qt::BottomDockWidgetArea);
    QDockWidget* learn = add_dock(QStringLiteral("learn"), QStringLiteral("Learn"), m_learn, Qt::BottomDockWidgetArea);
    QDockWidget* search
        = add_dock(QStringLiteral("search"), QStringLiteral("Search"), m_search, Qt::BottomDockWidgetArea);
    splitDockWidget(grid, sensitivity, Qt::Horizontal);
    splitDockWidget(sensitivity, learn, Qt::Horizontal);
    tabifyDockWidget(sensitivity, heatmap);
    tabifyDockWidget(heatmap, timeline_dock);
    tabifyDockWidget(timeline_dock, power_dock);
    tabifyDockWidget(power_dock, scaling_dock);
    tabifyDockWidget(scaling_dock, improvements_dock);
    tabifyDockWidget(improvements_dock, goodput_dock);
    tabifyDockWidget(goodput_dock, stages);
    connect(timeline_dock, &QDockWidget::visibilityChanged, this, [this](bool visible) {
        if (visible && m_timeline_stale)
            request_timeline(true);
    });
    tabifyDockWidget(learn, search);
    tabifyDockWidget(scaling_dock, build_runs_dock());
    sensitivity->raise();
    learn->raise();
}

QDockWidget* MainWindow::build_runs_dock()
{
    // Remote validation runs: the table, the overlay of the selected runs and their log.
    views::RemoteRunsController::Options ro;
    ro.store_path = m_opts.run_store;
    ro.profiles_file = m_opts.profiles_file;
    ro.interactive = m_opts.interactive;
    m_remote = new views::RemoteRunsController(ro, this);
    QDockWidget* runs
        = add_dock(QStringLiteral("runs"), QStringLiteral("Runs"), m_remote->panel(), Qt::BottomDockWidgetArea);
    connect(m_remote, &views::RemoteRunsController::overlay_changed, this, &MainWindow::show_plan_overlay);
    connect(m_remote, &views::RemoteRunsController::sending, this, [this] { show_panel(QStringLiteral("runs")); });
    connect(m_remote, &views::RemoteRunsController::status_message, this,
        [this](const QString& text) { statusBar()->showMessage(text, 8000); });
    connect(m_remote, &views::RemoteRunsController::trace_loaded, this,
        [this](std::shared_ptr<const MeasuredTrace> trace, const QString& run_id, const QString& path) {
            show_panel(QStringLiteral("timeline"));
            m_timeline->set_measured_trace(std::move(trace));
            statusBar()->showMessage(
                QStringLiteral("Measured trace of run %1 on the timeline: %2").arg(run_id, path), 8000);
        });
    return runs;
}

void MainWindow::connect_panels()
{
    connect(m_strategy, &views::StrategyPanel::edit_requested, this, &MainWindow::apply_edit);
    connect(m_strategy, &views::StrategyPanel::options_changed, this, &MainWindow::set_evaluation_options);
    connect(m_grid, &views::ClusterGridView::edit_requested, this, &MainWindow::apply_edit);
    connect(m_stages, &views::StageTable::edit_requested, this, &MainWindow::apply_edit);
    connect(m_group_editor, &views::GroupEditor::edit_requested, this, &MainWindow::apply_edit);
    for (views::ScenarioForm* f : { m_model_form, m_cluster_form, m_training_form })
        connect(f, &views::ScenarioForm::edit_requested, this, &MainWindow::apply_edit);
    connect(m_sensitivity, &views::SensitivityPlot::apply_requested, this, &MainWindow::apply_strategy);
    connect(m_heatmap, &views::HeatmapPlot::apply_requested, this, &MainWindow::apply_strategy);
    connect(m_search, &views::SearchPanel::apply_requested, this, &MainWindow::apply_strategy);
    connect(m_search, &views::SearchPanel::apply_stages_requested, this,
        [this](const Strategy& s, const std::vector<PipelineStageSpec>& stages, const QString& what) {
            if (scenario())
                apply_edit(hetero_plan_scenario(*scenario(), s, stages), what, 0);
        });
    m_core_search = std::make_shared<CoreSearchEngine>();
    m_search->set_engine(m_core_search);
    views::install_export_menu(m_grid->canvas(), QStringLiteral("cluster-grid"),
        [this] { return scenario() ? grid_csv(*scenario()) : QString(); });
    if (auto d = degree_from_string(m_settings->sensitivity_degree().toStdString()))
        m_sensitivity->set_degree(*d);
    for (ParallelDim d : { ParallelDim::tp, ParallelDim::cp, ParallelDim::dp, ParallelDim::pp, ParallelDim::ep })
        if (m_settings->grid_dimension() == QString::fromLatin1(to_string(d).data()))
            m_grid->set_dimension(d);
}

void MainWindow::build_actions()
{
    const MainActions actions = build_file_and_edit_menus();
    build_runs_menu();
    build_view_menu();
    build_help_menu();
    build_toolbar(actions);
    build_status_bar();
}

MainWindow::MainActions MainWindow::build_file_and_edit_menus()
{
    QMenu* file = menuBar()->addMenu(QStringLiteral("&File"));
    QAction* new_action = file->addAction(QStringLiteral("&New"), this, [this] {
        if (confirm_discard())
            new_scenario();
    });
    new_action->setShortcut(QKeySequence::New);
    QAction* open = file->addAction(QStringLiteral("&Open scenario..."), this, &MainWindow::open_dialog);
    open->setShortcut(QKeySequence::Open);
    m_recent_menu = file->addMenu(QStringLiteral("Open &recent"));
    QAction* import = file->addAction(QStringLiteral("&Import launch config..."), this, &MainWindow::import_dialog);
    import->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_I));
    import->setToolTip(
        QStringLiteral("A Megatron-LM script, NeMo or Megatron-Bridge YAML, torchtitan TOML, DeepSpeed "
                       "JSON or Hugging Face config.json as a new plan (also by dropping the file here)"));
    QAction* save_action = file->addAction(QStringLiteral("&Save"), this, [this] { save(); });
    save_action->setShortcut(QKeySequence::Save);
    QAction* save_as = file->addAction(QStringLiteral("Save &as..."), this, [this] { save_as_dialog(); });
    save_as->setShortcut(
        QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S)); // QKeySequence::SaveAs is empty on some platforms
    file->addSeparator();
    QAction* report
        = file->addAction(QStringLiteral("Export &report (HTML)..."), this, &MainWindow::export_report_dialog);
    report->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    file->addAction(QStringLiteral("Export &launch files..."), this, [this] {
        if (scenario())
            export_launch_dialog(this, *scenario(), m_doc->path());
    });
    file->addSeparator();
    QAction* quit = file->addAction(QStringLiteral("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Q));

    QMenu* edit = menuBar()->addMenu(QStringLiteral("&Edit"));
    QAction* undo = m_doc->undo_stack()->createUndoAction(this, QStringLiteral("&Undo"));
    undo->setShortcut(QKeySequence::Undo);
    QAction* redo = m_doc->undo_stack()->createRedoAction(this, QStringLiteral("&Redo"));
    redo->setShortcuts({ QKeySequence::Redo, QKeySequence(Qt::CTRL | Qt::Key_Y) });
    edit->addAction(undo);
    edit->addAction(redo);
    edit->addSeparator();
    QAction* pin = edit->addAction(QStringLiteral("&Pin plan as baseline (A)"), this, &MainWindow::pin_current);
    pin->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_P));
    edit->addAction(QStringLiteral("&Clear pinned plan"), this, &MainWindow::clear_pin);
    return { new_action, open, save_action, pin, report };
}

void MainWindow::build_runs_menu()
{
    QMenu* runs = menuBar()->addMenu(QStringLiteral("&Runs"));
    QAction* send_run = m_remote->panel()->send_action();
    send_run->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
    send_run->setShortcutContext(Qt::WindowShortcut);
    addAction(send_run); // the shortcut works while the Runs panel is hidden
    runs->addAction(send_run);
    runs->addAction(m_remote->panel()->profiles_action());
    runs->addSeparator();
    runs->addAction(m_remote->panel()->cancel_action());
    runs->addAction(m_remote->panel()->attach_action());
    runs->addAction(m_remote->panel()->trace_action());
    runs->addSeparator();
    QAction* calibrate = m_remote->panel()->calibrate_action();
    connect(calibrate, &QAction::triggered, this, [this] { calibrate_from_runs(); });
    runs->addAction(calibrate);
    build_calibration_menu(runs);
    runs->addSeparator();
    runs->addAction(m_docks.value(QStringLiteral("runs"))->toggleViewAction());
}

void MainWindow::build_calibration_menu(QMenu* runs)
{
    // Which calibration the plan is evaluated with; the checked entry is the one in Settings.
    auto* group = new QActionGroup(this);
    m_calibration_actions[0]
        = runs->addAction(QStringLiteral("Use &shipped calibration"), this, &MainWindow::use_shipped_calibration);
    m_calibration_actions[1]
        = runs->addAction(QStringLiteral("Use &no calibration (physics only)"), this, &MainWindow::use_no_calibration);
    m_calibration_actions[2] = runs->addAction(QStringLiteral("Use calibration &file..."), this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, QStringLiteral("Use calibration"), m_calibration_path,
            QStringLiteral("Calibration files (*.json);;All files (*)"));
        if (!path.isEmpty())
            use_calibration_file(path);
        update_calibration_actions(); // a cancelled or failed choice leaves the previous one checked
    });
    m_calibration_actions[0]->setObjectName(QStringLiteral("use_shipped_calibration"));
    m_calibration_actions[1]->setObjectName(QStringLiteral("use_no_calibration"));
    m_calibration_actions[2]->setObjectName(QStringLiteral("use_calibration_file"));
    for (QAction* a : m_calibration_actions) {
        a->setCheckable(true);
        group->addAction(a);
    }
}

void MainWindow::build_view_menu()
{
    QMenu* view = menuBar()->addMenu(QStringLiteral("&View"));
    int key = Qt::Key_1;
    for (const QString& name : { QStringLiteral("strategy"), QStringLiteral("grid"), QStringLiteral("sensitivity"),
             QStringLiteral("heatmap"), QStringLiteral("timeline"), QStringLiteral("scaling"), QStringLiteral("search"),
             QStringLiteral("scenario"), QStringLiteral("model") }) {
        QDockWidget* d = m_docks.value(name);
        QAction* a = d->toggleViewAction();
        a->setShortcut(QKeySequence(Qt::CTRL | static_cast<Qt::Key>(key++)));
        view->addAction(a);
        connect(a, &QAction::triggered, this, [d](bool on) {
            if (on)
                d->raise();
        });
    }
    view->addAction(m_docks.value(QStringLiteral("cluster"))->toggleViewAction());
    view->addAction(m_docks.value(QStringLiteral("training"))->toggleViewAction());
    QAction* learn = m_docks.value(QStringLiteral("learn"))->toggleViewAction();
    learn->setShortcut(QKeySequence::HelpContents);
    view->addAction(learn);
    view->addSeparator();
    m_simulated_action = view->addAction(QStringLiteral("&Simulated fidelity (event simulator)"));
    m_simulated_action->setCheckable(true);
    connect(m_simulated_action, &QAction::toggled, this,
        [this](bool on) { set_fidelity(on ? Fidelity::simulated : Fidelity::analytic); });
    QMenu* theme = view->addMenu(QStringLiteral("&Theme"));
    auto* themes = new QActionGroup(this);
    const QString names[] = { QStringLiteral("&System"), QStringLiteral("&Light"), QStringLiteral("&Dark") };
    for (int i = 0; i < 3; ++i) {
        m_theme_actions[i] = theme->addAction(names[i]);
        m_theme_actions[i]->setCheckable(true);
        themes->addAction(m_theme_actions[i]);
        const Theme t = static_cast<Theme>(i);
        connect(m_theme_actions[i], &QAction::triggered, this, [this, t] { set_theme(t); });
    }
    m_theme_actions[static_cast<int>(m_settings->theme())]->setChecked(true);
    QAction* toggle_dark = view->addAction(QStringLiteral("Toggle &dark mode"), this,
        [this] { set_theme(m_settings->theme() == Theme::dark ? Theme::light : Theme::dark); });
    toggle_dark->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_D));
    view->addAction(QStringLiteral("&Reset layout"), this, &MainWindow::reset_layout);
}

void MainWindow::build_toolbar(const MainActions& actions)
{
    QToolBar* bar = addToolBar(QStringLiteral("Scenario"));
    bar->setObjectName(QStringLiteral("scenario_toolbar"));
    bar->addAction(actions.new_scenario);
    bar->addAction(actions.open);
    bar->addAction(actions.save);
    bar->addSeparator();
    // The toolbar's own Undo/Redo with fixed texts: the menu actions rename themselves after every
    // edit ("Undo TP 4 → 8"), and a toolbar button changing width relayouts the whole window on
    // every drag step.
    QAction* bar_undo = bar->addAction(QStringLiteral("Undo"), m_doc->undo_stack(), &QUndoStack::undo);
    QAction* bar_redo = bar->addAction(QStringLiteral("Redo"), m_doc->undo_stack(), &QUndoStack::redo);
    bar_undo->setEnabled(false);
    bar_redo->setEnabled(false);
    connect(m_doc->undo_stack(), &QUndoStack::canUndoChanged, bar_undo, &QAction::setEnabled);
    connect(m_doc->undo_stack(), &QUndoStack::canRedoChanged, bar_redo, &QAction::setEnabled);
    connect(m_doc->undo_stack(), &QUndoStack::undoTextChanged, bar_undo,
        [bar_undo](const QString& t) { bar_undo->setToolTip(QStringLiteral("Undo ") + t); });
    connect(m_doc->undo_stack(), &QUndoStack::redoTextChanged, bar_redo,
        [bar_redo](const QString& t) { bar_redo->setToolTip(QStringLiteral("Redo ") + t); });
    bar->addSeparator();
    bar->addAction(actions.pin);
    bar->addAction(actions.report);
    bar->addSeparator();
    bar->addWidget(new QLabel(QStringLiteral(" Scenario preset: "), bar));
    m_presets = new QComboBox(bar);
    m_presets->setObjectName(QStringLiteral("scenario_presets"));
    for (const auto& name : PresetCatalog::standard().names(PresetKind::scenarios))
        m_presets->addItem(QString::fromStdString(name));
    // Shown while the plan is not a preset (a file, or a new scenario).
    m_presets->setPlaceholderText(QStringLiteral("(not a preset)"));
    bar->addWidget(m_presets);
    connect(m_presets, &QComboBox::textActivated, this, [this](const QString& name) {
        if (confirm_discard())
            open_scenario_preset(name);
    });
}

void MainWindow::build_status_bar()
{
    m_fidelity_label = new QLabel(this);
    m_fidelity_label->setObjectName(QStringLiteral("fidelity_label"));
    m_timing_label = new QLabel(this);
    statusBar()->addPermanentWidget(m_timing_label);
    statusBar()->addPermanentWidget(m_fidelity_label);
    update_fidelity_label();
    connect(m_settings, &Settings::recent_files_changed, this, &MainWindow::rebuild_recent_menu);
    // Files that were moved or deleted since they were opened leave the list (at start and whenever the
    // menu opens), so it never offers what cannot open.
    m_settings->remove_missing_recent_files();
    connect(m_recent_menu, &QMenu::aboutToShow, m_settings, &Settings::remove_missing_recent_files);
    rebuild_recent_menu();
}

void MainWindow::build_help_menu()
{
    QMenu* help = menuBar()->addMenu(QStringLiteral("&Help"));
    QAction* docs = help->addAction(QStringLiteral("&Documentation"), this, [this] { open_documentation(); });
    docs->setObjectName(QStringLiteral("help_documentation"));
    docs->setToolTip(
        QStringLiteral("The README and docs/: the scenario format, the CLI, accuracy, power, remote runs"));
    QAction* keys = help->addAction(QStringLiteral("&Keyboard shortcuts"), this, &MainWindow::show_keyboard_shortcuts);
    keys->setObjectName(QStringLiteral("help_shortcuts"));
    keys->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Slash));
    help->addSeparator();
    QAction* about = help->addAction(QStringLiteral("&About Parallax"), this, &MainWindow::show_about);
    about->setObjectName(QStringLiteral("help_about"));
    about->setMenuRole(QAction::AboutRole);
    QAction* about_qt = help->addAction(QStringLiteral("About &Qt"), this, [] { QApplication::aboutQt(); });
    about_qt->setMenuRole(QAction::AboutQtRole);
}

void MainWindow::show_about()
{
    auto* box = new QMessageBox(
        QMessageBox::NoIcon, QStringLiteral("About Parallax"), about_text(), QMessageBox::Close, this);
    box->setObjectName(QStringLiteral("about_box"));
    box->setTextFormat(Qt::RichText);
    box->setTextInteractionFlags(Qt::TextBrowserInteraction);
    box->setIconPixmap(windowIcon().pixmap(64, 64));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->show();
}

void MainWindow::show_keyboard_shortcuts()
{
    QDialog* dialog = make_shortcuts_dialog(collect_shortcuts(*this), this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->show();
}

bool MainWindow::open_documentation()
{
    const QUrl url = documentation_url();
    if (url.isEmpty() || !QDesktopServices::openUrl(url)) {
        statusBar()->showMessage(
            QStringLiteral("No documentation found next to the program; the README is in the source repository"), 8000);
        return false;
    }
    return true;
}

void MainWindow::install_file_drops()
{
    new FileDropFilter(this, [this](const QString& path, DroppedFileKind kind) {
        if (kind == DroppedFileKind::chrome_trace)
            return load_measured_trace(path);
        return confirm_discard() && open_scenario_file(path);
    });
}

bool MainWindow::load_measured_trace(const QString& path)
{
    show_panel(QStringLiteral("timeline"));
    QString why;
    if (!m_timeline->load_measured_trace(path, &why)) {
        report_error(why);
        return false;
    }
    statusBar()->showMessage(QStringLiteral("Measured trace on the timeline: ") + path, 8000);
    return true;
}

QStringList MainWindow::panel_names()
{
    QStringList out = kDockNames;
    out << kCentralNames << QStringLiteral("window");
    return out;
}

QDockWidget* MainWindow::dock(const QString& name) const
{
    return m_docks.value(name, nullptr);
}

QWidget* MainWindow::panel(const QString& name) const
{
    if (name == QStringLiteral("window"))
        return const_cast<MainWindow*>(this);
    if (name == QStringLiteral("results"))
        return m_results;
    if (name == QStringLiteral("memory"))
        return m_memory->parentWidget();
    if (name == QStringLiteral("time"))
        return m_time->parentWidget();
    if (name == QStringLiteral("compare"))
        return m_compare_box;
    return dock(name);
}

bool MainWindow::show_panel(const QString& name)
{
    if (QDockWidget* d = dock(name)) {
        d->show();
        d->raise();
        return true;
    }
    return panel(name) != nullptr;
}

// ---------------------------------------------------------------------------------------------
// Document

const std::optional<Scenario>& MainWindow::scenario() const
{
    return m_doc->scenario();
}
QString MainWindow::current_path() const
{
    return m_doc->path();
}
bool MainWindow::is_modified() const
{
    return m_doc->modified();
}
QUndoStack* MainWindow::undo_stack() const
{
    return m_doc->undo_stack();
}

bool MainWindow::open_scenario_file(const QString& path)
{
    // A serving or co-location scenario opens in a window of its own, owned here (docs/serving.md).
    const auto open_in_own_window = [&](auto* window) {
        if (!window->open_file(path)) {
            report_error(window->last_error());
            delete window;
            return false;
        }
        window->show();
        m_settings->add_recent_file(path);
        return true;
    };
    switch (scenario_file_kind(path.toStdString())) {
    case ScenarioKind::serving:
        return open_in_own_window(new ServingWindow(m_opts.interactive, this));
    case ScenarioKind::colocation:
        return open_in_own_window(new ColocationWindow(m_opts.interactive, this));
    case ScenarioKind::training:
        break;
    }
    try {
        const Scenario s = load_scenario_file(path.toStdString(), PresetCatalog::standard());
        clear_error();
        m_doc->reset(s, QFileInfo(path).absoluteFilePath(), path);
        m_presets->setCurrentIndex(-1);
        m_settings->add_recent_file(path);
        m_autosave->discard();
        return true;
    } catch (const InputError& e) {
        report_error(QString::fromStdString(e.what()));
        return false;
    }
}

bool MainWindow::import_launch_config(const QString& path)
{
    try {
        const ImportResult r
            = import_launch_config_file(path.toStdString(), std::nullopt, {}, PresetCatalog::standard());
        clear_error();
        m_doc->reset_modified(r.parsed, QString(), QFileInfo(path).fileName() + QStringLiteral(" (imported)"));
        m_presets->setCurrentIndex(-1);
        m_import_report = QString::fromStdString(import_report_to_text(r.report));
        const auto count = [&](ImportOutcome o) { return QString::number(r.report.of(o).size()); };
        const QString summary = QStringLiteral("Imported ") + QFileInfo(path).fileName() + QStringLiteral(" as ")
            + QString::fromStdString(r.report.format) + QStringLiteral(": ") + count(ImportOutcome::mapped)
            + QStringLiteral(" keys mapped, ") + count(ImportOutcome::assumed) + QStringLiteral(" values assumed, ")
            + count(ImportOutcome::not_modelled) + QStringLiteral(" not modelled, ") + count(ImportOutcome::no_effect)
            + QStringLiteral(" without effect on the prediction");
        statusBar()->showMessage(summary, 15000);
        if (m_opts.interactive) {
            QMessageBox box(QMessageBox::Information, QStringLiteral("Import report"), summary, QMessageBox::Ok, this);
            box.setInformativeText(QStringLiteral("The plan is not saved yet. Details list every key of the file."));
            box.setDetailedText(m_import_report);
            box.exec();
        }
        return true;
    } catch (const InputError& e) {
        report_error(QString::fromStdString(e.what()));
        return false;
    }
}

bool MainWindow::open_dropped_file(const QString& path)
{
    try {
        if (is_scenario_text(read_text_file(path.toStdString())))
            return open_scenario_file(path);
    } catch (const InputError& e) {
        report_error(QString::fromStdString(e.what()));
        return false;
    }
    return import_launch_config(path);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* e)
{
    const QList<QUrl> urls = e->mimeData()->urls();
    if (urls.size() == 1 && urls.first().isLocalFile())
        e->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* e)
{
    const QList<QUrl> urls = e->mimeData()->urls();
    if (urls.size() != 1 || !urls.first().isLocalFile())
        return;
    e->acceptProposedAction();
    if (confirm_discard())
        open_dropped_file(urls.first().toLocalFile());
}

bool MainWindow::open_scenario_preset(const QString& name)
{
    try {
        const Scenario s = load_scenario_preset(name.toStdString(), PresetCatalog::standard());
        clear_error();
        m_doc->reset(s, QString(), name);
        const int index = m_presets->findText(name);
        if (index >= 0)
            m_presets->setCurrentIndex(index);
        m_autosave->discard();
        return true;
    } catch (const InputError& e) {
        report_error(QString::fromStdString(e.what()));
        return false;
    }
}

void MainWindow::new_scenario()
{
    try {
        const Scenario s = load_scenario_preset("default", PresetCatalog::standard());
        clear_error();
        m_doc->reset(s, QString(), QStringLiteral("Untitled"));
        m_presets->setCurrentIndex(-1);
    } catch (const InputError& e) {
        report_error(QString::fromStdString(e.what()));
    }
}

void MainWindow::apply_edit(const Scenario& s, const QString& what, int drag)
{
    if (!m_doc->has_scenario())
        return;
    clear_error();
    m_doc->apply(s, what, drag);
}

void MainWindow::apply_strategy(const Strategy& s, const QString& what)
{
    if (!scenario())
        return;
    Scenario next = *scenario();
    next.strategy = s;
    apply_edit(next, what, 0);
}

bool MainWindow::save()
{
    if (m_doc->path().isEmpty())
        return m_opts.interactive ? save_as_dialog() : false;
    return save_as(m_doc->path());
}

bool MainWindow::save_as(const QString& path)
{
    if (!scenario())
        return false;
    const PlanInputs in = plan_inputs(*scenario());
    const Rule r = check_strategy(in, scenario()->strategy);
    if (r != Rule::ok) {
        report_error(path + QStringLiteral(": not saved: the plan breaks a rule (")
            + QString::fromLatin1(rule_key(r, scenario()->strategy)) + QStringLiteral(": ")
            + QString::fromStdString(explain(r, in, scenario()->strategy))
            + QStringLiteral("); fix it first — your work is kept in the window and its autosave"));
        return false;
    }
    try {
        save_scenario_file(path.toStdString(), *scenario());
    } catch (const InputError& e) {
        report_error(QString::fromStdString(e.what()));
        return false;
    }
    const QString abs = QFileInfo(path).absoluteFilePath();
    m_doc->mark_saved(abs);
    m_settings->add_recent_file(abs);
    m_autosave->discard();
    clear_error();
    statusBar()->showMessage(QStringLiteral("Saved ") + abs, 5000);
    update_title();
    return true;
}

void MainWindow::open_dialog()
{
    if (!confirm_discard())
        return;
    const QString path = QFileDialog::getOpenFileName(
        this, QStringLiteral("Open scenario"), QString(), QStringLiteral("Scenario files (*.json);;All files (*)"));
    if (!path.isEmpty())
        open_scenario_file(path);
}

void MainWindow::import_dialog()
{
    if (!confirm_discard())
        return;
    const QString path = QFileDialog::getOpenFileName(this, QStringLiteral("Import launch config"), QString(),
        QStringLiteral("Launch configs (*.sh *.yaml *.yml *.toml *.json *.txt);;All files (*)"));
    if (!path.isEmpty())
        import_launch_config(path);
}

bool MainWindow::save_as_dialog()
{
    const QString start = m_doc->path().isEmpty() ? m_doc->label() + QStringLiteral(".json") : m_doc->path();
    const QString path = QFileDialog::getSaveFileName(
        this, QStringLiteral("Save scenario"), start, QStringLiteral("Scenario files (*.json)"));
    return !path.isEmpty() && save_as(path);
}

bool MainWindow::confirm_discard()
{
    if (!m_opts.interactive || !m_doc->modified())
        return true;
    const auto answer = QMessageBox::question(this, QStringLiteral("Unsaved changes"),
        QStringLiteral("The plan has unsaved changes. Save them first?"),
        QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
    if (answer == QMessageBox::Save)
        return save();
    return answer == QMessageBox::Discard;
}

void MainWindow::showEvent(QShowEvent* e)
{
    QMainWindow::showEvent(e);
    if (m_sized)
        return;
    m_sized = true;
    // Dock sizes only take once the window has its size; the layout at this point is the default.
    if (!m_layout_restored)
        apply_default_sizes();
}

void MainWindow::apply_default_sizes()
{
    const int w = width();
    const int h = height();
    resizeDocks({ m_docks.value(QStringLiteral("strategy")), m_docks.value(QStringLiteral("scenario")) },
        { std::max(340, w * 23 / 100), std::max(260, w * 19 / 100) }, Qt::Horizontal);
    resizeDocks({ m_docks.value(QStringLiteral("grid")) }, { std::max(260, h * 36 / 100) }, Qt::Vertical);
    resizeDocks({ m_docks.value(QStringLiteral("grid")), m_docks.value(QStringLiteral("sensitivity")),
                    m_docks.value(QStringLiteral("learn")) },
        { w * 30 / 100, w * 40 / 100, w * 30 / 100 }, Qt::Horizontal);
}

void MainWindow::closeEvent(QCloseEvent* e)
{
    if (!confirm_discard()) {
        e->ignore();
        return;
    }
    if (m_opts.restore_layout) {
        m_settings->set_window_geometry(saveGeometry());
        m_settings->set_window_state(saveState(Settings::kLayoutVersion));
    }
    m_settings->set_sensitivity_degree(QString::fromLatin1(to_string(m_sensitivity->degree()).data()));
    m_settings->set_grid_dimension(QString::fromLatin1(to_string(m_grid->canvas()->dimension()).data()));
    e->accept();
}

void MainWindow::update_title()
{
    const QString label = m_doc->label().isEmpty() ? QStringLiteral("no scenario") : m_doc->label();
    setWindowTitle(QStringLiteral("Parallax — ") + label + QStringLiteral("[*]"));
    setWindowModified(m_doc->modified());
}

void MainWindow::rebuild_recent_menu()
{
    m_recent_menu->clear();
    m_recent_list->clear();
    const QStringList files = m_settings->recent_files();
    for (const QString& f : files) {
        QAction* a = m_recent_menu->addAction(QFileInfo(f).fileName(), this, [this, f] {
            if (confirm_discard())
                open_recent_file(f);
        });
        a->setToolTip(f);
        auto* item = new QListWidgetItem(QFileInfo(f).fileName(), m_recent_list);
        item->setToolTip(f);
        item->setData(Qt::UserRole, f);
    }
    if (!files.isEmpty()) {
        m_recent_menu->addSeparator();
        m_recent_menu->addAction(QStringLiteral("&Clear recent files"), m_settings, &Settings::clear_recent_files)
            ->setObjectName(QStringLiteral("clear_recent_files"));
    }
    m_recent_menu->setEnabled(!files.isEmpty());
}

bool MainWindow::open_recent_file(const QString& path)
{
    if (!QFileInfo(path).isFile()) {
        m_settings->remove_recent_file(path);
        report_error(path + QStringLiteral(": no longer exists (moved or deleted); removed from the recent files"));
        return false;
    }
    return open_scenario_file(path);
}

// ---------------------------------------------------------------------------------------------
// Evaluation

void MainWindow::scenario_changed(const Scenario& s, const QString& what)
{
    m_change_text = what;
    // Synchronous: the panels show the plan as it is now and know which values are reachable.
    m_strategy->set_scenario(s, m_options);
    m_grid->set_scenario(s, m_options);
    show_cluster_kind(s);
    m_model_form->set_scenario(s);
    m_cluster_form->set_scenario(s);
    m_training_form->set_scenario(s);
    m_search->set_scenario(s);
    m_remote->set_plan(s, m_doc->path().isEmpty() ? m_doc->label() : m_doc->path());
    update_title();
    m_evaluator->request(s, m_options);
}

// A mixed cluster (node groups) is drawn by its groups, and its stages are edited in the Stages panel,
// which comes to the front when such a plan is opened.
void MainWindow::show_cluster_kind(const Scenario& s)
{
    m_group_grid->set_scenario(s);
    m_stages->set_scenario(s);
    m_group_editor->set_scenario(s);
    m_cluster_stack->setCurrentWidget(
        s.cluster.heterogeneous() ? static_cast<QWidget*>(m_group_editor) : static_cast<QWidget*>(m_cluster_form));
    QWidget* grid = s.cluster.heterogeneous() ? m_grid_stack->widget(1) : m_grid_stack->widget(0);
    if (m_grid_stack->currentWidget() == grid)
        return;
    m_grid_stack->setCurrentWidget(grid);
    if (s.heterogeneous())
        m_docks.value(QStringLiteral("stages"))->raise();
}

void MainWindow::set_evaluation_options(const PlanEvaluationOptions& o)
{
    // The calibration is the window's choice (Settings), not the panels': a panel's copy may be older.
    std::shared_ptr<const Calibration> calibration = m_options.calibration;
    m_options = o;
    m_options.alternatives = true;
    m_options.calibration = std::move(calibration);
    if (scenario()) {
        m_strategy->set_scenario(*scenario(), m_options);
        m_grid->set_scenario(*scenario(), m_options);
        m_evaluator->request(*scenario(), m_options);
    }
}

void MainWindow::set_fidelity(Fidelity f)
{
    if (m_options.fidelity == f)
        return;
    m_options.fidelity = f;
    if (m_simulated_action && m_simulated_action->isChecked() != (f == Fidelity::simulated))
        m_simulated_action->setChecked(f == Fidelity::simulated);
    update_fidelity_label();
    if (scenario())
        m_evaluator->request(*scenario(), m_options);
}

void MainWindow::update_fidelity_label()
{
    // Short in the status bar ("calibration: builtin"), the whole statement on hover. A chosen calibration
    // that is not applied is said in the bar itself, in the colour of trouble: never silent.
    const QString full = fidelity_base_text();
    const int cut = full.indexOf(QStringLiteral(" ("), full.indexOf(QStringLiteral("calibration:")));
    QString shown = cut > 0 ? full.left(cut) : full;
    const QString note = calibration_note();
    if (!note.isEmpty() && m_current && m_current->options.calibration)
        shown += QStringLiteral(" · %1 NOT applied (fitted on %2, the plan is on %3)")
                     .arg(QString::fromStdString(m_current->options.calibration->name),
                         QString::fromStdString(m_current->options.calibration->gpu),
                         QString::fromStdString(m_current->scenario.cluster.gpu.name));
    m_fidelity_label->setText(shown);
    m_fidelity_label->setStyleSheet(note.isEmpty()
            ? QString()
            : QStringLiteral("QLabel { color: %1; }").arg(views::bad_colour(views::is_dark(palette())).name()));
    m_fidelity_label->setToolTip(fidelity_text() + QStringLiteral("\n\n") + calibration_details());
}

QString MainWindow::fidelity_text() const
{
    const QString note = calibration_note();
    return note.isEmpty() ? fidelity_base_text() : fidelity_base_text() + QStringLiteral(" · ") + note;
}

QString MainWindow::calibration_note() const
{
    // Judged on the evaluation shown (the plan's GPU and the calibration it was evaluated with).
    if (!m_current || !m_current->options.calibration)
        return {};
    return QString::fromStdString(
        calibration_not_applied(*m_current->options.calibration, m_current->scenario.cluster.gpu.name));
}

QString MainWindow::fidelity_base_text() const
{
    const QString fidelity = m_options.fidelity == Fidelity::simulated
        ? QStringLiteral("Fidelity: simulated (event simulator of the execution DAG)")
        : QStringLiteral("Fidelity: analytic (closed form)");
    // The calibration is the one the prediction names among its assumptions (core decides which).
    QString calibration = QStringLiteral("calibration: none (datasheet peaks × per-generation efficiencies)");
    if (m_current && m_current->valid)
        for (const std::string& a : m_current->prediction.assumptions)
            if (a.rfind("calibration:", 0) == 0) {
                calibration = QString::fromStdString(a);
                break;
            }
    return fidelity + QStringLiteral(" · ") + calibration;
}

void MainWindow::show_evaluation(std::shared_ptr<const PlanEvaluation> e)
{
    m_previous = m_current;
    m_current = std::move(e);
    display();
    m_timeline_stale = true;
    request_timeline();
    emit evaluated();
}

// A checked schedule program from the editor becomes the plan's custom schedule.
void MainWindow::apply_program(const ScheduleProgram* program)
{
    if (!m_current || !program)
        return;
    Scenario s = m_current->scenario;
    s.strategy.schedule = Schedule::custom;
    s.strategy.program = program;
    s.strategy.vpp = program_vpp(*program);
    apply_edit(s, QStringLiteral("schedule program"));
}

void MainWindow::apply_layer_ranges(const LayerRanges* ranges)
{
    if (!m_current)
        return;
    Scenario s = m_current->scenario;
    s.strategy.layers = ranges;
    apply_edit(s, ranges ? QStringLiteral("layer ranges") : QStringLiteral("no layer ranges"));
}

void MainWindow::display()
{
    if (!m_current)
        return;
    const PlanEvaluation& cur = *m_current;
    const Prediction* pinned = m_pinned && m_pinned->valid ? &m_pinned->prediction : nullptr;
    const Prediction* previous = m_previous && m_previous->valid ? &m_previous->prediction : nullptr;
    m_metrics->set_evaluation(cur, pinned, previous);
    if (cur.valid) {
        m_memory->set_prediction(cur.prediction);
        m_time->set_predictions(cur.prediction, pinned);
        m_power->set_prediction(cur.prediction);
        m_waterfall->set_waterfall(cur.improvements);
        m_goodput->set_curves(cur.goodput);
    } else {
        m_memory->clear();
        m_time->clear();
        m_power->clear();
        m_waterfall->clear();
        m_goodput->clear();
    }
    m_schedule_editor->set_plan(cur.scenario.strategy, microbatch_count(cur.scenario.training, cur.scenario.strategy));
    m_layer_editor->set_plan(cur.scenario);
    m_sensitivity->set_evaluation(m_current);
    m_heatmap->set_evaluation(m_current);
    m_stages->set_evaluation(m_current);
    m_comparison->set_predictions(cur.valid ? std::optional<Prediction>(cur.prediction) : std::nullopt,
        pinned ? std::optional<Prediction>(*pinned) : std::nullopt);
    m_learn->set_change(cur, previous, m_previous ? &m_previous->scenario.strategy : nullptr, m_change_text);
    const QString why = previous && cur.valid
        ? QString::fromStdString(why_moved(Metric::step_time, *previous, cur.prediction))
        : QString();
    m_strategy->set_why(why);
    update_fidelity_label();
    m_timing_label->setText(QStringLiteral("evaluated in %1 ms").arg(cur.seconds * 1e3, 0, 'f', 1));
    if (cur.valid)
        statusBar()->showMessage(QStringLiteral("%1 · %2 tokens/s · MFU %3%")
                                     .arg(views::format_seconds(cur.prediction.step_time_s),
                                         views::format_count(cur.prediction.tokens_per_s),
                                         QString::number(cur.prediction.mfu * 100, 'f', 1)));
    else
        statusBar()->showMessage(
            QStringLiteral("Not a valid plan: ") + QString::fromStdString(cur.violations.front().message));
}

bool MainWindow::wait_until(const std::function<bool()>& done, void (MainWindow::*signal)(), int timeout_ms)
{
    return app::wait_until(done, this, signal, timeout_ms);
}

bool MainWindow::wait_for_evaluation(int timeout_ms)
{
    return wait_until([this] { return m_evaluator->idle() && m_current; }, &MainWindow::evaluated, timeout_ms);
}

void MainWindow::show_plan_overlay()
{
    // The selected run measured this very plan (remote decides): its numbers go under the cards, its memory
    // per stage over the bars. Anything else (the probe's reduced workload, CPU ranks, another plan) stays in
    // the Runs panel's own overlay, which compares each run with the prediction of what it ran.
    const auto o = m_remote->plan_overlay();
    const auto value = [&](const char* metric, double scale) -> std::optional<views::MeasuredValue> {
        const remote::MetricComparison* m = o ? o->metric(metric) : nullptr;
        if (!m || !m->measured)
            return std::nullopt;
        views::MeasuredValue v;
        v.value = *m->measured * scale;
        if (m->spread_low)
            v.low = *m->spread_low * scale;
        if (m->spread_high)
            v.high = *m->spread_high * scale;
        v.error = m->error();
        v.source = QStringLiteral("run ") + QString::fromStdString(o->run_id);
        return v;
    };
    const double gpus = scenario() ? static_cast<double>(scenario()->strategy.total_gpus()) : 1.0;
    m_metrics->set_measured(Metric::step_time, value("step_time_s", 1.0));
    m_metrics->set_measured(Metric::tokens_per_s, value("tokens_per_s_per_gpu", gpus)); // the card is per job
    m_metrics->set_measured(Metric::tflops_per_gpu, value("tflops_per_gpu", 1.0));
    m_metrics->set_measured(Metric::peak_memory, value("memory_GiB", units::kGiB));
    m_metrics->set_measured(Metric::power, value("power_W", 1.0));
    std::vector<std::optional<views::MeasuredValue>> stages;
    if (o) {
        for (const remote::StageMemoryComparison& s : o->stages) {
            if (s.stage < 0 || !s.measured_GiB)
                continue;
            if (static_cast<int>(stages.size()) <= s.stage)
                stages.resize(static_cast<std::size_t>(s.stage) + 1);
            views::MeasuredValue v;
            v.value = *s.measured_GiB * units::kGiB;
            if (s.low_GiB)
                v.low = *s.low_GiB * units::kGiB;
            if (s.high_GiB)
                v.high = *s.high_GiB * units::kGiB;
            v.error = s.error();
            v.source = QStringLiteral("run ") + QString::fromStdString(o->run_id);
            stages[static_cast<std::size_t>(s.stage)] = v;
        }
    }
    m_memory->set_measured(std::move(stages));
}

void MainWindow::pin_current()
{
    if (!m_current)
        return;
    m_pinned = m_current;
    m_pinned_label
        = m_doc->label() + QStringLiteral(": ") + QString::fromStdString(strategy_label(m_current->scenario.strategy));
    statusBar()->showMessage(QStringLiteral("Pinned as plan A: ") + m_pinned_label, 5000);
    if (m_timeline->timeline_data())
        m_timeline->pin_current_as_baseline();
    display();
}

void MainWindow::clear_pin()
{
    m_pinned.reset();
    m_timeline->clear_comparison();
    display();
}

void MainWindow::request_timeline(bool force)
{
    QDockWidget* d = m_docks.value(QStringLiteral("timeline"));
    if (!m_current || !m_current->valid) {
        m_timeline->clear();
        m_timeline_stale = false;
        return;
    }
    // A dock behind another tab stays "visible" (moved off screen): only an on-screen timeline is
    // simulated; selecting its tab asks again.
    if (!force && (!d || !d->isVisible() || d->visibleRegion().isEmpty()))
        return;
    m_timeline_jobs->request(m_current->scenario, m_current->options.calibration);
}

void MainWindow::connect_jobs()
{
    connect(
        m_timeline_jobs, &TimelineController::timeline_ready, this, [this](std::shared_ptr<const TimelineData> data) {
            m_timeline->set_timeline_data(std::move(data));
            m_timeline_stale = false;
            emit timeline_updated();
        });
    connect(m_timeline_jobs, &TimelineController::timeline_failed, this,
        [this](const QString& error) { report_error(QStringLiteral("The timeline's simulation failed: ") + error); });
    connect(m_scaling, &views::ScalingPlot::run_requested, this, &MainWindow::run_scaling);
    connect(m_scaling, &views::ScalingPlot::cancel_requested, this, &MainWindow::cancel_scaling);
    connect(m_scaling_jobs, &ScalingController::progress, m_scaling, &views::ScalingPlot::set_progress);
    connect(m_scaling_jobs, &ScalingController::finished, this, [this](const ScalingSweepResult& r) {
        m_scaling->set_points(r.points, r.cluster_gpus);
        m_scaling->set_running(false,
            !r.error.isEmpty() ? QStringLiteral("The sweep failed: ") + r.error
                : r.stopped    ? QStringLiteral("Stopped.")
                               : QStringLiteral("Best plan per GPU count; circled points: adding GPUs stops paying or "
                                                   "the winning family changes."));
        if (!r.error.isEmpty())
            report_error(QStringLiteral("The scaling sweep failed: ") + r.error);
        emit scaling_finished();
    });
    connect(m_reports, &ReportController::report_written, this, [this](const QString& path, const QString& error) {
        if (!error.isEmpty())
            report_error(error);
        else
            statusBar()->showMessage(QStringLiteral("Report written to ") + path, 5000);
    });
}

bool MainWindow::wait_for_timeline(int timeout_ms)
{
    show_panel(QStringLiteral("timeline"));
    QElapsedTimer clock;
    clock.start();
    if (!wait_for_evaluation(timeout_ms))
        return false;
    if (m_timeline_stale)
        request_timeline(true);
    return wait_until([this] { return !m_timeline_stale; }, &MainWindow::timeline_updated,
        std::max<int>(1, timeout_ms - static_cast<int>(clock.elapsed())));
}

void MainWindow::run_scaling()
{
    if (!scenario() || m_scaling_jobs->running())
        return;
    const std::size_t counts = m_scaling_jobs->start(*scenario(), m_options.calibration);
    m_scaling->set_running(true, QStringLiteral("Searching the best plan at %1 GPU counts...").arg(counts));
}

void MainWindow::cancel_scaling()
{
    m_scaling_jobs->cancel();
}

bool MainWindow::scaling_running() const
{
    return m_scaling_jobs->running();
}

// ---------------------------------------------------------------------------------------------
// Calibration: the one the plan is evaluated with, and fitting one to the stored runs

namespace {

// The calibration in `path`; null with `error` set when the file cannot be read or is no calibration.
std::shared_ptr<const Calibration> load_calibration(const QString& path, QString& error)
{
    const std::string file = path.toStdString();
    try {
        return std::make_shared<const Calibration>(
            calibration_from_json(parse_json_text(read_text_file(file), file), file));
    } catch (const InputError& e) {
        error = QString::fromStdString(e.what());
        return nullptr;
    }
}

} // namespace

bool MainWindow::use_calibration_file(const QString& path)
{
    QString error;
    std::shared_ptr<const Calibration> c = load_calibration(path, error);
    if (!c) {
        report_error(QStringLiteral("calibration not changed: ") + error);
        return false;
    }
    set_calibration(std::move(c), QFileInfo(path).absoluteFilePath());
    return true;
}

void MainWindow::use_shipped_calibration()
{
    set_calibration(nullptr, QString::fromLatin1(Settings::kShippedCalibration));
}

void MainWindow::use_no_calibration()
{
    set_calibration(
        std::make_shared<const Calibration>(no_calibration()), QString::fromLatin1(Settings::kNoCalibration));
}

void MainWindow::set_calibration(std::shared_ptr<const Calibration> c, const QString& choice)
{
    const bool is_file
        = choice != QLatin1String(Settings::kShippedCalibration) && choice != QLatin1String(Settings::kNoCalibration);
    m_options.calibration = std::move(c);
    m_core_search->set_calibration(m_options.calibration);
    m_calibration_path = is_file ? choice : QString();
    m_settings->set_calibration(choice);
    update_calibration_actions();
    statusBar()->showMessage(QStringLiteral("Calibration: ") + QString::fromStdString(calibration().name)
            + (is_file ? QStringLiteral(" from ") + choice : QString()),
        5000);
    if (scenario()) {
        m_strategy->set_scenario(*scenario(), m_options);
        m_grid->set_scenario(*scenario(), m_options);
        m_evaluator->request(*scenario(), m_options);
    }
}

void MainWindow::restore_calibration()
{
    const QString choice = m_settings->calibration();
    m_calibration_path.clear();
    m_options.calibration.reset();
    if (choice == QLatin1String(Settings::kNoCalibration)) {
        m_options.calibration = std::make_shared<const Calibration>(no_calibration());
    } else if (choice != QLatin1String(Settings::kShippedCalibration)) {
        QString error;
        m_options.calibration = load_calibration(choice, error);
        if (m_options.calibration)
            m_calibration_path = choice;
        else // gone or broken since; Settings keep the file (it may come back, e.g. an unmounted share)
            report_error(QStringLiteral("the calibration chosen earlier cannot be used, the shipped one is: ") + error);
    }
    m_core_search->set_calibration(m_options.calibration);
    update_calibration_actions();
}

void MainWindow::update_calibration_actions()
{
    if (!m_calibration_actions[0])
        return;
    const int checked = !m_calibration_path.isEmpty() ? 2 : (m_options.calibration ? 1 : 0);
    m_calibration_actions[checked]->setChecked(true);
    m_calibration_actions[2]->setToolTip(m_calibration_path);
}

QString MainWindow::calibration_details() const
{
    const Calibration& c = calibration();
    QString out = QStringLiteral("Chosen calibration: ") + QString::fromStdString(c.name);
    if (!m_calibration_path.isEmpty())
        out += QStringLiteral("\nFile: ") + m_calibration_path;
    else
        out += m_options.calibration ? QStringLiteral(" (the physics alone)") : QStringLiteral(" (shipped)");
    if (!c.source.empty())
        out += QStringLiteral("\nSource: ") + QString::fromStdString(c.source);
    out += QStringLiteral("\nApplies to: ")
        + (c.gpu.empty() ? QStringLiteral("any GPU") : QString::fromStdString(c.gpu) + QStringLiteral(" only"));
    const nlohmann::json& p = c.provenance;
    if (p.is_object() && p.contains("runs") && p["runs"].is_array()) {
        const auto text = [&](const char* key) {
            return p.contains(key) && p[key].is_string() ? QString::fromStdString(p[key].get<std::string>())
                                                         : QString();
        };
        out += QStringLiteral("\nProvenance: %1 runs of %2 from %3, fitted %4")
                   .arg(p["runs"].size())
                   .arg(text("cluster").isEmpty() ? QStringLiteral("several clusters") : text("cluster"), text("store"),
                       text("fitted_at"));
    }
    return out;
}

void MainWindow::calibrate_from_runs(QStringList run_ids)
{
    if (run_ids.isEmpty())
        run_ids = m_remote->panel()->selected_run_ids();
    if (run_ids.isEmpty()) {
        statusBar()->showMessage(QStringLiteral("Select the runs to calibrate from in the Runs panel"), 8000);
        return;
    }
    if (!m_fit_dialog) {
        m_fit_dialog = new views::CalibrationFitDialog(this);
        connect(m_fit_dialog, &views::CalibrationFitDialog::save_requested, this, &MainWindow::save_calibration_dialog);
    }
    m_fit_dialog->set_running(run_ids.size() == 1
            ? QStringLiteral("Fitting a calibration to the runs of run %1's cluster...").arg(run_ids.front())
            : QStringLiteral("Fitting a calibration to %1 runs...").arg(run_ids.size()));
    m_fit_dialog->show();
    m_fit_dialog->raise();
    m_fit.reset();
    m_calibration_jobs->fit(m_remote->store_path(), run_ids);
}

views::CalibrationFitDialog* MainWindow::calibration_fit_dialog() const
{
    return m_fit_dialog;
}

bool MainWindow::wait_for_calibration_fit(int timeout_ms)
{
    return wait_until([this] { return m_fit != nullptr && !m_calibration_jobs->running(); },
        &MainWindow::calibration_fitted, timeout_ms);
}

void MainWindow::show_calibration_fit(std::shared_ptr<const remote::StoreFit> fit)
{
    m_fit = std::move(fit);
    views::CalibrationFitSummary s;
    const std::size_t fitted = m_fit->found.cases.size();
    s.fitted = m_fit->calibration.has_value();
    const QString cluster
        = m_fit->cluster.empty() ? QStringLiteral("several clusters") : QString::fromStdString(m_fit->cluster);
    if (s.fitted) {
        s.residuals = calibration_residuals(*m_fit->calibration);
        // The RMS before and after is the chart's own first line.
        s.headline = QStringLiteral("Fitted %1 runs of %2 on %3")
                         .arg(fitted)
                         .arg(cluster, QString::fromStdString(m_fit->calibration->gpu));
        s.details = QStringLiteral("%1 — %2. It applies to %3 plans only.")
                        .arg(QString::fromStdString(m_fit->calibration->name),
                            QString::fromStdString(m_fit->calibration->source),
                            QString::fromStdString(m_fit->calibration->gpu));
    } else {
        s.headline = QStringLiteral("No calibration: ") + QString::fromStdString(m_fit->error);
    }
    for (const remote::RejectedRun& r : m_fit->found.rejected)
        s.rejected.append(qMakePair(QString::fromStdString(r.run_id), QString::fromStdString(r.reason)));
    if (m_fit_dialog)
        m_fit_dialog->set_summary(s);
    statusBar()->showMessage(s.headline, 8000);
    emit calibration_fitted();
}

bool MainWindow::save_fitted_calibration(const QString& path, bool use)
{
    if (!m_fit || !m_fit->calibration)
        return false;
    try {
        write_text_file_atomically(path.toStdString(), calibration_to_json(*m_fit->calibration).dump(2) + "\n");
    } catch (const InputError& e) {
        report_error(QString::fromStdString(e.what()));
        return false;
    }
    statusBar()->showMessage(QStringLiteral("Calibration saved to ") + path, 5000);
    return !use || use_calibration_file(path);
}

void MainWindow::save_calibration_dialog(bool use)
{
    if (!m_fit || !m_fit->calibration)
        return;
    const QString start = QString::fromStdString(m_fit->cluster.empty() ? "runs" : m_fit->cluster)
        + QStringLiteral("-calibration.json");
    const QString path = QFileDialog::getSaveFileName(
        m_fit_dialog, QStringLiteral("Save calibration"), start, QStringLiteral("Calibration files (*.json)"));
    if (!path.isEmpty())
        save_fitted_calibration(path, use);
}

// ---------------------------------------------------------------------------------------------
// Errors, autosave, theme, layout

void MainWindow::report_error(const QString& message)
{
    // The previous plan stays on screen; the error is shown (banner and status bar), never swallowed.
    m_last_error = message;
    m_error_banner->setText(QStringLiteral("<b>Error:</b> ") + message.toHtmlEscaped());
    m_error_banner->setStyleSheet(QStringLiteral("QLabel { color: %1; border: 1px solid %1; padding: 4px; }")
                                      .arg(views::bad_colour(views::is_dark(palette())).name()));
    m_error_banner->show();
    statusBar()->showMessage(message);
}

void MainWindow::clear_error()
{
    m_last_error.clear();
    m_error_banner->hide();
}

QString MainWindow::error_text() const
{
    return m_error_banner->isHidden() ? QString() : m_error_banner->text();
}
QString MainWindow::status_text() const
{
    return statusBar()->currentMessage();
}

bool MainWindow::autosave_now(QString* error)
{
    return m_autosave->write_now(error);
}

QString MainWindow::autosave_file() const
{
    return m_autosave->file_path();
}

QStringList MainWindow::recoverable_autosaves() const
{
    return m_autosave->orphans();
}

bool MainWindow::recover_autosave(const QString& file)
{
    try {
        const RecoveredScenario r = m_autosave->recover(file);
        clear_error();
        statusBar()->showMessage(
            QStringLiteral("Recovered the plan autosaved at ") + r.saved_at.toLocalTime().toString(), 8000);
        return true;
    } catch (const InputError& e) {
        report_error(QString::fromStdString(e.what()));
        return false;
    }
}

void MainWindow::offer_recovery()
{
    for (const QString& file : recoverable_autosaves()) {
        QString when;
        try {
            when = Autosave::load(file).saved_at.toLocalTime().toString();
        } catch (const InputError& e) {
            Autosave::remove(file); // unreadable: nothing to recover
            continue;
        }
        const auto answer = QMessageBox::question(this, QStringLiteral("Recover unsaved plan?"),
            QStringLiteral("Parallax did not exit cleanly. A plan autosaved at %1 can be recovered. Recover it?")
                .arg(when),
            QMessageBox::Yes | QMessageBox::Discard, QMessageBox::Yes);
        if (answer == QMessageBox::Yes) {
            recover_autosave(file);
            return;
        }
        Autosave::remove(file);
    }
}

void MainWindow::abandon_autosave()
{
    m_autosave->abandon();
}

void MainWindow::set_theme(Theme t)
{
    m_settings->set_theme(t);
    apply_theme(t);
    if (m_theme_actions[static_cast<int>(t)])
        m_theme_actions[static_cast<int>(t)]->setChecked(true);
    // Colours baked into rich text (deltas, banners) follow the new palette.
    display();
    if (scenario())
        m_strategy->set_scenario(*scenario(), m_options);
}

void MainWindow::reset_layout()
{
    restoreState(m_default_layout, Settings::kLayoutVersion);
    for (QDockWidget* d : std::as_const(m_docks))
        d->show();
    apply_default_sizes();
    m_docks.value(QStringLiteral("scenario"))->raise();
    m_docks.value(QStringLiteral("sensitivity"))->raise();
    m_docks.value(QStringLiteral("learn"))->raise();
}
QByteArray MainWindow::save_layout() const
{
    return saveState(Settings::kLayoutVersion);
}
bool MainWindow::restore_layout(const QByteArray& state)
{
    return restoreState(state, Settings::kLayoutVersion);
}

void MainWindow::set_search_engine(std::shared_ptr<views::SearchEngine> engine)
{
    m_search->set_engine(std::move(engine));
}

// ---------------------------------------------------------------------------------------------
// Report

ReportInputs MainWindow::report_inputs()
{
    ReportInputs in;
    in.current = m_current;
    in.pinned = m_pinned;
    in.current_label = m_doc->label();
    in.pinned_label = m_pinned_label;
    in.fidelity = fidelity_text();
    in.version = QStringLiteral(PARALLAX_VERSION);
    in.images.push_back({ QStringLiteral("Memory per GPU by pipeline stage"), views::png_bytes(m_memory, 2) });
    in.images.push_back({ QStringLiteral("Where the step time goes"), views::png_bytes(m_time, 2) });
    in.images.push_back(
        { QStringLiteral("Sensitivity: ") + QString::fromLatin1(to_string(m_sensitivity->degree()).data()),
            views::png_bytes(m_sensitivity->plot(), 2) });
    in.images.push_back({ QStringLiteral("Throughput over TP × PP"), views::png_bytes(m_heatmap->plot(), 2) });
    in.images.push_back({ QStringLiteral("Cluster grid"), views::png_bytes(m_grid, 2) });
    // The timeline picture of the current plan, simulated now if its panel was never shown.
    if (m_current->valid && m_timeline_stale) {
        request_timeline(true);
        wait_until([this] { return !m_timeline_stale; }, &MainWindow::timeline_updated, 30000);
    }
    if (m_timeline->timeline_data()) {
        QByteArray png;
        QBuffer buffer(&png);
        buffer.open(QIODevice::WriteOnly);
        m_timeline->render_image().save(&buffer, "PNG");
        in.images.push_back({ QStringLiteral("Timeline of the simulated plan (one row per stage and stream)"), png });
    }
    return in;
}

bool MainWindow::export_report(const QString& path, QString* error)
{
    if (!m_current) {
        if (error)
            *error = QStringLiteral("no plan to report");
        return false;
    }
    return m_reports->write(report_inputs(), path, error);
}

void MainWindow::export_report_dialog()
{
    const QString path = QFileDialog::getSaveFileName(this, QStringLiteral("Export report"),
        m_doc->label().section(u'/', -1).section(u'.', 0, 0) + QStringLiteral("-report.html"),
        QStringLiteral("HTML (*.html)"));
    if (path.isEmpty())
        return;
    if (!m_current) {
        report_error(QStringLiteral("no plan to report"));
        return;
    }
    // The pictures are taken now; building the page and writing it happen on a worker.
    m_reports->write_in_background(report_inputs(), path);
}

} // namespace parallax::app

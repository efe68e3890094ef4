#include "gui/serving_window.hpp"

#include "gui/event_wait.hpp"
#include "io/export/serving_launch.hpp"
#include "io/preset_catalog.hpp"
#include "io/scenario_io.hpp"
#include "io/serving_io.hpp"
#include "io/serving_prediction_io.hpp"
#include "jobs/task_outcome.hpp"
#include "serving_mode/serving_controls.hpp"
#include "serving_mode/serving_curve_view.hpp"
#include "serving_mode/serving_metrics_panel.hpp"
#include "serving_mode/serving_search_table.hpp"
#include "spec/input_error.hpp"

#include <QCloseEvent>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QScrollArea>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QUndoCommand>
#include <QUndoStack>
#include <QtConcurrent/QtConcurrentRun>

namespace parallax::app {

// The search keeps this many deployments, as `parallax-cli search` does by default.
constexpr int kSearchTop = 10;

// One edit of the serving scenario: a snapshot before and after.
class ServingEditCommand : public QUndoCommand {
public:
    ServingEditCommand(ServingWindow* w, ServingScenario before, ServingScenario after, const QString& what)
        : QUndoCommand(what)
        , m_window(w)
        , m_before(std::move(before))
        , m_after(std::move(after))
    {
    }
    void undo() override { m_window->show_scenario(m_before); }
    void redo() override { m_window->show_scenario(m_after); }

private:
    ServingWindow* m_window;
    ServingScenario m_before;
    ServingScenario m_after;
};

ServingWindow::ServingWindow(bool interactive, QWidget* parent)
    : QMainWindow(parent)
    , m_interactive(interactive)
{
    setAttribute(Qt::WA_DeleteOnClose, interactive);
    m_undo = new QUndoStack(this);
    m_controls = new views::ServingControls(this);
    m_metrics = new views::ServingMetricsPanel(this);
    m_curve = new views::ServingCurveView(this);
    m_search = new views::ServingSearchTable(this);
    auto* scroll = new QScrollArea(this);
    scroll->setWidget(m_controls);
    scroll->setWidgetResizable(true);
    auto* tabs = new QTabWidget(this);
    m_tabs = tabs;
    tabs->addTab(m_curve, QStringLiteral("Latency–throughput"));
    tabs->addTab(m_search, QStringLiteral("Deployment search"));
    auto* right = new QSplitter(Qt::Vertical, this);
    right->addWidget(m_metrics);
    right->addWidget(tabs);
    right->setStretchFactor(1, 1);
    right->setSizes({ 280, 720 }); // the cards need little height; the curve and the table take the rest
    auto* split = new QSplitter(Qt::Horizontal, this);
    split->addWidget(scroll);
    split->addWidget(right);
    split->setStretchFactor(1, 1);
    setCentralWidget(split);
    m_status = new QLabel(this);
    statusBar()->addWidget(m_status, 1);
    m_pool.setMaxThreadCount(2); // one may finish a stale evaluation while the latest starts
    build_menus();
    connect(m_controls, &views::ServingControls::edited, this,
        [this](const ServingScenario& s, const QString& what) { apply_edit(s, what); });
    connect(m_search, &views::ServingSearchTable::search_requested, this, &ServingWindow::start_search);
    connect(m_search, &views::ServingSearchTable::cancel_requested, this, [this] { m_search_cancel.cancel(); });
    connect(m_search, &views::ServingSearchTable::apply_requested, this, [this](const Deployment& d) {
        ServingScenario s = m_scenario;
        s.deployment = d;
        apply_edit(s, QStringLiteral("apply ") + QString::fromStdString(deployment_label(d, s.replicas())));
    });
    connect(m_undo, &QUndoStack::cleanChanged, this, [this] { update_title(); });
    update_title();
}

ServingWindow::~ServingWindow()
{
    m_latest.cancel_all();
    m_search_cancel.cancel();
    m_pool.waitForDone();
}

void ServingWindow::build_menus()
{
    QMenu* file = menuBar()->addMenu(QStringLiteral("&File"));
    file->addAction(QStringLiteral("&Open serving scenario..."), QKeySequence::Open, this, [this] {
        if (!confirm_discard())
            return;
        const QString p = QFileDialog::getOpenFileName(this, QStringLiteral("Open serving scenario"), QString(),
            QStringLiteral("Scenario files (*.json);;All files (*)"));
        if (!p.isEmpty())
            open_file(p);
    });
    file->addAction(QStringLiteral("&Save"), QKeySequence::Save, this, [this] { save(); });
    file->addAction(QStringLiteral("Save &as..."), QKeySequence::SaveAs, this, [this] {
        const QString p = QFileDialog::getSaveFileName(
            this, QStringLiteral("Save serving scenario"), m_path, QStringLiteral("Scenario files (*.json)"));
        if (!p.isEmpty())
            save_as(p);
    });
    QMenu* exports = file->addMenu(QStringLiteral("&Export launch script"));
    for (ServingEngine e : { ServingEngine::vllm, ServingEngine::sglang, ServingEngine::trtllm })
        exports->addAction(
            QString::fromLatin1(to_string(e).data(), static_cast<int>(to_string(e).size())), this, [this, e] {
                const QString dir = QFileDialog::getExistingDirectory(this, QStringLiteral("Export launch script to"));
                if (!dir.isEmpty())
                    export_launch(e, dir);
            });
    file->addSeparator();
    file->addAction(QStringLiteral("&Close"), QKeySequence::Close, this, &QWidget::close);
    QMenu* edit = menuBar()->addMenu(QStringLiteral("&Edit"));
    QAction* undo = m_undo->createUndoAction(this, QStringLiteral("&Undo"));
    undo->setShortcut(QKeySequence::Undo);
    QAction* redo = m_undo->createRedoAction(this, QStringLiteral("&Redo"));
    redo->setShortcut(QKeySequence::Redo);
    edit->addAction(undo);
    edit->addAction(redo);
}

bool ServingWindow::open_file(const QString& path)
{
    try {
        set_scenario(load_serving_scenario_file(path.toStdString(), PresetCatalog::standard()),
            QFileInfo(path).absoluteFilePath());
        return true;
    } catch (const InputError& e) {
        report_error(QString::fromStdString(e.what()));
        return false;
    }
}

void ServingWindow::set_scenario(const ServingScenario& s, const QString& path)
{
    m_path = path;
    m_undo->clear();
    m_error.clear();
    show_scenario(s);
    update_title();
}

void ServingWindow::apply_edit(const ServingScenario& s, const QString& what)
{
    m_undo->push(new ServingEditCommand(this, m_scenario, s, what));
}

void ServingWindow::show_scenario(const ServingScenario& s)
{
    m_scenario = s;
    m_controls->set_scenario(s);
    m_status->setText(QStringLiteral("%1 on %2 × %3 (%4 GPUs) · %5")
                          .arg(QString::fromStdString(s.model.name))
                          .arg(s.cluster.nodes)
                          .arg(QString::fromStdString(s.cluster.gpu.name))
                          .arg(s.cluster.total_gpus())
                          .arg(QString::fromStdString(deployment_label(s))));
    request_evaluation();
}

void ServingWindow::request_evaluation()
{
    const LatestRequest::Ticket ticket = m_latest.next();
    const quint64 id = ticket.id;
    QtConcurrent::run(&m_pool, [s = m_scenario, token = ticket.token]() -> std::shared_ptr<const ServingEvaluation> {
        if (token.cancelled())
            return nullptr;
        TaskOutcome<ServingEvaluation> out = run_catching([&] { return evaluate_serving(s, token); });
        if (out.value)
            return std::make_shared<ServingEvaluation>(std::move(*out.value));
        ServingEvaluation failed; // an evaluation that threw is shown as a broken rule, never dropped
        failed.scenario = s;
        failed.error_key = "evaluation";
        failed.error = out.cancelled ? "cancelled" : out.error;
        return std::make_shared<ServingEvaluation>(std::move(failed));
    }).then(this, [this, id](std::shared_ptr<const ServingEvaluation> e) {
        if (!e || e->cancelled || !m_latest.is_latest(id))
            return;
        m_delivered = id;
        show_evaluation(std::move(e));
    });
}

void ServingWindow::show_evaluation(std::shared_ptr<const ServingEvaluation> e)
{
    m_evaluation = std::move(e);
    m_metrics->set_evaluation(*m_evaluation);
    m_curve->set_evaluation(*m_evaluation);
    emit evaluated();
}

void ServingWindow::start_search()
{
    if (m_search_running)
        return;
    m_search_running = true;
    m_search->set_running(true);
    m_search_cancel = CancelToken();
    QtConcurrent::run(&m_pool, [s = m_scenario, cancel = m_search_cancel] {
        return run_catching([&] { return search_serving(s, kSearchTop, cancel); });
    }).then(this, [this](TaskOutcome<ServingSearchResult> out) {
        m_search_running = false;
        // A cancel asked for is honoured even when the search finished first: the table stays as it was.
        if (m_search_cancel.cancelled() || (out.value && out.value->cancelled))
            m_search->set_cancelled();
        else if (out.value)
            show_search(*out.value);
        else
            m_search->set_failed(QString::fromStdString(out.error));
        emit searched();
    });
}

void ServingWindow::show_search(const ServingSearchResult& r)
{
    m_search->set_result(r);
    std::vector<views::ServingFrontPoint> front;
    for (const ServingCandidate& c : r.pareto)
        front.push_back({ c.prediction.output_tokens_per_s_per_user, c.prediction.output_tokens_per_s_per_gpu });
    m_curve->set_front(front);
}

QStringList ServingWindow::panel_names()
{
    return { QStringLiteral("window"), QStringLiteral("metrics"), QStringLiteral("curve"), QStringLiteral("search") };
}

QWidget* ServingWindow::panel(const QString& name)
{
    if (name == QStringLiteral("metrics"))
        return m_metrics;
    if (name == QStringLiteral("curve") || name == QStringLiteral("search")) {
        QWidget* w = name == QStringLiteral("curve") ? static_cast<QWidget*>(m_curve) : m_search;
        m_tabs->setCurrentWidget(w);
        return w;
    }
    return this;
}

bool ServingWindow::wait_for_evaluation(int timeout_ms)
{
    return wait_until([this] { return idle() && m_evaluation; }, this, &ServingWindow::evaluated, timeout_ms);
}

bool ServingWindow::wait_for_search(int timeout_ms)
{
    return wait_until([this] { return !m_search_running; }, this, &ServingWindow::searched, timeout_ms);
}

bool ServingWindow::export_launch(ServingEngine engine, const QString& folder)
{
    try {
        const LaunchConfig config = export_serving_launch(m_scenario, engine);
        for (const LaunchFile& f : config.files) {
            const QString path = QDir(folder).filePath(QString::fromStdString(f.name));
            write_text_file_atomically(path.toStdString(), f.content);
            if (f.mode & 0111)
                QFile(path).setPermissions(
                    QFile(path).permissions() | QFileDevice::ExeOwner | QFileDevice::ExeGroup | QFileDevice::ExeOther);
        }
        QStringList notes;
        for (const std::string& n : config.notes)
            notes << QString::fromStdString(n);
        statusBar()->showMessage(QStringLiteral("Wrote serve.sh to ") + folder, 8000);
        if (m_interactive && !notes.isEmpty())
            QMessageBox::information(this, QStringLiteral("Launch script written"), notes.join(QStringLiteral("\n\n")));
        return true;
    } catch (const std::exception& e) {
        report_error(folder + QStringLiteral(": not written: ") + QString::fromStdString(e.what()));
        return false;
    }
}

bool ServingWindow::is_modified() const
{
    return !m_undo->isClean();
}

bool ServingWindow::save()
{
    if (m_path.isEmpty()) {
        report_error(QStringLiteral("Not saved: the scenario has no file yet (File > Save as)."));
        return false;
    }
    return save_as(m_path);
}

bool ServingWindow::save_as(const QString& path)
{
    try {
        write_text_file_atomically(path.toStdString(), serving_scenario_to_json(m_scenario).dump(2) + "\n");
    } catch (const std::exception& e) {
        report_error(path + QStringLiteral(": not saved: ") + QString::fromStdString(e.what()));
        return false;
    }
    m_path = QFileInfo(path).absoluteFilePath();
    m_undo->setClean();
    update_title();
    statusBar()->showMessage(QStringLiteral("Saved ") + m_path, 5000);
    return true;
}

void ServingWindow::report_error(const QString& message)
{
    m_error = message;
    statusBar()->showMessage(message);
    if (m_interactive)
        QMessageBox::warning(this, QStringLiteral("Parallax"), message);
}

void ServingWindow::update_title()
{
    const QString label = m_path.isEmpty() ? QStringLiteral("unsaved serving scenario") : QFileInfo(m_path).fileName();
    setWindowTitle(QStringLiteral("Parallax serving — ") + label + QStringLiteral("[*]"));
    setWindowModified(is_modified());
}

bool ServingWindow::confirm_discard()
{
    if (!is_modified() || !m_interactive)
        return true; // without dialogs (tests, screenshots) nothing can be asked
    const auto answer = QMessageBox::question(this, QStringLiteral("Unsaved changes"),
        QStringLiteral("The serving scenario has unsaved changes. Save them?"),
        QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
    if (answer == QMessageBox::Save)
        return save();
    return answer == QMessageBox::Discard;
}

void ServingWindow::closeEvent(QCloseEvent* e)
{
    if (!confirm_discard()) {
        e->ignore();
        return;
    }
    e->accept();
}

} // namespace parallax::app

#include "gui/colocation_window.hpp"

#include "gui/event_wait.hpp"
#include "io/colocation_io.hpp"
#include "io/preset_catalog.hpp"
#include "jobs/task_outcome.hpp"
#include "serving_mode/colocation_view.hpp"
#include "spec/input_error.hpp"

#include <QFileDialog>
#include <QFileInfo>
#include <QMenuBar>
#include <QMessageBox>
#include <QStatusBar>
#include <QtConcurrent/QtConcurrentRun>

namespace parallax::app {

ColocationWindow::ColocationWindow(bool interactive, QWidget* parent)
    : QMainWindow(parent)
    , m_interactive(interactive)
{
    setAttribute(Qt::WA_DeleteOnClose, interactive);
    m_view = new views::ColocationView(this);
    setCentralWidget(m_view);
    QMenu* file = menuBar()->addMenu(QStringLiteral("&File"));
    file->addAction(QStringLiteral("&Open co-location scenario..."), QKeySequence::Open, this, [this] {
        const QString p = QFileDialog::getOpenFileName(this, QStringLiteral("Open co-location scenario"), QString(),
            QStringLiteral("Scenario files (*.json);;All files (*)"));
        if (!p.isEmpty())
            open_file(p);
    });
    file->addAction(QStringLiteral("&Close"), QKeySequence::Close, this, &QWidget::close);
    setWindowTitle(QStringLiteral("Parallax co-location"));
}

ColocationWindow::~ColocationWindow()
{
    m_pool.waitForDone();
}

bool ColocationWindow::open_file(const QString& path)
{
    try {
        const ColocationScenario s = load_colocation_scenario_file(path.toStdString(), PresetCatalog::standard());
        setWindowTitle(QStringLiteral("Parallax co-location — ") + QFileInfo(path).fileName());
        m_error.clear();
        plan(s);
        return true;
    } catch (const InputError& e) {
        m_error = QString::fromStdString(e.what());
        statusBar()->showMessage(m_error);
        if (m_interactive)
            QMessageBox::warning(this, QStringLiteral("Parallax"), m_error);
        return false;
    }
}

void ColocationWindow::plan(const ColocationScenario& s)
{
    m_running = true;
    statusBar()->showMessage(QStringLiteral("Placing the models..."));
    QtConcurrent::run(&m_pool, [s] {
        return run_catching([&] { return evaluate_colocation(s); });
    }).then(this, [this](TaskOutcome<ColocationEvaluation> out) {
        m_running = false;
        if (out.value) {
            m_evaluation = std::make_shared<const ColocationEvaluation>(std::move(*out.value));
            m_view->set_evaluation(*m_evaluation);
            statusBar()->showMessage(m_view->summary());
        } else {
            m_error = QStringLiteral("The placement failed: ") + QString::fromStdString(out.error);
            statusBar()->showMessage(m_error);
        }
        emit evaluated();
    });
}

bool ColocationWindow::wait_for_evaluation(int timeout_ms)
{
    return wait_until([this] { return !m_running && m_evaluation; }, this, &ColocationWindow::evaluated, timeout_ms);
}

} // namespace parallax::app

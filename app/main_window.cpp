#include "main_window.hpp"

#include "analytic_model.hpp"
#include "input_error.hpp"
#include "prediction_text_view.hpp"
#include "preset_catalog.hpp"
#include "scenario_io.hpp"

#include <QAction>
#include <QComboBox>
#include <QFileDialog>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QStatusBar>
#include <QToolBar>

namespace parallax::app {

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent)
{
    setWindowTitle(QStringLiteral("Parallax"));
    m_view = new views::PredictionTextView(this);
    setCentralWidget(m_view);

    auto* file = menuBar()->addMenu(QStringLiteral("&File"));
    auto* open = file->addAction(QStringLiteral("&Open scenario..."), this, &MainWindow::open_dialog);
    open->setShortcut(QKeySequence::Open);
    file->addSeparator();
    auto* quit = file->addAction(QStringLiteral("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);

    auto* bar = addToolBar(QStringLiteral("Scenario"));
    bar->setObjectName(QStringLiteral("scenario_toolbar"));
    bar->addWidget(new QLabel(QStringLiteral(" Scenario preset: "), bar));
    m_presets = new QComboBox(bar);
    for (const auto& name : PresetCatalog::standard().names(PresetKind::scenarios))
        m_presets->addItem(QString::fromStdString(name));
    bar->addWidget(m_presets);
    connect(m_presets, &QComboBox::textActivated, this, [this](const QString& name) { open_scenario_preset(name); });
    resize(1000, 720);
}

void MainWindow::open_dialog()
{
    const QString path = QFileDialog::getOpenFileName(
        this, QStringLiteral("Open scenario"), QString(), QStringLiteral("Scenario files (*.json);;All files (*)"));
    if (!path.isEmpty())
        open_scenario_file(path);
}

bool MainWindow::open_scenario_file(const QString& path)
{
    try {
        const Scenario s = load_scenario_file(path.toStdString(), PresetCatalog::standard());
        show_scenario(s, path);
        return true;
    } catch (const InputError& e) {
        report_error(QString::fromStdString(e.what()));
        return false;
    }
}

bool MainWindow::open_scenario_preset(const QString& name)
{
    try {
        const Scenario s = load_scenario_preset(name.toStdString(), PresetCatalog::standard());
        const int index = m_presets->findText(name);
        if (index >= 0)
            m_presets->setCurrentIndex(index);
        show_scenario(s, name);
        return true;
    } catch (const InputError& e) {
        report_error(QString::fromStdString(e.what()));
        return false;
    }
}

void MainWindow::show_scenario(const Scenario& s, const QString& label)
{
    m_scenario = s;
    m_last_error.clear();
    const PlanContext ctx(s.model, s.training, s.cluster);
    const Prediction p = AnalyticModel(ctx).predict(s.strategy);
    m_view->show_prediction(s, p);
    setWindowTitle(QStringLiteral("Parallax — ") + label);
    statusBar()->showMessage(QStringLiteral("Fidelity: analytic · calibration: none (datasheet peaks × per-generation efficiencies)"));
}

void MainWindow::report_error(const QString& message)
{
    // The previous plan stays on screen; the error is shown, never swallowed.
    m_last_error = message;
    statusBar()->showMessage(message);
    if (isVisible())
        QMessageBox::warning(this, QStringLiteral("Cannot open scenario"), message);
}

} // namespace parallax::app

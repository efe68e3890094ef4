// Importing launch configurations in the planner: File > Import, and a file dropped on the window (a
// scenario opens as it does with File > Open, anything else is imported); the report is kept and summarised
// in the status bar; a bad file shows its error and keeps the plan.
#include "gui/main_window.hpp"
#include "gui/settings.hpp"
#include "io/preset_catalog.hpp"
#include "io/scenario_io.hpp"

#include "../support/planner_test_main.hpp"

#include <QAction>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QMenu>
#include <QMenuBar>
#include <QMimeData>
#include <QTemporaryDir>
#include <QTest>
#include <QUrl>

#include <memory>

using namespace parallax;
using parallax::app::MainWindow;

namespace {

QString data(const char* rel)
{
    return QStringLiteral(PARALLAX_SOURCE_DIR "/tests/data/import/") + QLatin1String(rel);
}

struct Fixture {
    QTemporaryDir dir;
    std::unique_ptr<app::Settings> settings;
    std::unique_ptr<MainWindow> window;

    Fixture()
    {
        settings = std::make_unique<app::Settings>(dir.filePath(QStringLiteral("settings.ini")), nullptr);
        settings->set_autosave_dir(dir.filePath(QStringLiteral("autosave")));
        MainWindow::Options o;
        o.restore_layout = false;
        o.settings = settings.get();
        window = std::make_unique<MainWindow>(o);
        window->show();
        if (!QTest::qWaitForWindowExposed(window.get()))
            qWarning("window not exposed");
        if (!window->open_scenario_preset(QStringLiteral("gpt3-175b-1024-a100")))
            qWarning("%s", qPrintable(window->last_error()));
    }
    // Drags `path` over the window and drops it, as a file manager does.
    bool drop(const QString& path)
    {
        QMimeData mime;
        mime.setUrls({ QUrl::fromLocalFile(path) });
        const QPoint at = window->rect().center();
        QDragEnterEvent enter(at, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(window.get(), &enter);
        if (!enter.isAccepted())
            return false;
        QDropEvent drop(QPointF(at), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(window.get(), &drop);
        return drop.isAccepted();
    }
};

} // namespace

class TestImportGui : public QObject {
    Q_OBJECT

private slots:
    void file_menu_has_import();
    void import_makes_an_unsaved_plan_with_its_report();
    void dropped_launch_config_is_imported();
    void dropped_scenario_opens();
    void bad_file_keeps_the_plan();
};

void TestImportGui::file_menu_has_import()
{
    Fixture f;
    QAction* import = nullptr;
    for (QAction* menu : f.window->menuBar()->actions())
        if (menu->menu() && menu->text() == QStringLiteral("&File"))
            for (QAction* a : menu->menu()->actions())
                if (a->text().startsWith(QStringLiteral("&Import")))
                    import = a;
    QVERIFY(import);
    QCOMPARE(import->shortcut(), QKeySequence(Qt::CTRL | Qt::Key_I));
}

// The default scenario's plan as a Megatron-LM script becomes the default scenario's plan.
void TestImportGui::import_makes_an_unsaved_plan_with_its_report()
{
    Fixture f;
    QVERIFY(f.window->import_launch_config(data("megatron/llama3_70b_default_plan.sh")));
    const Scenario reference = load_scenario_preset("default", PresetCatalog::standard());
    QVERIFY(f.window->scenario()->strategy == reference.strategy);
    QCOMPARE(f.window->scenario()->model.name, std::string("llama3-70b"));
    QVERIFY(f.window->is_modified());
    QVERIFY(f.window->current_path().isEmpty()); // Save asks where
    QVERIFY(f.window->last_import_report().contains(QStringLiteral("--tensor-model-parallel-size 4 -> strategy.tp")));
    QVERIFY(
        f.window->status_text().startsWith(QStringLiteral("Imported llama3_70b_default_plan.sh as megatron-args: ")));
    QVERIFY(f.window->wait_for_evaluation());
    QVERIFY(f.window->evaluation()->valid);
    QCOMPARE(f.window->evaluation()->scenario.strategy.vpp, 5);
}

void TestImportGui::dropped_launch_config_is_imported()
{
    Fixture f;
    QVERIFY(f.drop(data("nemo/llama3_70b.yaml")));
    QCOMPARE(f.window->scenario()->strategy.tp, 4);
    QCOMPARE(f.window->scenario()->cluster.total_gpus(), 1024LL);
    QVERIFY(f.window->last_import_report().contains(QStringLiteral("imported as nemo-yaml")));
    QVERIFY(f.window->error_text().isEmpty());
}

void TestImportGui::dropped_scenario_opens()
{
    Fixture f;
    const QString path = f.dir.filePath(QStringLiteral("mine.json"));
    save_scenario_file(path.toStdString(), load_scenario_preset("default", PresetCatalog::standard()));
    QVERIFY(f.drop(path));
    QCOMPARE(f.window->current_path(), path);
    QVERIFY(!f.window->is_modified());
    QVERIFY(f.window->last_import_report().isEmpty());
}

void TestImportGui::bad_file_keeps_the_plan()
{
    Fixture f;
    const Strategy before = f.window->scenario()->strategy;
    QVERIFY(!f.window->import_launch_config(data("deepspeed/ds_zero2_config.json"))); // no model in it
    QVERIFY(f.window->error_text().contains(QStringLiteral("ds_zero2_config.json: --model: ")));
    QVERIFY(f.window->scenario()->strategy == before);
}

PARALLAX_PLANNER_TEST_MAIN(TestImportGui)
#include "tst_import_gui.moc"

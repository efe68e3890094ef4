// The first main window: opens scenario presets and files, and on bad input keeps the previous plan
// and says what is wrong (file, key, rule).
#include "gui/main_window.hpp"

#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QImage>
#include <QPixmap>
#include <QTemporaryDir>
#include <QTemporaryFile>
#include <QTest>

using parallax::app::MainWindow;

namespace {

const QByteArray kValid = R"({
  "schema": 1,
  "model": "llama3-8b",
  "cluster": { "gpu": "H100-SXM5-80GB", "nodes": 2, "gpus_per_node": 8,
               "intra_node": "nvlink4-nvswitch", "inter_node": "ib-ndr" },
  "training": { "global_batch": 64, "seq_len": 4096, "precision": "bf16" },
  "strategy": { "tp": 2, "pp": 2, "dp": 4 }
})";

bool write_temp(QTemporaryFile& f, const QByteArray& bytes)
{
    if (!f.open())
        return false;
    const bool ok = f.write(bytes) == bytes.size();
    f.close();
    return ok;
}

} // namespace

class TestMainWindow : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void starts_empty();
    void opens_default_preset();
    void preset_combo_lists_scenarios();
    void bad_file_keeps_previous_plan_data();
    void bad_file_keeps_previous_plan();
    void missing_file_keeps_previous_plan();
    void unknown_preset_keeps_previous_plan();
    void opens_valid_file();
    void shows_offscreen();
};

void TestMainWindow::initTestCase()
{
    QCOMPARE(QGuiApplication::platformName(), QStringLiteral("offscreen"));
    QVERIFY(QCoreApplication::testAttribute(Qt::AA_Use96Dpi));
}

void TestMainWindow::starts_empty()
{
    MainWindow w;
    QVERIFY(!w.scenario().has_value());
    QVERIFY(w.last_error().isEmpty());
}

void TestMainWindow::opens_default_preset()
{
    MainWindow w;
    QVERIFY2(w.open_scenario_preset(QStringLiteral("default")), qPrintable(w.last_error()));
    QVERIFY(w.scenario().has_value());
    QVERIFY(w.last_error().isEmpty());
    QVERIFY(!w.scenario()->model.name.empty());
    QCOMPARE(w.scenario()->strategy.total_gpus(), w.scenario()->cluster.total_gpus());
    QVERIFY(w.windowTitle().contains(QStringLiteral("default")));
}

void TestMainWindow::preset_combo_lists_scenarios()
{
    MainWindow w;
    auto* combo = w.findChild<QComboBox*>(QStringLiteral("scenario_presets"));
    QVERIFY(combo != nullptr);
    QVERIFY(combo->findText(QStringLiteral("default")) >= 0);
    QVERIFY(combo->count() >= 5);
    const QString other = combo->itemText(combo->findText(QStringLiteral("default")) == 0 ? 1 : 0);
    QVERIFY2(w.open_scenario_preset(other), qPrintable(w.last_error()));
    QCOMPARE(combo->currentText(), other);
    // A plan from a file is no preset: the combo says so instead of naming the last preset.
    QTemporaryFile file(QDir::tempPath() + QStringLiteral("/preset-combo-XXXXXX.json"));
    QVERIFY(write_temp(file, kValid));
    QVERIFY2(w.open_scenario_file(file.fileName()), qPrintable(w.last_error()));
    QCOMPARE(combo->currentIndex(), -1);
    QVERIFY(combo->currentText().isEmpty());
    QVERIFY2(w.open_scenario_preset(other), qPrintable(w.last_error()));
    QCOMPARE(combo->currentText(), other);
}

void TestMainWindow::bad_file_keeps_previous_plan_data()
{
    QTest::addColumn<QByteArray>("content");
    QTest::addColumn<QString>("key");
    QTest::newRow("malformed JSON") << kValid.left(kValid.size() / 2) << QStringLiteral("line");
    QTest::newRow("tp string") << QByteArray(kValid).replace("\"tp\": 2", "\"tp\": \"2\"")
                               << QStringLiteral("strategy.tp");
    QTest::newRow("unknown key") << QByteArray(kValid).replace("\"dp\": 4", "\"dp\": 4, \"db\": 4")
                                 << QStringLiteral("strategy.db");
    QTest::newRow("unknown model") << QByteArray(kValid).replace("llama3-8b", "llama-9") << QStringLiteral("model");
    QTest::newRow("degrees != GPUs") << QByteArray(kValid).replace("\"dp\": 4", "\"dp\": 3")
                                     << QStringLiteral("strategy.dp");
    QTest::newRow("empty") << QByteArray() << QStringLiteral("JSON");
}

void TestMainWindow::bad_file_keeps_previous_plan()
{
    QFETCH(QByteArray, content);
    QFETCH(QString, key);
    MainWindow w;
    QVERIFY(w.open_scenario_preset(QStringLiteral("default")));
    const auto before = *w.scenario();
    const QString title = w.windowTitle();

    QTemporaryFile bad(QDir::tempPath() + QStringLiteral("/bad-scenario-XXXXXX.json"));
    QVERIFY(write_temp(bad, content));
    QVERIFY(!w.open_scenario_file(bad.fileName()));
    QVERIFY2(w.last_error().contains(bad.fileName()), qPrintable(w.last_error()));
    QVERIFY2(w.last_error().contains(key), qPrintable(w.last_error()));
    // The previous plan is still the plan.
    QVERIFY(w.scenario().has_value());
    QCOMPARE(QString::fromStdString(w.scenario()->model.name), QString::fromStdString(before.model.name));
    QVERIFY(w.scenario()->strategy == before.strategy);
    QCOMPARE(w.scenario()->cluster.total_gpus(), before.cluster.total_gpus());
    QCOMPARE(w.windowTitle(), title);
}

void TestMainWindow::missing_file_keeps_previous_plan()
{
    MainWindow w;
    QVERIFY(w.open_scenario_preset(QStringLiteral("default")));
    const auto before = *w.scenario();
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("missing.json"));
    QVERIFY(!w.open_scenario_file(path));
    QVERIFY2(w.last_error().contains(path), qPrintable(w.last_error()));
    QVERIFY(w.scenario().has_value());
    QVERIFY(w.scenario()->strategy == before.strategy);
    // A window with no plan yet stays without one.
    MainWindow empty;
    QVERIFY(!empty.open_scenario_file(path));
    QVERIFY(!empty.scenario().has_value());
    QVERIFY(!empty.last_error().isEmpty());
}

void TestMainWindow::unknown_preset_keeps_previous_plan()
{
    MainWindow w;
    QVERIFY(w.open_scenario_preset(QStringLiteral("default")));
    const auto before = *w.scenario();
    QVERIFY(!w.open_scenario_preset(QStringLiteral("no-such-scenario")));
    QVERIFY2(w.last_error().contains(QStringLiteral("no-such-scenario")), qPrintable(w.last_error()));
    QVERIFY(w.scenario()->strategy == before.strategy);
}

void TestMainWindow::opens_valid_file()
{
    MainWindow w;
    QVERIFY(w.open_scenario_preset(QStringLiteral("default")));
    QTemporaryFile good(QDir::tempPath() + QStringLiteral("/good-scenario-XXXXXX.json"));
    QVERIFY(write_temp(good, kValid));
    QVERIFY2(w.open_scenario_file(good.fileName()), qPrintable(w.last_error()));
    QVERIFY(w.last_error().isEmpty());
    QVERIFY(w.scenario().has_value());
    QCOMPARE(QString::fromStdString(w.scenario()->model.name), QStringLiteral("llama3-8b"));
    QCOMPARE(w.scenario()->strategy.tp, 2);
    QCOMPARE(w.scenario()->strategy.pp, 2);
    QCOMPARE(w.scenario()->strategy.dp, 4);
    QVERIFY(w.windowTitle().contains(good.fileName()));
    // An error is reported until the next successful open clears it.
    QVERIFY(!w.open_scenario_preset(QStringLiteral("nope")));
    QVERIFY(!w.last_error().isEmpty());
    QVERIFY(w.open_scenario_file(good.fileName()));
    QVERIFY(w.last_error().isEmpty());
}

void TestMainWindow::shows_offscreen()
{
    MainWindow w;
    QVERIFY(w.open_scenario_preset(QStringLiteral("default")));
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    const QImage image = w.grab().toImage();
    QVERIFY(!image.isNull());
    QVERIFY(image.width() > 100 && image.height() > 100);
    // Switching plans while shown (valid input only: an error would open a modal message box).
    QTemporaryFile good(QDir::tempPath() + QStringLiteral("/shown-scenario-XXXXXX.json"));
    QVERIFY(write_temp(good, kValid));
    QVERIFY(w.open_scenario_file(good.fileName()));
    w.close();
}

// Headless and 96 DPI so fonts and metrics are the same everywhere (STYLE.md, Tests).
int main(int argc, char** argv)
{
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication::setAttribute(Qt::AA_Use96Dpi);
    QApplication app(argc, argv);
    TestMainWindow test;
    QTEST_SET_MAIN_SOURCE_PATH
    return QTest::qExec(&test, argc, argv);
}

#include "tst_main_window.moc"

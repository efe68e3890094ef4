// The planner's co-location view (docs/serving.md, "Co-location"): a co-location file opens in its own
// window, placed off the GUI thread; the pool shows each model on as many GPUs as its placement holds and
// the rest idle; the table and the residency curves have a row and a curve per model with the plan's own
// numbers; the main window hands co-location files to this window.
#include "gui/colocation_window.hpp"
#include "gui/main_window.hpp"
#include "gui/settings.hpp"
#include "io/colocation_io.hpp"
#include "io/preset_catalog.hpp"
#include "plots/qcustomplot_include.hpp"
#include "serving_mode/colocation_pool_canvas.hpp"
#include "serving_mode/colocation_view.hpp"

#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

#include "../support/planner_test_main.hpp"
#include "../support/test_main_window.hpp"

using namespace parallax;
using parallax::app::ColocationWindow;

namespace {

const QString kExample = QStringLiteral(PARALLAX_SOURCE_DIR "/docs/examples/colocation-three-models-8-mixed.json");

ColocationScenario example()
{
    return load_colocation_scenario_file(kExample.toStdString(), PresetCatalog::standard());
}

} // namespace

class TestColocationWindow : public QObject {
    Q_OBJECT
private slots:
    void gridHoldsEachPlacement();
    void windowShowsThePlan();
    void mainWindowOpensColocationFiles();
    void badFileNamesTheKey();
};

void TestColocationWindow::gridHoldsEachPlacement()
{
    const ColocationScenario s = example();
    const ColocationResult r = plan_colocation(s);
    const std::vector<ColocationGridGroup> grid = colocation_grid(s, r);
    QCOMPARE(grid.size(), pool_groups(s.cluster).size());
    long long total = 0, idle = 0;
    std::vector<long long> cells(r.models.size(), 0);
    for (const ColocationGridGroup& g : grid) {
        QCOMPARE(static_cast<int>(g.model_of_gpu.size()), g.nodes * g.gpus_per_node);
        for (int m : g.model_of_gpu) {
            ++total;
            if (m < 0)
                ++idle;
            else
                ++cells[static_cast<std::size_t>(m)];
        }
    }
    long long used = 0;
    for (std::size_t m = 0; m < r.models.size(); ++m) {
        QCOMPARE(cells[m], r.models[m].placed ? static_cast<long long>(r.models[m].placement.gpus()) : 0LL);
        used += cells[m];
    }
    QCOMPARE(idle, total - used);
}

void TestColocationWindow::windowShowsThePlan()
{
    ColocationWindow w(false);
    w.resize(1400, 900);
    w.show();
    QVERIFY(w.open_file(kExample));
    QVERIFY(w.wait_for_evaluation(60000));
    const ColocationResult& r = w.evaluation()->result;
    QCOMPARE(w.view()->table()->rowCount(), static_cast<int>(r.models.size()));
    QCOMPARE(w.view()->residency_plot()->graphCount(), static_cast<int>(r.models.size()));
    for (int row = 0; row < w.view()->table()->rowCount(); ++row)
        QCOMPARE(w.view()->table()->item(row, 0)->text(),
            QString::fromStdString(r.models[static_cast<std::size_t>(row)].name));
    // The first GPU of the first group holds whichever model the plan put there first.
    const ColocationGridGroup& first = w.evaluation()->grid.front();
    const QString expected = first.model_of_gpu.front() < 0
        ? QString()
        : QString::fromStdString(r.models[static_cast<std::size_t>(first.model_of_gpu.front())].name);
    QCOMPARE(w.view()->pool()->model_at(0, 0), expected);
    QVERIFY2(w.view()->summary().contains(QStringLiteral("meet their SLO")), qPrintable(w.view()->summary()));
    QCOMPARE(w.view()->advice().isEmpty(), r.suggestion.empty() && r.warnings.empty());
    QVERIFY(w.view()->csv().startsWith(QStringLiteral("model,residency,relative_throughput")));
}

void TestColocationWindow::mainWindowOpensColocationFiles()
{
    test::TestMainWindow fixture;
    app::MainWindow& main = fixture.window;
    QVERIFY(main.open_scenario_file(kExample));
    const auto opened = main.findChildren<ColocationWindow*>();
    QCOMPARE(opened.size(), 1);
    QVERIFY(opened.front()->wait_for_evaluation(60000));
}

void TestColocationWindow::badFileNamesTheKey()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("bad.json"));
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(R"({"schema": 1, "cluster": "dgx-h100-superpod", "colocation": {"models": []}})");
    f.close();
    ColocationWindow w(false);
    QVERIFY(!w.open_file(path));
    QVERIFY2(
        w.last_error().contains(QStringLiteral("bad.json")) && w.last_error().contains(QStringLiteral("colocation")),
        qPrintable(w.last_error()));
}

PARALLAX_PLANNER_TEST_MAIN(TestColocationWindow)
#include "tst_colocation_window.moc"

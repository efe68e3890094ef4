// Planner window benchmarks, Google Benchmark, offscreen at 96 DPI:
//  - a degree change to the finished repaint of all panels, 1,024-GPU scenario (GPT-3 175B on 1,024
//    A100): the user's path — a key press on the TP handle, the edit and undo step, the background
//    evaluation (latest request wins), every panel updated, queued replots, and the repaint of every
//    panel the change dirtied (and, as a worst case, of the whole 1600 x 1000 window). Target: median
//    under 16 ms (one frame at 60 Hz).
//  - cold start to a drawn window: in process (window built, scenario opened and evaluated, first
//    paint) and as a process (`parallax --screenshot`: start, Qt init, fonts, window, evaluation,
//    paint, PNG written, exit). Target: under 1 s.
//  - the background evaluation alone (prediction, 7 sensitivity curves, TP x PP grid).
#include "gui/main_window.hpp"
#include "gui/settings.hpp"
#include "gui/theme.hpp"
#include "io/preset_catalog.hpp"
#include "io/scenario_io.hpp"
#include "planner/cluster_grid_view.hpp"
#include "planner/degree_slider.hpp"
#include "planner/learn_panel.hpp"
#include "planner/metrics_panel.hpp"
#include "planner/scenario_forms.hpp"
#include "planner/strategy_panel.hpp"
#include "plots/plan_plots.hpp"
#include "viewdata/plan_evaluation.hpp"

#include <QApplication>
#include <QElapsedTimer>
#include <QKeyEvent>
#include <QProcess>
#include <QTemporaryDir>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <memory>
#include <vector>

namespace {

using namespace parallax;

constexpr const char* kLarge = "gpt3-175b-1024-a100"; // 128 nodes x 8 A100

struct Window {
    QTemporaryDir dir;
    std::unique_ptr<app::Settings> settings;
    std::unique_ptr<app::MainWindow> w;

    explicit Window(const char* preset)
    {
        settings = std::make_unique<app::Settings>(dir.filePath(QStringLiteral("settings.ini")), nullptr);
        app::MainWindow::Options o;
        o.restore_layout = false;
        o.autosave = false;
        o.settings = settings.get();
        w = std::make_unique<app::MainWindow>(o);
        w->resize(1600, 1000);
        w->show();
        w->open_scenario_preset(QString::fromLatin1(preset));
        w->wait_for_evaluation();
        QApplication::processEvents();
        w->repaint();
    }
};

void press(QWidget* target, int key)
{
    QKeyEvent down(QEvent::KeyPress, key, Qt::NoModifier);
    QApplication::sendEvent(target, &down);
    QKeyEvent up(QEvent::KeyRelease, key, Qt::NoModifier);
    QApplication::sendEvent(target, &up);
}

void summarize(benchmark::State& state, std::vector<double>& ms)
{
    if (ms.empty())
        return;
    std::sort(ms.begin(), ms.end());
    state.counters["median_ms"] = ms[ms.size() / 2];
    state.counters["p90_ms"] = ms[std::min(ms.size() - 1, ms.size() * 9 / 10)];
    state.counters["max_ms"] = ms.back();
}

// One degree change until its frame is on screen. `full`: the whole window repainted synchronously
// afterwards (worst case); otherwise what Qt repaints by itself, i.e. every panel the change dirtied.
void degree_change(benchmark::State& state, bool full)
{
    Window win(kLarge);
    app::MainWindow& w = *win.w;
    views::DegreeSlider* tp = w.strategy_panel()->slider(Degree::tp);
    std::vector<double> ms;
    bool up = false;
    for (auto _ : state) {
        QElapsedTimer clock;
        clock.start();
        press(tp, up ? Qt::Key_Right : Qt::Key_Left); // tp 8 <-> 4, dp absorbing
        up = !up;
        w.wait_for_evaluation();
        QApplication::processEvents(); // queued replots, layouts
        QCoreApplication::sendPostedEvents(nullptr, QEvent::UpdateRequest); // the repaint of what changed
        if (full)
            w.repaint();
        const double t = clock.nsecsElapsed() * 1e-9;
        state.SetIterationTime(t);
        ms.push_back(t * 1e3);
    }
    state.counters["gpus"] = static_cast<double>(w.scenario()->cluster.total_gpus());
    summarize(state, ms);
}

void BM_DegreeChangeToRepaint(benchmark::State& state)
{
    degree_change(state, false);
}
BENCHMARK(BM_DegreeChangeToRepaint)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(2.0);
void BM_DegreeChangeToFullWindowRepaint(benchmark::State& state)
{
    degree_change(state, true);
}
BENCHMARK(BM_DegreeChangeToFullWindowRepaint)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(2.0);

// The parts of one change, to see where the frame goes.
void BM_PartRepaintWindow(benchmark::State& state)
{
    Window win(kLarge);
    for (auto _ : state)
        win.w->repaint();
}
BENCHMARK(BM_PartRepaintWindow)->Unit(benchmark::kMillisecond);

void BM_PartSyncPanels(benchmark::State& state)
{
    Window win(kLarge);
    app::MainWindow& w = *win.w;
    const Scenario s = *w.scenario();
    for (auto _ : state) {
        w.strategy_panel()->set_scenario(s, w.evaluation_options());
        w.model_editor()->set_scenario(s);
        w.cluster_editor()->set_scenario(s);
        w.training_editor()->set_scenario(s);
        w.grid_view()->set_scenario(s, w.evaluation_options());
    }
}
BENCHMARK(BM_PartSyncPanels)->Unit(benchmark::kMillisecond);

void BM_PartStrategyPanel(benchmark::State& state)
{
    Window win(kLarge);
    app::MainWindow& w = *win.w;
    const Scenario s = *w.scenario();
    for (auto _ : state)
        w.strategy_panel()->set_scenario(s, w.evaluation_options());
}
BENCHMARK(BM_PartStrategyPanel)->Unit(benchmark::kMillisecond);

void BM_PartLearnPanel(benchmark::State& state)
{
    Window win(kLarge);
    app::MainWindow& w = *win.w;
    auto e = w.evaluation();
    for (auto _ : state)
        w.learn_panel()->set_change(*e, &e->prediction, &e->scenario.strategy, QStringLiteral("x"));
}
BENCHMARK(BM_PartLearnPanel)->Unit(benchmark::kMillisecond);

void BM_PartMetrics(benchmark::State& state)
{
    Window win(kLarge);
    app::MainWindow& w = *win.w;
    auto e = w.evaluation();
    for (auto _ : state)
        w.metrics_panel()->set_evaluation(*e, &e->prediction, &e->prediction);
}
BENCHMARK(BM_PartMetrics)->Unit(benchmark::kMillisecond);

void BM_PartPlots(benchmark::State& state)
{
    Window win(kLarge);
    app::MainWindow& w = *win.w;
    auto e = w.evaluation();
    for (auto _ : state) {
        w.sensitivity_plot()->set_evaluation(e);
        w.heatmap_plot()->set_evaluation(e);
        QApplication::processEvents();
    }
}
BENCHMARK(BM_PartPlots)->Unit(benchmark::kMillisecond);

void BM_ColdStartInProcess(benchmark::State& state)
{
    std::vector<double> ms;
    for (auto _ : state) {
        QElapsedTimer clock;
        clock.start();
        {
            Window win("default");
            const double t = clock.nsecsElapsed() * 1e-9;
            state.SetIterationTime(t);
            ms.push_back(t * 1e3);
        }
        QApplication::processEvents();
    }
    summarize(state, ms);
}
BENCHMARK(BM_ColdStartInProcess)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(10);

void BM_ColdStartProcessScreenshot(benchmark::State& state)
{
    QTemporaryDir dir;
    const QString out = dir.filePath(QStringLiteral("shot.png"));
    std::vector<double> ms;
    for (auto _ : state) {
        QElapsedTimer clock;
        clock.start();
        QProcess p;
        p.start(QStringLiteral(PARALLAX_GUI_PATH),
            { QStringLiteral("--scenario"), QStringLiteral("default"), QStringLiteral("--screenshot"), out });
        p.waitForFinished(60000);
        const double t = clock.nsecsElapsed() * 1e-9;
        if (p.exitCode() != 0) {
            state.SkipWithError("parallax --screenshot failed");
            break;
        }
        state.SetIterationTime(t);
        ms.push_back(t * 1e3);
    }
    summarize(state, ms);
}
BENCHMARK(BM_ColdStartProcessScreenshot)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(5);

void BM_EvaluatePlanBundle(benchmark::State& state)
{
    const Scenario s = load_scenario_preset(kLarge, PresetCatalog::standard());
    for (auto _ : state) {
        const PlanEvaluation e = evaluate_plan(s, PlanEvaluationOptions {});
        benchmark::DoNotOptimize(e.prediction.step_time_s);
    }
}
BENCHMARK(BM_EvaluatePlanBundle)->Unit(benchmark::kMillisecond);

} // namespace

int main(int argc, char** argv)
{
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication::setAttribute(Qt::AA_Use96Dpi);
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("ParallaxBench"));
    app::apply_theme(app::Theme::light);
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv))
        return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}

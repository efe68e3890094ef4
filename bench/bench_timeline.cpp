// Benchmarks of the timeline view on the 64-stage x 1,024-micro-batch interleaved schedule
// (~800k ops). Targets: building the view data from the simulator result < 200 ms; a repaint of the
// full (fitted) view < 16 ms median; zoom/pan frames at 60 fps (< 16 ms each).
#include "sim/simulated_model.hpp"
#include "timeline/example_plans.hpp"
#include "timeline/timeline_view.hpp"

#include <QApplication>
#include <QPainter>

#include <benchmark/benchmark.h>

#include <memory>

namespace {

using namespace parallax;

// One offscreen application for all views, at 96 DPI like the GUI tests.
QApplication& app()
{
    static int argc = 1;
    static char name[] = "parallax_bench";
    static char* argv[] = { name, nullptr };
    static QApplication* a = [] {
        qputenv("QT_QPA_PLATFORM", "offscreen");
        QApplication::setAttribute(Qt::AA_Use96Dpi);
        return new QApplication(argc, argv);
    }();
    return *a;
}

struct LargePlan {
    Scenario scenario = views::examples::large_interleaved();
    std::shared_ptr<const SimulatedPlan> sim;
    Prediction prediction;
    std::shared_ptr<const TimelineData> data;
};

const LargePlan& large()
{
    static const LargePlan* plan = [] {
        auto* p = new LargePlan;
        const PlanContext ctx(p->scenario.model, p->scenario.training, p->scenario.cluster);
        p->sim = std::make_shared<const SimulatedPlan>(simulate_plan(ctx, p->scenario.strategy));
        p->prediction = prediction_from_simulation(ctx, p->scenario.strategy, *p->sim);
        p->data = build_timeline_data(p->sim, p->prediction, timeline_plan_info(p->scenario));
        return p;
    }();
    return *plan;
}

// A full-HD timeline view of the large plan, fitted.
views::TimelineView& view()
{
    static views::TimelineView* v = [] {
        app();
        auto* w = new views::TimelineView;
        w->resize(1920, 1080);
        w->show();
        w->set_timeline_data(large().data);
        QApplication::processEvents();
        w->fit();
        return w;
    }();
    return *v;
}

void paint_once(views::TimelineCanvas* c, QImage& img)
{
    QPainter p(&img);
    c->paint_to(p, false);
}

void BM_TimelineBuildData(benchmark::State& state)
{
    const LargePlan& p = large();
    for (auto _ : state) {
        auto d = build_timeline_data(p.sim, p.prediction, timeline_plan_info(p.scenario));
        benchmark::DoNotOptimize(d->rows.data());
    }
    state.counters["ops"] = static_cast<double>(p.sim->lowered.graph.size());
    state.counters["rows"] = static_cast<double>(p.data->rows.size());
}

void BM_TimelineRepaintFull(benchmark::State& state)
{
    views::TimelineCanvas* c = view().timeline();
    c->fit();
    QImage img(c->viewport()->size(), QImage::Format_RGB32);
    for (auto _ : state) {
        c->invalidate_cache(); // every row aggregated and drawn again
        paint_once(c, img);
    }
    const auto& f = c->last_frame();
    state.counters["ops_in_view"] = static_cast<double>(f.items_visited);
    state.counters["rows_drawn"] = static_cast<double>(f.rows_drawn);
    state.counters["plot_px"] = f.plot_width;
}

// The same on one thread: the total work of a frame.
void BM_TimelineRepaintFullOneThread(benchmark::State& state)
{
    views::TimelineCanvas::set_parallel_rows(false);
    views::TimelineCanvas* c = view().timeline();
    c->fit();
    QImage img(c->viewport()->size(), QImage::Format_RGB32);
    for (auto _ : state) {
        c->invalidate_cache();
        paint_once(c, img);
    }
    views::TimelineCanvas::set_parallel_rows(true);
}

// A repaint that changes nothing the rows show (selection, expose): the rows' image is reused.
void BM_TimelineRepaintCached(benchmark::State& state)
{
    views::TimelineCanvas* c = view().timeline();
    c->fit();
    QImage img(c->viewport()->size(), QImage::Format_RGB32);
    paint_once(c, img);
    for (auto _ : state)
        paint_once(c, img);
}

// What the screen does: the widget's own paint event through the backing store.
void BM_TimelineRepaintWidget(benchmark::State& state)
{
    views::TimelineCanvas* c = view().timeline();
    c->fit();
    for (auto _ : state) {
        c->invalidate_cache();
        c->viewport()->repaint();
        benchmark::ClobberMemory();
    }
}

// Zoom in step by step at different points, then pan, painting a frame each time (one wheel notch
// or one drag step per frame).
void BM_TimelineZoomPanFrame(benchmark::State& state)
{
    views::TimelineCanvas* c = view().timeline();
    QImage img(c->viewport()->size(), QImage::Format_RGB32);
    c->fit();
    const QRect plot = c->plot_rect();
    long long frame = 0;
    for (auto _ : state) {
        const long long k = frame++ % 64;
        if (k == 0)
            c->fit();
        else if (k < 32)
            c->zoom(1.2, plot.left() + (plot.width() * ((k * 37) % 100)) / 100.0);
        else
            c->pan_pixels(k % 2 ? 40 : -25);
        paint_once(c, img);
    }
}

void BM_TimelineZoomPanFrameOneThread(benchmark::State& state)
{
    views::TimelineCanvas::set_parallel_rows(false);
    BM_TimelineZoomPanFrame(state);
    views::TimelineCanvas::set_parallel_rows(true);
}

void BM_DagRepaintFull(benchmark::State& state)
{
    views::DagCanvas* d = view().dag();
    d->resize(1920, 1000);
    d->fit();
    QImage img(d->viewport()->size(), QImage::Format_RGB32);
    for (auto _ : state) {
        QPainter p(&img);
        d->paint_to(p, false);
    }
    state.counters["aggregated"] = d->last_frame().aggregated ? 1 : 0;
}

void BM_DagRepaintZoomed(benchmark::State& state)
{
    views::DagCanvas* d = view().dag();
    d->resize(1920, 1000);
    // A window of a few micro-batches: nodes and edges drawn.
    d->set_time_range(large().data->makespan_s * 0.5, large().data->makespan_s * 0.503);
    QImage img(d->viewport()->size(), QImage::Format_RGB32);
    for (auto _ : state) {
        QPainter p(&img);
        d->paint_to(p, false);
    }
    state.counters["nodes"] = static_cast<double>(d->last_frame().nodes_drawn);
    state.counters["edges"] = static_cast<double>(d->last_frame().edges_drawn);
}

BENCHMARK(BM_TimelineBuildData)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Repetitions(5)
    ->ReportAggregatesOnly(true);
BENCHMARK(BM_TimelineRepaintFull)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Repetitions(5)
    ->ReportAggregatesOnly(true);
BENCHMARK(BM_TimelineRepaintFullOneThread)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Repetitions(5)
    ->ReportAggregatesOnly(true);
BENCHMARK(BM_TimelineRepaintCached)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Repetitions(5)
    ->ReportAggregatesOnly(true);
BENCHMARK(BM_TimelineRepaintWidget)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Repetitions(5)
    ->ReportAggregatesOnly(true);
BENCHMARK(BM_TimelineZoomPanFrame)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Repetitions(5)
    ->ReportAggregatesOnly(true);
BENCHMARK(BM_TimelineZoomPanFrameOneThread)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Repetitions(5)
    ->ReportAggregatesOnly(true);
BENCHMARK(BM_DagRepaintFull)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_DagRepaintZoomed)->Unit(benchmark::kMillisecond)->UseRealTime();

} // namespace

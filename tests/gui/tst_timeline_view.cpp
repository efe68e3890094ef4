// The timeline and DAG views: time <-> pixel mapping and axis ticks, LOD (no op lost at any zoom, at
// most one primitive per pixel column per row), click selection with dependency highlight, critical
// path, symmetry (GPUs per row), comparison of two plans on one axis, the measured overlay, export,
// the DAG view's nodes, edges and expansion, and tooltips.
#include "power/power_trace.hpp"
#include "sim/simulated_model.hpp"
#include "timeline/example_plans.hpp"
#include "timeline/time_mapping.hpp"
#include "timeline/timeline_view.hpp"

#include <QApplication>
#include <QFile>
#include <QLocale>
#include <QPainter>
#include <QSignalSpy>
#include <QSvgGenerator>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

using namespace parallax;
using namespace parallax::views;

namespace {

struct Plan {
    Scenario scenario;
    std::shared_ptr<const SimulatedPlan> sim;
    Prediction prediction;
};

Plan make(Schedule schedule, int pp = 4, long long m = 8)
{
    Plan p;
    p.scenario = examples::pipeline_example("default", schedule, pp, m);
    const PlanContext ctx(p.scenario.model, p.scenario.training, p.scenario.cluster);
    p.sim = std::make_shared<const SimulatedPlan>(simulate_plan(ctx, p.scenario.strategy));
    p.prediction = prediction_from_simulation(ctx, p.scenario.strategy, *p.sim);
    return p;
}

std::unique_ptr<TimelineView> shown_view(const Plan& p, QSize size = QSize(1400, 800))
{
    auto v = std::make_unique<TimelineView>();
    v->resize(size);
    v->show();
    v->set_simulation(p.sim, p.prediction, timeline_plan_info(p.scenario));
    QApplication::processEvents();
    v->fit();
    return v;
}

QImage paint(TimelineCanvas* c)
{
    QImage img(c->viewport()->size(), QImage::Format_RGB32);
    QPainter p(&img);
    c->paint_to(p, false);
    return img;
}

} // namespace

class TestTimelineView : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        QCOMPARE(QGuiApplication::platformName(), QStringLiteral("offscreen"));
        QVERIFY(QCoreApplication::testAttribute(Qt::AA_Use96Dpi));
    }

    void mapping_round_trip()
    {
        TimeMapping m;
        m.x0_px = 200;
        m.fit(0, 2.0, 1000);
        QCOMPARE(m.px_per_s, 500.0);
        QCOMPARE(m.to_x(0), 200.0);
        QCOMPARE(m.to_x(2.0), 1200.0);
        QCOMPARE(m.to_t(700), 1.0);
        for (double t : { -1.0, 0.0, 1e-9, 0.37, 1.999 })
            QVERIFY(std::fabs(m.to_t(m.to_x(t)) - t) < 1e-12);
        QCOMPARE(m.column_of(0.0), 200LL);
        QCOMPARE(m.column_of(0.0019999), 200LL); // [200, 201) is the first 2 ms
        QCOMPARE(m.column_of(0.002), 201LL);
        m.fit(1.0, 3.0, 1000, 0.1); // 10% margin each side
        QVERIFY(std::fabs(m.to_t(200) - 0.8) < 1e-12);
        QVERIFY(std::fabs(m.to_t(1200) - 3.2) < 1e-12);
    }

    void mapping_zoom_keeps_the_point_under_the_cursor_data()
    {
        QTest::addColumn<double>("x");
        QTest::addColumn<double>("factor");
        QTest::newRow("in at left") << 210.0 << 2.0;
        QTest::newRow("in at middle") << 700.0 << 1.2;
        QTest::newRow("out at right") << 1190.0 << 0.25;
        QTest::newRow("deep in") << 555.5 << 1e6;
    }
    void mapping_zoom_keeps_the_point_under_the_cursor()
    {
        QFETCH(double, x);
        QFETCH(double, factor);
        TimeMapping m;
        m.x0_px = 200;
        m.fit(0, 2.0, 1000);
        const double t = m.to_t(x);
        const double scale = m.px_per_s;
        m.zoom_at(x, factor);
        QVERIFY(std::fabs(m.to_t(x) - t) < 1e-12 * std::max(1.0, t));
        QVERIFY(std::fabs(m.px_per_s / scale - factor) < 1e-9 * factor);
    }

    void mapping_pan_and_limits()
    {
        TimeMapping m;
        m.fit(0, 10, 1000); // 100 px/s
        m.pan_px(100); // drag right: earlier times
        QVERIFY(std::fabs(m.t0_s + 1.0) < 1e-12);
        m.clamp_to(0, 10, 1000);
        QVERIFY(m.t0_s >= -0.5 - 1e-12);
        m.zoom_at(0, 1e30);
        QCOMPARE(m.px_per_s, TimeMapping::kMaxPxPerS);
        m.zoom_at(0, 1e-60);
        QCOMPARE(m.px_per_s, TimeMapping::kMinPxPerS);
        m.zoom_at(0, 0); // ignored
        QCOMPARE(m.px_per_s, TimeMapping::kMinPxPerS);
    }

    void axis_tick_steps_data()
    {
        QTest::addColumn<double>("s_per_px");
        QTest::addColumn<double>("step");
        QTest::addColumn<QString>("second_label");
        // 90 px apart at least, from the 1-2-5 series, in a unit that fits the step.
        QTest::newRow("whole seconds") << 0.02 << 2.0 << QStringLiteral("2 s");
        QTest::newRow("hundreds of ms") << 1e-3 << 0.1 << QStringLiteral("100 ms");
        QTest::newRow("tens of ms") << 2e-4 << 0.02 << QStringLiteral("20 ms");
        QTest::newRow("ms") << 1e-5 << 1e-3 << QStringLiteral("1 ms");
        QTest::newRow("microseconds") << 4e-8 << 5e-6 << QString::fromUtf8("5 \xc2\xb5s");
        QTest::newRow("nanoseconds") << 1e-11 << 1e-9 << QStringLiteral("1 ns");
        QTest::newRow("half seconds") << 0.005 << 0.5 << QStringLiteral("500 ms");
        QTest::newRow("minutes") << 1.0 << 100.0 << QStringLiteral("100 s");
    }
    void axis_tick_steps()
    {
        QFETCH(double, s_per_px);
        QFETCH(double, step);
        QFETCH(QString, second_label);
        QVERIFY(std::fabs(nice_tick_step(s_per_px, 90) / step - 1) < 1e-9);
        const auto ticks = axis_ticks(0, s_per_px * 1000, s_per_px, 90);
        QVERIFY(ticks.size() >= 2);
        QCOMPARE(ticks[0].t_s, 0.0);
        QCOMPARE(QString::fromStdString(ticks[0].label).split(QLatin1Char(' ')).value(0), QStringLiteral("0"));
        QCOMPARE(QString::fromStdString(ticks[1].label), second_label);
        for (std::size_t i = 1; i < ticks.size(); ++i)
            QVERIFY((ticks[i].t_s - ticks[i - 1].t_s) / s_per_px >= 90 - 1e-6);
        QVERIFY(QString::fromStdString(format_tick(1.5, axis_unit(0.5))) == QStringLiteral("1500 ms"));
        QVERIFY(QString::fromStdString(format_tick(-0.0, axis_unit(1.0))) == QStringLiteral("0 s"));
    }

    void lod_no_op_lost_in_the_view_data()
    {
        QTest::addColumn<int>("schedule");
        for (Schedule s :
            { Schedule::gpipe, Schedule::one_f_one_b, Schedule::interleaved, Schedule::zb_h1, Schedule::dualpipe })
            QTest::newRow(std::string(to_string(s)).c_str()) << static_cast<int>(s);
    }
    void lod_no_op_lost_in_the_view()
    {
        QFETCH(int, schedule);
        const Plan p = make(static_cast<Schedule>(schedule));
        auto v = shown_view(p);
        TimelineCanvas* c = v->timeline();
        QVERIFY(c->display_row_count() > 0);
        for (double zoom : { 1.0, 3.7, 0.3 }) {
            c->fit();
            c->zoom(zoom);
            const double t_begin = c->mapping().to_t(c->plot_rect().left());
            const double t_end = c->mapping().to_t(c->plot_rect().right() + 1);
            for (int i = 0; i < c->display_row_count(); ++i) {
                const TimelineRow& row = *c->display_row(i);
                const auto bins = c->row_bins(i);
                QCOMPARE(static_cast<int>(bins.size()), c->plot_rect().width());
                std::uint64_t ops = 0;
                double busy = 0;
                for (const LodBin& b : bins) {
                    ops += b.ops;
                    busy += b.busy_s;
                }
                std::uint64_t expected_ops = 0;
                double expected_busy = 0;
                for (const TimelineItem& it : row.items) {
                    const double ov = std::min(it.end_s, t_end) - std::max(it.start_s, t_begin);
                    if (ov > 0 || (it.start_s >= t_begin && it.start_s < t_end))
                        ++expected_ops;
                    expected_busy += std::max(0.0, ov);
                }
                QCOMPARE(ops, expected_ops);
                QVERIFY(std::fabs(busy - expected_busy) <= 1e-9 * std::max(1.0, expected_busy));
                if (zoom <= 1.0) {
                    QCOMPARE(ops, static_cast<std::uint64_t>(row.items.size())); // the whole step is in view
                    QVERIFY(std::fabs(busy - row.busy_s) <= 1e-9 * row.busy_s);
                }
            }
        }
    }

    void at_most_one_primitive_per_pixel_column()
    {
        const Plan p = make(Schedule::interleaved, 4, 16);
        auto v = shown_view(p, QSize(900, 600));
        TimelineCanvas* c = v->timeline();
        paint(c);
        const auto raster = c->last_frame();
        QVERIFY(raster.rows_drawn > 0);
        QVERIFY(raster.max_primitives_per_row <= static_cast<std::size_t>(raster.plot_width));
        // Vector painting (SVG): runs of equal colour, never more than the pixel columns.
        QTemporaryDir dir;
        QSvgGenerator gen;
        gen.setFileName(dir.filePath(QStringLiteral("t.svg")));
        gen.setSize(c->viewport()->size());
        QPainter svg(&gen);
        c->paint_to(svg, true);
        svg.end();
        const auto vec = c->last_frame();
        QCOMPARE(vec.rows_drawn, raster.rows_drawn);
        QVERIFY(vec.max_primitives_per_row <= static_cast<std::size_t>(vec.plot_width));
        QVERIFY(vec.primitives < raster.primitives); // runs merge columns of the same colour
    }

    void click_selects_and_highlights_dependencies()
    {
        const Plan p = make(Schedule::one_f_one_b);
        auto v = shown_view(p);
        TimelineCanvas* c = v->timeline();
        const TimelineData& d = *c->data();
        const ExecutionGraph& g = d.graph();
        std::uint32_t f = 0;
        for (std::uint32_t op = 0; op < g.size(); ++op)
            if (g.type(op) == IrOpType::forward && g.device(op) == 2 && g.microbatch(op) == 5)
                f = op;
        const QRectF r = c->op_rect(f);
        QVERIFY(!r.isEmpty());
        QVERIFY(c->plot_rect().contains(r.center().toPoint()));
        QSignalSpy spy(c, &TimelineCanvas::selection_changed);
        QTest::mouseClick(c->viewport(), Qt::LeftButton, Qt::NoModifier, r.center().toPoint());
        QCOMPARE(spy.count(), 1);
        QVERIFY(c->selected_op().has_value());
        QCOMPARE(*c->selected_op(), f);
        const auto deps = g.deps(f);
        QCOMPARE(c->highlighted_predecessors(), (std::vector<std::uint32_t>(deps.begin(), deps.end())));
        const auto succ = d.successors(f);
        QCOMPARE(c->highlighted_successors(), (std::vector<std::uint32_t>(succ.begin(), succ.end())));
        // Its predecessor is the send of micro-batch 5 from stage 1 and the previous op on stage 2's program.
        QVERIFY(std::any_of(deps.begin(), deps.end(), [&](std::uint32_t q) {
            return g.type(q) == IrOpType::pp_send && g.device(q) == 1 && g.microbatch(q) == 5;
        }));
        // The highlight is drawn: the selection colour appears around the op.
        const QImage img = paint(c);
        const QColor sel = TimelinePalette().selection;
        auto near = [&](QRgb c) {
            return std::abs(qRed(c) - sel.red()) + std::abs(qGreen(c) - sel.green()) + std::abs(qBlue(c) - sel.blue())
                < 60;
        };
        int found = 0;
        for (int x = static_cast<int>(r.left()); x <= static_cast<int>(r.right()); ++x)
            for (int dy = -3; dy <= 0; ++dy)
                found += near(img.pixel(x, static_cast<int>(r.top()) + dy));
        QVERIFY2(found > r.width() / 2, qPrintable(QString::number(found)));
        // Clicking a companion (TP) bar selects the compute pass it runs under.
        const int tp_row = [&] {
            for (int i = 0; i < c->display_row_count(); ++i)
                if (c->display_row(i)->kind == TimelineRowKind::tp && c->display_row(i)->stage == 2)
                    return i;
            return -1;
        }();
        QVERIFY(tp_row >= 0);
        const TimelineRow& tp = *c->display_row(tp_row);
        const TimelineItem* under = nullptr;
        for (const TimelineItem& it : tp.items)
            if (it.op == f)
                under = &it;
        QVERIFY(under);
        c->clear_selection();
        const QRect rr = c->display_row_rect(tp_row);
        const int x = static_cast<int>(c->mapping().to_x(0.5 * (under->start_s + under->end_s)));
        QVERIFY(c->select_at(QPoint(x, rr.center().y())));
        QCOMPARE(*c->selected_op(), f);
        // Escape clears; clicking empty space clears.
        QTest::keyClick(c, Qt::Key_Escape);
        QVERIFY(!c->selected_op());
    }

    void critical_path_is_drawn()
    {
        const Plan p = make(Schedule::one_f_one_b);
        auto v = shown_view(p);
        TimelineCanvas* c = v->timeline();
        const TimelineData& d = *c->data();
        std::size_t checked = 0;
        for (std::uint32_t op : d.sim->result.critical_path) {
            if (d.op_row[op] == TimelineData::kNoRow || d.rows[d.op_row[op]].kind != TimelineRowKind::compute)
                continue;
            // The op's row shows the critical mark in the op's columns.
            int dr = -1;
            for (int i = 0; i < c->display_row_count(); ++i)
                if (c->display_row(i) == &d.rows[d.op_row[op]])
                    dr = i;
            QVERIFY(dr >= 0);
            const auto bins = c->row_bins(dr);
            const QRectF r = c->op_rect(op);
            const int col = static_cast<int>(std::floor(r.center().x())) - c->plot_rect().left();
            QVERIFY(bins[static_cast<std::size_t>(col)].critical);
            ++checked;
        }
        QVERIFY(checked > 4);
        // And it shows in pixels: the critical colour on the first op's row, top strip.
        const QImage img = paint(c);
        const QRectF first = c->op_rect(critical_compute_chain(d).front());
        QCOMPARE(QColor(img.pixel(static_cast<int>(first.center().x()), static_cast<int>(first.top()) + 1)),
            TimelinePalette().critical);
        v->timeline()->set_show_critical_path(false);
        const QImage off = paint(c);
        QVERIFY(QColor(off.pixel(static_cast<int>(first.center().x()), static_cast<int>(first.top()) + 1))
            != TimelinePalette().critical);
    }

    void rows_show_their_gpus()
    {
        // Symmetry: a stage row stands for its TP x CP x DP replicas; the counts add up to the cluster.
        Plan p = make(Schedule::one_f_one_b);
        auto v = shown_view(p);
        const TimelineData& d = *v->timeline_data();
        QCOMPARE(d.total_gpus(), p.scenario.cluster.total_gpus());
        const QString tip = v->timeline()->tooltip_at(QPoint(20, v->timeline()->display_row_rect(0).center().y()));
        QVERIFY2(tip.contains(QStringLiteral("16 GPUs")), qPrintable(tip));
        QVERIFY(tip.contains(QStringLiteral("bubble")));
    }

    void large_plan_fits_and_aggregates()
    {
        // 16 stages x 256 micro-batches, interleaved: thousands of ops per row in ~1000 columns.
        Scenario s = examples::large_interleaved();
        s.strategy.pp = 16;
        s.strategy.dp = 4;
        s.training.global_batch = 1024;
        const PlanContext ctx(s.model, s.training, s.cluster);
        auto sim = std::make_shared<const SimulatedPlan>(simulate_plan(ctx, s.strategy));
        TimelineView v;
        v.resize(1200, 700);
        v.show();
        v.set_simulation(sim, prediction_from_simulation(ctx, s.strategy, *sim), timeline_plan_info(s));
        QApplication::processEvents();
        v.fit();
        TimelineCanvas* c = v.timeline();
        // Fit shows every row.
        const QRect last = c->display_row_rect(c->display_row_count() - 1);
        QVERIFY(last.bottom() <= c->plot_rect().bottom());
        paint(c);
        QCOMPARE(c->last_frame().rows_drawn, static_cast<std::size_t>(c->display_row_count()));
        QVERIFY(c->last_frame().max_primitives_per_row <= static_cast<std::size_t>(c->plot_rect().width()));
        std::size_t items = 0;
        for (int i = 0; i < c->display_row_count(); ++i)
            items += c->display_row(i)->items.size();
        QCOMPARE(c->last_frame().items_visited, items);
        // A pixel column holds many ops: the tooltip says how many and names the largest.
        const QRect r0 = c->display_row_rect(0);
        const QString tip = c->tooltip_at(QPoint(c->plot_rect().center().x(), r0.center().y()));
        QVERIFY2(tip.contains(QStringLiteral("ops in this pixel column")), qPrintable(tip));
    }

    void compare_two_plans_on_one_axis()
    {
        const Plan a = make(Schedule::one_f_one_b);
        const Plan b = make(Schedule::interleaved);
        auto v = shown_view(a);
        const int rows_a = v->timeline()->display_row_count();
        v->pin_current_as_baseline();
        v->set_simulation(b.sim, b.prediction, timeline_plan_info(b.scenario));
        QVERIFY(v->comparing());
        QApplication::processEvents();
        v->fit();
        TimelineCanvas* c = v->timeline();
        QVERIFY(c->display_row_count() > rows_a);
        const auto diff = v->difference();
        QVERIFY(diff.has_value());
        QCOMPARE(diff->step_a_s, a.prediction.step_time_s);
        QCOMPARE(diff->step_b_s, b.prediction.step_time_s);
        // Common axis: the fitted view covers the longer of the two steps.
        const double end = c->mapping().t_end(c->plot_rect().width());
        QVERIFY(end >= std::max(a.prediction.step_time_s, b.prediction.step_time_s));
        // Same op of both plans at the same time sits at the same x.
        const QRectF ra = c->op_rect(0, true), rb = c->op_rect(0, false);
        QVERIFY(!ra.isEmpty() && !rb.isEmpty());
        QCOMPARE(ra.left(), rb.left());
        QVERIFY(ra.top() < rb.top()); // A above B
        const QStringList lines = v->summary()->text_lines();
        QVERIFY2(lines.join(QLatin1Char('\n')).contains(QStringLiteral("faster than A")),
            qPrintable(lines.join(QLatin1Char('\n'))));
        QVERIFY(lines.join(QLatin1Char('\n')).contains(QStringLiteral("schedule 1f1b -> interleaved")));
        v->clear_comparison();
        QVERIFY(!v->comparing());
        QCOMPARE(c->display_row_count(), v->timeline()->display_row_count());
        QVERIFY(!v->difference());
    }

    void summary_strip_shows_the_prediction()
    {
        const Plan p = make(Schedule::zb_h1);
        auto v = shown_view(p);
        const auto& items = v->summary()->items();
        const TimeBreakdown& t = p.prediction.time;
        QCOMPARE(items.size(), std::size_t(12)); // compute ... data stall, host copies
        QCOMPARE(items[0].seconds, t.compute_s);
        QCOMPARE(items[2].seconds, t.bubble_s);
        QCOMPARE(items[6].seconds, t.exposed_pp_s);
        QCOMPARE(items[7].seconds, t.exposed_dp_s);
        double sum = 0;
        for (const auto& it : items)
            sum += it.seconds;
        QVERIFY(std::fabs(sum - p.prediction.step_time_s) < 1e-9 * p.prediction.step_time_s);
        const QString text = v->summary()->text_lines().join(QLatin1Char('\n'));
        QVERIFY2(text.contains(QString::fromStdString(format_duration(p.prediction.step_time_s))), qPrintable(text));
    }

    void summary_says_when_the_picture_is_a_window_of_the_step()
    {
        const Plan whole = make(Schedule::one_f_one_b, 4, 64);
        QVERIFY(
            !shown_view(whole)->summary()->text_lines().join(QLatin1Char('\n')).contains(QStringLiteral("showing")));
        // 4,096 micro-batches: more than the simulator runs, so a window is drawn and the step extrapolated.
        const Plan windowed = make(Schedule::one_f_one_b, 4, 4096);
        QVERIFY(windowed.sim->window.extrapolated());
        const QString text = shown_view(windowed)->summary()->text_lines().join(QLatin1Char('\n'));
        const QString expected
            = QStringLiteral("showing %1 of %2 micro-batches, step extrapolated")
                  .arg(QLocale().toString(windowed.sim->window.simulated_microbatches), QLocale().toString(4096LL));
        QVERIFY2(text.contains(expected), qPrintable(text));
    }

    void measured_overlay_on_the_same_axis()
    {
        const Plan p = make(Schedule::one_f_one_b);
        auto v = shown_view(p);
        QTemporaryDir dir;
        const QString trace = dir.filePath(QStringLiteral("plan.json"));
        QString why;
        QVERIFY2(v->export_chrome_trace(trace, &why), qPrintable(why));
        const int rows = v->timeline()->display_row_count();
        QVERIFY2(v->load_measured_trace(trace, &why), qPrintable(why));
        QVERIFY(v->timeline()->measured());
        QVERIFY(v->timeline()->display_row_count() > rows);
        // Measured bars land where the predicted ones are (the trace is the plan itself).
        TimelineCanvas* c = v->timeline();
        const QRectF predicted = c->op_rect(0);
        int measured_row = -1;
        for (int i = 0; i < c->display_row_count(); ++i)
            if (c->display_row(i)->kind == TimelineRowKind::measured && c->display_row(i)->label == "stage 0 / compute")
                measured_row = i;
        QVERIFY(measured_row >= 0);
        const auto bins = c->row_bins(measured_row);
        QVERIFY(bins[static_cast<std::size_t>(predicted.center().x() - c->plot_rect().left())].busy_s > 0);
        // A bad file: false, and the message names it.
        const QString bad = dir.filePath(QStringLiteral("bad.json"));
        QFile f(bad);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("{ \"traceEvents\": 3 }");
        f.close();
        QVERIFY(!v->load_measured_trace(bad, &why));
        QVERIFY2(why.contains(bad), qPrintable(why));
        v->clear_measured_trace();
        QCOMPARE(v->timeline()->display_row_count(), rows);
    }

    void export_png_svg_and_trace()
    {
        const Plan p = make(Schedule::dualpipe);
        auto v = shown_view(p, QSize(1000, 600));
        QTemporaryDir dir;
        QString why;
        const QString png = dir.filePath(QStringLiteral("t.png")), svg = dir.filePath(QStringLiteral("t.svg")),
                      json = dir.filePath(QStringLiteral("t.json"));
        QVERIFY2(v->export_png(png, &why), qPrintable(why));
        QImage img(png);
        QCOMPARE(img.size(), QSize(1000, 600));
        // Not blank: the forward colour is in it.
        bool forward = false;
        for (int y = 0; y < img.height() && !forward; y += 2)
            for (int x = 0; x < img.width() && !forward; x += 2)
                forward = img.pixel(x, y) == TimelinePalette::kind_rgb(TimelineKind::forward, 0);
        QVERIFY(forward);
        QVERIFY2(v->export_svg(svg, &why), qPrintable(why));
        QFile s(svg);
        QVERIFY(s.open(QIODevice::ReadOnly));
        const QByteArray svg_text = s.readAll();
        QVERIFY(svg_text.contains("<svg"));
        QVERIFY(svg_text.contains("<rect") || svg_text.contains("<path"));
        QVERIFY2(v->export_chrome_trace(json, &why), qPrintable(why));
        QVERIFY(QFileInfo(json).size() > 1000);
        QVERIFY(!v->export_png(dir.filePath(QStringLiteral("no/such/dir/t.png")), &why));
    }

    void dag_view_nodes_edges_and_expansion()
    {
        const Plan p = make(Schedule::one_f_one_b);
        auto v = shown_view(p);
        v->set_mode(TimelineView::Mode::dag);
        DagCanvas* dag = v->dag();
        QApplication::processEvents();
        dag->fit();
        QImage img(dag->viewport()->size(), QImage::Format_RGB32);
        {
            QPainter painter(&img);
            dag->paint_to(painter, false);
        }
        const TimelineData& d = *dag->data();
        std::size_t compute_items = 0;
        for (const TimelineStage& st : d.stages)
            compute_items += d.rows[static_cast<std::size_t>(st.rows.front())].items.size();
        auto stats = dag->last_frame();
        QVERIFY(!stats.aggregated);
        QCOMPARE(stats.nodes_drawn, compute_items);
        QVERIFY(stats.edges_drawn > compute_items / 2);
        QCOMPARE(stats.critical_edges_drawn + 1, critical_compute_chain(d).size());
        // Click a node: selected; double-click: expanded into its layers.
        const ExecutionGraph& g = d.graph();
        std::uint32_t f = 0;
        for (std::uint32_t op = 0; op < g.size(); ++op)
            if (g.type(op) == IrOpType::forward && g.device(op) == 1 && g.microbatch(op) == 2)
                f = op;
        const QRectF r = dag->node_rect(f);
        QVERIFY(!r.isEmpty());
        QCOMPARE(dag->node_at(r.center().toPoint()), std::optional<std::uint32_t>(f));
        QTest::mouseClick(dag->viewport(), Qt::LeftButton, Qt::NoModifier, r.center().toPoint());
        QCOMPARE(dag->selected_op(), std::optional<std::uint32_t>(f));
        QTest::mouseDClick(dag->viewport(), Qt::LeftButton, Qt::NoModifier, r.center().toPoint());
        QVERIFY(dag->is_expanded(f));
        {
            QPainter painter(&img);
            dag->paint_to(painter, false);
        }
        const auto [first, last] = d.layers_of(f);
        QCOMPARE(dag->last_frame().layer_nodes_drawn, static_cast<std::size_t>(last - first + 1));
        const QString tip = dag->tooltip_at(r.center().toPoint());
        QVERIFY2(tip.contains(QStringLiteral("waits for:")) && tip.contains(QStringLiteral("mb2")), qPrintable(tip));
        dag->collapse_all();
        QVERIFY(!dag->is_expanded(f));
    }

    void dag_view_aggregates_huge_graphs()
    {
        Scenario s = examples::large_interleaved();
        s.strategy.pp = 8;
        s.strategy.dp = 8;
        const PlanContext ctx(s.model, s.training, s.cluster);
        auto sim = std::make_shared<const SimulatedPlan>(simulate_plan(ctx, s.strategy));
        DagCanvas dag;
        dag.resize(1000, 500);
        dag.show();
        dag.set_data(build_timeline_data(sim, prediction_from_simulation(ctx, s.strategy, *sim)));
        QImage img(dag.viewport()->size(), QImage::Format_RGB32);
        QPainter painter(&img);
        dag.paint_to(painter, false);
        QVERIFY(dag.last_frame().aggregated);
        QCOMPARE(dag.last_frame().edges_drawn, std::size_t(0));
    }

    void tooltips_describe_ops()
    {
        const Plan p = make(Schedule::interleaved);
        auto v = shown_view(p);
        TimelineCanvas* c = v->timeline();
        const TimelineData& d = *c->data();
        const ExecutionGraph& g = d.graph();
        std::uint32_t b = 0;
        for (std::uint32_t op = 0; op < g.size(); ++op)
            if (g.type(op) == IrOpType::backward_input && g.device(op) == 3 && g.microbatch(op) == 4)
                b = op;
        const QRectF r = c->op_rect(b);
        const QString tip = c->tooltip_at(r.center().toPoint());
        for (const char* want :
            { "B L", "mb4", "stage 3", "layers ", "micro-batch 4", "FLOPs", "duration", "start", "virtual stage" })
            QVERIFY2(tip.contains(QString::fromLatin1(want)),
                qPrintable(QStringLiteral("missing \"%1\" in:\n%2").arg(QString::fromLatin1(want), tip)));
    }

    void zoom_and_pan_by_input()
    {
        const Plan p = make(Schedule::one_f_one_b);
        auto v = shown_view(p);
        TimelineCanvas* c = v->timeline();
        const double before = c->mapping().px_per_s;
        const QPoint at = c->plot_rect().center();
        const double t_at = c->mapping().to_t(at.x());
        QWheelEvent wheel(QPointF(at), c->viewport()->mapToGlobal(QPointF(at)), QPoint(), QPoint(0, 120), Qt::NoButton,
            Qt::NoModifier, Qt::NoScrollPhase, false);
        QApplication::sendEvent(c->viewport(), &wheel);
        QVERIFY(c->mapping().px_per_s > before);
        QVERIFY(std::fabs(c->mapping().to_t(at.x()) - t_at) < 1e-9);
        // Drag pans: the time under the cursor follows it.
        const double t0 = c->mapping().t0_s;
        QTest::mousePress(c->viewport(), Qt::LeftButton, Qt::NoModifier, at);
        QTest::mouseMove(c->viewport(), at + QPoint(60, 0));
        QTest::mouseRelease(c->viewport(), Qt::LeftButton, Qt::NoModifier, at + QPoint(60, 0));
        QVERIFY(c->mapping().t0_s < t0);
        QVERIFY(!c->selected_op()); // a drag is not a click
        // Box zoom (right button): the band becomes the view.
        const QPoint a(c->plot_rect().left() + 100, c->plot_rect().top() + 10),
            b2(c->plot_rect().left() + 300, c->plot_rect().top() + 200);
        const double ta = c->mapping().to_t(a.x()), tb = c->mapping().to_t(b2.x());
        QTest::mousePress(c->viewport(), Qt::RightButton, Qt::NoModifier, a);
        QTest::mouseMove(c->viewport(), b2);
        QTest::mouseRelease(c->viewport(), Qt::RightButton, Qt::NoModifier, b2);
        QVERIFY(std::fabs(c->mapping().to_t(c->plot_rect().left()) - ta) < 1e-6);
        QVERIFY(std::fabs(c->mapping().t_end(c->plot_rect().width()) - tb) < 1e-6 * tb + 2 * c->mapping().s_per_px());
        QTest::keyClick(c, Qt::Key_F);
        QVERIFY(c->mapping().to_t(c->plot_rect().left()) <= 0);
    }

    void power_strip_shares_the_time_axis()
    {
        // The power plot under the timeline: same x range as the canvas's plot, follows zoom and pan,
        // shows core's trace values (per stage and the mean), scales watts up to above the cap.
        const Plan p = make(Schedule::one_f_one_b);
        auto v = shown_view(p);
        PowerStrip* strip = v->power();
        QVERIFY(strip->isVisible());
        QVERIFY(strip->has_trace());
        TimelineCanvas* c = v->timeline();
        const QRect cp = c->plot_rect();
        const QPoint canvas_left = c->viewport()->mapToGlobal(cp.topLeft());
        const QPoint strip_left = strip->mapToGlobal(strip->plot_rect().topLeft());
        QCOMPARE(strip_left.x(), canvas_left.x());
        QCOMPARE(strip->plot_rect().width(), cp.width());
        // Values at a time inside the first forward pass of stage 0 are the trace's.
        const PowerTrace& tr = p.sim->power;
        const double t = 0.5 * (p.sim->result.start_s[0] + p.sim->result.end_s[0]);
        const PowerStrip::Sample smp = strip->sample_at(t);
        QCOMPARE(static_cast<int>(smp.stage_W.size()), static_cast<int>(tr.devices.size()));
        QVERIFY(smp.stage_W[0] > tr.devices[0].min_W);
        QVERIFY(smp.stage_W[0] <= p.prediction.power.cap_W + 1e-6);
        double sum = 0;
        for (double w : smp.stage_W)
            sum += w;
        QVERIFY(std::fabs(smp.mean_W - sum / smp.stage_W.size()) < 1e-9);
        QVERIFY(strip->y_of(p.prediction.power.cap_W) > strip->plot_rect().top());
        QVERIFY(strip->y_of(0) > strip->y_of(p.prediction.power.cap_W));
        // A zoom repaints it on the new range; its tooltip names the stages.
        QSignalSpy spy(c, &TimelineCanvas::view_changed);
        c->zoom(2.0);
        QCOMPARE(spy.count(), 1);
        const QPoint mid = strip->plot_rect().center();
        QVERIFY(strip->tooltip_at(mid).contains(QStringLiteral("stage 0")));
        // The toolbar hides it; the DAG view hides it too.
        v->set_show_power(false);
        QVERIFY(!strip->isVisible());
        v->set_show_power(true);
        QVERIFY(strip->isVisible());
        v->set_mode(TimelineView::Mode::dag);
        QVERIFY(!strip->isVisible());
        v->set_mode(TimelineView::Mode::timeline);
        QVERIFY(strip->isVisible());
        // It draws something besides the background where the plan runs.
        QImage img(strip->size(), QImage::Format_RGB32);
        strip->render(&img);
        const QRect plot = strip->plot_rect();
        int coloured = 0;
        for (int x = plot.left(); x < plot.right(); x += 7)
            for (int y = plot.top(); y < plot.bottom(); y += 3)
                coloured += img.pixel(x, y) != img.pixel(plot.right() - 1, plot.top() + 1) ? 1 : 0;
        QVERIFY(coloured > 50);
    }
};

// Headless and 96 DPI so fonts and metrics are the same everywhere (STYLE.md, Tests).
int main(int argc, char** argv)
{
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication::setAttribute(Qt::AA_Use96Dpi);
    QApplication app(argc, argv);
    TestTimelineView test;
    QTEST_SET_MAIN_SOURCE_PATH
    return QTest::qExec(&test, argc, argv);
}

#include "tst_timeline_view.moc"

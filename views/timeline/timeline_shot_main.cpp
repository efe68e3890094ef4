// parallax-timeline-shot: renders the timeline or DAG view of a plan to a PNG (and SVG), headless.
// The schedule screenshots of docs/timeline.md come from it (views/timeline/make_screenshots.sh):
//
//   parallax-timeline-shot --schedule 1f1b --pp 4 --microbatches 8 --out timeline-1f1b.png
//   parallax-timeline-shot --schedule interleaved --compare 1f1b --out compare.png
//   parallax-timeline-shot --large --out large.png        (64 stages x 1,024 micro-batches)
#include "sim/simulated_model.hpp"
#include "spec/input_error.hpp"
#include "timeline/example_plans.hpp"
#include "timeline/timeline_view.hpp"

#include <QApplication>
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QTextStream>

#include <cstdio>

using namespace parallax;

namespace {

struct Plan {
    std::shared_ptr<const TimelineData> data;
    double simulate_ms = 0, build_ms = 0;
};

Plan make_plan(const Scenario& s)
{
    Plan p;
    QElapsedTimer t;
    t.start();
    const PlanContext ctx(s.model, s.training, s.cluster);
    auto sim = std::make_shared<const SimulatedPlan>(simulate_plan(ctx, s.strategy));
    const Prediction pred = prediction_from_simulation(ctx, s.strategy, *sim);
    p.simulate_ms = static_cast<double>(t.nsecsElapsed()) / 1e6;
    t.restart();
    p.data = build_timeline_data(sim, pred, timeline_plan_info(s));
    p.build_ms = static_cast<double>(t.nsecsElapsed()) / 1e6;
    return p;
}

void add_options(QCommandLineParser& cmd)
{
    cmd.addOptions({
        { QStringLiteral("scenario"), QStringLiteral("Scenario preset name or file (default: default)."),
            QStringLiteral("SCENARIO"), QStringLiteral("default") },
        { QStringLiteral("schedule"),
            QStringLiteral("gpipe, 1f1b, interleaved, zb-h1 or dualpipe (default: the scenario's)."),
            QStringLiteral("SCHEDULE") },
        { QStringLiteral("pp"), QStringLiteral("Pipeline stages (default 4 with --schedule)."), QStringLiteral("N"),
            QStringLiteral("4") },
        { QStringLiteral("vpp"), QStringLiteral("Virtual stages for interleaved (default 2)."), QStringLiteral("N"),
            QStringLiteral("2") },
        { QStringLiteral("microbatches"), QStringLiteral("Micro-batches per step (default 8 with --schedule)."),
            QStringLiteral("M"), QStringLiteral("8") },
        { QStringLiteral("compare"), QStringLiteral("Also simulate this schedule and show it as plan A."),
            QStringLiteral("SCHEDULE") },
        { QStringLiteral("large"), QStringLiteral("The 64-stage x 1,024-micro-batch interleaved benchmark plan.") },
        { QStringLiteral("view"), QStringLiteral("timeline or dag (default timeline)."), QStringLiteral("VIEW"),
            QStringLiteral("timeline") },
        { QStringLiteral("expand"), QStringLiteral("DAG: expand the first forward pass of stage 0 into layers.") },
        { QStringLiteral("no-comm"), QStringLiteral("Timeline: compute rows only.") },
        { QStringLiteral("select"), QStringLiteral("Select the op with this id (highlights its dependencies)."),
            QStringLiteral("OP") },
        { QStringLiteral("measured"), QStringLiteral("Overlay a measured Chrome/Perfetto trace."),
            QStringLiteral("TRACE") },
        { QStringLiteral("range"), QStringLiteral("Show only this time range, in seconds."), QStringLiteral("T0,T1") },
        { QStringLiteral("stats"), QStringLiteral("Print each stage's compute, bubble and waits.") },
        { QStringLiteral("size"), QStringLiteral("Image size (default 1600x900)."), QStringLiteral("WxH"),
            QStringLiteral("1600x900") },
        { QStringLiteral("out"), QStringLiteral("PNG file to write."), QStringLiteral("PNG") },
        { QStringLiteral("svg"), QStringLiteral("SVG file to write as well."), QStringLiteral("SVG") },
    });
}

Scenario scenario_for(const QCommandLineParser& cmd, const QString& schedule_name)
{
    const std::string base = cmd.value(QStringLiteral("scenario")).toStdString();
    if (schedule_name.isEmpty()) {
        if (base.find('/') != std::string::npos || base.find(".json") != std::string::npos)
            return load_scenario_file(base, PresetCatalog::standard());
        return load_scenario_preset(base, PresetCatalog::standard());
    }
    Schedule sched;
    if (!schedule_from_string(schedule_name.toStdString(), sched))
        throw InputError("--schedule", "", "unknown schedule \"" + schedule_name.toStdString() + "\"");
    return views::examples::pipeline_example(base, sched, cmd.value(QStringLiteral("pp")).toInt(),
        cmd.value(QStringLiteral("microbatches")).toLongLong(), cmd.value(QStringLiteral("vpp")).toInt());
}

// The options that set up the view before it is drawn; an error message when one is wrong.
QString configure_view(views::TimelineView& view, const QCommandLineParser& cmd, const Plan& plan)
{
    if (cmd.isSet(QStringLiteral("no-comm")))
        view.timeline()->set_show_communication_rows(false);
    view.set_timeline_data(plan.data);
    if (cmd.isSet(QStringLiteral("compare")))
        view.set_comparison(make_plan(scenario_for(cmd, cmd.value(QStringLiteral("compare")))).data);
    QString why;
    if (cmd.isSet(QStringLiteral("measured")) && !view.load_measured_trace(cmd.value(QStringLiteral("measured")), &why))
        return why;
    if (cmd.value(QStringLiteral("view")) == QStringLiteral("dag"))
        view.set_mode(views::TimelineView::Mode::dag);
    QApplication::processEvents();
    view.fit();
    if (cmd.isSet(QStringLiteral("range"))) {
        const QStringList r = cmd.value(QStringLiteral("range")).split(QLatin1Char(','));
        const double t0 = r.value(0).toDouble(), t1 = r.value(1).toDouble();
        if (!(t1 > t0))
            return QStringLiteral("parallax-timeline-shot: --range needs T0,T1 with T1 > T0 (seconds)");
        view.timeline()->set_time_range(t0, t1);
        view.dag()->set_time_range(t0, t1);
    }
    if (cmd.isSet(QStringLiteral("expand"))) {
        const TimelineRow& row = plan.data->rows[static_cast<std::size_t>(plan.data->stages.front().rows.front())];
        if (!row.items.empty())
            view.dag()->set_expanded(row.items.front().op, true);
    }
    if (cmd.isSet(QStringLiteral("select"))) {
        const auto op = cmd.value(QStringLiteral("select")).toUInt();
        view.timeline()->select_op(op);
        view.dag()->select_op(op);
    }
    return {};
}

void print_stage_stats(const TimelineData& d)
{
    std::printf("pipeline drains at %s, step %s; prediction: bubble %s, compute %s, exposed PP %s\n",
        format_duration(d.pipeline_end_s).c_str(), format_duration(d.makespan_s).c_str(),
        format_duration(d.prediction.time.bubble_s).c_str(), format_duration(d.prediction.time.compute_s).c_str(),
        format_duration(d.prediction.time.exposed_pp_s).c_str());
    for (const TimelineStage& st : d.stages)
        std::printf("stage %3d  compute %s  recompute %s  bubble %s  waiting on own comm %s  exposed comm %s\n",
            st.stage, format_duration(st.compute_s).c_str(), format_duration(st.recompute_s).c_str(),
            format_duration(st.bubble_s).c_str(), format_duration(st.comm_wait_s).c_str(),
            format_duration(st.exposed_comm_s).c_str());
}

// Renders the configured view to --out (and --svg); the exit status.
int render(const QCommandLineParser& cmd, const QSize& size, QTextStream& err)
{
    const Scenario main_scenario = cmd.isSet(QStringLiteral("large"))
        ? views::examples::large_interleaved()
        : scenario_for(cmd, cmd.value(QStringLiteral("schedule")));
    const Plan plan = make_plan(main_scenario);
    views::TimelineView view;
    view.resize(size);
    view.show();
    if (const QString why = configure_view(view, cmd, plan); !why.isEmpty()) {
        err << why << "\n";
        return 2;
    }
    QApplication::processEvents();
    for (const QString& key : { QStringLiteral("out"), QStringLiteral("svg") }) {
        if (!cmd.isSet(key))
            continue;
        const bool written
            = key == QStringLiteral("out") ? view.export_png(cmd.value(key)) : view.export_svg(cmd.value(key));
        if (!written) {
            err << "cannot write " << cmd.value(key) << "\n";
            return 1;
        }
    }
    if (cmd.isSet(QStringLiteral("stats")))
        print_stage_stats(*plan.data);
    std::printf("%s: %zu ops, %d stages, step %s; simulate %.0f ms, view data %.0f ms\n",
        qPrintable(cmd.value(QStringLiteral("out"))), plan.data->op_count(), plan.data->graph().devices,
        format_duration(plan.data->makespan_s).c_str(), plan.simulate_ms, plan.build_ms);
    return 0;
}

} // namespace

int main(int argc, char** argv)
{
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication::setAttribute(Qt::AA_Use96Dpi);
    QApplication app(argc, argv);
    QCommandLineParser cmd;
    cmd.setApplicationDescription(QStringLiteral("Renders the timeline or DAG view of a simulated plan to PNG/SVG."));
    cmd.addHelpOption();
    add_options(cmd);
    cmd.process(app);
    QTextStream err(stderr);
    if (!cmd.isSet(QStringLiteral("out"))) {
        err << "parallax-timeline-shot: --out FILE.png is required\n";
        return 2;
    }
    const QStringList wh = cmd.value(QStringLiteral("size")).split(QLatin1Char('x'));
    const QSize size(wh.value(0).toInt(), wh.value(1).toInt());
    if (size.width() < 200 || size.height() < 150) {
        err << "parallax-timeline-shot: --size must be WxH, at least 200x150\n";
        return 2;
    }
    try {
        return render(cmd, size, err);
    } catch (const InputError& e) {
        err << e.what() << "\n";
        return 2;
    }
}

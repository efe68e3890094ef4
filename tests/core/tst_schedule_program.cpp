// Schedule programs: the text, JSON and torchtitan CSV forms, the checker's rejections (with the
// stage, step and dependency named), peak in-flight activations, and the built-ins written as
// programs simulating exactly like the built-ins.
#include "io/preset_catalog.hpp"
#include "io/scenario_io.hpp"
#include "io/schedule_program_io.hpp"
#include "ir/lowering.hpp"
#include "ir/schedule_program.hpp"
#include "model/analytic_model.hpp"
#include "sim/simulated_model.hpp"
#include "sim/simulator.hpp"
#include "spec/input_error.hpp"
#include "spec/strategy_rules.hpp"

#include "../support/test_plans.hpp"

#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <memory>
#include <tuple>

using namespace parallax;

namespace {

ScheduleProgram checked(const std::string& text)
{
    ScheduleProgram p = parse_schedule_text(text);
    check_schedule_program(p);
    return p;
}

// The checker's message for a program it must reject ("" when it accepts it).
std::string rejection(const std::string& text)
{
    try {
        checked(text);
    } catch (const ScheduleProgramError& e) {
        return e.what();
    }
    return {};
}

bool contains(const std::string& s, const std::string& part)
{
    return s.find(part) != std::string::npos;
}

// Even stages and free links between them, so a step's time is the schedule's alone.
struct Toy {
    std::unique_ptr<PlanContext> ctx;
    Strategy s;
    Toy(int pp, int vpp, long long microbatches, Schedule schedule)
    {
        ModelSpec m = test::gpt(pp * vpp * 2, 2048, 16, 128);
        ClusterSpec c = test::cluster("H100-SXM5-80GB", 1, pp, "nvlink4-nvswitch", "ib-ndr");
        TrainingSpec t;
        t.seq_len = 2048;
        t.global_batch = microbatches;
        ctx = std::make_unique<PlanContext>(m, t, c);
        s.pp = pp;
        s.vpp = vpp;
        s.schedule = schedule;
    }
    // The same plan with the built-in rewritten as a program read back from its text.
    Strategy as_program() const
    {
        const ScheduleProgram built
            = builtin_schedule_program(s.schedule, s.pp, s.vpp, microbatch_count(ctx->training, s));
        ScheduleProgram read = parse_schedule_text(schedule_program_text(built));
        check_schedule_program(read);
        Strategy c = s;
        c.schedule = Schedule::custom;
        c.program = intern_schedule_program(read);
        return c;
    }
};

// Every device's compute ops in the order they start: (type, chunk, micro-batch).
std::vector<std::vector<std::tuple<int, int, int>>> pass_order(const SimulatedPlan& sim)
{
    const ExecutionGraph& g = sim.lowered.graph;
    std::vector<std::uint32_t> ops;
    for (std::uint32_t i = 0; i < g.size(); ++i)
        if (g.stream(i) == IrStream::compute && g.chunk(i) >= 0)
            ops.push_back(i);
    std::stable_sort(ops.begin(), ops.end(),
        [&](std::uint32_t a, std::uint32_t b) { return sim.result.start_s[a] < sim.result.start_s[b]; });
    std::vector<std::vector<std::tuple<int, int, int>>> out(static_cast<std::size_t>(g.devices));
    for (std::uint32_t i : ops)
        out[g.device(i)].emplace_back(static_cast<int>(g.type(i)), g.chunk(i), g.microbatch(i));
    return out;
}

double pipeline_end(const SimulationResult& r)
{
    return *std::max_element(r.compute_last_s.begin(), r.compute_last_s.end());
}

QString q(const char* s)
{
    return QString::fromUtf8(s);
}

QStringList qs(std::initializer_list<const char*> parts)
{
    QStringList out;
    for (const char* p : parts)
        out << q(p);
    return out;
}

} // namespace

class TestScheduleProgram : public QObject {
    Q_OBJECT
private slots:
    // The planner edits degrees freely: a program that no longer fits pp or the micro-batch count is a
    // rule violation naming the program (and the model is never run on it), not a crash.
    void a_program_that_no_longer_fits_is_a_rule_violation()
    {
        Scenario s = load_scenario_file(
            PARALLAX_SOURCE_DIR "/docs/examples/schedule-program-dualpipe.json", PresetCatalog::standard());
        const PlanInputs in { s.model, s.training, s.cluster.gpu, s.cluster.total_gpus() };
        QCOMPARE(check_strategy(in, s.strategy), Rule::ok);
        Strategy other = s.strategy;
        other.pp = s.strategy.pp / 2;
        other.dp = s.strategy.dp * 2;
        const auto violations = all_violations(in, other);
        QVERIFY(std::find(violations.begin(), violations.end(), Rule::program_fits) != violations.end());
        QCOMPARE(std::string(rule_key(Rule::program_fits, other)), std::string("strategy.schedule_program"));
        const std::string why = explain(Rule::program_fits, in, other);
        QVERIFY2(why.find("runs " + std::to_string(s.strategy.pp) + " stages") != std::string::npos, why.c_str());
        other = s.strategy;
        other.micro_batch *= 2; // half the micro-batches
        QCOMPARE(check_strategy(in, other), Rule::program_fits);
    }

    void text_round_trip()
    {
        const std::string text = "# two stages, split backward\n"
                                 "stage 0: F0.0 F1.0 B0.0 W0.0~ B1.0 W1.0   # W0 floats\n"
                                 "stage 1: F0 B0 W0 WAIT:W0.0 F1 B1 W1\n";
        const ScheduleProgram p = checked(text);
        QCOMPARE(p.stages.size(), std::size_t(2));
        QCOMPARE(p.microbatches, 2LL);
        QCOMPARE(p.chunks, 1);
        QVERIFY(p.split_backward);
        QVERIFY(!p.explicit_comm);
        QVERIFY(p.stages[0][3].filler);
        QCOMPARE(p.stages[1][3].kind, DirectiveKind::wait);
        const std::string written = schedule_program_text(p);
        QCOMPARE(written,
            std::string("stage 0: F0.0 F1.0 B0.0 W0.0~ B1.0 W1.0\nstage 1: F0.0 B0.0 W0.0 WAIT:W0.0 F1.0 B1.0 W1.0\n"));
        QVERIFY(checked(written) == p);
        // The JSON form of the same program.
        const ScheduleProgram* j
            = read_schedule_program(nlohmann::json::parse(R"({"stages": [["F0.0","F1.0","B0.0","W0.0~","B1.0","W1.0"],
                                               ["F0","B0","W0","WAIT:W0.0","F1","B1","W1"]]})"),
                "x.json", "strategy.schedule_program");
        QVERIFY(*j == p);
    }

    void explicit_sends_and_receives()
    {
        const ScheduleProgram p = checked("stage 0: F0 SEND:F0 F1 SEND:F1 RECV:B0 BW0 RECV:B1 BW1\n"
                                          "stage 1: RECV:F0 F0 BW0 SEND:B0 RECV:F1 F1 BW1 SEND:B1\n");
        QVERIFY(p.explicit_comm);
        QCOMPARE(p.peak_in_flight, (std::vector<long long> { 2, 1 }));
    }

    void malformed_programs_are_named_data()
    {
        QTest::addColumn<QString>("program");
        QTest::addColumn<QStringList>("named");
        QTest::newRow("missing receive") << q("stage 0: F0 SEND:F0 RECV:B0 BW0\nstage 1: F0 BW0 SEND:B0\n")
                                         << qs({ "stage 0, step 1 (SEND:F0.0)", "no matching RECV:F0.0 on stage 1" });
        QTest::newRow("backward before forward") << q("stage 0: F0 F1 BW0 BW1\nstage 1: F0 BW1 F1 BW0\n")
                                                 << qs({ "stage 1, step 1 (BW1.0)", "before F1.0 (step 2)" });
        QTest::newRow("W before B") << q("stage 0: F0 W0 B0\n")
                                    << qs({ "stage 0, step 1 (W0.0)", "before B0.0 (step 2)" });
        // Stage 0 waits for stage 1's backward of micro-batch 0, which waits for micro-batch 1's
        // forward on stage 0, listed after that backward.
        QTest::newRow("cycle") << q("stage 0: F0 BW0 F1 BW1\nstage 1: F1 BW1 F0 BW0\n")
                               << qs({ "deadlock", "stage 0, step 1 (BW0.0) waits for BW0.0 on stage 1",
                                      "stage 1, step 0 (F1.0) waits for F1.0 on stage 0 (step 2)", "a cycle" });
        QTest::newRow("never scheduled")
            << q("stage 0: F0 BW0 F1 BW1\nstage 1: F0 BW0 F1 BW1\nstage 2: F0 BW0 F1 BW1\nstage 3: F0 BW0 F1\n")
            << qs({ "stage 2, step 3 (BW1.0) waits for BW1.0 on stage 3, which is never scheduled" });
        QTest::newRow("missing micro-batch") << q("stage 0: F0 F2 BW0 BW2\nstage 1: F0 BW0 F2 BW2\n")
                                             << qs({ "micro-batch 1 is missing on stage 0", "F1.0" });
        QTest::newRow("duplicate") << q("stage 0: F0 F1 BW0 BW1 F1\nstage 1: F0 BW0 F1 BW1\n")
                                   << qs({ "stage 0, step 4 (F1.0)", "second forward", "step 1" });
        QTest::newRow("wait on a later pass")
            << q("stage 0: F0 WAIT:W1 F1 B0 W0 B1 W1\n") << qs({ "stage 0, step 1 (WAIT:W1.0)", "W1.0 (step 6)" });
        QTest::newRow("syntax") << q("stage 0: F0 X1\n") << qs({ "line 1", "\"X1\"" });
    }
    void malformed_programs_are_named()
    {
        QFETCH(QString, program);
        QFETCH(QStringList, named);
        const std::string e = rejection(program.toStdString());
        QVERIFY2(!e.empty(), "accepted");
        for (const QString& part : named)
            QVERIFY2(contains(e, part.toStdString()), e.c_str());
    }

    // In a scenario the checker's message names the file and key, and the CLI exits 2 on it.
    void scenario_errors_name_the_key()
    {
        const PresetCatalog& catalog = PresetCatalog::standard();
        const std::string scenario = R"({"schema": 1, "model": "llama3-8b",
            "cluster": {"gpu": "H100-SXM5-80GB", "nodes": 1, "gpus_per_node": 2, "intra_node": "nvlink4-nvswitch",
                        "inter_node": "ib-ndr"},
            "training": {"global_batch": 2, "seq_len": 2048, "precision": "bf16"},
            "strategy": {"pp": 2, "dp": 1, "schedule_program": "stage 0: F0 F1 BW0 BW1\nstage 1: F0 BW1 F1 BW0\n"}})";
        try {
            parse_scenario_text(scenario, "plan.json", catalog);
            QFAIL("accepted");
        } catch (const InputError& e) {
            QCOMPARE(e.key(), std::string("strategy.schedule_program"));
            QVERIFY2(contains(e.what(), "plan.json") && contains(e.rule(), "stage 1, step 1 (BW1.0)"), e.what());
        }
        std::string ok = scenario;
        ok.replace(ok.find("BW1 F1 BW0"), 10, "BW0 F1 BW1");
        const Scenario s = parse_scenario_text(ok, "plan.json", catalog);
        QCOMPARE(s.strategy.schedule, Schedule::custom);
        QVERIFY(s.strategy.program != nullptr);
        // Saved and read back: the same program (interned, so the same pointer).
        const Scenario back = parse_scenario_text(scenario_to_json(s).dump(), "back.json", catalog);
        QCOMPARE(back.strategy.program, s.strategy.program);
        QVERIFY(back.strategy == s.strategy);
        std::string with_schedule = ok;
        with_schedule.replace(with_schedule.find("\"dp\": 1,"), 8, "\"dp\": 1, \"schedule\": \"1f1b\",");
        QVERIFY_THROWS_EXCEPTION(InputError, parse_scenario_text(with_schedule, "plan.json", catalog));
        std::string more_microbatches = ok;
        more_microbatches.replace(more_microbatches.find("\"global_batch\": 2"), 17, "\"global_batch\": 4");
        QVERIFY_THROWS_EXCEPTION(InputError, parse_scenario_text(more_microbatches, "plan.json", catalog));
        QVERIFY_THROWS_EXCEPTION(InputError, parse_scenario_text(ok, "plan.json", catalog, ScenarioUse::search));
        // Two chunks per stage and no "schedule": the program's, not the interleaved default of vpp > 1.
        nlohmann::json two = nlohmann::json::parse(ok);
        two["strategy"]["schedule_program"] = "stage 0: F0.0 F0.1 BW0.1 BW0.0\nstage 1: F0.0 F0.1 BW0.1 BW0.0\n";
        two["training"]["global_batch"] = 1;
        const Scenario chunks = parse_scenario_text(two.dump(), "plan.json", catalog);
        QCOMPARE(chunks.strategy.schedule, Schedule::custom);
        QCOMPARE(chunks.strategy.vpp, 2);
    }

    // The CLI: predict (both fidelities) and timeline run a scenario with a program; a deadlocking
    // program exits 2 naming the file, the key and the stage.
    void cli_runs_programs()
    {
        const QString example = QStringLiteral(PARALLAX_SOURCE_DIR "/docs/examples/schedule-program-dualpipe.json");
        QProcess p;
        double step_s[2] = {};
        for (int i = 0; i < 2; ++i) {
            const QString fidelity = i == 0 ? QStringLiteral("analytic") : QStringLiteral("simulated");
            p.start(QStringLiteral(PARALLAX_CLI_PATH),
                { QStringLiteral("predict"), example, QStringLiteral("--json"), QStringLiteral("--fidelity"),
                    fidelity });
            QVERIFY(p.waitForFinished(60000));
            QCOMPARE(p.exitCode(), 0);
            const nlohmann::json out = nlohmann::json::parse(p.readAllStandardOutput().toStdString());
            QCOMPARE(out["fidelity"].get<std::string>(), fidelity.toStdString());
            step_s[i] = out["step_time_s"].get<double>();
        }
        // The critical path leaves out sends and recompute placement; the two agree within 2%.
        QVERIFY2(std::fabs(step_s[0] - step_s[1]) <= 0.02 * step_s[1],
            qPrintable(QStringLiteral("analytic %1 s, simulated %2 s").arg(step_s[0]).arg(step_s[1])));
        QTemporaryDir dir;
        const QString trace = dir.filePath(QStringLiteral("trace.json"));
        p.start(
            QStringLiteral(PARALLAX_CLI_PATH), { QStringLiteral("timeline"), example, QStringLiteral("--out"), trace });
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 0);
        QVERIFY(QFile::exists(trace));

        QFile in(example);
        QVERIFY(in.open(QIODevice::ReadOnly));
        nlohmann::json j = nlohmann::json::parse(in.readAll().toStdString());
        j["strategy"]["schedule_program"] = "stage 0: F0 BW0 F1 BW1\nstage 1: F1 BW1 F0 BW0\n"
                                            "stage 2: F0 BW0 F1 BW1\nstage 3: F0 BW0 F1 BW1\n";
        const QString bad = dir.filePath(QStringLiteral("bad.json"));
        QFile out(bad);
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(QByteArray::fromStdString(j.dump()));
        out.close();
        p.start(QStringLiteral(PARALLAX_CLI_PATH), { QStringLiteral("predict"), bad });
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 2);
        const QString err = QString::fromUtf8(p.readAllStandardError());
        QVERIFY2(err.contains(bad) && err.contains(QStringLiteral("strategy.schedule_program"))
                && err.contains(QStringLiteral("deadlock: stage 0, step 1 (BW0.0)")),
            qPrintable(err));
    }

    // 1F1B holds p - s micro-batches on stage s (Narayanan et al. 2021, Sec. 2.2.1).
    void one_f_one_b_in_flight()
    {
        for (int pp : { 2, 4, 8 }) {
            const ScheduleProgram p = builtin_schedule_program(Schedule::one_f_one_b, pp, 1, 2LL * pp);
            for (int s = 0; s < pp; ++s)
                QCOMPARE(p.peak_in_flight[s], static_cast<long long>(pp - s));
        }
        // GPipe holds every micro-batch; DualPipe PP + 1 chunk micro-batches per device (DualPipe README).
        const ScheduleProgram g = builtin_schedule_program(Schedule::gpipe, 4, 1, 6);
        QCOMPARE(g.peak_in_flight, (std::vector<long long> { 6, 6, 6, 6 }));
        const ScheduleProgram d = builtin_schedule_program(Schedule::dualpipe, 4, 1, 16);
        QCOMPARE(d.peak_in_flight, (std::vector<long long> { 5, 5, 5, 5 }));
    }

    // The analytic model's critical path over a program reproduces the closed forms (F = B = W = 1
    // time unit per stage, p = 4, m = 16): 1F1B and GPipe (m + p - 1)(F + B + W) = 57 (Narayanan et
    // al. 2021 Sec. 2.2.1); interleaved with v = 2 (each chunk 1/2) m(F+B+W) + (p-1)(F+B+W)/v = 52.5
    // (Sec. 2.2.2).
    void critical_path_matches_the_closed_forms()
    {
        const std::vector<PassTimes> unit(4, PassTimes { 1, 1, 1 });
        const std::vector<PassTimes> half(4, PassTimes { 0.5, 0.5, 0.5 });
        QCOMPARE(program_makespan_s(builtin_schedule_program(Schedule::one_f_one_b, 4, 1, 16), unit), 57.0);
        QCOMPARE(program_makespan_s(builtin_schedule_program(Schedule::gpipe, 4, 1, 16), unit), 57.0);
        QCOMPARE(program_makespan_s(builtin_schedule_program(Schedule::interleaved, 4, 2, 16), half), 52.5);
        // ZB-H1 with its W~ floating into idle time: Parallax's ZB-H1 form (m-1)(F+B+W) + (p-1)(F+B)
        // + W = 45 + 8 + 1 = 54 (the W passes leave the bubble; analytic_model.cpp schedule_time).
        QCOMPARE(program_makespan_s(builtin_schedule_program(Schedule::zb_h1, 4, 1, 16), unit), 54.0);
        // And predict uses it: a 1F1B program's pipeline is the built-in's formula on even stages.
        const Toy toy(4, 1, 16, Schedule::one_f_one_b);
        const Prediction builtin = AnalyticModel(*toy.ctx).predict(toy.s);
        const Prediction program = AnalyticModel(*toy.ctx).predict(toy.as_program());
        QVERIFY2(std::fabs(program.step_time_s - builtin.step_time_s) <= 0.01 * builtin.step_time_s,
            qPrintable(QStringLiteral("%1 vs %2").arg(program.step_time_s).arg(builtin.step_time_s)));
        bool said = false;
        for (const std::string& a : program.assumptions)
            said = said || contains(a, "schedule program");
        QVERIFY(said);
    }

    // The peak feeds the memory model: a program that holds every micro-batch needs more memory
    // than 1F1B on stage 0, exactly GPipe's.
    void program_peak_sets_activation_memory()
    {
        const Toy gpipe(4, 1, 16, Schedule::gpipe);
        const Toy one(4, 1, 16, Schedule::one_f_one_b);
        const Prediction pg = AnalyticModel(*gpipe.ctx).predict(gpipe.as_program());
        const Prediction p1 = AnalyticModel(*one.ctx).predict(one.as_program());
        const Prediction bg = AnalyticModel(*gpipe.ctx).predict(gpipe.s);
        QCOMPARE(pg.memory.activations, bg.memory.activations);
        QVERIFY(pg.memory.activations > 3 * p1.memory.activations);
    }

    // A program that holds every micro-batch (GPipe's order) does not fit where 1F1B's order does:
    // Llama 3 8B, PP 4 on 4 H100, 8k tokens, 64 micro-batches.
    void program_that_holds_too_much_is_infeasible()
    {
        const ModelSpec m = test::model("llama3-8b");
        const ClusterSpec c = test::cluster("H100-SXM5-80GB", 1, 4, "nvlink4-nvswitch", "ib-ndr");
        TrainingSpec t;
        t.seq_len = 8192;
        t.global_batch = 64;
        const PlanContext ctx(m, t, c);
        Strategy s;
        s.pp = 4;
        s.schedule = Schedule::custom;
        s.program = intern_schedule_program(builtin_schedule_program(Schedule::one_f_one_b, 4, 1, 64));
        const Prediction fits = AnalyticModel(ctx).predict(s);
        s.program = intern_schedule_program(builtin_schedule_program(Schedule::gpipe, 4, 1, 64));
        const Prediction too_much = AnalyticModel(ctx).predict(s);
        QVERIFY(fits.feasible);
        QVERIFY(!too_much.feasible);
        QVERIFY2(contains(too_much.infeasible_reason, "memory"), too_much.infeasible_reason.c_str());
    }

    // Each built-in written as a program, printed, read back and simulated: the same step time and
    // the same pass order on every device.
    void builtins_as_programs_data()
    {
        QTest::addColumn<int>("schedule");
        QTest::addColumn<int>("pp");
        QTest::addColumn<int>("vpp");
        QTest::addColumn<int>("m");
        QTest::newRow("gpipe") << int(Schedule::gpipe) << 4 << 1 << 8;
        QTest::newRow("1f1b") << int(Schedule::one_f_one_b) << 4 << 1 << 8;
        QTest::newRow("1f1b m < p") << int(Schedule::one_f_one_b) << 8 << 1 << 4;
        QTest::newRow("interleaved") << int(Schedule::interleaved) << 4 << 2 << 8;
        QTest::newRow("zb-h1") << int(Schedule::zb_h1) << 4 << 1 << 8;
        QTest::newRow("dualpipe") << int(Schedule::dualpipe) << 4 << 1 << 16;
    }
    void builtins_as_programs()
    {
        QFETCH(int, schedule);
        QFETCH(int, pp);
        QFETCH(int, vpp);
        QFETCH(int, m);
        const Toy toy(pp, vpp, m, static_cast<Schedule>(schedule));
        const SimulatedPlan builtin = simulate_plan(*toy.ctx, toy.s);
        const SimulatedPlan program = simulate_plan(*toy.ctx, toy.as_program());
        QVERIFY(builtin.result.makespan_s > 0);
        QCOMPARE(program.result.makespan_s, builtin.result.makespan_s);
        QCOMPARE(program.lowered.graph.size(), builtin.lowered.graph.size());
        QVERIFY(pass_order(program) == pass_order(builtin));
        const Prediction pb = prediction_from_simulation(*toy.ctx, toy.s, builtin);
        const Prediction pp_ = prediction_from_simulation(*toy.ctx, toy.as_program(), program);
        QCOMPARE(pp_.step_time_s, pb.step_time_s);
        // The checker's peak in-flight activations are the built-in's warm-up depth: the same memory.
        for (int st = 0; st < pp; ++st)
            QCOMPARE(pp_.stages[st].memory.activations, pb.stages[st].memory.activations);
    }

    // The shipped examples are the built-ins' programs.
    void shipped_examples_are_the_builtins()
    {
        const std::string dir = std::string(PARALLAX_SOURCE_DIR) + "/docs/examples/schedules/";
        const std::tuple<const char*, Schedule, int, int, long long> files[] = {
            { "gpipe-pp4-m8.txt", Schedule::gpipe, 4, 1, 8 },
            { "1f1b-pp4-m8.txt", Schedule::one_f_one_b, 4, 1, 8 },
            { "interleaved-pp4-v2-m8.txt", Schedule::interleaved, 4, 2, 8 },
            { "zb-h1-pp4-m8.txt", Schedule::zb_h1, 4, 1, 8 },
            { "dualpipe-pp4-m16.txt", Schedule::dualpipe, 4, 1, 16 },
        };
        for (const auto& [name, sch, pp, vpp, m] : files) {
            const ScheduleProgram read = load_schedule_program_file(dir + name);
            QVERIFY2(read == builtin_schedule_program(sch, pp, vpp, m), name);
        }
        QVERIFY(
            load_schedule_program_file(dir + "dualpipe-reference-pp4-m16.txt") == dualpipe_reference_program(4, 16));
    }

    // DeepSeek-V3 report (Sec. 3.2.1, Table 2): DualPipe's bubble is (PP/2 - 1)(F&B + B - 3W), B the
    // whole backward and F&B a forward and a backward run as one pair. DualPipe's own order
    // (dualpipe_reference_program), hand-worked with F = B_input = W = 1 time unit, so B = 2 and
    // F&B = 3 (the pair not overlapped): (PP/2 - 1)(3 + 2 - 3) = 2 units at PP = 4, 6 at PP = 8,
    // whatever the micro-batch count; every device also works m (F + B) = 3m units.
    void dualpipe_bubble_matches_the_report_data()
    {
        QTest::addColumn<int>("pp");
        QTest::addColumn<int>("m");
        QTest::addColumn<double>("bubble");
        QTest::newRow("pp 4, m 8") << 4 << 8 << 2.0;
        QTest::newRow("pp 4, m 16") << 4 << 16 << 2.0;
        QTest::newRow("pp 8, m 16") << 8 << 16 << 6.0;
        QTest::newRow("pp 8, m 32") << 8 << 32 << 6.0;
    }
    void dualpipe_bubble_matches_the_report()
    {
        QFETCH(int, pp);
        QFETCH(int, m);
        QFETCH(double, bubble);
        const ScheduleProgram p = dualpipe_reference_program(pp, m);
        const double step = program_makespan_s(p, std::vector<PassTimes>(static_cast<std::size_t>(pp), { 1, 1, 1 }));
        QCOMPARE(step - 3.0 * m, bubble);
        // The event simulator runs the same program on even stages with free links: its bubble is the
        // critical path's at the stages' own F, B_input and W.
        const Toy toy(pp, 1, m, Schedule::dualpipe);
        Strategy s = toy.s;
        s.schedule = Schedule::custom;
        s.program = intern_schedule_program(p);
        const SimulatedPlan sim = simulate_plan(*toy.ctx, s);
        const ChunkTiming ct = sim.lowered.chunk_timing[1];
        // A device's chunk 0 is stage d of the down pipeline, its chunk 1 stage pp-1-d of the up one.
        std::vector<std::vector<PassTimes>> stages;
        for (int d = 0; d < pp; ++d) {
            stages.emplace_back();
            for (int ir : { d, pp + (pp - 1 - d) }) {
                const ChunkTiming& c = sim.lowered.chunk_timing[static_cast<std::size_t>(ir)];
                stages.back().push_back({ c.forward_s, c.backward_input_s + c.recompute_s, c.weight_s });
            }
        }
        const double critical = program_makespan_s(p, stages);
        QVERIFY2(std::fabs(pipeline_end(sim.result) - critical) <= 1e-6 * critical,
            qPrintable(
                QStringLiteral("simulated %1 s, critical path %2 s").arg(pipeline_end(sim.result)).arg(critical)));
        const double f = ct.forward_s, w = ct.weight_s, b = ct.backward_input_s + w;
        const double formula = (pp / 2.0 - 1) * ((f + b) + b - 3 * w);
        const double simulated = pipeline_end(sim.result) - m * (f + b);
        qInfo("pp %d m %d: F %.3g s, B %.3g s, W %.3g s; simulated bubble %.4g s, formula %.4g s", pp, m, f, b, w,
            simulated, formula);
        // Unequal F, B_input and W (and the end stages' embedding and output) move it off the
        // unit-time case; it stays near the formula.
        QVERIFY(std::fabs(simulated - formula) <= 0.15 * formula);
    }

    // torch.distributed.pipelining's CSV: rows are ranks, `1F0` stage 1's forward of micro-batch 0,
    // `I` backward-input, `W` weight, `B` full backward; stage s on rank s mod ranks.
    void torchtitan_csv()
    {
        const std::string csv = "0F0,0F1,2F0,2F1,,2B0,0I0,0W0,2B1,0I1,0W1\n"
                                ",1F0,1F1,3F0,3F1,3B0,1B0,3B1,1B1,,\n";
        ScheduleProgram p = parse_torchtitan_csv(csv);
        QCOMPARE(p.stages.size(), std::size_t(2));
        QCOMPARE(p.stages[0].size(), std::size_t(10));
        QCOMPARE(directive_text(p.stages[0][2]), std::string("F0.1")); // stage 2 = rank 0's chunk 1
        QCOMPARE(directive_text(p.stages[0][6]), std::string("W0.0"));
        QCOMPARE(directive_text(p.stages[1][5]), std::string("BW0.0"));
        // I/W and B mixed: split backwards send their gradient after I, full ones after W.
        check_schedule_program(p);
        QVERIFY(p.split_backward);
        const std::string full = "0F0,0F1,2F0,2F1,,2B0,0B0,2B1,0B1\n"
                                 ",1F0,1F1,3F0,3F1,3B0,1B0,3B1,1B1\n";
        p = parse_torchtitan_csv(full);
        check_schedule_program(p);
        QCOMPARE(p.chunks, 2);
        QCOMPARE(p.microbatches, 2LL);
        // Rank 0 runs F0.0 F1.0 F0.1 F1.1 before its first backward: 4 chunk micro-batches in flight.
        QCOMPARE(p.peak_in_flight, (std::vector<long long> { 4, 4 }));
        // Written back out: the same CSV, and the interleaved built-in survives the trip.
        QCOMPARE(torchtitan_schedule_csv(p),
            std::string("0F0,0F1,2F0,2F1,2B0,0B0,2B1,0B1\n1F0,1F1,3F0,3F1,3B0,1B0,3B1,1B1\n"));
        const ScheduleProgram interleaved = builtin_schedule_program(Schedule::interleaved, 4, 2, 8);
        ScheduleProgram back = parse_torchtitan_csv(torchtitan_schedule_csv(interleaved));
        check_schedule_program(back);
        QVERIFY(back == interleaved);
        QVERIFY_THROWS_EXCEPTION(
            ScheduleProgramError, torchtitan_schedule_csv(builtin_schedule_program(Schedule::dualpipe, 4, 1, 8)));
        // A V-shaped placement (stage 3 back on rank 0) is not the looped one this reader maps.
        QVERIFY_THROWS_EXCEPTION(ScheduleProgramError, parse_torchtitan_csv("0F0,3F0\n1F0,2F0\n"));
    }
};

QTEST_GUILESS_MAIN(TestScheduleProgram)
#include "tst_schedule_program.moc"

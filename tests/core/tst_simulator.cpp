// The IR, the schedules and the event simulator: published bubble formulas and in-flight counts,
// agreement with the analytic model across a grid of strategies, link sharing, critical path.
#include "ir/lowering.hpp"
#include "ir/pipeline_schedule.hpp"
#include "model/analytic_model.hpp"
#include "sim/simulated_model.hpp"
#include "sim/simulator.hpp"
#include "spec/strategy_rules.hpp"

#include "../support/test_plans.hpp"

#include <QElapsedTimer>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <memory>
#include <thread>

using namespace parallax;

namespace {

bool near(double got, double want, double rel)
{
    return std::fabs(got - want) <= rel * std::fabs(want);
}

// A pipeline with even stages and (practically) free communication: the schedule alone sets the time.
struct ToyPipeline {
    std::unique_ptr<PlanContext> ctx;
    Strategy s;
    ToyPipeline(int pp, int vpp, long long microbatches, Schedule schedule, int layers_per_chunk = 2)
    {
        ModelSpec m = test::gpt(pp * vpp * layers_per_chunk, 2048, 16, 128); // tiny vocab: even stages
        ClusterSpec c = test::cluster("H100-SXM5-80GB", 1, pp, "nvlink4-nvswitch", "ib-ndr");
        c.intra_node.bw_Bps = 1e18;
        c.intra_node.latency_s = 0;
        TrainingSpec t;
        t.seq_len = 2048;
        t.global_batch = microbatches;
        ctx = std::make_unique<PlanContext>(m, t, c);
        s.pp = pp;
        s.vpp = vpp;
        s.schedule = schedule;
        s.micro_batch = 1;
    }
    SimulatedPlan run() const { return simulate_plan(*ctx, s); }
    // Per micro-batch: one chunk's F, B and W (stages are even; the first/last differ by the tiny
    // embedding/output only).
    ChunkTiming chunk(int c = 1) const
    {
        EvaluationCache cache(*ctx);
        StrategyCosts costs;
        compute_costs(*ctx, s, cache, costs);
        return chunk_timing(*ctx, s, costs, c);
    }
};

double pipeline_end(const SimulationResult& r)
{
    return *std::max_element(r.compute_last_s.begin(), r.compute_last_s.end());
}

} // namespace

class TestSimulator : public QObject {
    Q_OBJECT
private slots:
    // A step of more micro-batches than the simulator's limit: a window is simulated and the step
    // extrapolated; it must agree with simulating every micro-batch.
    void windowed_step_matches_the_whole_step_data()
    {
        QTest::addColumn<int>("pp");
        QTest::addColumn<int>("vpp");
        QTest::addColumn<int>("schedule");
        QTest::newRow("1F1B pp 4") << 4 << 1 << static_cast<int>(Schedule::one_f_one_b);
        QTest::newRow("interleaved pp 4 x 2") << 4 << 2 << static_cast<int>(Schedule::interleaved);
        QTest::newRow("ZB-H1 pp 2") << 2 << 1 << static_cast<int>(Schedule::zb_h1);
    }
    void windowed_step_matches_the_whole_step()
    {
        QFETCH(int, pp);
        QFETCH(int, vpp);
        QFETCH(int, schedule);
        const long long m = 3 * kMaxSimulatedMicrobatches;
        const ToyPipeline t(pp, vpp, m, static_cast<Schedule>(schedule), 1);
        const SimulatedPlan windowed = t.run();
        QVERIFY(windowed.window.extrapolated());
        QCOMPARE(windowed.window.step_microbatches, m);
        QVERIFY(windowed.window.simulated_microbatches <= kMaxSimulatedMicrobatches);
        QCOMPARE(windowed.window.simulated_microbatches % (2 * pp), 0LL);
        AnalyticResult a; // the same thermal clock as simulate_plan
        AnalyticModel(*t.ctx).evaluate(t.s, a);
        const LoweredPlan whole = lower_plan(*t.ctx, t.s, a.power.thermal_clock, m);
        const double whole_s = simulate(whole.graph).makespan_s;
        const double windowed_s = windowed.result.makespan_s + windowed.window.extra_s;
        QVERIFY2(near(windowed_s, whole_s, 0.005),
            qPrintable(QStringLiteral("windowed %1 s, whole %2 s").arg(windowed_s).arg(whole_s)));
        const Prediction p = prediction_from_simulation(*t.ctx, t.s, windowed);
        QVERIFY(near(p.step_time_s, windowed_s, 1e-9));
        bool said = false;
        for (const std::string& a : p.assumptions)
            said = said || a.find("extrapolated") != std::string::npos;
        QVERIFY2(said, "the prediction says the step was extrapolated");
    }
    // 10^9 micro-batches: a bounded window, a finite step of the right size.
    void billion_microbatches_end_quickly()
    {
        const ToyPipeline t(4, 1, 1'000'000'000, Schedule::one_f_one_b, 1);
        QElapsedTimer clock;
        clock.start();
        const SimulatedPlan sim = t.run();
        QVERIFY2(clock.elapsed() < 10000, qPrintable(QString::number(clock.elapsed())));
        QVERIFY(sim.window.simulated_microbatches <= kMaxSimulatedMicrobatches);
        const double step = sim.result.makespan_s + sim.window.extra_s;
        const ChunkTiming c = t.chunk();
        // At least every micro-batch's forward and backward on one stage.
        QVERIFY(std::isfinite(step));
        QVERIFY(step >= 1e9 * (c.forward_s + c.backward_input_s + c.weight_s) * 0.99);
    }
    // A cancelled token stops the simulation (the planner simulates on every edit).
    void cancelled_simulation_stops()
    {
        const ToyPipeline t(8, 4, 1024, Schedule::interleaved, 1);
        const CancelToken before;
        before.cancel();
        QVERIFY_THROWS_EXCEPTION(Cancelled, simulate_plan(*t.ctx, t.s, &before));
        const LoweredPlan lowered = lower_plan(*t.ctx, t.s);
        const CancelToken during;
        std::thread canceller([&] { during.cancel(); });
        canceller.join();
        QVERIFY_THROWS_EXCEPTION(Cancelled, simulate(lowered.graph, &during));
        const CancelToken never;
        QVERIFY(simulate(lowered.graph, &never).makespan_s > 0);
    }

    // 1F1B and GPipe: (m + p - 1)(t_f + t_b) (Narayanan et al. 2021, Sec. 2.2.1).
    void one_f_one_b_and_gpipe_data()
    {
        QTest::addColumn<int>("schedule");
        QTest::addColumn<int>("pp");
        QTest::addColumn<int>("m");
        QTest::newRow("1f1b p4 m8") << int(Schedule::one_f_one_b) << 4 << 8;
        QTest::newRow("1f1b p8 m32") << int(Schedule::one_f_one_b) << 8 << 32;
        QTest::newRow("1f1b p8 m4 (m < p)") << int(Schedule::one_f_one_b) << 8 << 4;
        QTest::newRow("gpipe p4 m8") << int(Schedule::gpipe) << 4 << 8;
        QTest::newRow("gpipe p8 m16") << int(Schedule::gpipe) << 8 << 16;
    }
    void one_f_one_b_and_gpipe()
    {
        QFETCH(int, schedule);
        QFETCH(int, pp);
        QFETCH(int, m);
        const ToyPipeline toy(pp, 1, m, static_cast<Schedule>(schedule));
        // (m - 1) * slowest stage + sum of all stages: (m + p - 1) t for even stages; the first and last
        // differ slightly by the (tiny) embedding and output layer.
        double slowest = 0, sum = 0;
        for (int c = 0; c < pp; ++c) {
            const ChunkTiming ct = toy.chunk(c);
            const double t = ct.forward_s + ct.backward_input_s + ct.weight_s;
            slowest = std::max(slowest, t);
            sum += t;
        }
        const double expected = (m - 1) * slowest + sum;
        const SimulatedPlan sim = toy.run();
        QVERIFY2(near(pipeline_end(sim.result), expected, 0.01),
            qPrintable(QStringLiteral("%1 vs %2").arg(pipeline_end(sim.result)).arg(expected)));
        // The analytic model uses the same formula: its bubble is the sum of the stages minus the slowest.
        const Prediction a = AnalyticModel(*toy.ctx).predict(toy.s);
        QVERIFY2(near(a.time.bubble_s, sum - slowest, 0.02),
            qPrintable(QStringLiteral("%1 vs %2").arg(a.time.bubble_s).arg(sum - slowest)));
    }

    // Interleaved 1F1B: bubble (p-1)(t_f+t_b)/v (Narayanan et al. 2021 Sec. 2.2.2).
    void interleaved_data()
    {
        QTest::addColumn<int>("pp");
        QTest::addColumn<int>("vpp");
        QTest::addColumn<int>("m");
        QTest::newRow("p4 v2 m8") << 4 << 2 << 8;
        QTest::newRow("p4 v4 m16") << 4 << 4 << 16;
        QTest::newRow("p8 v3 m32") << 8 << 3 << 32;
    }
    void interleaved()
    {
        QFETCH(int, pp);
        QFETCH(int, vpp);
        QFETCH(int, m);
        const ToyPipeline toy(pp, vpp, m, Schedule::interleaved);
        const ChunkTiming ct = toy.chunk(pp); // a middle chunk
        const double per_chunk = ct.forward_s + ct.backward_input_s + ct.weight_s;
        const double stage = per_chunk * vpp;
        const SimulatedPlan sim = toy.run();
        const double expected = m * stage + (pp - 1) * stage / vpp;
        QVERIFY2(near(pipeline_end(sim.result), expected, 0.02),
            qPrintable(QStringLiteral("%1 vs %2").arg(pipeline_end(sim.result)).arg(expected)));
    }

    // ZB-H1: bubble (p-1)(F + B - 2W) with B the whole backward (DualPipe README table), i.e.
    // (p-1)(F + B_input - W) (Qi et al. 2024).
    void zero_bubble_h1()
    {
        const int pp = 4, m = 16;
        const ToyPipeline toy(pp, 1, m, Schedule::zb_h1);
        const ChunkTiming ct = toy.chunk();
        const double f = ct.forward_s, b = ct.backward_input_s, w = ct.weight_s;
        const SimulatedPlan sim = toy.run();
        const double expected = m * (f + b + w) + (pp - 1) * (f + b - w);
        const ToyPipeline plain(pp, 1, m, Schedule::one_f_one_b);
        const double one_f_one_b = pipeline_end(plain.run().result);
        // Our greedy realisation (W passes fill idle time, 1F1B's memory bound) sits between the
        // hand-crafted schedule's formula and 1F1B, within 8% of the formula.
        QVERIFY2(pipeline_end(sim.result) >= expected * 0.999 && pipeline_end(sim.result) < one_f_one_b
                && near(pipeline_end(sim.result), expected, 0.08),
            qPrintable(QStringLiteral("%1 vs formula %2, 1F1B %3")
                           .arg(pipeline_end(sim.result))
                           .arg(expected)
                           .arg(one_f_one_b)));
    }

    // DualPipe: bubble (p/2 - 1)(F&B + B - 3W), F&B = F + B here (DualPipe README table).
    void dualpipe()
    {
        const int pp = 8, m = 32;
        const ToyPipeline toy(pp, 1, m, Schedule::dualpipe);
        const ChunkTiming ct = toy.chunk();
        const double f = ct.forward_s, b = ct.backward_input_s, w = ct.weight_s;
        const SimulatedPlan sim = toy.run();
        const double work = m * (f + b + w);
        const double bubble = pipeline_end(sim.result) - work;
        // B in the README is the whole backward (B_input + W).
        const double expected = (pp / 2.0 - 1) * ((f + b + w) + (b + w) - 3 * w);
        // Our priority-driven realisation reaches at least the published schedule's bubble.
        QVERIFY2(bubble > 0 && bubble <= expected * 1.05,
            qPrintable(QStringLiteral("bubble %1 vs %2 (work %3)").arg(bubble).arg(expected).arg(work)));
        // Much less bubble than 1F1B's (p-1)(F+B).
        QVERIFY(bubble < 0.6 * (pp - 1) * (f + b + w));
    }

    // Peak in-flight activations along the simulated timeline, in micro-batch-chunk units.
    void in_flight_activations_data()
    {
        QTest::addColumn<int>("schedule");
        QTest::addColumn<int>("pp");
        QTest::addColumn<int>("vpp");
        QTest::addColumn<int>("m");
        QTest::newRow("1f1b") << int(Schedule::one_f_one_b) << 4 << 1 << 8;
        QTest::newRow("gpipe") << int(Schedule::gpipe) << 4 << 1 << 8;
        QTest::newRow("interleaved") << int(Schedule::interleaved) << 4 << 2 << 8;
        QTest::newRow("zb-h1") << int(Schedule::zb_h1) << 4 << 1 << 8;
        QTest::newRow("dualpipe") << int(Schedule::dualpipe) << 4 << 1 << 16;
    }
    void in_flight_activations()
    {
        QFETCH(int, schedule);
        QFETCH(int, pp);
        QFETCH(int, vpp);
        QFETCH(int, m);
        const Schedule sch = static_cast<Schedule>(schedule);
        const ToyPipeline toy(pp, vpp, m, sch);
        const SimulatedPlan sim = toy.run();
        const double per_chunk = sim.lowered.chunk_activation_bytes[1];
        QVERIFY(per_chunk > 0);
        for (int d = 0; d < pp; ++d) {
            const double chunks_in_flight = sim.result.peak_activation_bytes[d] / per_chunk;
            double expected = 0;
            switch (sch) {
            case Schedule::gpipe:
                expected = m;
                break;
            case Schedule::one_f_one_b:
                expected = std::min(pp - d, m);
                break;
            case Schedule::interleaved:
                expected = std::min<long long>(warmup_passes(sch, d, pp, vpp, m) + 1, static_cast<long long>(m) * vpp);
                break;
            case Schedule::zb_h1:
                // Deferred W passes keep some activations a little longer; never more than one extra.
                QVERIFY(chunks_in_flight <= std::min(pp - d, m) + 1 + 1e-9);
                QVERIFY(chunks_in_flight >= std::min(pp - d, m) - 1e-9);
                continue;
            case Schedule::dualpipe:
                // PP + 1 micro-batches' activations per device at most (DualPipe README).
                QVERIFY2(chunks_in_flight <= pp + 1 + 1e-9, qPrintable(QString::number(chunks_in_flight)));
                continue;
            case Schedule::custom:
                QFAIL("schedule programs are tested in tst_schedule_program");
            }
            QVERIFY2(std::fabs(chunks_in_flight - expected) < 1e-6,
                qPrintable(QStringLiteral("device %1: %2 vs %3").arg(d).arg(chunks_in_flight).arg(expected)));
        }
    }

    // The two fidelities agree within 3% on a grid of strategies both cover.
    void analytic_matches_simulator()
    {
        const ModelSpec m = test::model("llama3-8b");
        const ClusterSpec c = test::cluster("H100-SXM5-80GB", 8, 8, "nvlink4-nvswitch", "ib-ndr");
        TrainingSpec t;
        t.seq_len = 4096;
        t.global_batch = 256;
        const PlanContext ctx(m, t, c);
        const AnalyticModel analytic(ctx);
        int checked = 0;
        double worst = 0, worst_zero_bubble = 0;
        QString worst_case, worst_zero_bubble_case;
        for (int tp : { 1, 2, 8 })
            for (int pp : { 1, 2, 4, 8 })
                for (Schedule sch : { Schedule::one_f_one_b, Schedule::gpipe, Schedule::interleaved, Schedule::zb_h1 })
                    for (int zero : { 0, 1 })
                        for (Recompute rc : { Recompute::none, Recompute::selective }) {
                            Strategy s;
                            s.tp = tp;
                            s.pp = pp;
                            s.dp = 64 / (tp * pp);
                            s.sequence_parallel = tp > 1;
                            s.schedule = sch;
                            s.vpp = sch == Schedule::interleaved ? 2 : 1;
                            s.zero = zero;
                            s.recompute = rc;
                            const PlanInputs in { m, t, c.gpu, c.total_gpus() };
                            if (check_strategy(in, s) != Rule::ok)
                                continue;
                            AnalyticResult a;
                            analytic.evaluate(s, a);
                            const SimulatedPlan sim = simulate_plan(ctx, s);
                            const double err = std::fabs(sim.result.makespan_s - a.step_time_s) / a.step_time_s;
                            // ZB-H1: the analytic side is the closed form for even stages, the simulator
                            // runs its greedy W-filling order; they are compared separately, looser.
                            double& worst_of_kind = sch == Schedule::zb_h1 ? worst_zero_bubble : worst;
                            QString& case_of_kind = sch == Schedule::zb_h1 ? worst_zero_bubble_case : worst_case;
                            if (err > worst_of_kind) {
                                worst_of_kind = err;
                                case_of_kind = QStringLiteral("tp%1 pp%2 %3 zero%4 rc%5: analytic %6 s, simulated %7 s")
                                                   .arg(tp)
                                                   .arg(pp)
                                                   .arg(QString::fromLatin1(
                                                       to_string(sch).data(), static_cast<int>(to_string(sch).size())))
                                                   .arg(zero)
                                                   .arg(int(rc))
                                                   .arg(a.step_time_s)
                                                   .arg(sim.result.makespan_s);
                            }
                            ++checked;
                        }
        QVERIFY(checked >= 40);
        QVERIFY2(worst <= 0.03, qPrintable(worst_case));
        QVERIFY2(worst_zero_bubble <= 0.10, qPrintable(worst_zero_bubble_case));
    }

    // Under the interleaved schedule each model chunk reduces its gradients once its own last backward is
    // done, so at a large DP degree most of the reduction hides under the other chunks' backward. The
    // closed form and the event simulation agree on it (Llama 3.1 405B at 16,384 GPUs, DP 128).
    void interleaved_gradient_reduction_overlaps_per_chunk()
    {
        const ModelSpec m = test::model("llama3.1-405b");
        const ClusterSpec c = test::cluster("H100-SXM5-80GB", 2048, 8, "nvlink4-nvswitch", "roce-400g");
        TrainingSpec t;
        t.seq_len = 8192;
        t.global_batch = 2048;
        const PlanContext ctx(m, t, c);
        Strategy s;
        s.tp = 4;
        s.cp = 4;
        s.pp = 8;
        s.dp = 128;
        s.sequence_parallel = true;
        s.zero = 2;
        s.schedule = Schedule::interleaved;
        s.vpp = 8;
        AnalyticResult chunked;
        AnalyticModel(ctx).evaluate(s, chunked);
        const SimulatedPlan sim = simulate_plan(ctx, s);
        const double err = std::fabs(sim.result.makespan_s - chunked.step_time_s) / chunked.step_time_s;
        QVERIFY2(err <= 0.03,
            qPrintable(
                QStringLiteral("analytic %1 s, simulated %2 s").arg(chunked.step_time_s).arg(sim.result.makespan_s)));
        // One chunk per stage (1F1B): the whole reduction waits for the last backward.
        Strategy one = s;
        one.schedule = Schedule::one_f_one_b;
        one.vpp = 1;
        AnalyticResult whole;
        AnalyticModel(ctx).evaluate(one, whole);
        QVERIFY2(chunked.time.exposed_dp_s < 0.25 * whole.time.exposed_dp_s,
            qPrintable(QStringLiteral("exposed DP: %1 s with 8 chunks, %2 s with one")
                           .arg(chunked.time.exposed_dp_s)
                           .arg(whole.time.exposed_dp_s)));
    }

    // Two transfers on one link share its bandwidth; on different links they do not.
    void link_sharing()
    {
        ExecutionGraph g;
        g.devices = 1;
        IrOp a;
        a.type = IrOpType::dp_reduce;
        a.stream = IrStream::dp;
        a.link = IrLink::network;
        a.ordering = IrOrdering::fifo;
        a.duration_s = 1;
        IrOp b = a;
        b.type = IrOpType::pp_send;
        b.stream = IrStream::pp;
        g.add(a);
        g.add(b);
        g.finalize();
        const SimulationResult shared = simulate(g);
        QVERIFY(near(shared.makespan_s, 2.0, 1e-9));
        QVERIFY(near(shared.end_s[0], 2.0, 1e-9) && near(shared.end_s[1], 2.0, 1e-9));
        ExecutionGraph h;
        h.devices = 1;
        h.add(a);
        b.link = IrLink::nvlink;
        h.add(b);
        h.finalize();
        QVERIFY(near(simulate(h).makespan_s, 1.0, 1e-9));
    }

    void critical_path_is_contiguous()
    {
        const ToyPipeline toy(4, 1, 8, Schedule::one_f_one_b);
        const SimulatedPlan sim = toy.run();
        const auto& path = sim.result.critical_path;
        QVERIFY(path.size() > 8);
        QVERIFY(near(sim.result.end_s[path.back()], sim.result.makespan_s, 1e-9));
        QCOMPARE(sim.result.start_s[path.front()], 0.0);
        for (std::size_t i = 1; i < path.size(); ++i)
            QVERIFY(std::fabs(sim.result.start_s[path[i]] - sim.result.end_s[path[i - 1]]) < 1e-9);
        QVERIFY(sim.result.critical_compute_s <= sim.result.makespan_s + 1e-9);
    }

    void cycle_is_reported()
    {
        ExecutionGraph g;
        g.devices = 1;
        IrOp op;
        op.duration_s = 1;
        op.ordering = IrOrdering::fifo;
        const auto x = g.add(op);
        const auto y = g.add(op);
        g.add_dep(x, y);
        g.add_dep(y, x);
        g.finalize();
        QVERIFY_THROWS_EXCEPTION(std::logic_error, simulate(g));
        QVERIFY_THROWS_EXCEPTION(std::logic_error, g.add_dep(x, 99));
    }

    // The scale target: a 64-stage x 1,024-micro-batch interleaved schedule fits comfortably.
    void large_schedule_fits()
    {
        ModelSpec m = test::gpt(128, 8192, 64, 128000);
        ClusterSpec c = test::cluster("H100-SXM5-80GB", 64, 8, "nvlink4-nvswitch", "ib-ndr");
        TrainingSpec t;
        t.seq_len = 4096;
        t.global_batch = 1024;
        const PlanContext ctx(m, t, c);
        Strategy s;
        s.tp = 8;
        s.pp = 64;
        s.vpp = 2;
        s.schedule = Schedule::interleaved;
        s.sequence_parallel = true;
        const LoweredPlan plan = lower_plan(ctx, s);
        QVERIFY(plan.graph.size() > 500000);
        QVERIFY2(
            plan.graph.memory_bytes() < 64ull * 1024 * 1024, qPrintable(QString::number(plan.graph.memory_bytes())));
        const SimulationResult r = simulate(plan.graph);
        QVERIFY(r.makespan_s > 0);
    }
};

QTEST_APPLESS_MAIN(TestSimulator)
#include "tst_simulator.moc"

// The timeline's view data (core/timeline_data, no Qt): every op lands in exactly one row, the LOD
// aggregation loses no op at any zoom (per-pixel sums equal the totals), bubbles and waits add up to
// the pipeline time of every stage, the summary equals the Prediction, symmetry collapse, DAG edges,
// plan comparison, and measured traces (Chrome/Perfetto JSON).
#include "io/chrome_trace.hpp"
#include "io/preset_catalog.hpp"
#include "io/scenario_io.hpp"
#include "sim/simulated_model.hpp"
#include "spec/input_error.hpp"
#include "viewdata/comm_companions.hpp"
#include "viewdata/measured_trace.hpp"
#include "viewdata/timeline_data.hpp"

#include <QTest>

#include <cmath>
#include <map>
#include <random>

using namespace parallax;

namespace {

struct Built {
    Scenario scenario;
    std::shared_ptr<const TimelineData> data;
};

// The default scenario (Llama 3 70B, TP 4, CP 2) as a 4-stage pipeline with 8 micro-batches.
Built build(Schedule schedule, int pp = 4, long long microbatches = 8, int vpp = 2)
{
    Built b;
    b.scenario = load_scenario_preset("default", PresetCatalog::standard());
    Strategy& s = b.scenario.strategy;
    s.pp = pp;
    s.schedule = schedule;
    s.vpp = schedule == Schedule::interleaved ? vpp : 1;
    s.dp = static_cast<int>(b.scenario.cluster.total_gpus() / (static_cast<long long>(s.tp) * s.cp * s.pp));
    b.scenario.training.global_batch = microbatches * s.micro_batch * s.dp;
    validate_scenario(b.scenario, "test");
    const PlanContext ctx(b.scenario.model, b.scenario.training, b.scenario.cluster);
    auto sim = std::make_shared<const SimulatedPlan>(simulate_plan(ctx, s));
    const Prediction p = prediction_from_simulation(ctx, s, *sim);
    b.data = build_timeline_data(sim, p, timeline_plan_info(b.scenario));
    return b;
}

const Schedule kSchedules[]
    = { Schedule::gpipe, Schedule::one_f_one_b, Schedule::interleaved, Schedule::zb_h1, Schedule::dualpipe };

double rel_err(double a, double b)
{
    return std::fabs(a - b) / std::max({ 1e-30, std::fabs(a), std::fabs(b) });
}

TimelineRow synthetic_row(const std::vector<std::pair<double, double>>& spans, const std::vector<TimelineKind>& kinds)
{
    TimelineRow row;
    std::map<TimelineKind, std::uint8_t> slot_of;
    for (std::size_t i = 0; i < spans.size(); ++i) {
        TimelineItem it;
        it.start_s = spans[i].first;
        it.end_s = spans[i].second;
        it.op = static_cast<std::uint32_t>(i);
        it.kind = kinds[i % kinds.size()];
        if (!slot_of.count(it.kind)) {
            slot_of[it.kind] = static_cast<std::uint8_t>(row.kinds.size());
            row.kinds.push_back(it.kind);
        }
        it.slot = slot_of[it.kind];
        row.busy_s += it.duration_s();
        row.items.push_back(it);
    }
    return row;
}

// Sums of a full-range aggregation against the row's own totals.
void check_no_op_lost(const TimelineRow& row, double t0, double t1, std::size_t bins_n)
{
    std::vector<LodBin> bins(bins_n);
    const double bin_s = (t1 - t0) / static_cast<double>(bins_n);
    aggregate_row(row, t0, bin_s, bins);
    std::uint64_t ops = 0;
    double busy = 0;
    std::vector<double> slot_busy(kLodSlots, 0.0), slot_expected(kLodSlots, 0.0);
    for (const LodBin& b : bins) {
        ops += b.ops;
        busy += b.busy_s;
        for (int s = 0; s < kLodSlots; ++s)
            slot_busy[static_cast<std::size_t>(s)] += b.slot_busy[s];
        QVERIFY2(b.busy_s <= bin_s * (1 + 1e-9), "a bin holds more busy time than its width: bars overlap");
    }
    for (const TimelineItem& it : row.items)
        slot_expected[it.slot] += it.duration_s();
    QCOMPARE(ops, static_cast<std::uint64_t>(row.items.size()));
    QVERIFY2(rel_err(busy, row.busy_s) < 1e-9,
        qPrintable(QStringLiteral("busy %1 vs %2").arg(busy, 0, 'g', 17).arg(row.busy_s, 0, 'g', 17)));
    for (int s = 0; s < kLodSlots; ++s)
        QVERIFY(rel_err(slot_busy[static_cast<std::size_t>(s)], slot_expected[static_cast<std::size_t>(s)]) < 1e-5
            || slot_expected[static_cast<std::size_t>(s)] < 1e-12);
    // Every op shows somewhere: the bin it starts in has it counted.
    for (const TimelineItem& it : row.items) {
        const std::size_t b = std::min(bins_n - 1, static_cast<std::size_t>(std::max(0.0, (it.start_s - t0) / bin_s)));
        QVERIFY(bins[b].ops > 0);
    }
}

} // namespace

class TestTimelineData : public QObject {
    Q_OBJECT
private slots:
    void lod_synthetic_data()
    {
        QTest::addColumn<int>("bins");
        for (int n : { 1, 2, 3, 7, 64, 1000, 4096 })
            QTest::addRow("%d bins", n) << n;
    }
    void lod_synthetic()
    {
        QFETCH(int, bins);
        // Zero-length ops, ops shorter than a bin, ops spanning many bins, ops ending on bin edges.
        const TimelineRow row = synthetic_row({ { 0.0, 0.0 }, { 0.0, 1e-9 }, { 0.1, 0.25 }, { 0.25, 0.25 },
                                                  { 0.25, 0.5 }, { 0.5, 0.5000001 }, { 0.6, 0.9999999 }, { 1.0, 1.0 } },
            { TimelineKind::forward, TimelineKind::backward_input, TimelineKind::backward_weight });
        check_no_op_lost(row, 0.0, 1.0 + 1e-6, static_cast<std::size_t>(bins));
    }

    void lod_random_rows()
    {
        std::mt19937_64 rng(7);
        std::uniform_real_distribution<double> gap(0, 1e-3), len(0, 2e-3);
        for (int trial = 0; trial < 20; ++trial) {
            std::vector<std::pair<double, double>> spans;
            double t = 0;
            for (int i = 0; i < 5000; ++i) {
                t += gap(rng) * (i % 50 == 0 ? 100 : 1);
                const double l = i % 17 == 0 ? 0.0 : len(rng);
                spans.push_back({ t, t + l });
                t += l;
            }
            const TimelineRow row
                = synthetic_row(spans, { TimelineKind::forward, TimelineKind::backward_input, TimelineKind::pp_send });
            for (std::size_t n : { std::size_t(1), std::size_t(333), std::size_t(1920), std::size_t(100000) })
                check_no_op_lost(row, 0, t * 1.001 + 1e-9, n);
        }
    }

    void lod_partial_range()
    {
        // A window in the middle: busy sums equal the items' clipped overlaps.
        const Built b = build(Schedule::one_f_one_b);
        const TimelineRow& row = b.data->rows[static_cast<std::size_t>(b.data->stages[1].rows.front())];
        const double t0 = b.data->makespan_s * 0.3, t1 = b.data->makespan_s * 0.55;
        std::vector<LodBin> bins(777);
        aggregate_row(row, t0, (t1 - t0) / 777, bins);
        double busy = 0, expected = 0;
        for (const LodBin& x : bins)
            busy += x.busy_s;
        for (const TimelineItem& it : row.items)
            expected += std::max(0.0, std::min(it.end_s, t1) - std::max(it.start_s, t0));
        QVERIFY(rel_err(busy, expected) < 1e-9);
    }

    void lod_every_row_every_schedule()
    {
        for (Schedule s : kSchedules) {
            const Built b = build(s);
            for (const TimelineRow& row : b.data->rows)
                for (std::size_t n : { std::size_t(1), std::size_t(1500), std::size_t(20000) })
                    check_no_op_lost(row, 0, b.data->makespan_s * 1.0001, n);
        }
    }

    void rows_hold_every_op_once()
    {
        for (Schedule s : kSchedules) {
            const Built b = build(s);
            const TimelineData& d = *b.data;
            const ExecutionGraph& g = d.graph();
            std::vector<int> seen(g.size(), 0);
            std::size_t companions = 0;
            for (std::size_t ri = 0; ri < d.rows.size(); ++ri) {
                const TimelineRow& row = d.rows[ri];
                for (std::size_t i = 0; i < row.items.size(); ++i) {
                    const TimelineItem& it = row.items[i];
                    QVERIFY(it.end_s >= it.start_s);
                    if (i > 0)
                        QVERIFY2(row.items[i - 1].end_s <= it.start_s + 1e-12, "bars of one row overlap");
                    if (it.flags & TimelineItem::kCompanion) {
                        ++companions;
                        continue;
                    }
                    ++seen[it.op];
                    QCOMPARE(d.op_row[it.op], static_cast<std::uint32_t>(ri));
                    QCOMPARE(d.op_item[it.op], static_cast<std::uint32_t>(i));
                    QCOMPARE(it.start_s, d.sim->result.start_s[it.op]);
                    QCOMPARE(it.end_s, d.sim->result.end_s[it.op]);
                    QCOMPARE(row.stage, static_cast<int>(g.device(it.op)));
                }
            }
            std::size_t expected_companions = 0;
            CommCompanion c[kMaxCommCompanions];
            for (std::uint32_t op = 0; op < g.size(); ++op) {
                QCOMPARE(seen[op], g.type(op) == IrOpType::barrier ? 0 : 1);
                expected_companions += static_cast<std::size_t>(comm_companions(d.sim->lowered, op, c));
            }
            QCOMPARE(companions, expected_companions);
            QVERIFY(companions > 0); // the default scenario has TP and CP traffic
            // Successors are the reverse of the dependencies.
            std::size_t edges = 0;
            for (std::uint32_t op = 0; op < g.size(); ++op)
                for (std::uint32_t p : g.deps(op)) {
                    const auto succ = d.successors(p);
                    QVERIFY(std::find(succ.begin(), succ.end(), op) != succ.end());
                    ++edges;
                }
            QCOMPARE(d.succ.size(), edges);
        }
    }

    void critical_path_is_flagged()
    {
        for (Schedule s : kSchedules) {
            const Built b = build(s);
            const TimelineData& d = *b.data;
            const auto& path = d.sim->result.critical_path;
            QVERIFY(!path.empty());
            std::vector<char> on(d.op_count(), 0);
            for (std::uint32_t op : path)
                on[op] = 1;
            std::size_t flagged = 0;
            for (const TimelineRow& row : d.rows)
                for (const TimelineItem& it : row.items) {
                    const bool flag = (it.flags & TimelineItem::kCritical) != 0;
                    QCOMPARE(flag, !(it.flags & TimelineItem::kCompanion) && on[it.op] != 0);
                    flagged += flag;
                }
            std::size_t drawable = 0;
            for (std::uint32_t op : path)
                drawable += d.graph().type(op) != IrOpType::barrier;
            QCOMPARE(flagged, drawable);
            // The chain of compute passes runs forward in time and ends at the step's end.
            const auto chain = critical_compute_chain(d);
            QVERIFY(!chain.empty());
            for (std::size_t i = 1; i < chain.size(); ++i)
                QVERIFY(d.sim->result.start_s[chain[i]] >= d.sim->result.end_s[chain[i - 1]] - 1e-12);
            QVERIFY(rel_err(d.sim->result.end_s[path.back()], d.makespan_s) < 1e-12);
        }
    }

    void stage_time_adds_up()
    {
        for (Schedule s : kSchedules) {
            const Built b = build(s);
            const TimelineData& d = *b.data;
            QCOMPARE(static_cast<int>(d.stages.size()), d.graph().devices);
            for (const TimelineStage& st : d.stages) {
                // Busy + bubble + waiting on its own communication = the pipeline's time, per stage.
                const double sum = st.compute_s + st.recompute_s + st.bubble_s + st.comm_wait_s;
                QVERIFY2(rel_err(sum, d.pipeline_end_s) < 1e-9,
                    qPrintable(QStringLiteral("%1 stage %2: %3 vs %4")
                                   .arg(QString::fromLatin1(to_string(s).data()))
                                   .arg(st.stage)
                                   .arg(sum)
                                   .arg(d.pipeline_end_s)));
                QVERIFY(rel_err(st.tail_s, d.makespan_s - d.pipeline_end_s) < 1e-12);
                QVERIFY(st.bubble_s >= 0 && st.comm_wait_s >= -1e-12);
                // Bubbles never cover compute.
                const TimelineRow& compute = d.rows[static_cast<std::size_t>(st.rows.front())];
                QCOMPARE(compute.kind, TimelineRowKind::compute);
                for (const TimelineInterval& bub : compute.bubbles) {
                    const std::size_t i = compute.first_ending_after(bub.begin_s);
                    QVERIFY(i >= compute.items.size() || compute.items[i].start_s >= bub.end_s - 1e-12);
                }
            }
        }
    }

    void picture_agrees_with_the_summary_data()
    {
        QTest::addColumn<int>("schedule");
        for (Schedule s : { Schedule::gpipe, Schedule::one_f_one_b, Schedule::interleaved, Schedule::zb_h1 })
            QTest::newRow(std::string(to_string(s)).c_str()) << static_cast<int>(s);
    }
    void picture_agrees_with_the_summary()
    {
        // The slowest stage's idle and waits in the picture are the Prediction's bubble and exposed PP.
        QFETCH(int, schedule);
        const Built b = build(static_cast<Schedule>(schedule));
        const TimelineData& d = *b.data;
        const TimelineStage* slowest = nullptr;
        for (const TimelineStage& st : d.stages)
            if (st.stage == d.slowest_stage)
                slowest = &st;
        QVERIFY(slowest);
        const double picture = slowest->bubble_s + slowest->comm_wait_s;
        const double numbers = d.prediction.time.bubble_s + d.prediction.time.exposed_pp_s;
        QVERIFY2(rel_err(picture, numbers) < 1e-6,
            qPrintable(QStringLiteral("picture %1 s, prediction %2 s").arg(picture).arg(numbers)));
    }

    void exposed_communication_is_not_under_compute()
    {
        const Built b = build(Schedule::one_f_one_b);
        const TimelineData& d = *b.data;
        bool any = false;
        for (const TimelineStage& st : d.stages) {
            const TimelineRow& compute = d.rows[static_cast<std::size_t>(st.rows.front())];
            for (int ri : st.rows) {
                const TimelineRow& row = d.rows[static_cast<std::size_t>(ri)];
                if (row.kind != TimelineRowKind::pp && row.kind != TimelineRowKind::dp)
                    continue;
                for (const TimelineInterval& e : row.exposed) {
                    any = true;
                    const double mid = 0.5 * (e.begin_s + e.end_s);
                    QCOMPARE(compute.item_at(mid), TimelineRow::npos);
                    QVERIFY(row.item_at(mid) != TimelineRow::npos);
                }
            }
        }
        QVERIFY(any); // the DP reduction at the end of the step is exposed
    }

    void summary_equals_prediction()
    {
        for (Schedule s : kSchedules) {
            const Built b = build(s);
            const TimelineData& d = *b.data;
            const TimeBreakdown& t = d.prediction.time;
            const std::vector<double> expected
                = { t.compute_s, t.recompute_s, t.bubble_s, t.exposed_tp_s, t.exposed_cp_s, t.exposed_ep_s,
                      t.exposed_pp_s, t.exposed_dp_s, t.optimizer_s, t.offload_s, t.data_stall_s, t.host_copy_s };
            QCOMPARE(d.summary.size(), expected.size());
            double sum = 0;
            for (std::size_t i = 0; i < expected.size(); ++i) {
                QCOMPARE(d.summary[i].seconds, expected[i]);
                sum += d.summary[i].seconds;
            }
            // The strip's parts add up to the step the picture ends at.
            QVERIFY(rel_err(sum, d.prediction.step_time_s) < 1e-9);
            QVERIFY(rel_err(d.prediction.step_time_s, d.makespan_s) < 1e-12);
        }
    }

    void symmetry_and_replicas()
    {
        // 4 stages of TP 4 x CP 2 x DP 2: each row stands for 16 GPUs, 64 in all.
        const Built b = build(Schedule::one_f_one_b);
        QCOMPARE(b.data->stages.size(), std::size_t(4));
        for (const TimelineStage& st : b.data->stages) {
            QCOMPARE(st.gpus_per_stage, 16LL);
            QCOMPARE(st.members.size(), std::size_t(1)); // pipeline stages differ in time: nothing to collapse
        }
        QCOMPARE(b.data->total_gpus(), b.scenario.cluster.total_gpus());
    }

    void symmetry_collapses_identical_stages()
    {
        // Three devices running the same independent program: identical timelines, shown once x3.
        auto sim = std::make_shared<SimulatedPlan>();
        ExecutionGraph& g = sim->lowered.graph;
        g.devices = 3;
        g.chunks = 3;
        g.microbatches = 2;
        for (int d = 0; d < 3; ++d) {
            ChunkTiming ct;
            ct.first_layer = 4 * d;
            ct.layers = 4;
            sim->lowered.chunk_timing.push_back(ct);
            sim->lowered.chunk_device.push_back(d);
            std::uint32_t prev = std::numeric_limits<std::uint32_t>::max();
            for (int mb = 0; mb < 2; ++mb)
                for (IrOpType t : { IrOpType::forward, IrOpType::backward_input }) {
                    IrOp op;
                    op.device = static_cast<std::uint16_t>(d);
                    op.type = t;
                    op.chunk = static_cast<std::int16_t>(d);
                    op.microbatch = mb;
                    op.duration_s = t == IrOpType::forward ? 1.0f : 2.0f;
                    const std::uint32_t id = g.add(op);
                    if (prev != std::numeric_limits<std::uint32_t>::max())
                        g.add_dep(id, prev);
                    prev = id;
                }
        }
        g.finalize();
        sim->result = simulate(g);
        Strategy s;
        s.pp = 3;
        s.dp = 8;
        s.tp = 2;
        TimelinePlanInfo info;
        info.strategy = s;
        const auto d = build_timeline_data(sim, Prediction {}, info);
        QCOMPARE(d->stages.size(), std::size_t(1));
        QCOMPARE(d->stages[0].members, (std::vector<int> { 0, 1, 2 }));
        QCOMPARE(d->stages[0].gpus(), 48LL);
        QCOMPARE(d->total_gpus(), 48LL);
        // The collapsed stages' ops have no bar; the representative's do.
        for (std::uint32_t op = 0; op < g.size(); ++op)
            QCOMPARE(d->op_row[op] != TimelineData::kNoRow, g.device(op) == 0);
        info.collapse_identical_stages = false;
        QCOMPARE(build_timeline_data(sim, Prediction {}, info)->stages.size(), std::size_t(3));
    }

    void dag_edges_fold_communication()
    {
        const Built b = build(Schedule::one_f_one_b);
        const TimelineData& d = *b.data;
        const ExecutionGraph& g = d.graph();
        // The forward of micro-batch 3 on stage 2 waits for the forward of micro-batch 3 on stage 1,
        // through the pipeline send.
        std::uint32_t f = 0, prev = 0;
        for (std::uint32_t op = 0; op < g.size(); ++op) {
            if (g.type(op) == IrOpType::forward && g.microbatch(op) == 3 && g.device(op) == 2)
                f = op;
            if (g.type(op) == IrOpType::forward && g.microbatch(op) == 3 && g.device(op) == 1)
                prev = op;
        }
        std::vector<DagEdge> edges;
        dag_predecessors(d, f, edges);
        const auto it = std::find_if(edges.begin(), edges.end(), [&](const DagEdge& e) { return e.from == prev; });
        QVERIFY(it != edges.end());
        QVERIFY(it->via_communication);
        for (const DagEdge& e : edges)
            QVERIFY(g.type(e.from) != IrOpType::pp_send && g.type(e.from) != IrOpType::barrier);
        dag_successors(d, prev, edges);
        QVERIFY(std::any_of(edges.begin(), edges.end(), [&](const DagEdge& e) { return e.from == f; }));
    }

    void compare_causes_sum_to_the_difference()
    {
        const Built a = build(Schedule::one_f_one_b);
        const Built b = build(Schedule::interleaved);
        const PlanDifference diff = compare_plans(*a.data, *b.data);
        QCOMPARE(diff.step_a_s, a.data->prediction.step_time_s);
        QCOMPARE(diff.step_b_s, b.data->prediction.step_time_s);
        double sum = 0;
        for (const auto& c : diff.causes)
            sum += c.delta_s();
        QVERIFY(std::fabs(sum - diff.delta_s()) < 1e-9 * diff.step_a_s);
        QVERIFY(diff.delta_s() < 0); // interleaving shrinks the bubble
        QCOMPARE(QString::fromStdString(diff.causes.front().what), QStringLiteral("bubble"));
        QVERIFY(std::find(diff.strategy_changes.begin(), diff.strategy_changes.end(), "schedule 1f1b -> interleaved")
            != diff.strategy_changes.end());
        QVERIFY(std::find(diff.strategy_changes.begin(), diff.strategy_changes.end(), "vpp 1 -> 2")
            != diff.strategy_changes.end());
        const QString headline = QString::fromStdString(diff.headline());
        QVERIFY2(headline.startsWith(QStringLiteral("B is ")) && headline.contains(QStringLiteral("faster than A")),
            qPrintable(headline));
        QVERIFY(headline.contains(QStringLiteral("bubble -")));
    }

    void measured_trace_round_trip()
    {
        // A Parallax trace read back as a measured trace: the same bars on the same axis.
        const Built b = build(Schedule::zb_h1);
        const TimelineData& d = *b.data;
        const std::string text = chrome_trace(*d.sim, "test").dump();
        const MeasuredTrace m = parse_measured_trace(text, "roundtrip.json");
        QVERIFY(!m.gpu_only);
        QCOMPARE(m.nested, std::size_t(0));
        std::size_t bars = 0;
        for (const TimelineRow& row : d.rows)
            bars += row.items.size();
        QCOMPARE(m.events, bars);
        for (const TimelineStage& st : d.stages) {
            const TimelineRow& compute = d.rows[static_cast<std::size_t>(st.rows.front())];
            const std::string label = "stage " + std::to_string(st.stage) + " / compute";
            const auto it
                = std::find_if(m.rows.begin(), m.rows.end(), [&](const TimelineRow& r) { return r.label == label; });
            QVERIFY2(it != m.rows.end(), label.c_str());
            QCOMPARE(it->items.size(), compute.items.size());
            // Microsecond timestamps with 3 decimals: nanosecond agreement per bar.
            QVERIFY(std::fabs(it->busy_s - compute.busy_s) < 1e-9 * static_cast<double>(compute.items.size()) + 1e-12);
            for (std::size_t i = 0; i < compute.items.size(); ++i) {
                QCOMPARE(it->items[i].kind, compute.items[i].kind);
                QVERIFY(std::fabs(it->items[i].start_s + m.origin_s - compute.items[i].start_s) < 2e-9);
            }
        }
    }

    void measured_trace_pytorch_style()
    {
        // PyTorch profiler export: CPU ops that nest, GPU kernels on a stream, NCCL kernels, string
        // thread ids, metadata names, and a B/E pair.
        const std::string text = R"({"schemaVersion":1,"traceEvents":[
          {"ph":"M","name":"process_name","pid":0,"args":{"name":"GPU 0"}},
          {"ph":"M","name":"thread_name","pid":0,"tid":"stream 7","args":{"name":"compute stream"}},
          {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":123,"tid":123,"ts":1000,"dur":50},
          {"ph":"X","cat":"kernel","name":"sm90_xmma_gemm_bf16","pid":0,"tid":"stream 7","ts":1010.5,"dur":30},
          {"ph":"X","cat":"kernel","name":"flash_fwd_kernel","pid":0,"tid":"stream 7","ts":1040.5,"dur":20},
          {"ph":"X","cat":"kernel","name":"inner","pid":0,"tid":"stream 7","ts":1045,"dur":5},
          {"ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce_Sum_bf16_RING_LL","pid":0,"tid":"stream 13","ts":1030,"dur":40},
          {"ph":"X","cat":"gpu_memcpy","name":"Memcpy DtoD","pid":0,"tid":"stream 7","ts":1070,"dur":2},
          {"ph":"B","cat":"kernel","name":"begin-end","pid":0,"tid":"stream 13","ts":1080},
          {"ph":"E","pid":0,"tid":"stream 13","ts":1090},
          {"ph":"i","name":"instant","pid":0,"tid":1,"ts":1}
        ]})";
        const MeasuredTrace m = parse_measured_trace(text, "pytorch.json");
        QVERIFY(m.gpu_only);
        QCOMPARE(m.nested, std::size_t(1));
        QCOMPARE(m.rows.size(), std::size_t(2));
        QCOMPARE(m.origin_s, 1010.5e-6);
        const TimelineRow& compute = m.rows[0];
        QCOMPARE(QString::fromStdString(compute.label), QStringLiteral("GPU 0 / compute stream"));
        QCOMPARE(compute.items.size(), std::size_t(3));
        QCOMPARE(compute.items[0].kind, TimelineKind::measured_kernel);
        QCOMPARE(compute.items[2].kind, TimelineKind::measured_comm); // memcpy
        QCOMPARE(QString::fromStdString(m.names[compute.items[1].op]), QStringLiteral("flash_fwd_kernel"));
        const TimelineRow& comm = m.rows[1];
        QCOMPARE(QString::fromStdString(comm.label), QStringLiteral("GPU 0 / tid stream 13"));
        QCOMPARE(comm.items.size(), std::size_t(2));
        QCOMPARE(comm.items[0].kind, TimelineKind::measured_comm);
        QVERIFY(std::fabs(comm.items[1].duration_s() - 10e-6) < 1e-12);
        QVERIFY(std::fabs(m.span_s - (1090 - 1010.5) * 1e-6) < 1e-12);
    }

    void measured_trace_bad_input_data()
    {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QString>("says");
        QTest::newRow("not json") << QByteArray("{ nope") << QStringLiteral("not a JSON trace");
        QTest::newRow("no events") << QByteArray(R"({"traceEvents":[]})") << QStringLiteral("no complete");
        QTest::newRow("wrong shape") << QByteArray(R"({"events":[]})") << QStringLiteral("traceEvents");
        QTest::newRow("bad ts") << QByteArray(R"([{"ph":"X","name":"k","ts":"soon","dur":1}])")
                                << QStringLiteral("traceEvents[0].ts");
    }
    void measured_trace_bad_input()
    {
        QFETCH(QByteArray, text);
        QFETCH(QString, says);
        try {
            parse_measured_trace(text.toStdString(), "bad.json");
            QFAIL("accepted a bad trace");
        } catch (const InputError& e) {
            const QString what = QString::fromStdString(e.what());
            QVERIFY2(what.startsWith(QStringLiteral("bad.json")) && what.contains(says), qPrintable(what));
        }
        try {
            load_measured_trace("/nonexistent/trace.json");
            QFAIL("read a missing file");
        } catch (const InputError& e) {
            QVERIFY(QString::fromStdString(e.what()).contains(QStringLiteral("/nonexistent/trace.json")));
        }
    }

    // Found by fuzz_chrome_trace: a "cat" (or "ph", "name") of another type than a string threw a
    // json type_error past the reader; such an event is now ignored like one without the field.
    void measured_trace_tolerates_fields_of_other_types()
    {
        const std::string path = PARALLAX_SOURCE_DIR "/tests/data/traces/fuzz-cat-is-a-number.json";
        const MeasuredTrace m = load_measured_trace(path);
        QCOMPARE(m.events, std::size_t { 1 }); // the flash_fwd_kernel; the event whose cat is 90.0 is skipped
        for (const char* text :
            { R"([{"ph":7,"name":"k","ts":1,"dur":1}])", R"([{"ph":"X","name":[],"cat":{},"ts":1,"dur":1}])" }) {
            try {
                parse_measured_trace(text, "typed.json");
            } catch (const InputError&) {
                // an answer; anything else escaping fails the test
            }
        }
    }

    void durations_format()
    {
        QCOMPARE(QString::fromStdString(format_duration(14.3561)), QStringLiteral("14.356 s"));
        QCOMPARE(QString::fromStdString(format_duration(0.2501)), QStringLiteral("250.1 ms"));
        QCOMPARE(QString::fromStdString(format_duration(0.0125)), QStringLiteral("12.5 ms"));
        QCOMPARE(QString::fromStdString(format_duration(3.4e-5)), QString::fromUtf8("34 \xc2\xb5s"));
        QCOMPARE(QString::fromStdString(format_duration(0)), QStringLiteral("0 s"));
        QCOMPARE(QString::fromStdString(format_si(1.25e12, "FLOP")), QStringLiteral("1.25 TFLOP"));
    }
};

QTEST_APPLESS_MAIN(TestTimelineData)
#include "tst_timeline_data.moc"

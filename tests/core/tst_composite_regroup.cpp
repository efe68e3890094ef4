// Ranges of their own TP or CP (strategy.layers[i].tp / .cp): the stage's tp*cp*dp GPUs regrouped for
// those layers, their weights split and their gradients reduced the range's way, a relayout at each
// boundary; ranges that regroup every layer predict the plain plan of that shape; the reader's refusals.
#include "io/preset_catalog.hpp"
#include "io/scenario_io.hpp"
#include "ir/lowering.hpp"
#include "model/analytic_model.hpp"
#include "model/relayout.hpp"
#include "model/strategy_costs.hpp"
#include "sim/simulated_model.hpp"
#include "spec/input_error.hpp"
#include "spec/layer_ranges.hpp"
#include "spec/strategy_label.hpp"

#include <QFile>
#include <QProcess>
#include <QTest>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

using namespace parallax;

namespace {

// Llama 3 70B (80 layers, hidden 8192, 64 heads, 8 KV heads) on 8 nodes of 8 H100, TP 8 x PP 4 x DP 2,
// micro-batch 2 (16 micro-batches of 8K-token sequences), selective recompute, SP.
nlohmann::json scenario_json(const nlohmann::json& strategy_extra)
{
    nlohmann::json j = {
        { "schema", 1 },
        { "model", "llama3-70b" },
        { "cluster",
            { { "gpu", "H100-SXM5-80GB" }, { "nodes", 8 }, { "gpus_per_node", 8 }, { "intra_node", "nvlink4-nvswitch" },
                { "inter_node", "ib-ndr" } } },
        { "training", { { "global_batch", 64 }, { "seq_len", 8192 }, { "precision", "bf16" } } },
        { "strategy",
            { { "tp", 8 }, { "pp", 4 }, { "dp", 2 }, { "micro_batch", 2 }, { "sequence_parallel", true }, { "zero", 1 },
                { "recompute", "selective" }, { "schedule", "1f1b" } } },
    };
    for (auto it = strategy_extra.begin(); it != strategy_extra.end(); ++it)
        j["strategy"][it.key()] = it.value();
    return j;
}

Scenario read(const nlohmann::json& j)
{
    return parse_scenario(j, "test.json", PresetCatalog::standard(), ScenarioUse::plan);
}

Scenario with_layers(const char* layers, const nlohmann::json& extra = nlohmann::json::object())
{
    nlohmann::json strategy = extra;
    strategy["layers"] = nlohmann::json::parse(layers);
    return read(scenario_json(strategy));
}

Prediction predict(const Scenario& s, bool simulated = false)
{
    const PlanContext ctx(s.model, s.training, s.cluster);
    return simulated ? predict_simulated(ctx, s.strategy) : AnalyticModel(ctx).predict(s.strategy);
}

std::string error_of(const nlohmann::json& j)
{
    try {
        read(j);
    } catch (const InputError& e) {
        return e.what();
    }
    return {};
}

bool contains(const std::string& s, const std::string& part)
{
    return s.find(part) != std::string::npos;
}

bool close(double a, double b, double rel = 1e-9)
{
    return std::fabs(a - b) <= rel * std::max(std::fabs(a), std::fabs(b));
}

#define VERIFY_CLOSE_REL(a, b, rel)                                                                                    \
    QVERIFY2(close((a), (b), (rel)), qPrintable(QStringLiteral("%1 vs %2").arg((a), 0, 'g', 17).arg((b), 0, 'g', 17)))
#define VERIFY_CLOSE(a, b) VERIFY_CLOSE_REL(a, b, 1e-9)

void verify_same_prediction(const Prediction& pa, const Prediction& pb)
{
    VERIFY_CLOSE(pa.step_time_s, pb.step_time_s);
    VERIFY_CLOSE(pa.peak_memory_bytes, pb.peak_memory_bytes);
    VERIFY_CLOSE(pa.mfu, pb.mfu);
    VERIFY_CLOSE(pa.power.energy_J_per_step, pb.power.energy_J_per_step);
    QCOMPARE(pa.stages.size(), pb.stages.size());
    for (std::size_t i = 0; i < pa.stages.size(); ++i) {
        VERIFY_CLOSE(pa.stages[i].memory.total(), pb.stages[i].memory.total());
        VERIFY_CLOSE(pa.stages[i].forward_s, pb.stages[i].forward_s);
        VERIFY_CLOSE(pa.stages[i].backward_s, pb.stages[i].backward_s);
    }
}

} // namespace

class TestCompositeRegroup : public QObject {
    Q_OBJECT

private slots:
    // Ranges whose TP and CP are the plan's own (with other overrides splitting the layers into several
    // variants) predict the plain plan exactly, analytic and simulated.
    void plan_valued_degrees_equal_plain_data()
    {
        QTest::addColumn<bool>("simulated");
        QTest::newRow("analytic") << false;
        QTest::newRow("simulated") << true;
    }

    void plan_valued_degrees_equal_plain()
    {
        QFETCH(bool, simulated);
        const Scenario plain = read(scenario_json(nlohmann::json::object()));
        const Scenario same = with_layers(R"([{"range": [0, 39], "tp": 8, "cp": 1},
            {"range": [40, 79], "tp": 8, "cp": 1, "precision": "bf16"}])");
        verify_same_prediction(predict(plain, simulated), predict(same, simulated));
    }

    // Every layer regrouped is the plain plan of that shape: TP 4 on all 80 layers regroups each TP 8 x DP 2
    // stage as TP 4 x DP 4, each TP 4 group taking one of the TP 8 group's two sequences; CP 2 on all layers
    // regroups it as TP 8 x CP 2 x DP 1 with both replicas' sequences in one micro-batch of 4.
    void regrouping_every_layer_is_the_plain_plan_data()
    {
        QTest::addColumn<QString>("layers");
        QTest::addColumn<QString>("plain");
        QTest::addColumn<bool>("simulated");
        const char* tp4 = R"([{"range": [0, 79], "tp": 4}])";
        const char* plain_tp4 = R"({"tp": 4, "dp": 4, "micro_batch": 1})";
        const char* cp2 = R"([{"range": [0, 79], "cp": 2}])";
        const char* plain_cp2 = R"({"cp": 2, "dp": 1, "micro_batch": 4})";
        QTest::newRow("TP 4") << tp4 << plain_tp4 << false;
        QTest::newRow("TP 4, simulated") << tp4 << plain_tp4 << true;
        QTest::newRow("CP 2") << cp2 << plain_cp2 << false;
        QTest::newRow("CP 2, simulated") << cp2 << plain_cp2 << true;
    }

    void regrouping_every_layer_is_the_plain_plan()
    {
        QFETCH(QString, layers);
        QFETCH(QString, plain);
        QFETCH(bool, simulated);
        const Scenario composite = with_layers(layers.toStdString().c_str());
        const Scenario shape = read(scenario_json(nlohmann::json::parse(plain.toStdString())));
        verify_same_prediction(predict(shape, simulated), predict(composite, simulated));
    }

    // The first and last two layers at TP 4 inside the TP 8 plan (DP doubled for them).
    // Memory, by hand: stage 0 holds layers 0-1 and the embedding, stage 3 layers 78-79 and the output
    // layer, now split 4 ways instead of 8. A Llama 3 70B layer has 855,638,016 split parameters (attention
    // 8192*(8192+2*1024) + 8192*8192 = 150,994,944; MLP 3*8192*28672 = 704,643,072), the embedding (and the
    // untied output layer) 128256*8192 = 1,050,673,152. Extra parameters per GPU: (2*855,638,016 +
    // 1,050,673,152) * (1/4 - 1/8) = 345,243,648, each with its 2 B bf16 weight and 4 B fp32 gradient:
    // 2,071,461,888 B (1.93 GiB) more on stages 0 and 3. The optimizer states of the split parameters
    // (sharded over the range's dp' = 4 instead of 2) and the activations (each GPU keeps its tokens) do
    // not change; the norms, which TP does not split, shard over 4 ranks instead of 2: 12 B * (1/2 - 1/4)
    // less for each of 2 layers' 2 * 8192 norm weights (98,304 B), and on stage 3 the final norm's 8192
    // as well (122,880 B).
    void edge_layers_at_tp4_memory()
    {
        const Prediction plain = predict(read(scenario_json(nlohmann::json::object())));
        const Prediction edges = predict(with_layers(R"([{"range": [0, 1], "tp": 4}, {"range": [78, 79], "tp": 4}])"));
        constexpr double kExtraBytes = 2071461888.0;
        for (int st : { 0, 3 }) {
            const MemoryBreakdown& a = plain.stages[st].memory;
            const MemoryBreakdown& b = edges.stages[st].memory;
            VERIFY_CLOSE((b.weights + b.gradients) - (a.weights + a.gradients), kExtraBytes);
            VERIFY_CLOSE(a.optimizer - b.optimizer, st == 0 ? 98304.0 : 122880.0);
            VERIFY_CLOSE(b.activations, a.activations);
        }
        for (int st : { 1, 2 })
            VERIFY_CLOSE(edges.stages[st].memory.total(), plain.stages[st].memory.total());
    }

    // The relayout at a boundary, by hand: one micro-batch (2 sequences of 8192 tokens, hidden 8192, bf16)
    // is 268,435,456 B; under SP each of the TP 8 group's GPUs holds an eighth, 33,554,432 B, and so does
    // each GPU of the two TP 4 groups. The tokens move all-to-all over the 8 GPUs of one node: (n-1) steps
    // of 3 us NVLink latency plus (n-1)/n of the buffer at the NVSwitch bus bandwidth, 450 GB/s * 0.8:
    // 7 * 3e-6 + 7/8 * 33,554,432 / 360e9 = 102.56 us each way.
    void relayout_by_hand()
    {
        const Scenario s = read(scenario_json(nlohmann::json::object()));
        const PlanContext ctx(s.model, s.training, s.cluster);
        LayerSetting tp8 = plain_layer_setting(ctx, s.strategy), tp4 = tp8;
        tp4.tp = 4;
        const Relayout r = relayout(ctx, s.strategy, tp8, tp4);
        QVERIFY(r.collective == Collective::all_to_all);
        VERIFY_CLOSE(r.bytes, 33554432.0);
        QCOMPARE(r.group.size, 8LL);
        QCOMPARE(r.group.nodes, 1LL);
        constexpr double kHandS = 7 * 3e-6 + 7.0 / 8 * 33554432.0 / 360e9;
        VERIFY_CLOSE_REL(r.time_s, kHandS, 1e-6);
        VERIFY_CLOSE_REL(relayout(ctx, s.strategy, tp4, tp8).time_s, kHandS, 1e-6);
        // Stage 1 (layers 20-39, all TP 8 in both plans) pays exactly one relayout each way when stage 0's
        // layers run at TP 4: the boundary at layer 20 is the first thing its forward does.
        const Prediction plain = predict(s);
        const Prediction first_stage = predict(with_layers(R"([{"range": [0, 19], "tp": 4}])"));
        VERIFY_CLOSE_REL(first_stage.stages[1].forward_s - plain.stages[1].forward_s, kHandS, 1e-6);
        VERIFY_CLOSE_REL(first_stage.stages[1].backward_s - plain.stages[1].backward_s, kHandS, 1e-6);
    }

    // The IR carries each relayout as an op of its own on the TP stream, between the pieces of the pass
    // it splits: stage 0 of the TP 4 example (layers 0-14 at TP 8, 15-79 at TP 4) relays once forward and
    // once backward per micro-batch (16 of them), each the hand-worked 102.56 us; no other stage relays.
    void lowering_emits_relayout_ops()
    {
        const Scenario s = with_layers(R"([{"range": [15, 79], "tp": 4}])");
        const PlanContext ctx(s.model, s.training, s.cluster);
        const LoweredPlan plan = lower_plan(ctx, s.strategy);
        const ExecutionGraph& g = plan.graph;
        int relayouts = 0;
        constexpr double kHandS = 7 * 3e-6 + 7.0 / 8 * 33554432.0 / 360e9;
        for (std::uint32_t i = 0; i < g.size(); ++i) {
            if (g.type(i) != IrOpType::tp_comm)
                continue;
            ++relayouts;
            QCOMPARE(static_cast<int>(g.device(i)), 0);
            QVERIFY(g.stream(i) == IrStream::tp);
            VERIFY_CLOSE_REL(g.duration_s(i), kHandS, 1e-6);
        }
        QCOMPARE(relayouts, 2 * 16);
        // The plain plan lowers none.
        const Scenario plain = read(scenario_json(nlohmann::json::object()));
        const LoweredPlan plain_plan = lower_plan(ctx, plain.strategy);
        for (std::uint32_t i = 0; i < plain_plan.graph.size(); ++i)
            QVERIFY(plain_plan.graph.type(i) != IrOpType::tp_comm);
    }

    // The range's data-parallel gradient reduction runs over its own group: with every layer of a stage at
    // TP 4 that stage reduces as the plain TP 4 x DP 4 plan does.
    void gradient_reduction_over_the_range_group()
    {
        const Scenario s = with_layers(R"([{"range": [0, 79], "tp": 4}])");
        const Scenario shape = read(scenario_json(nlohmann::json::parse(R"({"tp": 4, "dp": 4, "micro_batch": 1})")));
        const PlanContext ctx(s.model, s.training, s.cluster);
        EvaluationCache ca(ctx), cb(ctx);
        StrategyCosts a, b;
        compute_costs(ctx, s.strategy, ca, a);
        compute_costs(ctx, shape.strategy, cb, b);
        for (int st = 0; st < 4; ++st) {
            const StageTail ta = stage_tail(ctx, s.strategy, a, st), tb = stage_tail(ctx, shape.strategy, b, st);
            VERIFY_CLOSE(ta.grad_reduce_s, tb.grad_reduce_s);
            VERIFY_CLOSE(ta.param_gather_s, tb.param_gather_s);
            VERIFY_CLOSE(ta.optimizer_s, tb.optimizer_s);
        }
    }

    // Composites the menu cannot express: the simulator runs the same per-chunk costs and relayouts.
    void analytic_and_simulated_agree_data()
    {
        QTest::addColumn<QString>("layers");
        QTest::newRow("TP 4 edges") << R"([{"range": [0, 1], "tp": 4}, {"range": [78, 79], "tp": 4}])";
        QTest::newRow("CP 2 middle") << R"([{"range": [20, 39], "cp": 2}])";
        QTest::newRow("TP 4 x CP 2 and CP 2, across stage boundaries")
            << R"([{"range": [10, 29], "tp": 4, "cp": 2}, {"range": [50, 69], "cp": 2}])";
    }

    void analytic_and_simulated_agree()
    {
        QFETCH(QString, layers);
        const Scenario s = with_layers(layers.toStdString().c_str());
        const double analytic_s = predict(s).step_time_s, simulated_s = predict(s, true).step_time_s;
        QVERIFY2(std::fabs(analytic_s - simulated_s) <= 0.03 * simulated_s,
            qPrintable(QStringLiteral("analytic %1 s, simulated %2 s").arg(analytic_s).arg(simulated_s)));
        QVERIFY(contains(strategy_label(s.strategy), ", layers "));
    }

    void refusals_data()
    {
        QTest::addColumn<QString>("strategy");
        QTest::addColumn<QString>("key");
        QTest::addColumn<QString>("rule");
        QTest::newRow("tp not dividing the heads") << R"({"layers": [{"range": [0, 1], "tp": 3}]})"
                                                   << "strategy.layers[0].tp"
                                                   << "must divide the 64 attention heads";
        QTest::newRow("tp not dividing the KV heads") << R"({"layers": [{"range": [0, 1], "tp": 16}]})"
                                                      << "strategy.layers[0].tp"
                                                      << "8 KV heads";
        QTest::newRow("dp' not whole") << R"({"layers": [{"range": [0, 1], "cp": 4, "tp": 8}]})"
                                       << "strategy.layers[0].cp"
                                       << "which must divide 16";
        QTest::newRow("micro-batch not splitting") << R"({"micro_batch": 1, "layers": [{"range": [0, 1], "tp": 4}]})"
                                                   << "strategy.layers[0].tp"
                                                   << "must be whole (micro_batch is 1)";
        QTest::newRow("cp not dividing the sequence") << R"({"layers": [{"range": [0, 1], "cp": 3}]})"
                                                      << "strategy.layers[0].cp"
                                                      << "seq_len 8192";
        QTest::newRow("zero 3") << R"({"zero": 3, "layers": [{"range": [0, 1], "tp": 4}]})"
                                << "strategy.layers[0].tp"
                                << "zero 3";
    }

    void refusals()
    {
        QFETCH(QString, strategy);
        QFETCH(QString, key);
        QFETCH(QString, rule);
        const std::string err = error_of(scenario_json(nlohmann::json::parse(strategy.toStdString())));
        QVERIFY2(contains(err, "test.json: " + key.toStdString()), err.c_str());
        QVERIFY2(contains(err, rule.toStdString()), err.c_str());
    }

    // On nodes of 4 GPUs a TP 4 plan's TP groups fill a node; a range at TP 8 would span two.
    void refuses_tp_group_across_nodes()
    {
        nlohmann::json j = scenario_json(
            nlohmann::json::parse(R"({"tp": 4, "dp": 4, "micro_batch": 1, "layers": [{"range": [0, 1], "tp": 8}]})"));
        j["cluster"]["nodes"] = 16;
        j["cluster"]["gpus_per_node"] = 4;
        const std::string err = error_of(j);
        QVERIFY2(contains(err, "test.json: strategy.layers[0].tp") && contains(err, "inside one node's NVLink domain"),
            err.c_str());
    }

    // The documented example runs under predict (analytic and simulated within 3%) and timeline.
    void cli_runs_example()
    {
        const QString example
            = QStringLiteral(PARALLAX_SOURCE_DIR "/docs/examples/composite-tp4-where-memory-allows.json");
        auto step = [&](const char* fidelity) {
            QProcess p;
            p.start(QStringLiteral(PARALLAX_CLI_PATH),
                { QStringLiteral("predict"), example, QStringLiteral("--json"), QStringLiteral("--fidelity"),
                    QString::fromUtf8(fidelity) });
            if (!p.waitForFinished(60000) || p.exitCode() != 0)
                return -1.0;
            return nlohmann::json::parse(p.readAllStandardOutput().toStdString())["step_time_s"].get<double>();
        };
        const double analytic_s = step("analytic"), simulated_s = step("simulated");
        QVERIFY(analytic_s > 0 && simulated_s > 0);
        QVERIFY2(std::fabs(analytic_s - simulated_s) <= 0.03 * simulated_s,
            qPrintable(QStringLiteral("analytic %1 s, simulated %2 s").arg(analytic_s).arg(simulated_s)));
    }
};

QTEST_GUILESS_MAIN(TestCompositeRegroup)

#include "tst_composite_regroup.moc"

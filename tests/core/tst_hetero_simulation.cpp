// The event simulator on heterogeneous plans (ir/hetero_lowering, sim/hetero_simulation): the simulated
// step agrees with the hetero model's, a plan of one GPU type simulates as the plain plan does, and
// stages on slower GPUs run longer passes.
#include "io/preset_catalog.hpp"
#include "io/scenario_io.hpp"
#include "ir/hetero_lowering.hpp"
#include "sim/hetero_simulation.hpp"

#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>

using namespace parallax;
using nlohmann::json;

namespace {

// The simulator replaces the analytic formula's fill, drain and tail by the schedule's; 2% apart.
constexpr double kAgreement = 0.02;
// A stage's busy time in the model counts its pipeline sends; its compute row does not.
constexpr double kBusyAgreement = 0.03;

const PresetCatalog& catalog()
{
    return PresetCatalog::standard();
}

json example_json()
{
    std::ifstream in(PARALLAX_SOURCE_DIR "/docs/examples/hetero-h100-a100.json");
    return json::parse(in);
}

json replica(const std::string& group, int tp)
{
    return { { "group", group }, { "tp", tp } };
}

// Three uneven stages: two mixed ones of different TP, and one on A100s alone.
json uneven_json()
{
    json j = example_json();
    j["strategy"]["stages"] = json::array({
        { { "layers", 12 }, { "replicas", { replica("h100", 2), replica("a100", 4) } } },
        { { "layers", 12 }, { "replicas", { replica("h100", 4), replica("a100", 2) } } },
        { { "layers", 8 }, { "replicas", { replica("h100", 2) } } },
    });
    return j;
}

// Llama 3 8B on 16 H100 as a plain plan, and the same plan written as stages on one GPU type.
json plain_json(const json& strategy)
{
    return { { "schema", 1 }, { "model", "llama3-8b" },
        { "cluster",
            { { "gpu", "H100-SXM5-80GB" }, { "nodes", 2 }, { "gpus_per_node", 8 }, { "intra_node", "nvlink4-nvswitch" },
                { "inter_node", "ib-ndr" } } },
        { "training", { { "global_batch", 64 }, { "seq_len", 4096 }, { "precision", "bf16" } } },
        { "strategy", strategy } };
}

json uniform_stages_json(const json& plain, const std::vector<int>& layers, int tp, int dp)
{
    json j = plain;
    j["cluster"] = { { "groups",
                         { { { "name", "g" }, { "gpu", "H100-SXM5-80GB" }, { "nodes", 2 }, { "gpus_per_node", 8 },
                             { "intra_node", "nvlink4-nvswitch" } } } },
        { "inter_node", "ib-ndr" } };
    json strategy = plain["strategy"];
    for (const char* k : { "tp", "pp", "dp" })
        strategy.erase(k);
    strategy["stages"] = json::array();
    for (int l : layers) {
        json replicas = json::array();
        for (int r = 0; r < dp; ++r)
            replicas.push_back(replica("g", tp));
        strategy["stages"].push_back({ { "layers", l }, { "replicas", replicas } });
    }
    j["strategy"] = strategy;
    return j;
}

double relative(double a, double b)
{
    return std::abs(a - b) / b;
}

} // namespace

class TestHeteroSimulation : public QObject {
    Q_OBJECT
private slots:
    void agreesWithAnalytic_data();
    void agreesWithAnalytic();
    void oneGpuTypeSimulatesAsPlain_data();
    void oneGpuTypeSimulatesAsPlain();
    void slowerStageRunsLongerPasses();
    void stagesNameTheirGpus();
    void cliSimulatesAndTraces();
};

void TestHeteroSimulation::agreesWithAnalytic_data()
{
    QTest::addColumn<QByteArray>("scenario");
    const json example = example_json();
    QTest::newRow("docs example, 1F1B") << QByteArray::fromStdString(example.dump());
    json gpipe = example;
    gpipe["strategy"]["schedule"] = "gpipe";
    QTest::newRow("docs example, GPipe") << QByteArray::fromStdString(gpipe.dump());
    QTest::newRow("uneven stages, 1F1B") << QByteArray::fromStdString(uneven_json().dump());
    json uneven_gpipe = uneven_json();
    uneven_gpipe["strategy"]["schedule"] = "gpipe";
    QTest::newRow("uneven stages, GPipe") << QByteArray::fromStdString(uneven_gpipe.dump());
    json even = uneven_json();
    even["strategy"]["batch_split"] = "even";
    QTest::newRow("uneven stages, even split") << QByteArray::fromStdString(even.dump());
}

void TestHeteroSimulation::agreesWithAnalytic()
{
    QFETCH(QByteArray, scenario);
    const Scenario s = parse_scenario(json::parse(scenario.toStdString()), "hetero.json", catalog());
    const HeteroModel model(s);
    const SimulatedPlan sim = simulate_heterogeneous(model);
    const Prediction simulated = hetero_prediction_from_simulation(model, sim);
    const Prediction& analytic = model.prediction().prediction;
    QCOMPARE(sim.lowered.graph.devices, static_cast<int>(s.stages.size()));
    QCOMPARE(simulated.fidelity, Fidelity::simulated);
    // The analytic formula fills and drains the pipeline at every stage's slowest replica's pace; the
    // simulator runs a stage whose replicas share the micro-batches no slower than the pacing stage.
    // Where a slowest replica is slower than that, the two differ by the difference, at most.
    const HeteroPrediction& h = model.prediction();
    const double pace_s = h.stages[static_cast<std::size_t>(h.critical_stage)].microbatch_s;
    double fill_gap_s = 0;
    for (const HeteroStageReport& st : h.stages)
        fill_gap_s += std::max(0.0, st.microbatch_s - pace_s);
    QVERIFY2(std::abs(simulated.step_time_s - analytic.step_time_s) <= kAgreement * analytic.step_time_s + fill_gap_s,
        qPrintable(QStringLiteral("simulated %1 s, analytic %2 s, fill gap %3 s")
                       .arg(simulated.step_time_s, 0, 'f', 4)
                       .arg(analytic.step_time_s, 0, 'f', 4)
                       .arg(fill_gap_s, 0, 'f', 4)));
    // Throughput follows the step; memory stays the hetero model's (the worst replica's).
    QVERIFY(std::abs(simulated.tokens_per_s * simulated.step_time_s - analytic.tokens_per_s * analytic.step_time_s)
        < 1e-6 * analytic.tokens_per_s * analytic.step_time_s);
    QCOMPARE(simulated.peak_memory_bytes, analytic.peak_memory_bytes);
    // The critical stage is busy for its busiest replica's share of the step.
    const int crit = model.prediction().critical_stage;
    QVERIFY2(relative(sim.result.compute_busy_s[static_cast<std::size_t>(crit)],
                 model.prediction().stages[static_cast<std::size_t>(crit)].busy_s)
            < kBusyAgreement,
        qPrintable(QString::number(sim.result.compute_busy_s[static_cast<std::size_t>(crit)])));
}

void TestHeteroSimulation::oneGpuTypeSimulatesAsPlain_data()
{
    QTest::addColumn<QByteArray>("strategy");
    QTest::addColumn<QList<int>>("layers");
    QTest::newRow("tp4 pp2 dp2, 1F1B") << QByteArrayLiteral(
        R"({"tp":4,"pp":2,"dp":2,"micro_batch":1,"zero":1,"recompute":"selective"})")
                                       << QList<int> { 16, 16 };
    QTest::newRow("tp2 pp4 dp2, GPipe") << QByteArrayLiteral(
        R"({"tp":2,"pp":4,"dp":2,"micro_batch":1,"schedule":"gpipe","recompute":"full"})")
                                        << QList<int> { 8, 8, 8, 8 };
    QTest::newRow("tp8 pp2, ZB-H1") << QByteArrayLiteral(R"({"tp":8,"pp":2,"dp":1,"micro_batch":2,"schedule":"zb-h1"})")
                                    << QList<int> { 16, 16 };
}

void TestHeteroSimulation::oneGpuTypeSimulatesAsPlain()
{
    QFETCH(QByteArray, strategy);
    QFETCH(QList<int>, layers);
    const json pj = plain_json(json::parse(strategy.toStdString()));
    const Scenario plain = parse_scenario(pj, "plain.json", catalog());
    const std::vector<int> stage_layers(layers.begin(), layers.end());
    const Scenario staged = parse_scenario(
        uniform_stages_json(pj, stage_layers, plain.strategy.tp, plain.strategy.dp), "staged.json", catalog());
    const PlanContext ctx(plain.model, plain.training, plain.cluster);
    const SimulatedPlan a = simulate_plan(ctx, plain.strategy);
    const HeteroModel model(staged);
    const SimulatedPlan b = simulate_heterogeneous(model);
    QCOMPARE(b.lowered.graph.size(), a.lowered.graph.size());
    QVERIFY2(relative(b.result.makespan_s, a.result.makespan_s) < 1e-6,
        qPrintable(QStringLiteral("staged %1 s, plain %2 s")
                       .arg(b.result.makespan_s, 0, 'g', 12)
                       .arg(a.result.makespan_s, 0, 'g', 12)));
    const Prediction pa = prediction_from_simulation(ctx, plain.strategy, a);
    const Prediction pb = hetero_prediction_from_simulation(model, b);
    QVERIFY(relative(pb.step_time_s, pa.step_time_s) < 1e-6);
    QVERIFY(relative(pb.time.bubble_s + 1e-12, pa.time.bubble_s + 1e-12) < 1e-4);
}

void TestHeteroSimulation::slowerStageRunsLongerPasses()
{
    // Two stages of 16 layers, one replica each: stage 0 on H100s, stage 1 on A100s.
    json j = example_json();
    j["strategy"]["stages"] = json::array({
        { { "layers", 16 }, { "replicas", { replica("h100", 4) } } },
        { { "layers", 16 }, { "replicas", { replica("a100", 4) } } },
    });
    const Scenario s = parse_scenario(j, "two-speeds.json", catalog());
    const HeteroModel model(s);
    const LoweredPlan plan = lower_heterogeneous(model);
    double forward_s[2] = { 0, 0 };
    for (std::uint32_t i = 0; i < plan.graph.size(); ++i)
        if (plan.graph.type(i) == IrOpType::forward && plan.graph.microbatch(i) == 1)
            forward_s[plan.graph.device(i)] = plan.graph.duration_s(i);
    QVERIFY2(forward_s[1] > 1.5 * forward_s[0],
        qPrintable(QStringLiteral("H100 %1 s, A100 %2 s").arg(forward_s[0]).arg(forward_s[1])));
    // Each stage's passes make up the hetero model's busy time for it on its own GPU (less its sends).
    QCOMPARE(plan.graph.microbatches, 64LL);
    double passes_s[2] = { 0, 0 };
    for (std::uint32_t i = 0; i < plan.graph.size(); ++i)
        if (is_compute(plan.graph.type(i)) && plan.graph.chunk(i) >= 0)
            passes_s[plan.graph.device(i)] += plan.graph.duration_s(i);
    for (int k = 0; k < 2; ++k) {
        QVERIFY2(passes_s[k] < model.prediction().stages[static_cast<std::size_t>(k)].busy_s
                && passes_s[k] > 0.9 * model.prediction().stages[static_cast<std::size_t>(k)].busy_s,
            qPrintable(QString::number(passes_s[k])));
    }
    // The send between the GPU types crosses the inter-node fabric.
    bool network_send = false;
    for (std::uint32_t i = 0; i < plan.graph.size(); ++i)
        network_send
            = network_send || (plan.graph.type(i) == IrOpType::pp_send && plan.graph.link(i) == IrLink::network);
    QVERIFY(network_send);
}

void TestHeteroSimulation::stagesNameTheirGpus()
{
    const Scenario s = parse_scenario(uneven_json(), "uneven.json", catalog());
    const HeteroModel model(s);
    const SimulatedPlan sim = simulate_heterogeneous(model);
    QCOMPARE(sim.device_labels.size(), std::size_t { 3 });
    QCOMPARE(QString::fromStdString(sim.device_labels[0]), QStringLiteral("H100-SXM5-80GB tp2 + A100-SXM4-80GB tp4"));
    QCOMPARE(QString::fromStdString(sim.device_labels[2]), QStringLiteral("H100-SXM5-80GB tp2"));
    QCOMPARE(sim.device_gpus, (std::vector<long long> { 6, 6, 2 }));
}

void TestHeteroSimulation::cliSimulatesAndTraces()
{
    const QString example = QStringLiteral(PARALLAX_SOURCE_DIR "/docs/examples/hetero-h100-a100-stages.json");
    QTemporaryDir dir;
    const QString trace = dir.filePath(QStringLiteral("trace.json"));
    QProcess p;
    p.start(QStringLiteral(PARALLAX_CLI_PATH), { QStringLiteral("timeline"), example, QStringLiteral("--out"), trace });
    QVERIFY(p.waitForFinished(60000));
    QCOMPARE(p.exitCode(), 0);
    std::ifstream in(trace.toStdString());
    const json events = json::parse(in)["traceEvents"];
    QStringList processes;
    for (const json& e : events)
        if (e.value("name", "") == "process_name")
            processes << QString::fromStdString(e["args"]["name"].get<std::string>());
    QVERIFY2(processes.contains(QStringLiteral("stage 0 (H100-SXM5-80GB tp8)")), qPrintable(processes.join(u'|')));
    QVERIFY(processes.contains(QStringLiteral("stage 1 (A100-SXM4-80GB tp8)")));
    // predict --fidelity simulated: the simulated step, with the stage reports of the hetero model.
    p.start(QStringLiteral(PARALLAX_CLI_PATH),
        { QStringLiteral("predict"), example, QStringLiteral("--fidelity"), QStringLiteral("simulated"),
            QStringLiteral("--json") });
    QVERIFY(p.waitForFinished(60000));
    QCOMPARE(p.exitCode(), 0);
    const json j = json::parse(p.readAllStandardOutput().toStdString());
    const Scenario s = load_scenario_file(example.toStdString(), catalog());
    const HeteroModel model(s);
    const Prediction simulated = hetero_prediction_from_simulation(model, simulate_heterogeneous(model));
    QCOMPARE(j["step_time_s"].get<double>(), simulated.step_time_s);
    QCOMPARE(j["heterogeneous"]["stages"].size(), std::size_t { 2 });
}

QTEST_GUILESS_MAIN(TestHeteroSimulation)
#include "tst_hetero_simulation.moc"

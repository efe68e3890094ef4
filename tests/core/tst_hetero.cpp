// Heterogeneous clusters (docs/heterogeneous.md): cluster.groups and strategy.stages are read
// strictly and written back; a plan whose groups all hold the same GPU with uniform stages predicts
// what the plain plan predicts; mixed replicas share the batch by speed and pace their stage.
#include "io/preset_catalog.hpp"
#include "io/scenario_io.hpp"
#include "model/analytic_model.hpp"
#include "model/hetero_model.hpp"
#include "model/stage_layout.hpp"
#include "spec/input_error.hpp"

#include <QTest>

#include <nlohmann/json.hpp>

#include <cmath>

using namespace parallax;
using nlohmann::json;

namespace {

const PresetCatalog& catalog()
{
    return PresetCatalog::standard();
}

json group(const std::string& name, const std::string& gpu, int nodes)
{
    return { { "name", name }, { "gpu", gpu }, { "nodes", nodes }, { "gpus_per_node", 8 },
        { "intra_node", "nvlink4-nvswitch" } };
}

json plain_scenario(const json& strategy, int nodes)
{
    return { { "schema", 1 }, { "model", "llama3-8b" },
        { "cluster",
            { { "gpu", "H100-SXM5-80GB" }, { "nodes", nodes }, { "gpus_per_node", 8 },
                { "intra_node", "nvlink4-nvswitch" }, { "inter_node", "ib-ndr" } } },
        { "training", { { "global_batch", 64 }, { "seq_len", 4096 }, { "precision", "bf16" } } },
        { "strategy", strategy } };
}

// The plain plan written as stages: the plain layout's layers per stage, dp replicas of tp GPUs each,
// stage k's replicas on group "g<k % groups>".
json as_stages(const Scenario& plain, int groups)
{
    const Strategy& s = plain.strategy;
    const StageLayout layout { plain.model.layers, s.pp, 1, s.first_stage_layers, s.last_stage_layers };
    json stages = json::array();
    for (int k = 0; k < s.pp; ++k) {
        json replicas = json::array();
        for (int r = 0; r < s.dp; ++r)
            replicas.push_back({ { "group", "g" + std::to_string(k % groups) }, { "tp", s.tp } });
        stages.push_back({ { "layers", layout.stage_layers(k) }, { "replicas", replicas } });
    }
    return stages;
}

json hetero_of(const json& plain_json, const Scenario& plain, int groups)
{
    json j = plain_json;
    json gs = json::array();
    for (int g = 0; g < groups; ++g)
        gs.push_back(group("g" + std::to_string(g), "H100-SXM5-80GB", plain.cluster.nodes / groups));
    j["cluster"] = { { "groups", gs }, { "inter_node", "ib-ndr" } };
    json strategy = plain_json["strategy"];
    for (const char* k : { "tp", "pp", "dp", "first_stage_layers", "last_stage_layers" })
        strategy.erase(k);
    strategy["stages"] = as_stages(plain, groups);
    j["strategy"] = strategy;
    return j;
}

void expect_close(double hetero, double plain, const char* what)
{
    const double rel = std::abs(hetero - plain) / std::max(1e-300, std::abs(plain));
    QVERIFY2(rel <= 1e-9,
        qPrintable(QStringLiteral("%1: heterogeneous %2, plain %3")
                       .arg(QString::fromLatin1(what))
                       .arg(hetero, 0, 'g', 17)
                       .arg(plain, 0, 'g', 17)));
}

std::string error_of(const json& j)
{
    try {
        parse_scenario(j, "plan.json", catalog());
    } catch (const InputError& e) {
        return e.key() + " | " + e.rule();
    }
    return "no error";
}

json mixed_scenario()
{
    json j = plain_scenario(json::object(), 1);
    j["cluster"] = { { "groups", { group("fast", "H100-SXM5-80GB", 1), group("slow", "A100-SXM4-80GB", 1) } },
        { "inter_node", "ib-ndr" } };
    j["strategy"] = {
        { "micro_batch", 1 }, { "recompute", "selective" }, { "zero", 1 },
        { "stages",
            { { { "layers", 16 },
                  { "replicas", { { { "group", "fast" }, { "tp", 4 } }, { { "group", "slow" }, { "tp", 4 } } } } },
                { { "layers", 16 },
                    { "replicas", { { { "group", "fast" }, { "tp", 4 } }, { { "group", "slow" }, { "tp", 4 } } } } } } }
    };
    return j;
}

} // namespace

class TestHetero : public QObject {
    Q_OBJECT
private slots:
    void equivalentToPlain_data();
    void equivalentToPlain();
    void readsAndWritesBack();
    void rejectsBadPlans();
    void fasterReplicasTakeMoreMicrobatches();
    void slowerGpuSlowsItsStage();
};

void TestHetero::equivalentToPlain_data()
{
    QTest::addColumn<QString>("strategy");
    QTest::addColumn<int>("nodes");
    QTest::addColumn<int>("groups");
    QTest::newRow("tp2 pp2 dp2, one group")
        << QString::fromLatin1(R"({"tp":2,"pp":2,"dp":2,"micro_batch":1,"zero":1,"recompute":"selective"})") << 1 << 1;
    QTest::newRow("tp8 pp2, a group per stage")
        << QString::fromLatin1(R"({"tp":8,"pp":2,"dp":1,"micro_batch":2,"recompute":"full","sequence_parallel":true})")
        << 2 << 2;
    QTest::newRow("tp1 pp3 uneven, dp 8, zero 0")
        << QString::fromLatin1(R"({"tp":1,"pp":3,"dp":8,"micro_batch":1,"zero":0,"recompute":"none"})") << 3 << 1;
    QTest::newRow("tp4 pp4 dp4 zb-h1, overrides") << QString::fromLatin1(
        R"({"tp":4,"pp":4,"dp":4,"micro_batch":1,"schedule":"zb-h1","first_stage_layers":7,"last_stage_layers":7})")
                                                  << 8 << 2;
}

void TestHetero::equivalentToPlain()
{
    QFETCH(QString, strategy);
    QFETCH(int, nodes);
    QFETCH(int, groups);
    const json plain_json = plain_scenario(json::parse(strategy.toStdString()), nodes);
    const Scenario plain = parse_scenario(plain_json, "plain.json", catalog());
    const Scenario hetero = parse_scenario(hetero_of(plain_json, plain, groups), "hetero.json", catalog());
    QVERIFY(hetero.heterogeneous());
    const PlanContext ctx(plain.model, plain.training, plain.cluster);
    const Prediction a = AnalyticModel(ctx).predict(plain.strategy);
    const Prediction b = predict_heterogeneous(hetero).prediction;
    QCOMPARE(b.feasible, a.feasible);
    expect_close(b.step_time_s, a.step_time_s, "step time");
    expect_close(b.tokens_per_s, a.tokens_per_s, "tokens/s");
    expect_close(b.tflops_per_gpu, a.tflops_per_gpu, "TFLOP/s per GPU");
    expect_close(b.mfu, a.mfu, "MFU");
    expect_close(b.hfu, a.hfu, "HFU");
    expect_close(b.bubble_fraction, a.bubble_fraction, "bubble");
    expect_close(b.peak_memory_bytes, a.peak_memory_bytes, "peak memory");
    expect_close(b.time.exposed_dp_s, a.time.exposed_dp_s, "exposed DP");
    expect_close(b.power.avg_W_per_gpu, a.power.avg_W_per_gpu, "average power");
    expect_close(b.power.energy_J_per_token, a.power.energy_J_per_token, "energy per token");
    QCOMPARE(b.peak_memory_stage, a.peak_memory_stage);
}

void TestHetero::readsAndWritesBack()
{
    const Scenario s = parse_scenario(mixed_scenario(), "mixed.json", catalog());
    QCOMPARE(s.cluster.groups.size(), std::size_t(2));
    QCOMPARE(s.cluster.groups[1].gpu.name, std::string("A100-SXM4-80GB"));
    QCOMPARE(s.cluster.total_gpus(), 16LL);
    QCOMPARE(s.stages.size(), std::size_t(2));
    QCOMPARE(s.stages[1].replicas[1].group, std::string("slow"));
    const json written = scenario_to_json(s);
    QVERIFY(written["cluster"].contains("groups"));
    QVERIFY(!written["strategy"].contains("tp"));
    const Scenario again = parse_scenario(written, "again.json", catalog());
    QVERIFY(again.stages == s.stages);
    QCOMPARE(again.cluster.groups[1].gpu_ref, std::string("A100-SXM4-80GB"));
    QCOMPARE(scenario_to_json(again).dump(), written.dump());
}

void TestHetero::rejectsBadPlans()
{
    json j = mixed_scenario();
    j["strategy"]["stages"][0]["layers"] = 10;
    QCOMPARE(error_of(j), std::string("strategy.stages | the stages' layers add up to 26; the model llama3-8b has 32"));
    j = mixed_scenario();
    j["strategy"]["stages"][1]["replicas"][0]["group"] = "fats";
    QVERIFY(error_of(j).starts_with("strategy.stages[1].replicas[0].group | unknown group \"fats\""));
    j = mixed_scenario();
    j["strategy"]["tp"] = 4;
    QVERIFY(error_of(j).starts_with("strategy.tp | is not given with strategy.stages"));
    j = mixed_scenario();
    j["strategy"]["stages"][0]["replicas"][0]["tp"] = 8; // group "fast" has 8 GPUs: 8 + 4 do not fit
    QVERIFY(error_of(j).starts_with("strategy.stages | the replicas use 12 GPUs of group \"fast\""));
    j = mixed_scenario();
    j["strategy"]["stages"][0]["replicas"][0]["tp"] = 3;
    QVERIFY(error_of(j).starts_with("strategy.stages[0].replicas[0].tp |"));
    j = mixed_scenario();
    j["cluster"]["gpu"] = "H100-SXM5-80GB";
    QVERIFY(error_of(j).starts_with("cluster.gpu | a cluster has either groups"));
    j = mixed_scenario();
    j["strategy"].erase("stages");
    QVERIFY(error_of(j).starts_with("strategy.stages | a cluster with groups needs an explicit pipeline"));
    j = mixed_scenario();
    j["strategy"]["schedule"] = "interleaved";
    QVERIFY(error_of(j).starts_with("strategy.schedule |"));
}

void TestHetero::fasterReplicasTakeMoreMicrobatches()
{
    const HeteroPrediction h = predict_heterogeneous(parse_scenario(mixed_scenario(), "mixed.json", catalog()));
    for (const HeteroStageReport& st : h.stages) {
        const HeteroReplicaReport& fast = st.replicas[0];
        const HeteroReplicaReport& slow = st.replicas[1];
        QVERIFY(fast.forward_s + fast.backward_s < slow.forward_s + slow.backward_s);
        QVERIFY(fast.microbatches > slow.microbatches);
        QCOMPARE(fast.microbatches + slow.microbatches, 64LL);
        QVERIFY(st.mixed); // H100 and A100 replicas reduce over the inter-node fabric
    }
    QCOMPARE(h.gpus_used, 16LL);
}

void TestHetero::slowerGpuSlowsItsStage()
{
    // The same plan with both replicas on H100s, on A100s, and mixed: mixed lies between.
    auto step = [](const std::string& a, const std::string& b) {
        json j = mixed_scenario();
        j["cluster"]["groups"][0]["gpu"] = a;
        j["cluster"]["groups"][1]["gpu"] = b;
        return predict_heterogeneous(parse_scenario(j, "m.json", catalog())).prediction.step_time_s;
    };
    const double fast = step("H100-SXM5-80GB", "H100-SXM5-80GB");
    const double mixed = step("H100-SXM5-80GB", "A100-SXM4-80GB");
    const double slow = step("A100-SXM4-80GB", "A100-SXM4-80GB");
    QVERIFY2(fast < mixed && mixed < slow, qPrintable(QStringLiteral("%1 %2 %3").arg(fast).arg(mixed).arg(slow)));
}

QTEST_GUILESS_MAIN(TestHetero)
#include "tst_hetero.moc"

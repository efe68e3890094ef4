// Composite strategies (strategy.layers): reading and its rules, the round trip, ranges that cover
// every layer with the plain value predicting exactly the plain plan, and recompute on the middle
// layers only costed stage by stage against the plain plans of each setting.
#include "io/layer_ranges_io.hpp"
#include "io/preset_catalog.hpp"
#include "io/scenario_io.hpp"
#include "model/analytic_model.hpp"
#include "model/strategy_costs.hpp"
#include "sim/simulated_model.hpp"
#include "spec/input_error.hpp"
#include "spec/layer_ranges.hpp"
#include "spec/strategy_label.hpp"

#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

using namespace parallax;

namespace {

// Llama 3 70B (80 layers) on 64 H100, TP 8, PP 4 (20 layers per stage), 32 micro-batches.
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
            { { "tp", 8 }, { "pp", 4 }, { "dp", 2 }, { "micro_batch", 1 }, { "sequence_parallel", true }, { "zero", 1 },
                { "schedule", "1f1b" } } },
    };
    for (auto it = strategy_extra.begin(); it != strategy_extra.end(); ++it)
        j["strategy"][it.key()] = it.value();
    return j;
}

Scenario read(const nlohmann::json& j, ScenarioUse use = ScenarioUse::plan)
{
    return parse_scenario(j, "test.json", PresetCatalog::standard(), use);
}

Prediction predict(const Scenario& s, bool simulated = false)
{
    const PlanContext ctx(s.model, s.training, s.cluster);
    return simulated ? predict_simulated(ctx, s.strategy) : AnalyticModel(ctx).predict(s.strategy);
}

// The error reading `j` gives ("" when it reads).
std::string error_of(const nlohmann::json& j, ScenarioUse use = ScenarioUse::plan)
{
    try {
        read(j, use);
    } catch (const InputError& e) {
        return e.what();
    }
    return {};
}

std::string read_text(const char* path)
{
    QFile f(QString::fromUtf8(path));
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return f.readAll().toStdString();
}

bool contains(const std::string& s, const std::string& part)
{
    return s.find(part) != std::string::npos;
}

bool close(double a, double b, double rel = 1e-9)
{
    return std::fabs(a - b) <= rel * std::max(std::fabs(a), std::fabs(b));
}

#define VERIFY_CLOSE(a, b)                                                                                             \
    QVERIFY2(close((a), (b)), qPrintable(QStringLiteral("%1 vs %2").arg((a), 0, 'g', 17).arg((b), 0, 'g', 17)))

} // namespace

class TestCompositeStrategy : public QObject {
    Q_OBJECT

private slots:
    void reads_ranges_and_round_trips()
    {
        const nlohmann::json layers = nlohmann::json::array(
            { { { "range", { 0, 9 } }, { "recompute", "none" } }, { { "range", { 20, 59 } }, { "recompute", "full" } },
                { { "range", { 70, 79 } }, { "tp", 8 }, { "precision", "bf16" }, { "offload_activations", false } } });
        const Scenario s = read(scenario_json({ { "layers", layers } }));
        QVERIFY(s.strategy.layers);
        QCOMPARE(s.strategy.layers->ranges.size(), std::size_t(3));
        QCOMPARE(s.strategy.layers->ranges[1].first, 20);
        QCOMPARE(s.strategy.layers->ranges[1].last, 59);
        QCOMPARE(s.strategy.layers->recompute_of(19, Recompute::none), Recompute::none);
        QCOMPARE(s.strategy.layers->recompute_of(20, Recompute::none), Recompute::full);
        QCOMPARE(s.strategy.layers->recompute_of(59, Recompute::none), Recompute::full);
        QCOMPARE(s.strategy.layers->recompute_of(75, Recompute::selective), Recompute::selective);
        // Saved as read, and read back to the same ranges.
        const nlohmann::json saved = scenario_to_json(s);
        QCOMPARE(saved["strategy"]["layers"].dump(), layers.dump());
        const Scenario again = read(saved);
        QVERIFY(again.strategy.layers);
        QVERIFY(again.strategy.layers->ranges == s.strategy.layers->ranges);
    }

    void rejects_bad_ranges_data()
    {
        QTest::addColumn<QString>("layers");
        QTest::addColumn<QString>("key");
        QTest::addColumn<QString>("rule");
        QTest::newRow("past the last layer") << R"([{"range": [70, 80], "recompute": "full"}])"
                                             << "strategy.layers[0].range"
                                             << "must lie inside [0, 79]";
        QTest::newRow("negative") << R"([{"range": [-1, 3]}])"
                                  << "strategy.layers[0].range"
                                  << "must lie inside";
        QTest::newRow("reversed") << R"([{"range": [9, 3]}])"
                                  << "strategy.layers[0].range"
                                  << "first (9) must not exceed last (3)";
        QTest::newRow("not a pair") << R"([{"range": [3]}])"
                                    << "strategy.layers[0].range"
                                    << "[first, last]";
        QTest::newRow("overlap") << R"([{"range": [0, 10]}, {"range": [10, 20]}])"
                                 << "strategy.layers[1].range"
                                 << "overlaps strategy.layers[0]";
        QTest::newRow("no range") << R"([{"recompute": "full"}])"
                                  << "strategy.layers[0].range"
                                  << "missing";
        QTest::newRow("unknown key") << R"([{"range": [0, 1], "recompte": "full"}])"
                                     << "strategy.layers[0].recompte"
                                     << "";
        QTest::newRow("bad recompute") << R"([{"range": [0, 1], "recompute": "most"}])"
                                       << "strategy.layers[0].recompute"
                                       << "";
        QTest::newRow("tp not dividing heads") << R"([{"range": [0, 1], "tp": 3}])"
                                               << "strategy.layers[0].tp"
                                               << "64 attention heads";
        QTest::newRow("cp not dividing seq") << R"([{"range": [0, 1], "cp": 3}])"
                                             << "strategy.layers[0].cp"
                                             << "seq_len 8192";
        QTest::newRow("precision the GPU lacks") << R"([{"range": [0, 1], "precision": "fp4"}])"
                                                 << "strategy.layers[0].precision"
                                                 << "fp4";
        QTest::newRow("tp 4 splitting a one-sequence micro-batch") << R"([{"range": [0, 1], "tp": 4}])"
                                                                   << "strategy.layers[0].tp"
                                                                   << "must be whole (micro_batch is 1)";
        QTest::newRow("cp 4 over 16 GPUs of TP 8") << R"([{"range": [0, 1], "cp": 4}])"
                                                   << "strategy.layers[0].cp"
                                                   << "which must divide 16";
        QTest::newRow("fp32 among bf16 layers") << R"([{"range": [1, 78], "precision": "fp32"}])"
                                                << "strategy.layers[0].precision"
                                                << "cannot mix full-precision";
        QTest::newRow("not a list") << R"({"range": [0, 1]})"
                                    << "strategy.layers"
                                    << "must be a list";
    }

    void rejects_bad_ranges()
    {
        QFETCH(QString, layers);
        QFETCH(QString, key);
        QFETCH(QString, rule);
        const std::string err = error_of(scenario_json({ { "layers", nlohmann::json::parse(layers.toStdString()) } }));
        QVERIFY2(contains(err, "test.json: " + key.toStdString()), err.c_str());
        QVERIFY2(contains(err, rule.toStdString()), err.c_str());
    }

    void search_refuses_ranges()
    {
        const std::string err = error_of(
            scenario_json({ { "layers", nlohmann::json::parse(R"([{"range": [0, 9], "recompute": "full"}])") } }),
            ScenarioUse::search);
        QVERIFY2(contains(err, "test.json: strategy.layers: search and sweep"), err.c_str());
    }

    // Ranges that give every layer the plain value predict what the plain value does.
    void uniform_ranges_equal_plain_data()
    {
        QTest::addColumn<QString>("plain");
        QTest::addColumn<QString>("composite");
        QTest::addColumn<bool>("simulated");
        const char* none = R"({"recompute": "none"})";
        QTest::newRow("full") << R"({"recompute": "full"})"
                              << R"({"recompute": "none", "layers": [{"range": [0, 79], "recompute": "full"}]})"
                              << false;
        QTest::newRow("selective in three ranges")
            << R"({"recompute": "selective"})"
            << R"({"recompute": "full", "layers": [{"range": [0, 0], "recompute": "selective"},
                  {"range": [1, 40], "recompute": "selective"}, {"range": [41, 79], "recompute": "selective"}]})"
            << false;
        QTest::newRow("none, plain-valued overrides")
            << none << R"({"recompute": "none", "layers": [{"range": [0, 79], "tp": 8, "cp": 1, "precision": "bf16",
                  "offload_activations": false}]})"
            << false;
        QTest::newRow("interleaved full") << R"({"recompute": "full", "vpp": 2, "schedule": "interleaved"})"
                                          << R"({"recompute": "selective", "vpp": 2, "schedule": "interleaved",
                  "layers": [{"range": [0, 79], "recompute": "full"}]})"
                                          << false;
        QTest::newRow("offload activations") << R"({"offload_activations": true})"
                                             << R"({"layers": [{"range": [0, 39], "offload_activations": true},
                  {"range": [40, 79], "offload_activations": true}]})"
                                             << false;
        QTest::newRow("offload activations, simulated")
            << R"({"offload_activations": true})"
            << R"({"layers": [{"range": [0, 79], "offload_activations": true}]})" << true;
        QTest::newRow("full, simulated")
            << R"({"recompute": "full"})"
            << R"({"recompute": "none", "layers": [{"range": [0, 79], "recompute": "full"}]})" << true;
    }

    void uniform_ranges_equal_plain()
    {
        QFETCH(QString, plain);
        QFETCH(QString, composite);
        QFETCH(bool, simulated);
        const Scenario a = read(scenario_json(nlohmann::json::parse(plain.toStdString())));
        const Scenario b = read(scenario_json(nlohmann::json::parse(composite.toStdString())));
        QVERIFY(!a.strategy.layers);
        QVERIFY(b.strategy.layers);
        const Prediction pa = predict(a, simulated);
        const Prediction pb = predict(b, simulated);
        VERIFY_CLOSE(pa.step_time_s, pb.step_time_s);
        VERIFY_CLOSE(pa.peak_memory_bytes, pb.peak_memory_bytes);
        VERIFY_CLOSE(pa.mfu, pb.mfu);
        VERIFY_CLOSE(pa.hfu, pb.hfu);
        VERIFY_CLOSE(pa.power.avg_W_per_gpu, pb.power.avg_W_per_gpu);
        VERIFY_CLOSE(pa.power.peak_W_per_gpu, pb.power.peak_W_per_gpu);
        VERIFY_CLOSE(pa.power.energy_J_per_step, pb.power.energy_J_per_step);
        QCOMPARE(pa.stages.size(), pb.stages.size());
        for (std::size_t i = 0; i < pa.stages.size(); ++i) {
            VERIFY_CLOSE(pa.stages[i].memory.total(), pb.stages[i].memory.total());
            VERIFY_CLOSE(pa.stages[i].forward_s, pb.stages[i].forward_s);
            VERIFY_CLOSE(pa.stages[i].backward_s, pb.stages[i].backward_s);
        }
    }

    // Every layer in a range at one precision predicts what that precision as training.precision does.
    void uniform_precision_equals_plain_data()
    {
        QTest::addColumn<QString>("plain");
        QTest::addColumn<QString>("training");
        QTest::addColumn<QString>("range");
        QTest::addColumn<bool>("simulated");
        QTest::newRow("fp8 ranges on bf16 training") << "fp8"
                                                     << "bf16"
                                                     << "fp8" << false;
        QTest::newRow("bf16 ranges on fp8 training") << "bf16"
                                                     << "fp8"
                                                     << "bf16" << false;
        QTest::newRow("fp8 ranges, simulated") << "fp8"
                                               << "bf16"
                                               << "fp8" << true;
    }

    void uniform_precision_equals_plain()
    {
        QFETCH(QString, plain);
        QFETCH(QString, training);
        QFETCH(QString, range);
        QFETCH(bool, simulated);
        nlohmann::json a = scenario_json({ { "recompute", "selective" } });
        a["training"]["precision"] = plain.toStdString();
        nlohmann::json b = scenario_json({ { "recompute", "selective" },
            { "layers",
                { { { "range", { 0, 29 } }, { "precision", range.toStdString() } },
                    { { "range", { 30, 79 } }, { "precision", range.toStdString() } } } } });
        b["training"]["precision"] = training.toStdString();
        const Prediction pa = predict(read(a), simulated);
        const Prediction pb = predict(read(b), simulated);
        VERIFY_CLOSE(pa.step_time_s, pb.step_time_s);
        VERIFY_CLOSE(pa.peak_memory_bytes, pb.peak_memory_bytes);
        VERIFY_CLOSE(pa.mfu, pb.mfu);
        VERIFY_CLOSE(pa.hfu, pb.hfu);
        VERIFY_CLOSE(pa.power.avg_W_per_gpu, pb.power.avg_W_per_gpu);
        VERIFY_CLOSE(pa.power.energy_J_per_step, pb.power.energy_J_per_step);
        for (std::size_t i = 0; i < pa.stages.size(); ++i) {
            VERIFY_CLOSE(pa.stages[i].memory.weights, pb.stages[i].memory.weights);
            VERIFY_CLOSE(pa.stages[i].memory.total(), pb.stages[i].memory.total());
            VERIFY_CLOSE(pa.stages[i].forward_s, pb.stages[i].forward_s);
            VERIFY_CLOSE(pa.stages[i].backward_s, pb.stages[i].backward_s);
        }
    }

    // fp8 training with the first and last two layers in bf16 (NVIDIA's recipe for fp8 stability). Stages
    // 1 and 2 (layers 20-59, all fp8) cost what all-fp8's do; stage 0 (layers 0-19) costs all-fp8's stage 0
    // plus two layers' bf16-minus-fp8 time, a layer's being a twentieth of stage 1's (no embedding or loss
    // there; its pipeline sends cancel in the difference). Its weights are two layers' fp8 copies (1 B per
    // parameter of the 3 B an fp8 layer keeps) lighter.
    void fp8_with_bf16_edges()
    {
        auto at = [&](const char* precision, const nlohmann::json& layers) {
            nlohmann::json j = scenario_json({ { "recompute", "selective" } });
            j["training"]["precision"] = precision;
            if (!layers.is_null())
                j["strategy"]["layers"] = layers;
            return predict(read(j));
        };
        const Prediction p8 = at("fp8", nullptr), p16 = at("bf16", nullptr);
        const Prediction pm = at("fp8",
            nlohmann::json::parse(
                R"([{"range": [0, 1], "precision": "bf16"}, {"range": [78, 79], "precision": "bf16"}])"));
        for (int st : { 1, 2 }) {
            VERIFY_CLOSE(pm.stages[st].forward_s, p8.stages[st].forward_s);
            VERIFY_CLOSE(pm.stages[st].backward_s, p8.stages[st].backward_s);
            VERIFY_CLOSE(pm.stages[st].memory.total(), p8.stages[st].memory.total());
        }
        const double layer_fwd_gain = (p16.stages[1].forward_s - p8.stages[1].forward_s) / 20;
        const double layer_bwd_gain = (p16.stages[1].backward_s - p8.stages[1].backward_s) / 20;
        QVERIFY(layer_fwd_gain > 0 && layer_bwd_gain > 0);
        // fp8 GEMMs reach the power cap at the nominal clock, so a stage holding fp8 layers reads all its
        // layers' times through the clock curves; an unthrottled bf16 layer's curve agrees with its cost
        // model time to ~1e-8 (all-bf16's stages read the cost model directly).
        for (int st : { 0, 3 }) {
            QVERIFY(close(pm.stages[st].forward_s, p8.stages[st].forward_s + 2 * layer_fwd_gain, 1e-6));
            QVERIFY(close(pm.stages[st].backward_s, p8.stages[st].backward_s + 2 * layer_bwd_gain, 1e-6));
        }
        // Weights: a stage 1 layer keeps 3 B per parameter in fp8 (bf16 + the fp8 copy), 2 B in bf16.
        const double fp8_copy_per_layer = p8.stages[1].memory.weights / 20 / 3;
        VERIFY_CLOSE(p16.stages[1].memory.weights, 20 * 2 * fp8_copy_per_layer);
        // The embedding takes the first layer's precision, the output layer and final norm the last
        // layer's: they drop their fp8 copies too (Llama 3 70B: untied, vocab 128256, hidden 8192, TP 8).
        const double table_per_rank = 128256.0 * 8192 / 8;
        VERIFY_CLOSE(
            pm.stages[0].memory.weights, p8.stages[0].memory.weights - 2 * fp8_copy_per_layer - table_per_rank);
        VERIFY_CLOSE(
            pm.stages[3].memory.weights, p8.stages[3].memory.weights - 2 * fp8_copy_per_layer - table_per_rank - 8192);
        QVERIFY2(p8.step_time_s < pm.step_time_s && pm.step_time_s < p16.step_time_s,
            qPrintable(QStringLiteral("fp8 %1 s, mixed %2 s, bf16 %3 s")
                           .arg(p8.step_time_s)
                           .arg(pm.step_time_s)
                           .arg(p16.step_time_s)));
        // The documented example is this plan.
        const Scenario example = load_scenario_file(
            PARALLAX_SOURCE_DIR "/docs/examples/composite-fp8-bf16-edges.json", PresetCatalog::standard());
        VERIFY_CLOSE(predict(example).step_time_s, pm.step_time_s);
        QCOMPARE(strategy_label(example.strategy),
            std::string("TP 8 × PP 4 × CP 1 × DP 2, mb 1, 1f1b, ZeRO 1, selective recompute, layers 0-1 bf16, "
                        "layers 78-79 bf16, SP"));
        // MFU is taken against the rate the matmuls run at: between the two precisions' peaks.
        const double peak_m = pm.tflops_per_gpu / pm.mfu, peak_8 = p8.tflops_per_gpu / p8.mfu,
                     peak_16 = p16.tflops_per_gpu / p16.mfu;
        QVERIFY(peak_16 < peak_m && peak_m < peak_8);
    }

    // Full recompute on layers 20-59 (stages 1 and 2 of 4): those stages cost what the plain full plan's
    // do, stages 0 and 3 what the plain plan without recompute's do; the step and the peak lie between.
    void recompute_middle_half()
    {
        const Scenario none = read(scenario_json({ { "recompute", "none" } }));
        const Scenario full = read(scenario_json({ { "recompute", "full" } }));
        const Scenario mid = read(scenario_json(
            nlohmann::json::parse(R"({"recompute": "none", "layers": [{"range": [20, 59], "recompute": "full"}]})")));
        const Prediction pn = predict(none), pf = predict(full), pm = predict(mid);
        QCOMPARE(pm.stages.size(), std::size_t(4));
        for (int st = 0; st < 4; ++st) {
            const Prediction& same = st == 1 || st == 2 ? pf : pn;
            VERIFY_CLOSE(pm.stages[st].memory.activations, same.stages[st].memory.activations);
            VERIFY_CLOSE(pm.stages[st].memory.total(), same.stages[st].memory.total());
            VERIFY_CLOSE(pm.stages[st].forward_s, same.stages[st].forward_s);
            VERIFY_CLOSE(pm.stages[st].backward_s, same.stages[st].backward_s);
        }
        // The middle stages hold less than without recompute: the difference shows where the layers are.
        QVERIFY(pm.stages[1].memory.activations < pn.stages[1].memory.activations);
        QVERIFY(pm.stages[0].memory.activations > pf.stages[0].memory.activations);
        QVERIFY2(pn.step_time_s < pm.step_time_s && pm.step_time_s < pf.step_time_s,
            qPrintable(QStringLiteral("none %1 s, middle %2 s, full %3 s")
                           .arg(pn.step_time_s)
                           .arg(pm.step_time_s)
                           .arg(pf.step_time_s)));
        QVERIFY(pf.peak_memory_bytes < pm.peak_memory_bytes && pm.peak_memory_bytes <= pn.peak_memory_bytes);
        // Stage 0 holds the most micro-batches in flight and keeps its activations: it stays the peak.
        QCOMPARE(pm.peak_memory_stage, 0);
        VERIFY_CLOSE(pm.peak_memory_bytes, pn.stages[0].memory.total());
        // Hardware FLOPs: half of the layers re-run their forward; the model FLOPs per step do not change.
        const double executed_n = pn.hfu * pn.step_time_s, executed_m = pm.hfu * pm.step_time_s,
                     executed_f = pf.hfu * pf.step_time_s;
        QVERIFY(executed_n < executed_m && executed_m < executed_f);
        QVERIFY(close(pm.mfu * pm.step_time_s, pn.mfu * pn.step_time_s, 1e-12));
    }

    // Full recompute on stage 0's layers only: the stage that holds the most micro-batches in flight
    // drops to the all-full plan's stage 0, and the peak moves to stage 1 as the plain plan has it.
    void recompute_first_stage_moves_the_peak()
    {
        const Scenario none = read(scenario_json({ { "recompute", "none" } }));
        const Scenario full = read(scenario_json({ { "recompute", "full" } }));
        const Scenario first = read(scenario_json(
            nlohmann::json::parse(R"({"recompute": "none", "layers": [{"range": [0, 19], "recompute": "full"}]})")));
        const Prediction pn = predict(none), pf = predict(full), p1 = predict(first);
        VERIFY_CLOSE(p1.stages[0].memory.total(), pf.stages[0].memory.total());
        VERIFY_CLOSE(p1.stages[1].memory.total(), pn.stages[1].memory.total());
        QCOMPARE(p1.peak_memory_stage, 1);
        VERIFY_CLOSE(p1.peak_memory_bytes, pn.stages[1].memory.total());
        QCOMPARE(strategy_label(first.strategy),
            std::string("TP 8 × PP 4 × CP 1 × DP 2, mb 1, 1f1b, ZeRO 1, layers 0-19 full recompute, SP"));
    }

    // Activation offload on the first stage's 20 layers only (1F1B: 4 micro-batches in flight there): stage 0
    // keeps two layers' copy buffers instead of 4 x 20 layers' activations and pays the copies the host link
    // cannot hide; the other stages cost what the plain plan's do.
    void offload_first_stage_activations()
    {
        const Scenario none = read(scenario_json({ { "recompute", "selective" } }));
        const Scenario first = read(scenario_json(nlohmann::json::parse(
            R"({"recompute": "selective", "layers": [{"range": [0, 19], "offload_activations": true}]})")));
        const Prediction pn = predict(none), p1 = predict(first);
        const PlanContext ctx(none.model, none.training, none.cluster);
        EvaluationCache cache(ctx);
        const double act = cache.activations(none.strategy).dense; // one layer, one micro-batch
        VERIFY_CLOSE(pn.stages[0].memory.activations - p1.stages[0].memory.activations, (4 * 20 - 2) * act);
        for (int st = 1; st < 4; ++st) {
            VERIFY_CLOSE(p1.stages[st].memory.total(), pn.stages[st].memory.total());
            VERIFY_CLOSE(p1.stages[st].forward_s, pn.stages[st].forward_s);
        }
        QVERIFY(p1.stages[0].forward_s > pn.stages[0].forward_s); // PCIe cannot hide a layer's copy
        // Stage 0 is not the pipeline's slowest (the last holds the loss), but its longer passes lengthen
        // the fill and drain of 1F1B.
        QVERIFY(p1.step_time_s > pn.step_time_s);
        QCOMPARE(strategy_label(first.strategy),
            std::string("TP 8 × PP 4 × CP 1 × DP 2, mb 1, 1f1b, ZeRO 1, selective recompute, SP, layers 0-19 "
                        "activation offload"));
    }

    // A composite the plain menu cannot say: full recompute only where the memory is (a lighter first stage
    // and the first layers of the second), none elsewhere. Without recompute the plan does not fit; with
    // full recompute everywhere it fits but is slower than the composite, which fits too.
    void recompute_where_the_memory_is()
    {
        const Scenario composite = load_scenario_file(
            PARALLAX_SOURCE_DIR "/docs/examples/composite-recompute-first-stages.json", PresetCatalog::standard());
        Scenario none = composite;
        none.strategy.layers = nullptr;
        Scenario full = none;
        full.strategy.recompute = Recompute::full;
        const Prediction pc = predict(composite), pn = predict(none), pf = predict(full);
        QVERIFY(!pn.feasible);
        QVERIFY(pf.feasible);
        QVERIFY(pc.feasible);
        QVERIFY2(pc.step_time_s < 0.9 * pf.step_time_s,
            qPrintable(QStringLiteral("%1 vs %2").arg(pc.step_time_s).arg(pf.step_time_s)));
        // Stage 0 (17 layers, all recomputed) holds no more than full recompute's stage 0 with 20 layers.
        QVERIFY(pc.stages[0].memory.total() < pn.stages[0].memory.total());
        QVERIFY(pc.peak_memory_bytes < pc.capacity_bytes);
    }

    // Small experts at expert TP 1 under attention TP 2, EP folded wider, the all-to-all overlapped: each
    // step of the documented example's table is faster than the one before, and the overlap hides the
    // expert all-to-all.
    void expert_tp_one_with_overlap()
    {
        const Scenario best = load_scenario_file(
            PARALLAX_SOURCE_DIR "/docs/examples/composite-expert-tp1-overlap.json", PresetCatalog::standard());
        Scenario plain = best;
        plain.strategy.expert_tp = 0; // = tp
        plain.strategy.ep = 4;
        plain.strategy.ep_overlap = false;
        Scenario folded = best;
        folded.strategy.ep_overlap = false;
        const Prediction pp = predict(plain), pf = predict(folded), pb = predict(best);
        QVERIFY(pp.feasible && pf.feasible && pb.feasible);
        QVERIFY(pf.step_time_s < pp.step_time_s);
        QVERIFY(pb.step_time_s < pf.step_time_s);
        QVERIFY(pb.time.exposed_ep_s < 0.5 * pf.time.exposed_ep_s);
    }

    // Expert TP by range on Qwen3-30B-A3B (48 MoE layers, TP 2 × PP 2 × DP 4, EP 4): ranges at expert TP 1
    // covering every layer predict the plain expert TP 1 plan; expert TP 1 on stage 0's layers only (0-23)
    // gives stage 0 the expert TP 1 plan's times and memory (its expert GEMMs unsplit, no expert-TP
    // collective, its experts' weights and gradients twice as large per GPU and reduced over an expert-data-
    // parallel group twice as wide) and stage 1 the expert TP 2 plan's.
    void expert_tp_by_range()
    {
        auto qwen = [&](int expert_tp, const char* layers) {
            nlohmann::json j = nlohmann::json::parse(
                read_text(PARALLAX_SOURCE_DIR "/docs/examples/composite-expert-tp1-overlap.json"));
            j["strategy"]["ep"] = 4;
            j["strategy"]["ep_overlap"] = false;
            j["strategy"]["expert_tp"] = expert_tp;
            if (layers)
                j["strategy"]["layers"] = nlohmann::json::parse(layers);
            return read(j);
        };
        const Prediction p1 = predict(qwen(1, nullptr)), p2 = predict(qwen(2, nullptr));
        const Prediction all1 = predict(qwen(2, R"([{"range": [0, 47], "expert_tp": 1}])"));
        VERIFY_CLOSE(all1.step_time_s, p1.step_time_s);
        VERIFY_CLOSE(all1.peak_memory_bytes, p1.peak_memory_bytes);
        VERIFY_CLOSE(all1.power.energy_J_per_step, p1.power.energy_J_per_step);
        VERIFY_CLOSE(all1.communication_s.dp, p1.communication_s.dp);
        const Scenario half_plan = qwen(2, R"([{"range": [0, 23], "expert_tp": 1}])");
        QVERIFY(contains(strategy_label(half_plan.strategy), ", layers 0-23 expert TP 1"));
        const Prediction half = predict(half_plan);
        QCOMPARE(half.stages.size(), std::size_t(2));
        for (int st = 0; st < 2; ++st) {
            const Prediction& same = st == 0 ? p1 : p2;
            VERIFY_CLOSE(half.stages[st].forward_s, same.stages[st].forward_s);
            VERIFY_CLOSE(half.stages[st].backward_s, same.stages[st].backward_s);
            VERIFY_CLOSE(half.stages[st].memory.weights, same.stages[st].memory.weights);
            VERIFY_CLOSE(half.stages[st].memory.gradients, same.stages[st].memory.gradients);
            VERIFY_CLOSE(half.stages[st].memory.optimizer, same.stages[st].memory.optimizer);
            VERIFY_CLOSE(half.stages[st].memory.activations, same.stages[st].memory.activations);
        }
        // The distributed optimizer shards each expert over tp·dp/(expert_tp·ep) ranks: the optimizer
        // states per GPU do not depend on the expert TP; the weights do.
        VERIFY_CLOSE(p1.stages[0].memory.optimizer, p2.stages[0].memory.optimizer);
        QVERIFY(p1.stages[0].memory.weights > p2.stages[0].memory.weights);
        // Under ZeRO-3 a range's own expert TP is refused, naming the key and the rule.
        nlohmann::json z = scenario_to_json(qwen(2, R"([{"range": [0, 23], "expert_tp": 1}])"));
        z["strategy"]["zero"] = 3;
        const std::string err = error_of(z);
        QVERIFY2(contains(err, "test.json: strategy.layers[0].expert_tp") && contains(err, "zero 3"), err.c_str());
    }

    // The documented example runs under `predict`, text and JSON; search refuses it with exit 2.
    void cli_predicts_example()
    {
        const QString example = QStringLiteral(PARALLAX_SOURCE_DIR "/docs/examples/composite-recompute-middle.json");
        QProcess p;
        p.start(QStringLiteral(PARALLAX_CLI_PATH), { QStringLiteral("predict"), example, QStringLiteral("--json") });
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 0);
        const nlohmann::json out = nlohmann::json::parse(p.readAllStandardOutput().toStdString());
        QVERIFY(out["step_time_s"].get<double>() > 0);
        p.start(QStringLiteral(PARALLAX_CLI_PATH), { QStringLiteral("predict"), example });
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 0);
        const double analytic_s = out["step_time_s"].get<double>();
        p.start(QStringLiteral(PARALLAX_CLI_PATH),
            { QStringLiteral("predict"), example, QStringLiteral("--json"), QStringLiteral("--fidelity"),
                QStringLiteral("simulated") });
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 0);
        const double simulated_s
            = nlohmann::json::parse(p.readAllStandardOutput().toStdString())["step_time_s"].get<double>();
        // The simulator runs the same per-chunk costs; the closed form leaves out send placement.
        QVERIFY2(std::fabs(analytic_s - simulated_s) <= 0.02 * simulated_s,
            qPrintable(QStringLiteral("analytic %1 s, simulated %2 s").arg(analytic_s).arg(simulated_s)));
        QTemporaryDir dir;
        p.start(QStringLiteral(PARALLAX_CLI_PATH),
            { QStringLiteral("timeline"), example, QStringLiteral("--out"), dir.filePath(QStringLiteral("t.json")) });
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 0);
        QVERIFY(QFileInfo(dir.filePath(QStringLiteral("t.json"))).size() > 0);
        p.start(QStringLiteral(PARALLAX_CLI_PATH), { QStringLiteral("search"), example });
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 2);
        QVERIFY(p.readAllStandardError().contains("strategy.layers"));
    }
};

QTEST_GUILESS_MAIN(TestCompositeStrategy)
#include "tst_composite_strategy.moc"

// A serving deployment as the engine's launch script (core/io/export/serving_launch.hpp): the degrees and
// the engine limits the prediction assumed appear as the engine's own flags; replicas and disaggregated
// workers get their own GPUs and ports, node by node; the script is valid bash; the CLI writes it and
// refuses a training format for a serving scenario, naming the key.
#include "io/export/serving_launch.hpp"
#include "io/preset_catalog.hpp"
#include "io/serving_io.hpp"
#include "serving/engine_traits.hpp"

#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

using namespace parallax;
using nlohmann::json;

namespace {

json base()
{
    return json::parse(R"({
      "schema": 1, "model": "llama3-70b",
      "cluster": { "gpu": "H100-SXM5-80GB", "nodes": 2, "gpus_per_node": 8,
                   "intra_node": "nvlink4-nvswitch", "inter_node": "ib-ndr" },
      "serving": { "precision": { "weights": "fp8", "kv_cache": "fp8" },
                   "workload": { "isl": 2048, "osl": 256, "concurrency": 64 } },
      "deployment": { "tp": 4 } })");
}

ServingScenario parse(const json& j)
{
    return parse_serving_scenario(j, "test.json", PresetCatalog::standard());
}

std::string script(const json& j, ServingEngine e)
{
    return export_serving_launch(parse(j), e).files.front().content;
}

bool has(const std::string& text, const std::string& part)
{
    return text.find(part) != std::string::npos;
}

int count(const std::string& text, const std::string& part)
{
    int n = 0;
    for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1))
        ++n;
    return n;
}

} // namespace

class TestServingExport : public QObject {
    Q_OBJECT
private slots:
    void vllmCarriesTheModelledLimits();
    void replicasGetTheirOwnGpusAndPorts();
    void moeDegreesPerEngine();
    void disaggregatedWorkers();
    void scriptIsValidBash();
    void cliExportsAndRefusesTrainingFormats();
};

void TestServingExport::vllmCarriesTheModelledLimits()
{
    const std::string sh = script(base(), ServingEngine::vllm);
    const EngineTraits t = engine_traits(ServingEngine::vllm, InstanceLayout { 4, 1, 1, 1 }, parse(base()).cluster.gpu);
    QVERIFY(has(sh, "--tensor-parallel-size 4"));
    QVERIFY(has(sh, "--max-num-seqs " + std::to_string(t.max_running_requests)));
    QVERIFY(has(sh, "--max-num-batched-tokens " + std::to_string(t.max_batched_tokens)));
    QVERIFY(has(sh, "--gpu-memory-utilization 0.90"));
    QVERIFY(has(sh, "--max-model-len 2304")); // isl + osl
    QVERIFY(has(sh, "--kv-cache-dtype fp8"));
    QVERIFY(has(sh, "MODEL=\"${MODEL:-meta-llama/Meta-Llama-3-70B-Instruct}\""));
    const LaunchConfig c = export_serving_launch(parse(base()), ServingEngine::vllm);
    QVERIFY(std::any_of(c.notes.begin(), c.notes.end(), [](const auto& n) { return has(n, "quantised to fp8"); }));
}

void TestServingExport::replicasGetTheirOwnGpusAndPorts()
{
    // 16 GPUs, TP 4: four replicas, two per node, on GPUs 0-3 and 4-7, ports 8000 and 8001 on each node.
    const std::string sh = script(base(), ServingEngine::vllm);
    QCOMPARE(count(sh, "start replica"), 4);
    QCOMPARE(count(sh, "start replica 0 4"), 2);
    QCOMPARE(count(sh, "start replica 4 4"), 2);
    QCOMPARE(count(sh, "--port 8000"), 2);
    QCOMPARE(count(sh, "--port 8001"), 2);
    QVERIFY(has(sh, "\n0)\n") && has(sh, "\n1)\n"));
    // Three replicas of TP 4 leave the second node half used.
    json j = base();
    j["deployment"]["replicas"] = 3;
    QCOMPARE(count(script(j, ServingEngine::vllm), "start replica"), 3);
}

void TestServingExport::moeDegreesPerEngine()
{
    json j = base();
    j["model"] = "deepseek-v3";
    j["cluster"]["gpu"] = "H200-SXM-141GB";
    j["cluster"]["nodes"] = 1;
    j["deployment"] = { { "tp", 1 }, { "attention_dp", 8 }, { "ep", 8 } };
    const std::string sglang = script(j, ServingEngine::sglang);
    QVERIFY(has(sglang, "--tp-size 8")); // SGLang counts every GPU of the instance
    QVERIFY(has(sglang, "--dp-size 8"));
    QVERIFY(has(sglang, "--enable-dp-attention"));
    QVERIFY(has(sglang, "--ep-size 8"));
    QVERIFY(has(sglang, "--kv-cache-dtype fp8_e4m3"));
    // SGLang divides its chunk and its running limit among the DP-attention ranks, so it gets the instance's:
    // the 8,192-token chunk it picks on an H200 (1,024 a rank) and 4,096 requests a rank.
    QVERIFY(has(sglang, "--chunked-prefill-size 8192 "));
    QVERIFY(has(sglang, "--max-running-requests 32768 "));
    const std::string vllm = script(j, ServingEngine::vllm);
    QVERIFY(has(vllm, "--data-parallel-size 8") && has(vllm, "--enable-expert-parallel"));
    const LaunchConfig trt = export_serving_launch(parse(j), ServingEngine::trtllm);
    QVERIFY(has(trt.files.front().content, "--tp_size 8") && has(trt.files.front().content, "--ep_size 8"));
    QVERIFY(has(trt.files.front().content, "--max_num_tokens 8192 ")); // each rank's own budget
    QCOMPARE(trt.files.size(), std::size_t(2));
    QVERIFY(has(trt.files[1].content, "enable_attention_dp: true"));
    QVERIFY(has(trt.files[1].content, "dtype: fp8"));
    // The all-to-all exchange (the default) runs on DeepEP: vLLM's and SGLang's flags, and a note to install it;
    // TensorRT-LLM keeps gathering at EP 8 = DeepSeek's top 8 and says so.
    QVERIFY(has(vllm, "--all2all-backend deepep_low_latency"));
    QVERIFY(has(sglang, "--moe-a2a-backend deepep") && has(sglang, "--deepep-mode auto"));
    const LaunchConfig v8 = export_serving_launch(parse(j), ServingEngine::vllm);
    QVERIFY(std::any_of(v8.notes.begin(), v8.notes.end(), [](const auto& n) { return has(n, "DeepEP"); }));
    QVERIFY(!has(trt.files.front().content, "TRTLLM_CAN_USE_DEEP_EP"));
    QVERIFY(std::any_of(trt.notes.begin(), trt.notes.end(), [](const auto& n) { return has(n, "it gathers"); }));
    // At EP 16 over two nodes TensorRT-LLM needs DeepEP switched on; the stock gather needs no flag anywhere.
    json wide = j;
    wide["cluster"]["nodes"] = 2;
    wide["deployment"] = { { "tp", 1 }, { "attention_dp", 16 }, { "ep", 16 } };
    QVERIFY(has(export_serving_launch(parse(wide), ServingEngine::trtllm).files.front().content,
        "env TRTLLM_CAN_USE_DEEP_EP=1 trtllm-serve"));
    wide["deployment"]["moe_exchange"] = "gather";
    for (ServingEngine e : { ServingEngine::vllm, ServingEngine::sglang, ServingEngine::trtllm }) {
        const std::string text = export_serving_launch(parse(wide), e).files.front().content;
        QVERIFY(!has(text, "deepep") && !has(text, "DEEP_EP"));
    }
    // vLLM's EP always spans tp x dp: a smaller ep is said, not silently changed.
    j["deployment"]["ep"] = 4;
    const LaunchConfig v = export_serving_launch(parse(j), ServingEngine::vllm);
    QVERIFY(std::any_of(v.notes.begin(), v.notes.end(), [](const auto& n) { return has(n, "not expressible"); }));
}

void TestServingExport::disaggregatedWorkers()
{
    json j = base();
    j["deployment"] = { { "disaggregated",
        { { "prefill", { { "tp", 2 }, { "workers", 2 } } }, { "decode", { { "tp", 4 }, { "workers", 3 } } } } } };
    const std::string sh = script(j, ServingEngine::sglang);
    QCOMPARE(count(sh, "start prefill"), 2);
    QCOMPARE(count(sh, "start decode"), 3);
    QCOMPARE(count(sh, "--disaggregation-mode prefill"), 2);
    QCOMPARE(count(sh, "--disaggregation-mode decode"), 3);
    // Prefill on GPUs 0-1 and 2-3, decode on 4-7 of node 0, then 0-3 and 4-7 of node 1.
    QVERIFY(has(sh, "start prefill 0 2") && has(sh, "start prefill 2 2") && has(sh, "start decode 4 4"));
    QCOMPARE(count(sh, "start decode 0 4"), 1);
    const LaunchConfig trt = export_serving_launch(parse(j), ServingEngine::trtllm);
    QCOMPARE(trt.files.size(), std::size_t(3)); // serve.sh and one options file per role
    QVERIFY(has(trt.files[1].content, "cache_transceiver_config"));
    const LaunchConfig v = export_serving_launch(parse(j), ServingEngine::vllm);
    QVERIFY(has(v.files.front().content, "NixlConnector"));
    QVERIFY(std::any_of(v.notes.begin(), v.notes.end(), [](const auto& n) { return has(n, "router"); }));
}

void TestServingExport::scriptIsValidBash()
{
    for (ServingEngine e : { ServingEngine::vllm, ServingEngine::sglang, ServingEngine::trtllm }) {
        QProcess bash;
        bash.start(QStringLiteral("bash"), { QStringLiteral("-n") });
        bash.write(QByteArray::fromStdString(script(base(), e)));
        bash.closeWriteChannel();
        QVERIFY(bash.waitForFinished(10000));
        QVERIFY2(bash.exitCode() == 0, bash.readAllStandardError().constData());
    }
}

void TestServingExport::cliExportsAndRefusesTrainingFormats()
{
    QTemporaryDir dir;
    const QString example = QStringLiteral(PARALLAX_SOURCE_DIR "/docs/examples/serving-deepseek-v3-h200.json");
    QProcess p;
    p.start(QStringLiteral(PARALLAX_CLI_PATH),
        { QStringLiteral("export"), example, QStringLiteral("--format"), QStringLiteral("trtllm"),
            QStringLiteral("--out"), dir.path() + QStringLiteral("/") });
    QVERIFY(p.waitForFinished(30000));
    QCOMPARE(p.exitCode(), 0);
    QVERIFY(QFile::exists(dir.filePath(QStringLiteral("serve.sh"))));
    QVERIFY(QFile::exists(dir.filePath(QStringLiteral("llm-api-options.yaml"))));
    QVERIFY(QFileInfo(dir.filePath(QStringLiteral("serve.sh"))).isExecutable());
    p.start(QStringLiteral(PARALLAX_CLI_PATH),
        { QStringLiteral("export"), example, QStringLiteral("--format"), QStringLiteral("megatron") });
    QVERIFY(p.waitForFinished(30000));
    QCOMPARE(p.exitCode(), 2);
    const QString err = QString::fromUtf8(p.readAllStandardError());
    QVERIFY2(err.contains(QStringLiteral("--format")) && err.contains(QStringLiteral("vllm, sglang or trtllm")),
        qPrintable(err));
}

QTEST_GUILESS_MAIN(TestServingExport)
#include "tst_serving_export.moc"

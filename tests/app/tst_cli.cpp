// parallax-cli as a user runs it (docs/cli.md): exit codes, the keys and JSON types of
// `predict --json`, `presets` and `validate --json`, and bad input reported on stderr with the file
// and the key. No assertions on model numbers (they are being tuned), only on structure.
#include "cli_process.hpp"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>

namespace {

using Run = parallax::test::CliRun;

const QStringList kGpuNames = { QStringLiteral("A100-PCIe-40GB"), QStringLiteral("A100-PCIe-80GB"),
    QStringLiteral("A100-SXM4-40GB"), QStringLiteral("A100-SXM4-80GB"), QStringLiteral("B200"), QStringLiteral("B300"),
    QStringLiteral("GB200"), QStringLiteral("GB300"), QStringLiteral("GH200-96GB"), QStringLiteral("H100-SXM5-80GB"),
    QStringLiteral("H200-SXM-141GB"), QStringLiteral("H800-SXM5-80GB"), QStringLiteral("L40S"),
    QStringLiteral("MI250X"), QStringLiteral("MI300X"), QStringLiteral("RTX-2080"), QStringLiteral("RTX-2080-Ti"),
    QStringLiteral("RTX-3080-Ti"), QStringLiteral("RTX-3090"), QStringLiteral("RTX-4090"),
    QStringLiteral("RTX-PRO-6000-Blackwell-Server"), QStringLiteral("T4"), QStringLiteral("Titan-RTX"),
    QStringLiteral("V100-SXM2-16GB"), QStringLiteral("V100-SXM2-32GB") };

const QStringList kPresetKinds = { QStringLiteral("clusters"), QStringLiteral("fabrics"), QStringLiteral("gpus"),
    QStringLiteral("models"), QStringLiteral("scenarios") };

const char* const kValidScenario = R"({
  "schema": 1,
  "model": "llama3-8b",
  "cluster": { "gpu": "H100-SXM5-80GB", "nodes": 2, "gpus_per_node": 8,
               "intra_node": "nvlink4-nvswitch", "inter_node": "ib-ndr" },
  "training": { "global_batch": 64, "seq_len": 4096, "precision": "bf16" },
  "strategy": { "tp": 2, "pp": 2, "dp": 4, "micro_batch": 1, "sequence_parallel": true,
                "recompute": "selective", "zero": 1 }
})";

// Inline model (MoE) and inline hardware, so nothing depends on presets.
const char* const kInlineScenario = R"({
  "schema": 1,
  "model": { "name": "mini-moe", "layers": 8, "hidden": 1024, "heads": 16, "kv_heads": 4, "ffn_hidden": 4096,
             "vocab": 32000, "ffn_act": "swiglu", "tied_embeddings": false,
             "moe": { "experts": 8, "top_k": 2, "expert_ffn_hidden": 1024 } },
  "cluster": { "gpu": { "name": "TestGPU", "peak_TFLOPs": { "bf16": 800 }, "memory_GiB": 80,
                        "memory_bw_GBps": 3000, "tdp_W": 700, "idle_W": 70 },
               "nodes": 1, "gpus_per_node": 8,
               "intra_node": { "bw_GBps": 450, "latency_us": 3 }, "inter_node": { "bw_GBps": 50, "latency_us": 8 } },
  "training": { "global_batch": 32, "seq_len": 2048 },
  "strategy": { "tp": 2, "pp": 1, "ep": 4 }
})";

// A trillion parameters on one node: out of memory whatever the model's constants are.
const char* const kInfeasibleScenario = R"({
  "schema": 1,
  "model": "megatron-1t",
  "cluster": { "gpu": "H100-SXM5-80GB", "nodes": 1, "gpus_per_node": 8,
               "intra_node": "nvlink4-nvswitch", "inter_node": "ib-ndr" },
  "training": { "global_batch": 8, "seq_len": 2048 },
  "strategy": { "tp": 8 }
})";

const QByteArray kUserGpu = R"({ "name": "MyLab-GPU", "architecture": "hopper", "peak_TFLOPs": { "bf16": 500 },
  "memory_GiB": 48, "memory_bw_GBps": 2000, "tdp_W": 450, "idle_W": 40 })";

// The current data row as a file name ("tp is a string" -> "tp_is_a_string.json").
QString tagFileName()
{
    QString tag = QString::fromLatin1(QTest::currentDataTag());
    tag.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9]+")), QStringLiteral("_"));
    return tag + QStringLiteral(".json");
}

} // namespace

class TestCli : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void version();
    void help();
    void commandHelp_data();
    void commandHelp();
    void noArguments();
    void unknownCommand();
    void presetNamesMatchFolder();
    void predictPreset_data();
    void predictPreset();
    void predictFile_data();
    void predictFile();
    void predictTable();
    void predictInfeasible();
    void predictBadFile_data();
    void predictBadFile();
    void predictMissingFile();
    void predictBadArguments_data();
    void predictBadArguments();
    void presetsText();
    void presetsKind();
    void presetsBogusKind();
    void presetsJson();
    void userPresetsFromEnvironment();
    void validateJson();
    void validateText();
    void validatePredictsAsPredictDoes();
    void validateServingCsvAndScenarios();
    void validateBadInput_data();
    void validateBadInput();
    void predictPowerKeys();
    void predictGoodputOnlyWithReliability();
    void searchRanksByGoodputWithReliability();
    void clocksPlansUnbalancedStages();
    void clocksBadInput_data();
    void clocksBadInput();
    void searchEnergyAndPowerBudget();
    void searchIgnoresAnUnfitExampleStrategy();
    void searchAnyFrameworkLabels();
    void searchMixedCluster();
    void exportFormats();
    void exportRefusesWhatTheFrameworkCannotRun();
    void exportMixedPlans();
    void exportKeepsFilesThatNameEachOtherTogether();
    void errorBands();

private:
    Run run(const QStringList& args, const QProcessEnvironment& env = {}) const;
    QString writeFile(const QString& name, const QByteArray& bytes) const;
    static void checkPrediction(const QByteArray& json, int code);

    QTemporaryDir m_dir;
    QProcessEnvironment m_env;
};

Run TestCli::run(const QStringList& args, const QProcessEnvironment& env) const
{
    return parallax::test::run_cli(args, env.isEmpty() ? m_env : env);
}

QString TestCli::writeFile(const QString& name, const QByteArray& bytes) const
{
    return parallax::test::write_test_file(m_dir.path(), name, bytes);
}

void TestCli::initTestCase()
{
    QVERIFY(m_dir.isValid());
    QVERIFY(QFileInfo(QStringLiteral(PARALLAX_CLI_PATH)).isExecutable());
    // No user presets from the machine running the tests.
    QDir(m_dir.path()).mkpath(QStringLiteral("empty-presets"));
    QDir(m_dir.path()).mkpath(QStringLiteral("empty-config"));
    m_env = QProcessEnvironment::systemEnvironment();
    m_env.insert(QStringLiteral("PARALLAX_PRESET_PATH"), QDir(m_dir.path()).filePath(QStringLiteral("empty-presets")));
    m_env.insert(QStringLiteral("XDG_CONFIG_HOME"), QDir(m_dir.path()).filePath(QStringLiteral("empty-config")));
}

void TestCli::version()
{
    const Run r = run({ QStringLiteral("--version") });
    QVERIFY(!r.crashed);
    QCOMPARE(r.code, 0);
    const QString out = QString::fromUtf8(r.out).trimmed();
    QVERIFY2(
        QRegularExpression(QStringLiteral("^parallax-cli \\d+\\.\\d+\\.\\d+$")).match(out).hasMatch(), qPrintable(out));
}

void TestCli::help()
{
    const Run r = run({ QStringLiteral("--help") });
    QVERIFY(!r.crashed);
    QCOMPARE(r.code, 0);
    const QString out = QString::fromUtf8(r.out);
    for (const char* word : { "predict", "presets", "validate", "--json", "--fidelity" })
        QVERIFY2(out.contains(QLatin1String(word)), word);
}

void TestCli::commandHelp_data()
{
    QTest::addColumn<QString>("command");
    QTest::addColumn<QString>("mentions");
    QTest::newRow("predict") << QStringLiteral("predict") << QStringLiteral("--fidelity");
    QTest::newRow("presets") << QStringLiteral("presets") << QStringLiteral("--json");
    QTest::newRow("validate") << QStringLiteral("validate") << QStringLiteral("--json");
    QTest::newRow("clocks") << QStringLiteral("clocks") << QStringLiteral("--max-slowdown");
    QTest::newRow("search") << QStringLiteral("search") << QStringLiteral("--power-budget-kW");
    QTest::newRow("error-bands") << QStringLiteral("error-bands") << QStringLiteral("--out");
    QTest::newRow("search frameworks") << QStringLiteral("search") << QStringLiteral("--any-framework");
    QTest::newRow("export") << QStringLiteral("export") << QStringLiteral("--format");
}

void TestCli::commandHelp()
{
    QFETCH(QString, command);
    QFETCH(QString, mentions);
    const Run r = run({ command, QStringLiteral("--help") });
    QVERIFY(!r.crashed);
    QCOMPARE(r.code, 0);
    QVERIFY2(QString::fromUtf8(r.out).contains(mentions), r.out.constData());
}

void TestCli::noArguments()
{
    const Run r = run({});
    QVERIFY(!r.crashed);
    QCOMPARE(r.code, 2);
    QVERIFY(r.out.isEmpty());
    QVERIFY2(QString::fromUtf8(r.err).contains(QStringLiteral("usage"), Qt::CaseInsensitive), r.err.constData());
}

void TestCli::unknownCommand()
{
    const Run r = run({ QStringLiteral("frobnicate"), QStringLiteral("x.json") });
    QVERIFY(!r.crashed);
    QCOMPARE(r.code, 2);
    QVERIFY(r.out.isEmpty());
    QVERIFY2(QString::fromUtf8(r.err).contains(QStringLiteral("frobnicate")), r.err.constData());
}

void TestCli::presetNamesMatchFolder()
{
    // `presets scenarios --json` lists exactly the files of presets/scenarios (no user presets here).
    const Run r = run({ QStringLiteral("presets"), QStringLiteral("scenarios"), QStringLiteral("--json") });
    QVERIFY(!r.crashed);
    QCOMPARE(r.code, 0);
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(r.out, &error);
    QVERIFY2(doc.isObject(), qPrintable(error.errorString()));
    QStringList listed;
    for (const auto& v : doc.object().value(QStringLiteral("scenarios")).toArray())
        listed << v.toObject().value(QStringLiteral("name")).toString();
    QStringList files;
    for (const auto& f : QDir(QStringLiteral(PARALLAX_SOURCE_DIR "/presets/scenarios"))
                             .entryInfoList({ QStringLiteral("*.json") }, QDir::Files, QDir::Name))
        files << f.completeBaseName();
    listed.sort();
    QVERIFY(files.contains(QStringLiteral("default")));
    QCOMPARE(listed, files);
}

void TestCli::checkPrediction(const QByteArray& json, int code)
{
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &error);
    QVERIFY2(
        doc.isObject(), qPrintable(error.errorString() + QStringLiteral(": ") + QString::fromUtf8(json.left(300))));
    const QJsonObject o = doc.object();
    const auto number = [](const QJsonObject& obj, const char* key) {
        const QJsonValue v = obj.value(QLatin1String(key));
        QVERIFY2(v.isDouble(), key);
    };
    QVERIFY(o.value(QStringLiteral("schema")).isDouble());
    QCOMPARE(o.value(QStringLiteral("schema")).toInt(), 1);
    QVERIFY(o.value(QStringLiteral("feasible")).isBool());
    for (const char* key : { "step_time_s", "tokens_per_s", "tflops_per_gpu", "mfu", "bubble_fraction" })
        number(o, key);
    QVERIFY(o.value(QStringLiteral("memory")).isObject());
    const QJsonObject memory = o.value(QStringLiteral("memory")).toObject();
    number(memory, "peak_GiB");
    number(memory, "capacity_GiB");
    QVERIFY(memory.value(QStringLiteral("breakdown_GiB")).isObject());
    const QJsonObject breakdown = memory.value(QStringLiteral("breakdown_GiB")).toObject();
    for (const char* key : { "weights", "gradients", "optimizer", "activations", "other" })
        number(breakdown, key);
    const QJsonObject host = memory.value(QStringLiteral("host")).toObject();
    for (const char* key : { "per_gpu_GiB", "per_node_GiB", "capacity_per_node_GiB" })
        number(host, key);
    QVERIFY(host.value(QStringLiteral("capacity_per_node_GiB")).toDouble() > 0);
    QVERIFY(o.value(QStringLiteral("communication_s")).isObject());
    const QJsonObject comm = o.value(QStringLiteral("communication_s")).toObject();
    for (const char* key : { "tp", "pp", "dp", "cp", "ep", "exposed" })
        number(comm, key);
    // The error band (docs/cli.md): [lo, hi] around tokens/s at level 0.8.
    QCOMPARE(o.value(QStringLiteral("interval_level")).toDouble(), 0.8);
    const QJsonArray band = o.value(QStringLiteral("tokens_per_s_interval")).toArray();
    QCOMPARE(band.size(), 2);
    QVERIFY(band[0].toDouble() <= o.value(QStringLiteral("tokens_per_s")).toDouble());
    QVERIFY(band[1].toDouble() >= o.value(QStringLiteral("tokens_per_s")).toDouble());
    QVERIFY(band[0].toDouble() > 0);
    QVERIFY(o.value(QStringLiteral("power")).isObject());
    const QJsonObject power = o.value(QStringLiteral("power")).toObject();
    for (const char* key : { "avg_W_per_gpu", "peak_W_per_gpu", "energy_J_per_token" })
        number(power, key);
    QVERIFY(o.value(QStringLiteral("warnings")).isArray());
    for (const auto& w : o.value(QStringLiteral("warnings")).toArray())
        QVERIFY(w.isString() && !w.toString().isEmpty());

    // Exit code and the "feasible" flag agree (0 feasible, 3 infeasible).
    const bool feasible = o.value(QStringLiteral("feasible")).toBool();
    QCOMPARE(code, feasible ? 0 : 3);
    if (feasible) {
        QVERIFY2(o.value(QStringLiteral("tokens_per_s")).toDouble() > 0, json.left(400).constData());
        QVERIFY2(o.value(QStringLiteral("step_time_s")).toDouble() > 0, json.left(400).constData());
    } else {
        // "The JSON still says why."
        QVERIFY2(!o.value(QStringLiteral("warnings")).toArray().isEmpty()
                || !o.value(QStringLiteral("infeasible_reason")).toString().isEmpty(),
            json.left(400).constData());
    }
}

void TestCli::predictPreset_data()
{
    QTest::addColumn<QString>("argument");
    const QString dir = QStringLiteral(PARALLAX_SOURCE_DIR "/presets/scenarios");
    const auto files = QDir(dir).entryInfoList({ QStringLiteral("*.json") }, QDir::Files, QDir::Name);
    QVERIFY(files.size() >= 5);
    for (const auto& f : files) {
        QTest::newRow(qPrintable(QStringLiteral("name ") + f.completeBaseName())) << f.completeBaseName();
        QTest::newRow(qPrintable(QStringLiteral("file ") + f.fileName())) << f.absoluteFilePath();
    }
}

void TestCli::predictPreset()
{
    QFETCH(QString, argument);
    const Run r = run({ QStringLiteral("predict"), argument, QStringLiteral("--json") });
    QVERIFY(!r.crashed);
    QVERIFY2(r.code == 0 || r.code == 3, r.err.constData());
    checkPrediction(r.out, r.code);
}

void TestCli::predictFile_data()
{
    QTest::addColumn<QByteArray>("content");
    QTest::newRow("presets by name") << QByteArray(kValidScenario);
    QTest::newRow("inline model and hardware") << QByteArray(kInlineScenario);
}

void TestCli::predictFile()
{
    QFETCH(QByteArray, content);
    // A path with a space and non-ASCII characters.
    const QString path = writeFile(QStringLiteral("my plans/plan é.json"), content);
    const Run r = run({ QStringLiteral("predict"), path, QStringLiteral("--json"), QStringLiteral("--fidelity"),
        QStringLiteral("analytic") });
    QVERIFY(!r.crashed);
    QVERIFY2(r.code == 0 || r.code == 3, r.err.constData());
    checkPrediction(r.out, r.code);
    if (QTest::currentTestFailed())
        return;
    // Option before the argument works too.
    const Run r2 = run({ QStringLiteral("predict"), QStringLiteral("--json"), path });
    QCOMPARE(r2.code, r.code);
    QCOMPARE(r2.out, r.out);
}

void TestCli::predictTable()
{
    const QString path = writeFile(QStringLiteral("table.json"), kValidScenario);
    const Run r = run({ QStringLiteral("predict"), path });
    QVERIFY(!r.crashed);
    QVERIFY2(r.code == 0 || r.code == 3, r.err.constData());
    QVERIFY(!r.out.trimmed().isEmpty());
    // The human-readable table is not the JSON.
    QVERIFY(!QJsonDocument::fromJson(r.out).isObject());
}

void TestCli::predictInfeasible()
{
    const QString path = writeFile(QStringLiteral("huge.json"), kInfeasibleScenario);
    const Run r = run({ QStringLiteral("predict"), path, QStringLiteral("--json") });
    QVERIFY(!r.crashed);
    QCOMPARE(r.code, 3);
    checkPrediction(r.out, r.code);
    QCOMPARE(QJsonDocument::fromJson(r.out).object().value(QStringLiteral("feasible")).toBool(true), false);
    // Without --json as well.
    const Run t = run({ QStringLiteral("predict"), path });
    QCOMPARE(t.code, 3);
    QVERIFY(!t.out.trimmed().isEmpty());
}

void TestCli::predictBadFile_data()
{
    QTest::addColumn<QByteArray>("content");
    QTest::addColumn<QString>("key");
    QTest::addColumn<QString>("rule");
    const QByteArray valid(kValidScenario);
    QTest::newRow("malformed JSON") << valid.left(valid.size() - 5) << QString() << QStringLiteral("line");
    QTest::newRow("empty file") << QByteArray() << QString() << QStringLiteral("JSON");
    QTest::newRow("not an object") << QByteArray("[1, 2, 3]") << QStringLiteral("(top level)")
                                   << QStringLiteral("object");
    QTest::newRow("tp is a string") << QByteArray(valid).replace("\"tp\": 2", "\"tp\": \"2\"")
                                    << QStringLiteral("strategy.tp") << QStringLiteral("integer");
    QTest::newRow("tp 0") << QByteArray(valid).replace("\"tp\": 2", "\"tp\": 0") << QStringLiteral("strategy.tp")
                          << QStringLiteral("integer");
    QTest::newRow("huge dp") << QByteArray(valid).replace("\"dp\": 4", "\"dp\": 1e30") << QStringLiteral("strategy.dp")
                             << QStringLiteral("integer");
    // Beyond the range of a double: bad input (exit 2), not an internal error (exit 1).
    QTest::newRow("tp 1e400") << QByteArray(valid).replace("\"tp\": 2", "\"tp\": 1e400") << QString() << QString();
    QTest::newRow("unknown key") << QByteArray(valid).replace("\"zero\": 1", "\"zero\": 1, \"zreo\": 1")
                                 << QStringLiteral("strategy.zreo") << QStringLiteral("unknown key");
    QTest::newRow("unknown model") << QByteArray(valid).replace("llama3-8b", "llama3-8") << QStringLiteral("model")
                                   << QStringLiteral("llama3-8b");
    QTest::newRow("degrees != GPUs") << QByteArray(valid).replace("\"dp\": 4", "\"dp\": 2")
                                     << QStringLiteral("strategy.dp") << QStringLiteral("16");
    QTest::newRow("tp not dividing heads")
        << QByteArray(valid).replace("\"tp\": 2, \"pp\": 2, \"dp\": 4", "\"tp\": 16, \"pp\": 1, \"dp\": 1")
        << QStringLiteral("strategy.tp") << QStringLiteral("KV heads");
    QTest::newRow("missing schema") << QByteArray(valid).replace("\"schema\": 1,", "") << QStringLiteral("schema")
                                    << QStringLiteral("missing");
    const QByteArray with_reliability = QByteArray(valid).replace(
        "\"schema\": 1,", "\"schema\": 1, \"reliability\": { \"recovery\": \"replica_memory\" },");
    QTest::newRow("unknown recovery") << QByteArray(with_reliability).replace("replica_memory", "prayer")
                                      << QStringLiteral("reliability.recovery") << QStringLiteral("replan");
    QTest::newRow("interval not a number")
        << QByteArray(with_reliability).replace("\"recovery\"", "\"checkpoint_interval_s\": \"hourly\", \"recovery\"")
        << QStringLiteral("reliability.checkpoint_interval_s") << QStringLiteral("\"auto\"");
    QTest::newRow("replica memory without replicas")
        << QByteArray(with_reliability).replace("\"tp\": 2, \"pp\": 2, \"dp\": 4", "\"tp\": 4, \"pp\": 4, \"dp\": 1")
        << QStringLiteral("reliability.recovery") << QStringLiteral("at least 2 replicas");
}

void TestCli::predictBadFile()
{
    QFETCH(QByteArray, content);
    QFETCH(QString, key);
    QFETCH(QString, rule);
    const QString path = writeFile(QStringLiteral("bad/") + tagFileName(), content);
    for (const QStringList& extra : { QStringList { QStringLiteral("--json") }, QStringList {} }) {
        const Run r = run(QStringList { QStringLiteral("predict"), path } + extra);
        QVERIFY(!r.crashed);
        QCOMPARE(r.code, 2);
        QVERIFY2(r.out.isEmpty(), r.out.constData()); // nothing half-printed on stdout
        const QString err = QString::fromUtf8(r.err);
        QVERIFY2(err.contains(path), qPrintable(err));
        if (!key.isEmpty())
            QVERIFY2(err.contains(key), qPrintable(err));
        QVERIFY2(err.contains(rule), qPrintable(err));
    }
}

void TestCli::predictMissingFile()
{
    const QString path = QDir(m_dir.path()).filePath(QStringLiteral("no-such-scenario.json"));
    const Run r = run({ QStringLiteral("predict"), path, QStringLiteral("--json") });
    QVERIFY(!r.crashed);
    QCOMPARE(r.code, 2);
    QVERIFY(r.out.isEmpty());
    QVERIFY2(QString::fromUtf8(r.err).contains(path), r.err.constData());
    // Neither a file nor a preset name.
    const Run n = run({ QStringLiteral("predict"), QStringLiteral("defualt") });
    QCOMPARE(n.code, 2);
    QVERIFY2(QString::fromUtf8(n.err).contains(QStringLiteral("defualt")), n.err.constData());
}

void TestCli::predictBadArguments_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("mentions");
    QTest::newRow("--fidelity bogus") << QStringList { QStringLiteral("predict"), QStringLiteral("default"),
        QStringLiteral("--fidelity"), QStringLiteral("bogus") }
                                      << QStringLiteral("fidelity");
    QTest::newRow("no scenario") << QStringList { QStringLiteral("predict") } << QString();
    QTest::newRow("two scenarios") << QStringList { QStringLiteral("predict"), QStringLiteral("default"),
        QStringLiteral("default") } << QString();
    QTest::newRow("unknown option") << QStringList { QStringLiteral("predict"), QStringLiteral("default"),
        QStringLiteral("--jsno") } << QStringLiteral("jsno");
    QTest::newRow("--fidelity without value") << QStringList { QStringLiteral("predict"), QStringLiteral("default"),
        QStringLiteral("--fidelity") } << QStringLiteral("fidelity");
}

void TestCli::predictBadArguments()
{
    QFETCH(QStringList, args);
    QFETCH(QString, mentions);
    const Run r = run(args);
    QVERIFY(!r.crashed);
    QCOMPARE(r.code, 2);
    QVERIFY(r.out.isEmpty());
    QVERIFY(!r.err.isEmpty());
    if (!mentions.isEmpty())
        QVERIFY2(QString::fromUtf8(r.err).contains(mentions), r.err.constData());
}

void TestCli::presetsText()
{
    const Run r = run({ QStringLiteral("presets") });
    QVERIFY(!r.crashed);
    QCOMPARE(r.code, 0);
    const QString out = QString::fromUtf8(r.out);
    for (const auto& kind : kPresetKinds)
        QVERIFY2(out.contains(kind + QLatin1Char(':')), qPrintable(kind));
    QVERIFY(out.contains(QStringLiteral("default")));
    QVERIFY2(!out.contains(QStringLiteral("INVALID")), qPrintable(out));
    QVERIFY2(!out.contains(QStringLiteral("[user]")), qPrintable(out));
}

void TestCli::presetsKind()
{
    const Run r = run({ QStringLiteral("presets"), QStringLiteral("gpus") });
    QVERIFY(!r.crashed);
    QCOMPARE(r.code, 0);
    const QString out = QString::fromUtf8(r.out);
    for (const auto& name : kGpuNames)
        QVERIFY2(out.contains(name), qPrintable(name));
    QVERIFY(out.contains(QStringLiteral("gpus:")));
    QVERIFY(!out.contains(QStringLiteral("models:")));
    QVERIFY(!out.contains(QStringLiteral("llama3-8b")));
}

void TestCli::presetsBogusKind()
{
    const Run r = run({ QStringLiteral("presets"), QStringLiteral("bogus") });
    QVERIFY(!r.crashed);
    QCOMPARE(r.code, 2);
    QVERIFY(r.out.isEmpty());
    QVERIFY2(QString::fromUtf8(r.err).contains(QStringLiteral("bogus")), r.err.constData());
}

void TestCli::presetsJson()
{
    const Run r = run({ QStringLiteral("presets"), QStringLiteral("--json") });
    QVERIFY(!r.crashed);
    QCOMPARE(r.code, 0);
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(r.out, &error);
    QVERIFY2(doc.isObject(), qPrintable(error.errorString()));
    const QJsonObject o = doc.object();
    QStringList keys = o.keys();
    keys.sort();
    QCOMPARE(keys, kPresetKinds);
    for (const auto& kind : kPresetKinds) {
        QVERIFY(o.value(kind).isArray());
        QVERIFY2(!o.value(kind).toArray().isEmpty(), qPrintable(kind));
        for (const auto& v : o.value(kind).toArray()) {
            const QJsonObject e = v.toObject();
            QVERIFY(e.value(QStringLiteral("name")).isString());
            QVERIFY(e.value(QStringLiteral("user")).isBool());
            QCOMPARE(e.value(QStringLiteral("user")).toBool(), false);
        }
    }
    QStringList gpus;
    for (const auto& v : o.value(QStringLiteral("gpus")).toArray())
        gpus << v.toObject().value(QStringLiteral("name")).toString();
    gpus.sort();
    QCOMPARE(gpus, kGpuNames);
    // One kind only.
    const Run m = run({ QStringLiteral("presets"), QStringLiteral("models"), QStringLiteral("--json") });
    QCOMPARE(m.code, 0);
    QCOMPARE(QJsonDocument::fromJson(m.out).object().keys(), QStringList { QStringLiteral("models") });
}

void TestCli::userPresetsFromEnvironment()
{
    writeFile(QStringLiteral("user-presets/gpus/MyLab-GPU.json"), kUserGpu);
    QProcessEnvironment env = m_env;
    env.insert(QStringLiteral("PARALLAX_PRESET_PATH"), QDir(m_dir.path()).filePath(QStringLiteral("user-presets")));
    const Run r = run({ QStringLiteral("presets"), QStringLiteral("gpus"), QStringLiteral("--json") }, env);
    QCOMPARE(r.code, 0);
    bool found = false;
    for (const auto& v : QJsonDocument::fromJson(r.out).object().value(QStringLiteral("gpus")).toArray()) {
        const QJsonObject e = v.toObject();
        if (e.value(QStringLiteral("name")).toString() == QLatin1String("MyLab-GPU")) {
            found = true;
            QCOMPARE(e.value(QStringLiteral("user")).toBool(), true);
        }
    }
    QVERIFY(found);
    const Run t = run({ QStringLiteral("presets"), QStringLiteral("gpus") }, env);
    QVERIFY(QString::fromUtf8(t.out).contains(QStringLiteral("[user]")));
    // A scenario can use it.
    const QString path = writeFile(QStringLiteral("user-gpu.json"),
        QByteArray(kValidScenario).replace("\"gpu\": \"H100-SXM5-80GB\"", "\"gpu\": \"MyLab-GPU\""));
    const Run p = run({ QStringLiteral("predict"), path, QStringLiteral("--json") }, env);
    QVERIFY2(p.code == 0 || p.code == 3, p.err.constData());
    checkPrediction(p.out, p.code);
    // ...and without the user folder the same file is bad input naming the key.
    const Run q = run({ QStringLiteral("predict"), path, QStringLiteral("--json") });
    QCOMPARE(q.code, 2);
    QVERIFY2(QString::fromUtf8(q.err).contains(QStringLiteral("cluster.gpu")), q.err.constData());
}

void TestCli::validateJson()
{
    const QString runs = QStringLiteral(PARALLAX_SOURCE_DIR "/validation/published-runs.json");
    QVERIFY2(QFile::exists(runs), qPrintable(runs));
    const Run r = run({ QStringLiteral("validate"), runs, QStringLiteral("--json") });
    QVERIFY(!r.crashed);
    QCOMPARE(r.code, 0);
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(r.out, &error);
    QVERIFY2(doc.isObject(), qPrintable(error.errorString()));
    const QJsonObject o = doc.object();
    QCOMPARE(o.value(QStringLiteral("schema")).toInt(), 1);
    QVERIFY(o.value(QStringLiteral("rows")).isArray());
    const QJsonArray rows = o.value(QStringLiteral("rows")).toArray();
    QVERIFY(!rows.isEmpty());
    QStringList ids;
    for (const auto& v : rows) {
        QVERIFY(v.isObject());
        const QJsonObject row = v.toObject();
        QVERIFY(row.value(QStringLiteral("id")).isString());
        ids << row.value(QStringLiteral("id")).toString();
        for (const char* key : { "measured_tokens_per_s_per_gpu", "predicted_tokens_per_s_per_gpu", "error" })
            QVERIFY2(row.value(QLatin1String(key)).isDouble(), key);
        // Measured numbers come from the file, not the model.
        QVERIFY(row.value(QStringLiteral("measured_tokens_per_s_per_gpu")).toDouble() > 0);
        QVERIFY(row.value(QStringLiteral("assumptions")).isArray());
        for (const auto& a : row.value(QStringLiteral("assumptions")).toArray())
            QVERIFY(a.isString());
    }
    // Rows it cannot model are listed as skipped with the reason, never silently dropped.
    QVERIFY(o.value(QStringLiteral("skipped")).isArray());
    const QJsonArray skipped = o.value(QStringLiteral("skipped")).toArray();
    for (const auto& v : skipped) {
        const QJsonObject s = v.toObject();
        QVERIFY(s.value(QStringLiteral("id")).isString());
        ids << s.value(QStringLiteral("id")).toString();
        QVERIFY(!s.value(QStringLiteral("reason")).toString().isEmpty());
    }
    QFile in(runs);
    QVERIFY(in.open(QIODevice::ReadOnly));
    const QJsonArray input = QJsonDocument::fromJson(in.readAll()).array();
    QStringList input_ids;
    for (const auto& v : input)
        input_ids << v.toObject().value(QStringLiteral("id")).toString();
    ids.sort();
    input_ids.sort();
    QCOMPARE(ids, input_ids);

    QVERIFY(o.value(QStringLiteral("summary")).isObject());
    const QJsonObject summary = o.value(QStringLiteral("summary")).toObject();
    for (const char* key : { "rows", "skipped", "mape", "median", "worst" })
        QVERIFY2(summary.value(QLatin1String(key)).isDouble(), key);
    QCOMPARE(summary.value(QStringLiteral("rows")).toInt(), rows.size());
    QCOMPARE(summary.value(QStringLiteral("skipped")).toInt(), skipped.size());
    for (const char* key : { "by_source", "by_gpu" }) {
        QVERIFY2(summary.value(QLatin1String(key)).isObject(), key);
        const QJsonObject groups = summary.value(QLatin1String(key)).toObject();
        QVERIFY2(!groups.isEmpty(), key);
        int total = 0;
        for (const auto& g : groups) {
            QVERIFY(g.isObject());
            QVERIFY(g.toObject().value(QStringLiteral("rows")).isDouble());
            total += g.toObject().value(QStringLiteral("rows")).toInt();
        }
        QCOMPARE(total, rows.size()); // each row in exactly one group
    }
}

void TestCli::validateText()
{
    const Run r
        = run({ QStringLiteral("validate"), QStringLiteral(PARALLAX_SOURCE_DIR "/validation/published-runs.json") });
    QVERIFY(!r.crashed);
    QCOMPARE(r.code, 0);
    QVERIFY(!r.out.trimmed().isEmpty());
    // The text lists every skipped row with its reason, as --json does.
    const Run j = run({ QStringLiteral("validate"),
        QStringLiteral(PARALLAX_SOURCE_DIR "/validation/published-runs.json"), QStringLiteral("--json") });
    const QJsonArray skipped = QJsonDocument::fromJson(j.out).object().value(QStringLiteral("skipped")).toArray();
    QVERIFY(!skipped.isEmpty());
    QVERIFY(r.out.contains("\nskipped:\n"));
    for (const QJsonValue& v : skipped) {
        const QJsonObject row = v.toObject();
        const QString line = QStringLiteral("  ") + row.value(QStringLiteral("id")).toString() + QStringLiteral(": ")
            + row.value(QStringLiteral("reason")).toString();
        QVERIFY2(QString::fromUtf8(r.out).contains(line), qPrintable(line));
    }
}

// validate predicts every row as predict would (the shipped calibration by default), says which
// calibration it used, and --calibration none gives the uncalibrated physics.
void TestCli::validatePredictsAsPredictDoes()
{
    const QString runs = QStringLiteral(PARALLAX_SOURCE_DIR "/validation/published-runs.json");
    const QString dir = m_dir.filePath(QStringLiteral("validate-scenarios"));
    const Run r
        = run({ QStringLiteral("validate"), runs, QStringLiteral("--json"), QStringLiteral("--scenarios"), dir });
    QCOMPARE(r.code, 0);
    const QJsonObject o = QJsonDocument::fromJson(r.out).object();
    const QString calibration = o.value(QStringLiteral("calibration")).toString();
    QVERIFY2(!calibration.isEmpty() && calibration != QStringLiteral("none"), qPrintable(calibration));
    const QJsonArray rows = o.value(QStringLiteral("rows")).toArray();
    QVERIFY(rows.size() > 40);
    int checked = 0;
    for (int i = 0; i < rows.size(); i += 9) {
        const QJsonObject row = rows[i].toObject();
        const QString id = row.value(QStringLiteral("id")).toString();
        const Run p = run({ QStringLiteral("predict"), dir + QLatin1Char('/') + id + QStringLiteral(".json"),
            QStringLiteral("--json") });
        QVERIFY2(p.code == 0 || p.code == 3, qPrintable(id + QString::fromUtf8(p.err)));
        const QJsonObject pred = QJsonDocument::fromJson(p.out).object();
        QVERIFY2(pred.value(QStringLiteral("tokens_per_s")).toDouble() > 0, qPrintable(id));
        const QJsonObject st = row.value(QStringLiteral("strategy")).toObject();
        double gpus = 1;
        for (const char* k : { "tp", "pp", "dp", "cp" })
            gpus *= st.value(QLatin1String(k)).toDouble();
        const double per_gpu = pred.value(QStringLiteral("tokens_per_s")).toDouble() / gpus;
        const double validated = row.value(QStringLiteral("predicted_tokens_per_s_per_gpu")).toDouble();
        QVERIFY2(std::fabs(per_gpu / validated - 1) < 1e-6,
            qPrintable(id + QStringLiteral(": predict ") + QString::number(per_gpu) + QStringLiteral(", validate ")
                + QString::number(validated)));
        ++checked;
    }
    QVERIFY(checked >= 5);
    const Run none = run({ QStringLiteral("validate"), runs, QStringLiteral("--json"), QStringLiteral("--calibration"),
        QStringLiteral("none") });
    QCOMPARE(none.code, 0);
    const QJsonObject n = QJsonDocument::fromJson(none.out).object();
    QCOMPARE(n.value(QStringLiteral("calibration")).toString(), QStringLiteral("none"));
    const double mape_builtin = o.value(QStringLiteral("summary")).toObject().value(QStringLiteral("mape")).toDouble();
    const double mape_none = n.value(QStringLiteral("summary")).toObject().value(QStringLiteral("mape")).toDouble();
    QVERIFY(mape_builtin > 0 && mape_none > 0);
    QVERIFY(mape_builtin != mape_none);
}

// The serving rows: --csv gives one line per row with the measured and predicted latencies, and
// --scenarios writes each row's serving scenario, which predict reads back to the same TTFT and TPOT.
void TestCli::validateServingCsvAndScenarios()
{
    QFile all(QStringLiteral(PARALLAX_SOURCE_DIR "/validation/measured-serving.json"));
    QVERIFY(all.open(QIODevice::ReadOnly));
    const QJsonArray rows = QJsonDocument::fromJson(all.readAll()).array();
    QJsonArray some;
    for (int i = 0; i < rows.size() && some.size() < 8; i += 97)
        some.append(rows[i]);
    const QString file = writeFile(QStringLiteral("serving-rows.json"), QJsonDocument(some).toJson());
    const QString dir = m_dir.filePath(QStringLiteral("serving-scenarios"));
    const Run r
        = run({ QStringLiteral("validate"), file, QStringLiteral("--csv"), QStringLiteral("--scenarios"), dir });
    QCOMPARE(r.code, 0);
    const QStringList lines = QString::fromUtf8(r.out).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), some.size() + 1); // the header, then every row (predicted or skipped)
    const QStringList header = lines[0].split(QLatin1Char(','));
    const int ttft = static_cast<int>(header.indexOf(QStringLiteral("predicted_ttft_ms")));
    const int tpot = static_cast<int>(header.indexOf(QStringLiteral("predicted_tpot_ms")));
    QVERIFY(ttft > 0 && tpot > 0 && header.contains(QStringLiteral("measured_ttft_ms")));
    int checked = 0;
    for (int i = 1; i < lines.size(); ++i) {
        const QStringList f = lines[i].split(QLatin1Char(','));
        if (f.size() != header.size() || f[ttft].isEmpty())
            continue; // a skipped row (its reason may hold commas)
        const Run p = run({ QStringLiteral("predict"), dir + QLatin1Char('/') + f[0] + QStringLiteral(".json"),
            QStringLiteral("--json") });
        QCOMPARE(p.code, 0);
        const QJsonObject o = QJsonDocument::fromJson(p.out).object();
        QVERIFY2(
            std::fabs(o.value(QStringLiteral("ttft_ms")).toDouble() / f[ttft].toDouble() - 1) < 1e-5, qPrintable(f[0]));
        QVERIFY2(
            std::fabs(o.value(QStringLiteral("tpot_ms")).toDouble() / f[tpot].toDouble() - 1) < 1e-5, qPrintable(f[0]));
        ++checked;
    }
    QVERIFY(checked >= 4);
}

void TestCli::validateBadInput_data()
{
    QTest::addColumn<QByteArray>("content");
    QTest::addColumn<QString>("mentions");
    QTest::newRow("object, not an array") << QByteArray(R"({"id": "x"})") << QStringLiteral("array");
    QTest::newRow("a number") << QByteArray("42") << QStringLiteral("array");
    QTest::newRow("malformed JSON") << QByteArray("[{\"id\": ") << QStringLiteral("line");
}

void TestCli::validateBadInput()
{
    QFETCH(QByteArray, content);
    QFETCH(QString, mentions);
    const QString path = writeFile(QStringLiteral("runs/") + tagFileName(), content);
    const Run r = run({ QStringLiteral("validate"), path, QStringLiteral("--json") });
    QVERIFY(!r.crashed);
    QCOMPARE(r.code, 2);
    QVERIFY(r.out.isEmpty());
    const QString err = QString::fromUtf8(r.err);
    QVERIFY2(err.contains(path), qPrintable(err));
    QVERIFY2(err.contains(mentions), qPrintable(err));
    // A missing file as well.
    const Run m = run({ QStringLiteral("validate"), path + QStringLiteral(".missing") });
    QCOMPARE(m.code, 2);
    QVERIFY2(QString::fromUtf8(m.err).contains(path + QStringLiteral(".missing")), m.err.constData());
}

// ---- Power and DVFS ----

namespace {

// Llama 3 8B, TP 2 x PP 4 x DP 2 on 16 H100, 1F1B, stages of 11, 8, 8 and 5 layers.
const char* const kUnbalanced = R"({
  "schema": 1,
  "model": "llama3-8b",
  "cluster": { "gpu": "H100-SXM5-80GB", "nodes": 2, "gpus_per_node": 8,
               "intra_node": "nvlink4-nvswitch", "inter_node": "ib-ndr" },
  "training": { "global_batch": 128, "seq_len": 4096, "precision": "bf16" },
  "strategy": { "tp": 2, "pp": 4, "micro_batch": 1, "schedule": "1f1b", "first_stage_layers": 11,
                "last_stage_layers": 5, "sequence_parallel": true }
})";

} // namespace

// predict's "goodput" object appears only when the scenario has a reliability section
// (docs/goodput.md); the rest of the output does not change.
void TestCli::predictGoodputOnlyWithReliability()
{
    const Run plain = run({ QStringLiteral("predict"), writeFile(QStringLiteral("plain.json"), kValidScenario),
        QStringLiteral("--json") });
    QCOMPARE(plain.code, 0);
    QJsonObject without = QJsonDocument::fromJson(plain.out).object();
    QVERIFY(!without.contains(QStringLiteral("goodput")));
    QByteArray reliable = kValidScenario;
    reliable.replace("\"schema\": 1,",
        "\"schema\": 1, \"reliability\": { \"failure_rate_per_gpu_hour\": 0.001, \"restart_overhead_s\": 120 },");
    const QString path = writeFile(QStringLiteral("reliable.json"), reliable);
    const Run r = run({ QStringLiteral("predict"), path, QStringLiteral("--json") });
    QCOMPARE(r.code, 0);
    QJsonObject with = QJsonDocument::fromJson(r.out).object();
    const QJsonObject g = with.value(QStringLiteral("goodput")).toObject();
    for (const char* key : { "tokens_per_s", "fraction_of_throughput", "interruptions_per_day", "checkpoint_interval_s",
             "best_checkpoint_interval_s" })
        QVERIFY2(g.value(QLatin1String(key)).isDouble(), key);
    const QJsonObject parts = g.value(QStringLiteral("lost_time_fraction")).toObject();
    double lost = 0;
    for (const char* key : { "lost_work", "checkpoint_writes", "restart", "replacement", "reload" }) {
        QVERIFY2(parts.value(QLatin1String(key)).isDouble(), key);
        lost += parts.value(QLatin1String(key)).toDouble();
    }
    QVERIFY(std::fabs(lost + g.value(QStringLiteral("fraction_of_throughput")).toDouble() - 1) < 1e-9);
    // 16 GPUs x 24 h x 0.001 = 0.384 interruptions a day.
    QVERIFY(std::fabs(g.value(QStringLiteral("interruptions_per_day")).toDouble() - 0.384) < 1e-9);
    QVERIFY(g.value(QStringLiteral("tokens_per_s")).toDouble() < with.value(QStringLiteral("tokens_per_s")).toDouble());
    with.remove(QStringLiteral("goodput"));
    QCOMPARE(with, without);
    const Run text = run({ QStringLiteral("predict"), path });
    QVERIFY(text.out.contains("goodput"));
    QVERIFY(!run({ QStringLiteral("predict"), writeFile(QStringLiteral("plain2.json"), kValidScenario) })
                 .out.contains("goodput"));
}

void TestCli::searchRanksByGoodputWithReliability()
{
    const QStringList args = { QStringLiteral("--json"), QStringLiteral("--top"), QStringLiteral("3"),
        QStringLiteral("--refine"), QStringLiteral("0") };
    const Run plain = run(
        QStringList { QStringLiteral("search"), writeFile(QStringLiteral("s-plain.json"), kValidScenario) } + args);
    QCOMPARE(plain.code, 0);
    QVERIFY(!QJsonDocument::fromJson(plain.out).object().contains(QStringLiteral("ranked_by")));
    QByteArray reliable = kValidScenario;
    reliable.replace("\"schema\": 1,", "\"schema\": 1, \"reliability\": { \"failure_rate_per_gpu_hour\": 0.01 },");
    const QString path = writeFile(QStringLiteral("s-reliable.json"), reliable);
    const Run r = run(QStringList { QStringLiteral("search"), path } + args);
    QCOMPARE(r.code, 0);
    const QJsonObject o = QJsonDocument::fromJson(r.out).object();
    QCOMPARE(o.value(QStringLiteral("ranked_by")).toString(), QStringLiteral("goodput_tokens_per_s"));
    double previous = 1e300;
    for (const QJsonValue v : o.value(QStringLiteral("results")).toArray()) {
        const double goodput = v.toObject().value(QStringLiteral("goodput_tokens_per_s")).toDouble();
        QVERIFY(goodput > 0 && goodput <= previous);
        previous = goodput;
    }
    QVERIFY(run({ QStringLiteral("search"), path, QStringLiteral("--top"), QStringLiteral("1") })
                .out.contains("ranked by goodput"));
}

void TestCli::predictPowerKeys()
{
    // The contract's power keys plus the additions: energy per iteration, limits, node/rack/cluster.
    const QString path = writeFile(QStringLiteral("power.json"), kValidScenario);
    const Run r = run({ QStringLiteral("predict"), path, QStringLiteral("--json"), QStringLiteral("--fidelity"),
        QStringLiteral("simulated") });
    QCOMPARE(r.code, 0);
    const QJsonObject power = QJsonDocument::fromJson(r.out).object().value(QStringLiteral("power")).toObject();
    for (const char* key : { "avg_W_per_gpu", "peak_W_per_gpu", "energy_J_per_token", "energy_J_per_iteration_per_gpu",
             "energy_kWh_per_iteration", "idle_W", "cap_W", "thermal_limit_W", "clock_MHz", "busy_fraction",
             "cap_slowdown" })
        QVERIFY2(power.value(QLatin1String(key)).isDouble(), key);
    QVERIFY(power.value(QStringLiteral("power_capped")).isBool());
    QVERIFY(power.value(QStringLiteral("thermally_limited")).isBool());
    for (const char* level : { "node", "rack", "cluster" })
        QVERIFY2(power.value(QLatin1String(level)).isObject(), level);
    const double avg = power.value(QStringLiteral("avg_W_per_gpu")).toDouble();
    QVERIFY(avg >= power.value(QStringLiteral("idle_W")).toDouble());
    QVERIFY(avg <= power.value(QStringLiteral("peak_W_per_gpu")).toDouble());
    QVERIFY(power.value(QStringLiteral("peak_W_per_gpu")).toDouble()
        <= power.value(QStringLiteral("cap_W")).toDouble() + 1e-6);
    QCOMPARE(power.value(QStringLiteral("cluster")).toObject().value(QStringLiteral("nodes")).toDouble(), 2.0);
    // A cap in the scenario reaches the prediction and its text.
    QByteArray capped = kValidScenario;
    capped.replace(R"("precision": "bf16" })", R"("precision": "bf16", "power_cap_W": 400 })");
    const Run c = run({ QStringLiteral("predict"), writeFile(QStringLiteral("capped.json"), capped) });
    QCOMPARE(c.code, 0);
    QVERIFY2(c.out.contains("capped at 400 W"), c.out.constData());
    QVERIFY(c.out.contains("power budget"));
}

void TestCli::clocksPlansUnbalancedStages()
{
    const QString path = writeFile(QStringLiteral("unbalanced.json"), kUnbalanced);
    const Run r = run({ QStringLiteral("clocks"), path, QStringLiteral("--json") });
    QCOMPARE(r.code, 0);
    const QJsonObject o = QJsonDocument::fromJson(r.out).object();
    QCOMPARE(o.value(QStringLiteral("stage_clock_MHz")).toArray().size(), 4);
    const QJsonObject sim = o.value(QStringLiteral("simulated")).toObject();
    QVERIFY(sim.value(QStringLiteral("energy_saved")).toDouble() > 0.05);
    QVERIFY(sim.value(QStringLiteral("slowdown")).toDouble() <= 0.01 + 1e-9);
    // The plan, written back into the scenario, predicts what the planner said (analytic).
    QByteArray planned = kUnbalanced;
    QStringList mhz;
    for (const QJsonValue& v : o.value(QStringLiteral("stage_clock_MHz")).toArray())
        mhz << QString::number(v.toDouble(), 'g', 17);
    const QByteArray with_clocks = QByteArray(R"("precision": "bf16", "stage_clock_MHz": [)")
        + mhz.join(QLatin1Char(',')).toUtf8() + QByteArray("] }");
    planned.replace(QByteArray(R"("precision": "bf16" })"), with_clocks);
    const Run p = run(
        { QStringLiteral("predict"), writeFile(QStringLiteral("planned.json"), planned), QStringLiteral("--json") });
    QCOMPARE(p.code, 0);
    const double step = QJsonDocument::fromJson(p.out).object().value(QStringLiteral("step_time_s")).toDouble();
    QVERIFY(
        std::fabs(step / o.value(QStringLiteral("analytic")).toObject().value(QStringLiteral("step_s")).toDouble() - 1)
        < 1e-6);
    // The text form prints the scenario snippet.
    const Run t = run({ QStringLiteral("clocks"), path, QStringLiteral("--no-simulate") });
    QCOMPARE(t.code, 0);
    QVERIFY(t.out.contains("stage_clock_MHz"));
    QVERIFY(t.out.contains("energy saved"));
}

void TestCli::clocksBadInput_data()
{
    QTest::addColumn<QStringList>("extra");
    QTest::addColumn<QByteArray>("content");
    QTest::addColumn<QString>("message");
    QTest::newRow("slowdown not a number") << QStringList { QStringLiteral("--max-slowdown"), QStringLiteral("lots") }
                                           << QByteArray(kUnbalanced) << QStringLiteral("--max-slowdown");
    QTest::newRow("slowdown above 1") << QStringList { QStringLiteral("--max-slowdown"), QStringLiteral("3") }
                                      << QByteArray(kUnbalanced) << QStringLiteral("--max-slowdown");
    QTest::newRow("GPU without a clock") << QStringList {} << QByteArray(kInlineScenario)
                                         << QStringLiteral("clock_MHz");
    QByteArray bad = kUnbalanced;
    bad.replace(R"("precision": "bf16" })", R"("precision": "bf16", "stage_clock_MHz": [1800, 1800] })");
    QTest::newRow("stage clocks for 2 of 4 stages")
        << QStringList {} << bad << QStringLiteral("training.stage_clock_MHz");
}

void TestCli::clocksBadInput()
{
    QFETCH(QStringList, extra);
    QFETCH(QByteArray, content);
    QFETCH(QString, message);
    const Run r = run(QStringList { QStringLiteral("clocks"), writeFile(tagFileName(), content) } + extra);
    QVERIFY(!r.crashed);
    QCOMPARE(r.code, 2);
    QVERIFY2(QString::fromUtf8(r.err).contains(message), r.err.constData());
}

void TestCli::searchEnergyAndPowerBudget()
{
    const QString path = writeFile(QStringLiteral("search-power.json"), kValidScenario);
    const Run e = run({ QStringLiteral("search"), path, QStringLiteral("--json"), QStringLiteral("--objective"),
        QStringLiteral("energy"), QStringLiteral("--max-slowdown"), QStringLiteral("0.05"), QStringLiteral("--top"),
        QStringLiteral("3"), QStringLiteral("--refine"), QStringLiteral("0"), QStringLiteral("--threads"),
        QStringLiteral("2") });
    QCOMPARE(e.code, 0);
    const QJsonObject eo = QJsonDocument::fromJson(e.out).object();
    const double fastest = eo.value(QStringLiteral("fastest_step_s")).toDouble();
    QVERIFY(fastest > 0);
    for (const QJsonValue& v : eo.value(QStringLiteral("results")).toArray())
        QVERIFY(
            v.toObject().value(QStringLiteral("prediction")).toObject().value(QStringLiteral("step_time_s")).toDouble()
            <= 1.05 * fastest * (1 + 1e-9));
    const Run b = run({ QStringLiteral("search"), path, QStringLiteral("--json"), QStringLiteral("--power-budget-kW"),
        QStringLiteral("10"), QStringLiteral("--top"), QStringLiteral("3"), QStringLiteral("--refine"),
        QStringLiteral("0"), QStringLiteral("--threads"), QStringLiteral("2") });
    QCOMPARE(b.code, 0);
    const QJsonObject bo = QJsonDocument::fromJson(b.out).object();
    QCOMPARE(bo.value(QStringLiteral("power_budget_kW")).toDouble(), 10.0);
    for (const QJsonValue& v : bo.value(QStringLiteral("results")).toArray()) {
        const QJsonObject power
            = v.toObject().value(QStringLiteral("prediction")).toObject().value(QStringLiteral("power")).toObject();
        QVERIFY(power.value(QStringLiteral("cluster")).toObject().value(QStringLiteral("avg_kW")).toDouble()
            <= 10.0 + 1e-9);
    }
    const Run bad = run({ QStringLiteral("search"), path, QStringLiteral("--power-budget-kW"), QStringLiteral("-1") });
    QCOMPARE(bad.code, 2);
    QVERIFY(bad.err.contains("--power-budget-kW"));
}

// search and sweep ignore the scenario's degrees, so an example strategy that does not fit the cluster
// (here the default dp 96 for a global batch of 12) does not stop them; predict still refuses it.
void TestCli::searchIgnoresAnUnfitExampleStrategy()
{
    const QString path = writeFile(QStringLiteral("unfit-example.json"), R"({ "schema": 1, "model": "llama3-8b",
      "cluster": { "gpu": "H100-SXM5-80GB", "nodes": 12, "gpus_per_node": 8, "intra_node": "nvlink4-nvswitch",
                   "inter_node": "ib-ndr" },
      "training": { "global_batch": 12, "seq_len": 131072, "precision": "bf16" } })");
    const Run p = run({ QStringLiteral("predict"), path });
    QCOMPARE(p.code, 2);
    QVERIFY2(p.err.contains("training.global_batch"), p.err.constData());
    const QStringList quick = { QStringLiteral("--top"), QStringLiteral("2"), QStringLiteral("--refine"),
        QStringLiteral("0"), QStringLiteral("--threads"), QStringLiteral("2"), QStringLiteral("--json") };
    const Run s = run(QStringList { QStringLiteral("search"), path } + quick);
    QVERIFY2(s.code == 0, s.err.constData());
    const QJsonArray results = QJsonDocument::fromJson(s.out).object().value(QStringLiteral("results")).toArray();
    QVERIFY(!results.isEmpty());
    const QJsonObject best = results.first().toObject().value(QStringLiteral("strategy")).toObject();
    QCOMPARE(12 % best.value(QStringLiteral("dp")).toInt(), 0);
    const Run w
        = run(QStringList { QStringLiteral("sweep"), path, QStringLiteral("--gpus"), QStringLiteral("48,96") } + quick);
    QVERIFY2(w.code == 0, w.err.constData());
    QCOMPARE(QJsonDocument::fromJson(w.out).object().value(QStringLiteral("points")).toArray().size(), 2);
}

// A cluster with node groups and no stages: search finds explicit pipelines, each result's strategy
// pasted back predicts the same step; the options it has no meaning for are refused, as is sweep.
void TestCli::searchMixedCluster()
{
    const QByteArray head = R"({ "schema": 1, "model": "llama3-8b",
      "cluster": { "groups": [
          { "name": "h100", "gpu": "H100-SXM5-80GB", "nodes": 1, "gpus_per_node": 8, "intra_node": "nvlink4-nvswitch" },
          { "name": "a100", "gpu": "A100-SXM4-80GB", "nodes": 1, "gpus_per_node": 8, "intra_node": "nvlink3-nvswitch" } ],
        "inter_node": "ib-ndr" },
      "training": { "global_batch": 64, "seq_len": 4096, "precision": "bf16" })";
    const QString path = writeFile(QStringLiteral("mixed-search.json"), head + "}");
    const Run s = run({ QStringLiteral("search"), path, QStringLiteral("--json"), QStringLiteral("--top"),
        QStringLiteral("2"), QStringLiteral("--threads"), QStringLiteral("2") });
    QVERIFY2(s.code == 0, s.err.constData());
    const QJsonObject out = QJsonDocument::fromJson(s.out).object();
    QVERIFY(out.value(QStringLiteral("heterogeneous")).toBool());
    const QJsonArray results = out.value(QStringLiteral("results")).toArray();
    QCOMPARE(results.size(), 2);
    const QJsonObject best = results.first().toObject();
    QVERIFY(best.value(QStringLiteral("idle_groups")).isArray());
    const QJsonObject strategy = best.value(QStringLiteral("strategy")).toObject();
    QVERIFY(strategy.value(QStringLiteral("stages")).isArray());
    const QString pasted = writeFile(QStringLiteral("mixed-pasted.json"),
        head + ", \"strategy\": " + QJsonDocument(strategy).toJson(QJsonDocument::Compact) + "}");
    const Run p = run({ QStringLiteral("predict"), pasted, QStringLiteral("--json") });
    QVERIFY2(p.code == 0, p.err.constData());
    const double predicted = QJsonDocument::fromJson(p.out).object().value(QStringLiteral("step_time_s")).toDouble();
    const double searched
        = best.value(QStringLiteral("prediction")).toObject().value(QStringLiteral("step_time_s")).toDouble();
    QVERIFY(std::fabs(predicted / searched - 1) < 1e-9);
    const Run text = run({ QStringLiteral("search"), path, QStringLiteral("--top"), QStringLiteral("1") });
    QCOMPARE(text.code, 0);
    QVERIFY(text.out.contains("idle groups:") && text.out.contains("what if"));
    QCOMPARE(run({ QStringLiteral("search"), path, QStringLiteral("--csv") }).code, 2);
    QCOMPARE(run({ QStringLiteral("sweep"), path, QStringLiteral("--gpus"), QStringLiteral("8,16") }).code, 2);
}

// Under training.framework megatron no ZB-H1 or DualPipe plan; --any-framework offers them, labelled.
void TestCli::searchAnyFrameworkLabels()
{
    QByteArray scenario = kValidScenario;
    scenario.replace("\"recompute\": \"selective\", \"zero\": 1 }",
        "\"recompute\": \"selective\", \"zero\": 1 },\n  \"search\": { \"fix\": { \"pp\": 4 } }");
    const QString path = writeFile(QStringLiteral("search-frameworks.json"), scenario);
    const QStringList common = { QStringLiteral("--json"), QStringLiteral("--top"), QStringLiteral("500"),
        QStringLiteral("--refine"), QStringLiteral("0"), QStringLiteral("--threads"), QStringLiteral("2") };
    const Run m = run(QStringList { QStringLiteral("search"), path } + common);
    QVERIFY2(m.code == 0, m.err.constData());
    const QJsonObject mo = QJsonDocument::fromJson(m.out).object();
    QCOMPARE(mo.value(QStringLiteral("framework")).toString(), QStringLiteral("megatron"));
    for (const QJsonValue& v : mo.value(QStringLiteral("results")).toArray()) {
        const QString schedule
            = v.toObject().value(QStringLiteral("strategy")).toObject().value(QStringLiteral("schedule")).toString();
        QVERIFY2(schedule != QLatin1String("zb-h1") && schedule != QLatin1String("dualpipe"), qPrintable(schedule));
        QVERIFY(v.toObject()
                    .value(QStringLiteral("frameworks"))
                    .toArray()
                    .contains(QJsonValue(QStringLiteral("megatron"))));
    }
    const Run a = run(QStringList { QStringLiteral("search"), path, QStringLiteral("--any-framework") } + common);
    QVERIFY2(a.code == 0, a.err.constData());
    const QJsonObject ao = QJsonDocument::fromJson(a.out).object();
    QCOMPARE(ao.value(QStringLiteral("framework")).toString(), QStringLiteral("any"));
    bool zb = false;
    for (const QJsonValue& v : ao.value(QStringLiteral("results")).toArray()) {
        const QJsonObject r = v.toObject();
        const QJsonArray fws = r.value(QStringLiteral("frameworks")).toArray();
        if (r.value(QStringLiteral("strategy")).toObject().value(QStringLiteral("schedule")).toString()
            == QLatin1String("zb-h1")) {
            zb = true;
            QVERIFY(!fws.contains(QJsonValue(QStringLiteral("megatron"))));
        }
    }
    QVERIFY(zb);
    const Run t = run({ QStringLiteral("search"), path, QStringLiteral("--any-framework"), QStringLiteral("--top"),
        QStringLiteral("3"), QStringLiteral("--refine"), QStringLiteral("0") });
    QCOMPARE(t.code, 0);
    QVERIFY2(t.out.contains("frameworks: "), t.out.constData());
}

void TestCli::exportFormats()
{
    const Run m = run({ QStringLiteral("export"), QStringLiteral("default"), QStringLiteral("--format"),
        QStringLiteral("megatron") });
    QVERIFY2(m.code == 0, m.err.constData());
    QVERIFY(m.out.startsWith("#!/bin/bash"));
    QVERIFY(m.out.contains("--tensor-model-parallel-size 4"));
    QVERIFY(m.out.contains("--num-layers-per-virtual-pipeline-stage 4"));
    // --out DIR/ writes every file of the format; --out FILE the main one.
    const QString dir = QDir(m_dir.path()).filePath(QStringLiteral("export-nemo/"));
    const Run n = run({ QStringLiteral("export"), QStringLiteral("default"), QStringLiteral("--format"),
        QStringLiteral("nemo"), QStringLiteral("--out"), dir });
    QVERIFY2(n.code == 0, n.err.constData());
    QFile yaml(QDir(dir).filePath(QStringLiteral("nemo_megatron_bridge.yaml")));
    QVERIFY(yaml.open(QIODevice::ReadOnly));
    QVERIFY(yaml.readAll().contains("  tensor_model_parallel_size: 4"));
    const QString toml = QDir(m_dir.path()).filePath(QStringLiteral("plan.toml"));
    QByteArray fsdp = kValidScenario;
    fsdp.replace("\"zero\": 1", "\"zero\": 3");
    const Run t = run({ QStringLiteral("export"), writeFile(QStringLiteral("fsdp.json"), fsdp),
        QStringLiteral("--format"), QStringLiteral("torchtitan"), QStringLiteral("--out"), toml });
    QVERIFY2(t.code == 0, t.err.constData());
    QVERIFY(QFileInfo::exists(toml));
    // The scenario predicts for Megatron-LM: said when the file is for another framework.
    QVERIFY2(t.err.contains("training.framework megatron"), t.err.constData());
    const Run bad = run(
        { QStringLiteral("export"), QStringLiteral("default"), QStringLiteral("--format"), QStringLiteral("jax") });
    QCOMPARE(bad.code, 2);
    QVERIFY(bad.err.contains("--format"));
}

void TestCli::exportMixedPlans()
{
    // A mixed plan Megatron-LM launches: one TP, uneven layers, each stage's node from its group's hosts.
    const QString stages = QStringLiteral(PARALLAX_SOURCE_DIR "/docs/examples/hetero-h100-a100-stages.json");
    const Run m = run({ QStringLiteral("export"), stages, QStringLiteral("--format"), QStringLiteral("megatron") });
    QVERIFY2(m.code == 0, m.err.constData());
    QVERIFY(m.out.contains("--decoder-first-pipeline-num-layers 22"));
    QVERIFY(m.out.contains("node 1: host 1 of HOSTS_A100"));
    // Replicas of one stage on H100 and A100 sharing the batch by speed: refused with the rule (exit 2).
    const Run r
        = run({ QStringLiteral("export"), QStringLiteral(PARALLAX_SOURCE_DIR "/docs/examples/hetero-h100-a100.json"),
            QStringLiteral("--format"), QStringLiteral("torchtitan") });
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("strategy.batch_split: torchtitan gives every data-parallel rank"), r.err.constData());
    // `run` has one host list per profile: it refuses a mixed plan before connecting, and says what to do.
    const QString profile = writeFile(QStringLiteral("profile.json"),
        R"({ "name": "lab", "host": "127.0.0.1", "port": 1, "launcher": "direct", "hosts": ["127.0.0.1"],
  "connect_timeout_s": 2, "use_agent": false, "gpu_type": "cpu", "gpus_per_node": 8 })");
    const Run sent = run({ QStringLiteral("run"), stages, QStringLiteral("--cluster"), profile,
        QStringLiteral("--store"), QDir(m_dir.path()).filePath(QStringLiteral("mixed.sqlite")) });
    QCOMPARE(sent.code, 2);
    QVERIFY2(sent.err.contains("a mixed-GPU plan needs a host list per node group"), sent.err.constData());
}

void TestCli::exportRefusesWhatTheFrameworkCannotRun()
{
    QByteArray zb = kValidScenario;
    zb.replace("\"zero\": 1 }", "\"zero\": 1, \"schedule\": \"zb-h1\" }");
    const QString path = writeFile(QStringLiteral("zb.json"), zb);
    for (const char* format : { "megatron", "nemo" }) {
        const Run r = run({ QStringLiteral("export"), path, QStringLiteral("--format"), QLatin1String(format) });
        QCOMPARE(r.code, 2);
        QVERIFY(r.out.isEmpty());
        QVERIFY2(r.err.contains("strategy.schedule") && r.err.contains("megatron cannot run the zb-h1 schedule"),
            r.err.constData());
    }
    const Run d = run({ QStringLiteral("export"), QStringLiteral("default"), QStringLiteral("--format"),
        QStringLiteral("deepspeed") });
    QCOMPARE(d.code, 2);
    QVERIFY2(d.err.contains("megatron-deepspeed cannot run the interleaved schedule"), d.err.constData());
}

void TestCli::exportKeepsFilesThatNameEachOtherTogether()
{
    // DeepSpeed's plan is a launcher and the ds_config.json it reads from beside itself.
    const QString path = writeFile(QStringLiteral("ds.json"), kValidScenario);
    const QString renamed = QDir(m_dir.path()).filePath(QStringLiteral("my-config.json"));
    const Run bad = run({ QStringLiteral("export"), path, QStringLiteral("--format"), QStringLiteral("deepspeed"),
        QStringLiteral("--out"), renamed });
    QCOMPARE(bad.code, 2);
    QVERIFY2(bad.err.contains("--out") && bad.err.contains("ds_config.json") && bad.err.contains("folder"),
        bad.err.constData());
    QVERIFY(!QFileInfo::exists(renamed));
    const QString dir = QDir(m_dir.path()).filePath(QStringLiteral("ds-plan/"));
    const Run ok = run({ QStringLiteral("export"), path, QStringLiteral("--format"), QStringLiteral("deepspeed"),
        QStringLiteral("--out"), dir });
    QVERIFY2(ok.code == 0, ok.err.constData());
    QFile script(QDir(dir).filePath(QStringLiteral("train_megatron_deepspeed.sh")));
    QVERIFY(script.open(QIODevice::ReadOnly));
    QVERIFY(script.readAll().contains("$HERE/ds_config.json"));
    QVERIFY(QFileInfo::exists(QDir(dir).filePath(QStringLiteral("ds_config.json"))));
}

void TestCli::errorBands()
{
    // The shipped table: classes, bands and coverage.
    Run r = run({ QStringLiteral("error-bands"), QStringLiteral("--json") });
    QVERIFY(!r.crashed);
    QCOMPARE(r.code, 0);
    const QJsonObject o = QJsonDocument::fromJson(r.out).object();
    QCOMPARE(o.value(QStringLiteral("level")).toDouble(), 0.8);
    QVERIFY(o.value(QStringLiteral("runs")).toInt() >= 100);
    const QJsonArray cov = o.value(QStringLiteral("coverage")).toArray();
    QVERIFY(!cov.isEmpty());
    QCOMPARE(cov[0].toObject().value(QStringLiteral("group")).toString(), QStringLiteral("all"));
    QVERIFY(!o.value(QStringLiteral("classes")).toArray().isEmpty());
    // Rebuilt from a validation file and written atomically; a broken file is refused by name.
    const QString out = QDir(m_dir.path()).filePath(QStringLiteral("bands.json"));
    r = run({ QStringLiteral("error-bands"),
        QStringLiteral(PARALLAX_SOURCE_DIR) + QStringLiteral("/validation/published-moe-and-long-context-runs.json"),
        QStringLiteral("--out"), out });
    QCOMPARE(r.code, 0);
    QVERIFY(r.out.contains("leave-one-source-out coverage"));
    QVERIFY(QFileInfo::exists(out));
    const QString bad = writeFile(QStringLiteral("bad-runs.json"), "{ \"runs\": [ 1, ");
    r = run({ QStringLiteral("error-bands"), bad });
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("bad-runs.json"), r.err.constData());
    // The serving bands: the shipped table's classes and coverage, rebuilt from measured serving rows on request.
    r = run({ QStringLiteral("error-bands"), QStringLiteral("--serving"), QStringLiteral("--json") });
    QCOMPARE(r.code, 0);
    const QJsonObject s = QJsonDocument::fromJson(r.out).object();
    QVERIFY(s.value(QStringLiteral("rows")).toInt() > 3000);
    QCOMPARE(s.value(QStringLiteral("coverage")).toArray().size(), 3);
    const QString serving_out = QDir(m_dir.path()).filePath(QStringLiteral("serving-bands.json"));
    r = run({ QStringLiteral("error-bands"), QStringLiteral("--serving"),
        QStringLiteral(PARALLAX_SOURCE_DIR) + QStringLiteral("/validation/published-serving-throughput.json"),
        QStringLiteral("--out"), serving_out });
    QCOMPARE(r.code, 0);
    QVERIFY(r.out.contains("leave-one-model-out coverage"));
    QVERIFY(QFileInfo::exists(serving_out));
    // Training runs are not serving rows: refused, naming the file.
    r = run({ QStringLiteral("error-bands"), QStringLiteral("--serving"),
        QStringLiteral(PARALLAX_SOURCE_DIR) + QStringLiteral("/validation/published-runs.json") });
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("published-runs.json"), r.err.constData());
}

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"

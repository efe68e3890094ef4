// A mixed-GPU plan's launch files (core/io/export/hetero_launch.hpp) read back: the Megatron-LM script runs
// in bash with a stand-in torchrun that prints its argv, on a pretended host of each group, and the flags
// and node rank it would start with are checked against the plan's stages; the torchtitan TOML's model
// parts are counted. Plans a stock framework cannot run are refused with the rule named.
#include "io/export/hetero_launch.hpp"
#include "io/preset_catalog.hpp"
#include "io/scenario_io.hpp"
#include "spec/input_error.hpp"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <map>

using namespace parallax;

namespace {

const std::string kStages = PARALLAX_SOURCE_DIR "/docs/examples/hetero-h100-a100-stages.json";

// Four stages of Llama 3 8B on two H100 and two A100 nodes, each stage one node (TP 4 x 2 replicas):
// 12 | 9 | 6 | 5 layers, middle stages uneven, so only the full layout can say it.
Scenario four_stages()
{
    nlohmann::json j = nlohmann::json::parse(R"({
      "schema": 1, "model": "llama3-8b",
      "cluster": { "groups": [
          { "name": "h100", "gpu": "H100-SXM5-80GB", "nodes": 2, "gpus_per_node": 8, "intra_node": "nvlink4-nvswitch" },
          { "name": "a100", "gpu": "A100-SXM4-80GB", "nodes": 2, "gpus_per_node": 8, "intra_node": "nvlink3-nvswitch" } ],
        "inter_node": "ib-ndr" },
      "training": { "global_batch": 64, "seq_len": 4096, "precision": "bf16" },
      "strategy": { "micro_batch": 1, "recompute": "selective", "zero": 1, "schedule": "1f1b",
        "stages": [
          { "layers": 12, "replicas": [ { "group": "h100", "tp": 4 }, { "group": "h100", "tp": 4 } ] },
          { "layers": 9, "replicas": [ { "group": "h100", "tp": 4 }, { "group": "h100", "tp": 4 } ] },
          { "layers": 6, "replicas": [ { "group": "a100", "tp": 4 }, { "group": "a100", "tp": 4 } ] },
          { "layers": 5, "replicas": [ { "group": "a100", "tp": 4 }, { "group": "a100", "tp": 4 } ] } ] } })");
    return parse_scenario(j, "four-stages.json", PresetCatalog::standard());
}

// The argv torchrun gets when the script runs on `host`, one word per element.
QStringList run_on_host(const std::string& script, const QString& host)
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("train.sh"));
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(script.data(), static_cast<qint64>(script.size())) < 0)
        qFatal("cannot write the script");
    f.close();
    const QString bin = dir.filePath(QStringLiteral("bin"));
    QDir().mkpath(bin);
    QFile torchrun(bin + QStringLiteral("/torchrun"));
    if (!torchrun.open(QIODevice::WriteOnly))
        qFatal("cannot write torchrun");
    torchrun.write("#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done\n");
    torchrun.close();
    torchrun.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("PATH"), bin + QStringLiteral(":") + env.value(QStringLiteral("PATH")));
    env.insert(QStringLiteral("MEGATRON_LM"), QStringLiteral("/opt/Megatron-LM"));
    env.insert(QStringLiteral("HOSTS_H100"), QStringLiteral("h100-a h100-b"));
    env.insert(QStringLiteral("HOSTS_A100"), QStringLiteral("a100-a a100-b"));
    env.insert(QStringLiteral("THIS_HOST"), host);
    env.remove(QStringLiteral("NODE_RANK"));
    env.remove(QStringLiteral("MASTER_ADDR"));
    QProcess p;
    p.setProcessEnvironment(env);
    p.start(QStringLiteral("bash"), { path });
    if (!p.waitForFinished(30000) || p.exitCode() != 0)
        qWarning("%s", p.readAllStandardError().constData());
    return QString::fromUtf8(p.readAllStandardOutput()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
}

QString value_of(const QStringList& argv, const QString& flag)
{
    const qsizetype i = argv.indexOf(flag);
    return i >= 0 && i + 1 < argv.size() ? argv[i + 1] : QString();
}

// The refusal's text, or "" when the plan exports.
QString refusal(LaunchFormat f, const Scenario& s)
{
    try {
        export_launch_config(f, s, LaunchSettings {}, "plan.json");
    } catch (const InputError& e) {
        return QString::fromStdString(e.what());
    }
    return QString();
}

} // namespace

class TestHeteroExport : public QObject {
    Q_OBJECT
private slots:
    void megatronStartsEachStageOnItsGroup();
    void unevenMiddleStagesUseTheLayout();
    void torchtitanGetsTheStagesModelParts();
    void refusalsNameTheRule();
};

void TestHeteroExport::megatronStartsEachStageOnItsGroup()
{
    const Scenario s = load_scenario_file(kStages, PresetCatalog::standard());
    const LaunchConfig c = export_launch_config(LaunchFormat::megatron, s, LaunchSettings {}, kStages);
    QCOMPARE(c.files.size(), std::size_t { 1 });
    // The A100 host is node 1: it holds stage 1's ranks 8-15; the H100 host (node 0) is the master.
    const QStringList on_a100 = run_on_host(c.files.front().content, QStringLiteral("a100-a"));
    QCOMPARE(value_of(on_a100, QStringLiteral("--node_rank")), QStringLiteral("1"));
    QCOMPARE(value_of(on_a100, QStringLiteral("--nnodes")), QStringLiteral("2"));
    QCOMPARE(value_of(on_a100, QStringLiteral("--nproc_per_node")), QStringLiteral("8"));
    QCOMPARE(value_of(on_a100, QStringLiteral("--master_addr")), QStringLiteral("h100-a"));
    QCOMPARE(value_of(on_a100, QStringLiteral("--tensor-model-parallel-size")), QStringLiteral("8"));
    QCOMPARE(value_of(on_a100, QStringLiteral("--pipeline-model-parallel-size")), QStringLiteral("2"));
    // 22 layers on the H100 stage; Megatron gives the last stage the other 10.
    QCOMPARE(value_of(on_a100, QStringLiteral("--decoder-first-pipeline-num-layers")), QStringLiteral("22"));
    QVERIFY(!on_a100.contains(QStringLiteral("--pipeline-model-parallel-layout")));
    const QStringList on_h100 = run_on_host(c.files.front().content, QStringLiteral("h100-a"));
    QCOMPARE(value_of(on_h100, QStringLiteral("--node_rank")), QStringLiteral("0"));
    // A host in no list does not start.
    QVERIFY(run_on_host(c.files.front().content, QStringLiteral("elsewhere")).isEmpty());
}

void TestHeteroExport::unevenMiddleStagesUseTheLayout()
{
    const Scenario s = four_stages();
    const HeteroLaunchPlan p = hetero_launch_plan(s);
    QCOMPARE(p.tp, 4);
    QCOMPARE(p.dp, 2);
    QCOMPARE(p.pp, 4);
    QCOMPARE(p.nodes.size(), std::size_t { 4 });
    const char* groups[] = { "h100", "h100", "a100", "a100" };
    for (std::size_t n = 0; n < p.nodes.size(); ++n) {
        QCOMPARE(QString::fromStdString(p.nodes[n].group), QString::fromLatin1(groups[n]));
        QCOMPARE(p.nodes[n].node_in_group, static_cast<int>(n % 2));
        QCOMPARE(p.nodes[n].first_rank, static_cast<long long>(8 * n));
        QCOMPARE(p.nodes[n].stages, std::vector<int> { static_cast<int>(n) });
    }
    const LaunchConfig c = export_launch_config(LaunchFormat::megatron, s, LaunchSettings {}, "four-stages.json");
    const QStringList argv = run_on_host(c.files.front().content, QStringLiteral("a100-b"));
    QCOMPARE(value_of(argv, QStringLiteral("--node_rank")), QStringLiteral("3"));
    QCOMPARE(value_of(argv, QStringLiteral("--nnodes")), QStringLiteral("4"));
    QCOMPARE(value_of(argv, QStringLiteral("--pipeline-model-parallel-layout")), QStringLiteral("Et*12|t*9|t*6|t*5L"));
    QVERIFY(!argv.contains(QStringLiteral("--decoder-first-pipeline-num-layers")));
    QCOMPARE(value_of(run_on_host(c.files.front().content, QStringLiteral("h100-b")), QStringLiteral("--node_rank")),
        QStringLiteral("1"));
}

void TestHeteroExport::torchtitanGetsTheStagesModelParts()
{
    Scenario s = four_stages();
    s.strategy.zero = 3; // torchtitan shards with FSDP2; it has no optimizer-only ZeRO 1
    s.strategy.sequence_parallel = true; // and its TP always shards the norms
    const LaunchConfig c = export_launch_config(LaunchFormat::torchtitan, s, LaunchSettings {}, "x.json");
    const LaunchFile* toml = c.find("torchtitan.toml");
    QVERIFY(toml && c.find("launch_torchtitan.sh"));
    const std::string& t = toml->content;
    QVERIFY(t.find("tensor_parallel_degree = 4") != std::string::npos);
    QVERIFY(t.find("pipeline_parallel_degree = 4") != std::string::npos);
    // One model part per stage with the plan's layers: 12, 9, 6 and 5.
    const std::size_t list = t.find("module_fqns_per_model_part = [");
    QVERIFY(list != std::string::npos);
    const std::string parts = t.substr(list, t.find("\n]\n", list) - list);
    std::vector<int> counts;
    std::size_t at = parts.find("\n  [");
    while (at != std::string::npos) {
        const std::size_t end = parts.find('\n', at + 1);
        const std::string line = parts.substr(at, end == std::string::npos ? std::string::npos : end - at);
        int n = 0;
        for (std::size_t k = line.find("\"layers."); k != std::string::npos; k = line.find("\"layers.", k + 1))
            ++n;
        counts.push_back(n);
        at = end == std::string::npos ? end : parts.find("\n  [", end);
    }
    QCOMPARE(counts, (std::vector<int> { 12, 9, 6, 5 }));
    QVERIFY(t.find("\"layers.31\", \"norm\", \"output\"]") != std::string::npos);
    // The launcher puts node 3 on the second A100 host.
    QVERIFY(c.find("launch_torchtitan.sh")->content.find("\"${HOSTS_A100_LIST[1]}\"") != std::string::npos);
}

void TestHeteroExport::refusalsNameTheRule()
{
    Scenario s = load_scenario_file(kStages, PresetCatalog::standard());
    QVERIFY(refusal(LaunchFormat::megatron, s).isEmpty());
    // Another TP on the A100 stage: Megatron-LM has one --tensor-model-parallel-size.
    Scenario tp = s;
    tp.stages[1].replicas[0].tp = 4;
    QVERIFY2(refusal(LaunchFormat::megatron, tp)
                 .contains(QStringLiteral("Megatron-LM needs one TP for every stage; stage 1 uses TP 4 on a100")),
        qPrintable(refusal(LaunchFormat::megatron, tp)));
    QVERIFY(refusal(LaunchFormat::torchtitan, tp).contains(QStringLiteral("torchtitan needs one TP for every stage")));
    QVERIFY(refusal(LaunchFormat::megatron, tp).contains(QStringLiteral("strategy.stages[1].replicas[0].tp")));
    // The example with H100 and A100 replicas in every stage shares the batch by speed.
    const Scenario mixed
        = load_scenario_file(PARALLAX_SOURCE_DIR "/docs/examples/hetero-h100-a100.json", PresetCatalog::standard());
    QVERIFY(refusal(LaunchFormat::megatron, mixed).contains(QStringLiteral("strategy.batch_split")));
    // With an even split its stage 0 puts an H100 and an A100 replica on one node's ranks 0-7.
    Scenario even = mixed;
    even.batch_split = BatchSplit::even;
    QVERIFY2(refusal(LaunchFormat::megatron, even).contains(QStringLiteral("share one node")),
        qPrintable(refusal(LaunchFormat::megatron, even)));
    // Formats without a mixed-plan writer say so.
    QVERIFY(refusal(LaunchFormat::deepspeed, s).contains(QStringLiteral("mixed plans are exported for Megatron-LM")));
    // Another replica count per stage.
    Scenario dp = four_stages();
    dp.stages[3].replicas.pop_back();
    QVERIFY(refusal(LaunchFormat::megatron, dp).contains(QStringLiteral("one data-parallel degree for every stage")));
}

QTEST_GUILESS_MAIN(TestHeteroExport)
#include "tst_hetero_export.moc"

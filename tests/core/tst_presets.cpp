// Presets (presets/README.md): every embedded preset parses, the required GPU names exist, every
// number carries a source, published parameter counts agree with ours, and user folders add and
// replace presets without breaking on a bad file.
#include "io/preset_catalog.hpp"
#include "io/scenario_io.hpp"
#include "model/model_math.hpp"
#include "spec/input_error.hpp"
#include "spec/units.hpp"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <string>

using namespace parallax;
using nlohmann::json;

namespace {

const PresetCatalog& catalog()
{
    return PresetCatalog::standard();
}

QString qs(const std::string& s)
{
    return QString::fromStdString(s);
}

// Dotted paths of every numeric value (booleans are not numbers), skipping the citations themselves.
void numeric_paths(const json& j, const std::string& prefix, QStringList& out)
{
    for (auto it = j.begin(); it != j.end(); ++it) {
        if (prefix.empty() && (it.key() == "source" || it.key() == "notes"))
            continue;
        const std::string path = prefix.empty() ? it.key() : prefix + "." + it.key();
        if (it->is_number())
            out << qs(path);
        else if (it->is_object())
            numeric_paths(*it, path, out);
    }
}

// Every key path (objects recursed), to find citations that point at nothing.
void all_paths(const json& j, const std::string& prefix, std::set<std::string>& out)
{
    for (auto it = j.begin(); it != j.end(); ++it) {
        const std::string path = prefix.empty() ? it.key() : prefix + "." + it.key();
        out.insert(path);
        if (it->is_object())
            all_paths(*it, path, out);
    }
}

// A source key covers itself and everything below it (presets/README.md).
bool covered(const std::string& path, const json& source)
{
    for (auto it = source.begin(); it != source.end(); ++it) {
        const std::string& k = it.key();
        if (path == k || (path.size() > k.size() && path.compare(0, k.size(), k) == 0 && path[k.size()] == '.'))
            return true;
    }
    return false;
}

const char* kSourcedKinds[] = { "gpus", "fabrics", "clusters", "models" };

void write_file(const QString& path, const QByteArray& bytes)
{
    QFile f(path);
    QVERIFY2(f.open(QIODevice::WriteOnly | QIODevice::Truncate), qPrintable(path));
    QCOMPARE(f.write(bytes), bytes.size());
}

const QByteArray kUserGpu = R"({
  "name": "MyLab-GPU", "architecture": "hopper",
  "peak_TFLOPs": { "bf16": 500, "fp16": 500 },
  "memory_GiB": 48, "memory_bw_GBps": 2000, "tdp_W": 450, "idle_W": 40,
  "source": { "peak_TFLOPs": "lab measurement", "memory_GiB": "nvidia-smi", "memory_bw_GBps": "spec",
              "tdp_W": "spec", "idle_W": "nvidia-smi" }
})";

// Same name as the built-in H100 preset, with a different memory size.
const QByteArray kUserH100 = R"({
  "name": "H100-SXM5-80GB", "architecture": "hopper",
  "peak_TFLOPs": { "bf16": 900, "fp8": 1800 },
  "memory_GiB": 64, "memory_bw_GBps": 3000, "tdp_W": 600, "idle_W": 60
})";

const QByteArray kUserScenario = R"({
  "schema": 1,
  "model": "llama3-8b",
  "cluster": { "gpu": "MyLab-GPU", "nodes": 1, "gpus_per_node": 8,
               "intra_node": "pcie5", "inter_node": "roce-400g" },
  "training": { "global_batch": 16, "seq_len": 4096 },
  "strategy": { "tp": 8 }
})";

} // namespace

class TestPresets : public QObject {
    Q_OBJECT
private slots:
    void builtinsLoadWithoutErrors();
    void everyPresetParses_data();
    void everyPresetParses();
    void requiredGpuNames();
    void servingGpusMatchTheirDatasheets_data();
    void servingGpusMatchTheirDatasheets();
    void requiredFabricsClustersModels();
    void defaultScenarioExists();
    void everyNumberHasASource_data();
    void everyNumberHasASource();
    void publishedParameterCounts_data();
    void publishedParameterCounts();
    void userPresetsAddAndReplace();
    void brokenUserFilesAreReported();
    void userFileWithNumberOverflowIsReported();
    void userDirsFromEnvironment();
};

void TestPresets::builtinsLoadWithoutErrors()
{
    const PresetCatalog builtins = PresetCatalog::load({});
    QCOMPARE(builtins.load_errors().size(), std::size_t(0));
    for (PresetKind k : kAllPresetKinds) {
        QVERIFY2(!builtins.entries(k).empty(), to_string(k).data());
        for (const PresetEntry* e : builtins.entries(k)) {
            QVERIFY(!e->user);
            QCOMPARE(e->kind, k);
            // One object per file, named <name>.json (presets/README.md).
            QCOMPARE(qs(e->origin),
                QStringLiteral("builtin:") + qs(std::string(to_string(k))) + QLatin1Char('/') + qs(e->name)
                    + QStringLiteral(".json"));
            QVERIFY(e->json.is_object());
        }
    }
}

void TestPresets::everyPresetParses_data()
{
    QTest::addColumn<int>("kind");
    QTest::addColumn<QString>("name");
    for (PresetKind k : kAllPresetKinds)
        for (const auto& n : catalog().names(k))
            QTest::newRow((std::string(to_string(k)) + "/" + n).c_str()) << static_cast<int>(k) << qs(n);
}

void TestPresets::everyPresetParses()
{
    QFETCH(int, kind);
    QFETCH(QString, name);
    const PresetEntry* e = catalog().find(static_cast<PresetKind>(kind), name.toStdString());
    QVERIFY(e != nullptr);
    try {
        switch (static_cast<PresetKind>(kind)) {
        case PresetKind::gpus: {
            const GpuSpec g = parse_gpu(e->json, e->origin, "");
            QCOMPARE(qs(g.name), name);
            QVERIFY(g.architecture != GpuArchitecture::generic);
            QVERIFY(g.supports(Precision::bf16) || g.supports(Precision::fp16));
            QVERIFY(g.memory_bytes >= 7 * units::kGiB); // the smallest: RTX 2080, 8 GB (7.8 GiB usable)
            QVERIFY(g.memory_bw_Bps > 0);
            QVERIFY(g.idle_W > 0 && g.idle_W < g.tdp_W);
            QVERIFY(!g.source.empty());
            break;
        }
        case PresetKind::fabrics: {
            const FabricSpec f = parse_fabric(e->json, e->origin, "");
            QCOMPARE(qs(f.name), name);
            QVERIFY(f.kind != FabricKind::unspecified);
            QVERIFY(f.bw_Bps > 0);
            QVERIFY(f.latency_s > 0);
            QVERIFY(f.oversubscription >= 1);
            break;
        }
        case PresetKind::clusters: {
            ScenarioRefs refs;
            const ClusterSpec c = resolve_cluster(json(e->name), "test", "cluster", catalog(), &refs);
            QCOMPARE(qs(c.name), name);
            QCOMPARE(qs(refs.cluster), name);
            QVERIFY(c.total_gpus() >= 8);
            // The references inside a cluster preset are presets themselves.
            QVERIFY(catalog().find(PresetKind::gpus, e->json.at("gpu").get<std::string>()) != nullptr);
            QVERIFY(catalog().find(PresetKind::fabrics, e->json.at("intra_node").get<std::string>()) != nullptr);
            QVERIFY(catalog().find(PresetKind::fabrics, e->json.at("inter_node").get<std::string>()) != nullptr);
            QCOMPARE(qs(c.gpu.name), qs(e->json.at("gpu").get<std::string>()));
            break;
        }
        case PresetKind::models: {
            const ModelSpec m = parse_model(e->json, e->origin, "");
            QCOMPARE(qs(m.name), name);
            QVERIFY(m.layers > 0 && m.hidden > 0 && m.heads > 0 && m.vocab > 0);
            QVERIFY(m.heads % m.kv_heads == 0);
            QVERIFY(total_params(m) > 1e9);
            if (m.is_moe())
                QVERIFY(active_params(m) < total_params(m));
            else
                QCOMPARE(active_params(m), total_params(m));
            break;
        }
        case PresetKind::scenarios: {
            const Scenario s = load_scenario_preset(name.toStdString(), catalog());
            QCOMPARE(s.strategy.total_gpus(), s.cluster.total_gpus());
            QVERIFY(!s.description.empty());
            break;
        }
        }
    } catch (const InputError& err) {
        QFAIL(err.what());
    }
}

void TestPresets::requiredGpuNames()
{
    // Exactly these names: scripts refer to them.
    const QStringList required
        = { QStringLiteral("V100-SXM2-32GB"), QStringLiteral("A100-SXM4-40GB"), QStringLiteral("A100-SXM4-80GB"),
              QStringLiteral("H100-SXM5-80GB"), QStringLiteral("H800-SXM5-80GB"), QStringLiteral("H200-SXM-141GB"),
              QStringLiteral("B200"), QStringLiteral("B300"), QStringLiteral("MI250X"), QStringLiteral("MI300X"),
              // The GPUs of the published heterogeneous runs (validation/hetero-runs.json).
              QStringLiteral("V100-SXM2-16GB"), QStringLiteral("T4"), QStringLiteral("RTX-2080"),
              QStringLiteral("RTX-2080-Ti"), QStringLiteral("Titan-RTX"), QStringLiteral("RTX-3080-Ti"),
              QStringLiteral("RTX-3090"), QStringLiteral("RTX-4090"), QStringLiteral("A100-PCIe-40GB"),
              QStringLiteral("A100-PCIe-80GB"), QStringLiteral("GH200-96GB"),
              // The GPUs of the measured serving rows and the serving GPUs users ask for.
              QStringLiteral("GB200"), QStringLiteral("GB300"), QStringLiteral("L40S"),
              QStringLiteral("RTX-PRO-6000-Blackwell-Server") };
    QStringList names;
    for (const auto& n : PresetCatalog::load({}).names(PresetKind::gpus))
        names << qs(n);
    QStringList expected = required;
    expected.sort();
    names.sort();
    QCOMPARE(names, expected);
    // fp8 exists on Hopper and later, not on Volta/Ampere/CDNA2.
    for (const char* n : { "V100-SXM2-32GB", "A100-SXM4-40GB", "A100-SXM4-80GB" }) {
        const GpuSpec g = parse_gpu(catalog().find(PresetKind::gpus, n)->json, n, "");
        QVERIFY2(!g.supports(Precision::fp8), n);
    }
    for (const char* n : { "H100-SXM5-80GB", "H800-SXM5-80GB", "H200-SXM-141GB", "B200", "B300", "MI300X" }) {
        const GpuSpec g = parse_gpu(catalog().find(PresetKind::gpus, n)->json, n, "");
        QVERIFY2(g.supports(Precision::fp8), n);
    }
}

void TestPresets::servingGpusMatchTheirDatasheets_data()
{
    // The datasheets' dense peaks (half the figures with sparsity), memory (the stacks' binary
    // gigabytes, of which the framework sees a little less) and bandwidth, to within 10%.
    QTest::addColumn<QString>("name");
    QTest::addColumn<double>("bf16_TFLOPs");
    QTest::addColumn<double>("fp8_TFLOPs");
    QTest::addColumn<double>("fp4_TFLOPs");
    QTest::addColumn<double>("memory_GiB");
    QTest::addColumn<double>("bw_GBps");
    QTest::addColumn<double>("tdp_W");
    QTest::newRow("GB200") << "GB200" << 2500.0 << 5000.0 << 10000.0 << 192.0 << 8000.0 << 1200.0;
    QTest::newRow("GB300") << "GB300" << 2500.0 << 5000.0 << 15000.0 << 288.0 << 8000.0 << 1400.0;
    QTest::newRow("L40S") << "L40S" << 366.0 << 733.0 << 0.0 << 48.0 << 864.0 << 350.0;
    QTest::newRow("RTX PRO 6000") << "RTX-PRO-6000-Blackwell-Server" << 500.0 << 1000.0 << 2000.0 << 96.0 << 1600.0
                                  << 600.0;
}

void TestPresets::servingGpusMatchTheirDatasheets()
{
    QFETCH(QString, name);
    QFETCH(double, bf16_TFLOPs);
    QFETCH(double, fp8_TFLOPs);
    QFETCH(double, fp4_TFLOPs);
    QFETCH(double, memory_GiB);
    QFETCH(double, bw_GBps);
    QFETCH(double, tdp_W);
    const std::string n = name.toStdString();
    const GpuSpec g = parse_gpu(catalog().find(PresetKind::gpus, n)->json, n, "");
    const auto near = [](double got, double want) { return std::fabs(got / want - 1.0) < 0.1; };
    QVERIFY(near(g.peak(Precision::bf16) / 1e12, bf16_TFLOPs));
    QVERIFY(near(g.peak(Precision::fp8) / 1e12, fp8_TFLOPs));
    QCOMPARE(g.supports(Precision::fp4), fp4_TFLOPs > 0);
    if (fp4_TFLOPs > 0)
        QVERIFY(near(g.peak(Precision::fp4) / 1e12, fp4_TFLOPs));
    const double seen_GiB = g.memory_bytes / (1024.0 * 1024 * 1024);
    QVERIFY(seen_GiB <= memory_GiB);
    QVERIFY(near(seen_GiB, memory_GiB));
    QVERIFY(near(g.memory_bw_Bps / 1e9, bw_GBps));
    QVERIFY(near(g.tdp_W, tdp_W));
    QVERIFY(g.idle_W > 0 && g.idle_W < 0.2 * g.tdp_W);
}

void TestPresets::requiredFabricsClustersModels()
{
    // Every built-in cluster and scenario resolves through names only, and the families the issue
    // asks for are there.
    const auto has_prefix = [](PresetKind k, const char* prefix) {
        for (const auto& n : catalog().names(k))
            if (n.rfind(prefix, 0) == 0)
                return true;
        return false;
    };
    for (const char* p :
        { "nvlink3", "nvlink4", "nvlink5", "pcie4", "pcie5", "xgmi", "ib-hdr", "ib-ndr", "ib-xdr", "roce" })
        QVERIFY2(has_prefix(PresetKind::fabrics, p), p);
    for (const char* p : { "dgx-a100", "dgx-h100", "dgx-h200", "dgx-b200", "gb200-nvl72", "mi300x" })
        QVERIFY2(has_prefix(PresetKind::clusters, p), p);
    for (const char* p : { "gpt3-175b", "megatron-22b", "megatron-530b", "megatron-1t", "llama2-70b", "llama3-8b",
             "llama3-70b", "llama3.1-8b", "llama3.1-70b", "llama3.1-405b", "nemotron4-15b", "nemotron4-340b",
             "mixtral-8x7b", "mixtral-8x22b", "deepseek-v3", "qwen3-235b-a22b" })
        QVERIFY2(catalog().find(PresetKind::models, p) != nullptr, p);
}

void TestPresets::defaultScenarioExists()
{
    const Scenario s = load_scenario_preset("default", catalog());
    QVERIFY(s.strategy.total_gpus() > 0);
}

void TestPresets::everyNumberHasASource_data()
{
    QTest::addColumn<int>("kind");
    QTest::addColumn<QString>("name");
    for (const char* kind_name : kSourcedKinds) {
        const PresetKind k = *preset_kind_from_string(kind_name);
        for (const auto& n : catalog().names(k))
            QTest::newRow((std::string(kind_name) + "/" + n).c_str()) << static_cast<int>(k) << qs(n);
    }
}

void TestPresets::everyNumberHasASource()
{
    QFETCH(int, kind);
    QFETCH(QString, name);
    const json& j = catalog().find(static_cast<PresetKind>(kind), name.toStdString())->json;
    QVERIFY2(j.contains("source") && j["source"].is_object(), "source must be an object of per-key citations");
    const json& source = j["source"];
    QStringList paths;
    numeric_paths(j, "", paths);
    if (static_cast<PresetKind>(kind) != PresetKind::clusters)
        QVERIFY(!paths.isEmpty());
    QStringList uncovered;
    for (const auto& p : paths)
        if (!covered(p.toStdString(), source))
            uncovered << p;
    QCOMPARE(uncovered, QStringList());
    // Each citation is a non-empty text about a key that exists.
    std::set<std::string> keys;
    all_paths(j, "", keys);
    QStringList stale;
    for (auto it = source.begin(); it != source.end(); ++it) {
        QVERIFY2(it->is_string() && !it->get<std::string>().empty(), it.key().c_str());
        if (!keys.count(it.key()))
            stale << qs(it.key());
    }
    QCOMPARE(stale, QStringList());
}

void TestPresets::publishedParameterCounts_data()
{
    QTest::addColumn<QString>("name");
    int with_count = 0;
    for (const auto& n : catalog().names(PresetKind::models)) {
        QTest::newRow(n.c_str()) << qs(n);
        with_count += catalog().find(PresetKind::models, n)->json.contains("params_B") ? 1 : 0;
    }
    QVERIFY(with_count >= 10); // most models state their published size
}

void TestPresets::publishedParameterCounts()
{
    QFETCH(QString, name);
    const PresetEntry* e = catalog().find(PresetKind::models, name.toStdString());
    const ModelSpec m = parse_model(e->json, e->origin, "");
    if (!m.params_B) {
        // Nothing published to compare with; the count must still be a sane positive number.
        QVERIFY(total_params(m) > 0);
        return;
    }
    const double ours = total_params(m) / 1e9;
    const double rel = std::fabs(ours - *m.params_B) / *m.params_B;
    QVERIFY2(rel <= 0.02,
        qPrintable(name + QStringLiteral(": params_B ") + QString::number(*m.params_B)
            + QStringLiteral(" but total_params() = ") + QString::number(ours, 'f', 3) + QStringLiteral("B (")
            + QString::number(100 * rel, 'f', 2) + QStringLiteral("%)")));
}

void TestPresets::userPresetsAddAndReplace()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QDir root(dir.path());
    for (const char* sub : { "gpus", "scenarios", "models" })
        QVERIFY(root.mkpath(QLatin1String(sub)));
    write_file(root.filePath(QStringLiteral("gpus/MyLab-GPU.json")), kUserGpu);
    write_file(root.filePath(QStringLiteral("gpus/H100-SXM5-80GB.json")), kUserH100);
    write_file(root.filePath(QStringLiteral("scenarios/my-lab-run.json")), kUserScenario);
    // Not a .json file: ignored.
    write_file(root.filePath(QStringLiteral("gpus/README.txt")), "not a preset");
    // The name comes from the object, not the file name; without a name, from the file name.
    write_file(root.filePath(QStringLiteral("models/whatever.json")),
        R"({"name": "tiny-user-model", "layers": 2, "hidden": 256, "heads": 4, "ffn_hidden": 1024, "vocab": 1000})");
    write_file(root.filePath(QStringLiteral("models/nameless.json")),
        R"({"layers": 2, "hidden": 256, "heads": 4, "ffn_hidden": 1024, "vocab": 1000})");

    const PresetCatalog cat = PresetCatalog::load({ dir.path().toStdString() });
    QCOMPARE(cat.load_errors().size(), std::size_t(0));

    const PresetEntry* mine = cat.find(PresetKind::gpus, "MyLab-GPU");
    QVERIFY(mine != nullptr);
    QVERIFY(mine->user);
    QCOMPARE(qs(mine->origin), root.filePath(QStringLiteral("gpus/MyLab-GPU.json")));
    QCOMPARE(parse_gpu(mine->json, mine->origin, "").memory_bytes, 48 * units::kGiB);

    // The user's H100 replaces the built-in one: one entry, the user's numbers.
    const PresetEntry* h100 = cat.find(PresetKind::gpus, "H100-SXM5-80GB");
    QVERIFY(h100 != nullptr);
    QVERIFY(h100->user);
    QCOMPARE(parse_gpu(h100->json, h100->origin, "").memory_bytes, 64 * units::kGiB);
    const auto gpu_names = cat.names(PresetKind::gpus);
    QCOMPARE(static_cast<int>(std::count(gpu_names.begin(), gpu_names.end(), std::string("H100-SXM5-80GB"))), 1);
    QCOMPARE(gpu_names.size(), PresetCatalog::load({}).names(PresetKind::gpus).size() + 1);
    // ...and scenarios that name it see the replacement.
    const Scenario def = load_scenario_preset("default", cat);
    QCOMPARE(def.cluster.gpu.memory_bytes, 64 * units::kGiB);
    // Other built-ins are untouched.
    const PresetEntry* a100 = cat.find(PresetKind::gpus, "A100-SXM4-80GB");
    QVERIFY(a100 != nullptr);
    QVERIFY(!a100->user);

    QVERIFY(cat.find(PresetKind::models, "tiny-user-model") != nullptr);
    QVERIFY(cat.find(PresetKind::models, "nameless") != nullptr);
    QVERIFY(cat.find(PresetKind::models, "whatever") == nullptr);

    // A user scenario that refers to a user GPU loads.
    try {
        const Scenario s = load_scenario_preset("my-lab-run", cat);
        QCOMPARE(qs(s.cluster.gpu.name), QStringLiteral("MyLab-GPU"));
        QCOMPARE(s.strategy.dp, 1);
        QVERIFY(s.dp_derived);
    } catch (const InputError& e) {
        QFAIL(e.what());
    }
    // The standard catalog (tests run with an empty user folder) does not see them.
    QVERIFY(PresetCatalog::load({}).find(PresetKind::gpus, "MyLab-GPU") == nullptr);
}

void TestPresets::brokenUserFilesAreReported()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QDir root(dir.path());
    QVERIFY(root.mkpath(QStringLiteral("gpus")));
    QVERIFY(root.mkpath(QStringLiteral("fabrics")));
    write_file(root.filePath(QStringLiteral("gpus/aaa-broken.json")), "{ \"name\": \"Broken\", \"tdp_W\": ");
    write_file(root.filePath(QStringLiteral("gpus/MyLab-GPU.json")), kUserGpu);
    write_file(root.filePath(QStringLiteral("fabrics/array.json")), "[1, 2, 3]");

    const PresetCatalog cat
        = PresetCatalog::load({ dir.path().toStdString(), root.filePath(QStringLiteral("missing")).toStdString() });
    QCOMPARE(cat.load_errors().size(), std::size_t(2));
    QStringList errors;
    for (const auto& e : cat.load_errors())
        errors << qs(e);
    QVERIFY2(errors.filter(QStringLiteral("aaa-broken.json")).size() == 1, qPrintable(errors.join(QLatin1Char('\n'))));
    QVERIFY2(errors.filter(QStringLiteral("aaa-broken.json")).first().contains(QStringLiteral("not valid JSON")),
        qPrintable(errors.join(QLatin1Char('\n'))));
    QVERIFY2(errors.filter(QStringLiteral("array.json")).size() == 1, qPrintable(errors.join(QLatin1Char('\n'))));
    // The good files, before and after the broken one, and every built-in, still load.
    QVERIFY(cat.find(PresetKind::gpus, "MyLab-GPU") != nullptr);
    QVERIFY(cat.find(PresetKind::gpus, "Broken") == nullptr);
    const PresetCatalog builtins = PresetCatalog::load({});
    for (PresetKind k : kAllPresetKinds)
        for (const auto& n : builtins.names(k))
            QVERIFY2(cat.find(k, n) != nullptr, n.c_str());
    QVERIFY_THROWS_NO_EXCEPTION(load_scenario_preset("default", cat));
}

void TestPresets::userFileWithNumberOverflowIsReported()
{
    // Valid JSON grammar, but 1e400 fits no double: one more broken file, reported and skipped.
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QDir root(dir.path());
    QVERIFY(root.mkpath(QStringLiteral("gpus")));
    write_file(root.filePath(QStringLiteral("gpus/overflow.json")),
        QByteArray(kUserGpu).replace("\"tdp_W\": 450", "\"tdp_W\": 1e400"));
    write_file(
        root.filePath(QStringLiteral("gpus/zz-good.json")), QByteArray(kUserGpu).replace("MyLab-GPU", "Good-GPU"));
    try {
        const PresetCatalog cat = PresetCatalog::load({ dir.path().toStdString() });
        QCOMPARE(cat.load_errors().size(), std::size_t(1));
        QVERIFY2(
            qs(cat.load_errors().front()).contains(QStringLiteral("overflow.json")), cat.load_errors().front().c_str());
        QVERIFY(cat.find(PresetKind::gpus, "Good-GPU") != nullptr);
    } catch (const std::exception& e) {
        QFAIL(qPrintable(QStringLiteral("PresetCatalog::load threw: ") + QString::fromUtf8(e.what())));
    }
}

void TestPresets::userDirsFromEnvironment()
{
    // PARALLAX_PRESET_PATH (':'-separated) comes first, then the XDG folder.
    const auto save = [](const char* name) {
        return qEnvironmentVariableIsSet(name) ? std::optional<QByteArray>(qgetenv(name)) : std::nullopt;
    };
    const auto restore = [](const char* name, const std::optional<QByteArray>& v) {
        if (v)
            qputenv(name, *v);
        else
            qunsetenv(name);
    };
    const auto old_path = save("PARALLAX_PRESET_PATH");
    const auto old_xdg = save("XDG_CONFIG_HOME");
    qputenv("PARALLAX_PRESET_PATH", "/a/presets::/b/presets");
    qputenv("XDG_CONFIG_HOME", "/xdg");
    const auto dirs = PresetCatalog::default_user_dirs();
    restore("PARALLAX_PRESET_PATH", old_path);
    restore("XDG_CONFIG_HOME", old_xdg);
    QStringList got;
    for (const auto& d : dirs)
        got << qs(d);
    QCOMPARE(got,
        QStringList(
            { QStringLiteral("/a/presets"), QStringLiteral("/b/presets"), QStringLiteral("/xdg/parallax/presets") }));
}

QTEST_GUILESS_MAIN(TestPresets)
#include "tst_presets.moc"

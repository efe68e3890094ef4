// `parallax-cli parse-log` as scripts call it: the JSON shape of docs/cli.md, keys left out when a log
// does not print them, the table, and exit code 2 with the file named for anything unreadable.
#include <nlohmann/json.hpp>

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <set>
#include <string>

using json = nlohmann::ordered_json; // keeps the printed key order

namespace {

const QString kFixtureDir = QStringLiteral(PARALLAX_SOURCE_DIR "/tests/data/logs/");

struct Run {
    int exit_code = -1;
    QByteArray out;
    QByteArray err;
};

Run run_cli(const QStringList& args)
{
    QProcess p;
    p.start(QStringLiteral(PARALLAX_CLI_PATH), args);
    if (!p.waitForFinished(60000))
        return {};
    return { p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardOutput(),
        p.readAllStandardError() };
}

const std::set<std::string> kStepKeys { "step", "step_time_s", "tokens_per_s", "samples_per_s", "tflops_per_gpu", "mfu",
    "memory_GiB", "power_W" };
const std::set<std::string> kSummaryKeys { "steps", "step_time_s", "tokens_per_s", "tflops_per_gpu",
    "peak_memory_GiB" };

} // namespace

class TestParseLogCli : public QObject {
    Q_OBJECT

private slots:
    void jsonShapeForEveryFixture_data();
    void jsonShapeForEveryFixture();
    void keysLeftOutWhenNotPrinted();
    void explicitFormat();
    void tableOutput();
    void unreadableFileExits2NamingIt();
    void unrecognisedLogExits2NamingIt();
    void badArguments();
};

void TestParseLogCli::jsonShapeForEveryFixture_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("format");
    QFile index(kFixtureDir + QStringLiteral("index.json"));
    QVERIFY(index.open(QIODevice::ReadOnly));
    for (const auto& e : json::parse(index.readAll().toStdString())) {
        const std::string file = e.at("file").get<std::string>();
        QTest::newRow(file.c_str()) << QString::fromStdString(file)
                                    << QString::fromStdString(e.at("framework").get<std::string>());
    }
}

void TestParseLogCli::jsonShapeForEveryFixture()
{
    QFETCH(QString, file);
    QFETCH(QString, format);
    const Run r = run_cli({ QStringLiteral("parse-log"), kFixtureDir + file, QStringLiteral("--json") });
    QVERIFY2(r.exit_code == 0, r.err.constData());
    const json j = json::parse(r.out.toStdString());
    // Top-level keys, in the contract's order.
    std::vector<std::string> keys;
    for (const auto& [k, v] : j.items())
        keys.push_back(k);
    QVERIFY(keys == (std::vector<std::string> { "schema", "format", "steps", "summary" }));
    QCOMPARE(j.at("schema").get<int>(), 1);
    QCOMPARE(QString::fromStdString(j.at("format").get<std::string>()), format);
    QVERIFY(j.at("steps").is_array() && !j.at("steps").empty());
    std::set<long long> seen;
    for (const auto& step : j.at("steps")) {
        QVERIFY(step.at("step").is_number_integer());
        QVERIFY2(seen.insert(step.at("step").get<long long>()).second, "a step appears twice");
        QVERIFY(step.size() >= 2); // every logged step carries at least one value
        for (const auto& [k, v] : step.items()) {
            QVERIFY2(kStepKeys.count(k), k.c_str());
            QVERIFY2(v.is_number(), k.c_str());
        }
        if (step.contains("mfu"))
            QVERIFY(step.at("mfu").get<double>() >= 0 && step.at("mfu").get<double>() < 1); // a fraction
    }
    const json& summary = j.at("summary");
    QCOMPARE(summary.at("steps").get<std::size_t>(), j.at("steps").size());
    for (const auto& [k, v] : summary.items()) {
        QVERIFY2(kSummaryKeys.count(k), k.c_str());
        QVERIFY2(v.is_number(), k.c_str());
    }
}

void TestParseLogCli::keysLeftOutWhenNotPrinted()
{
    // Megatron-LM (2021) prints no tokens/s, MFU or power; step 20 has the memory reports.
    Run r = run_cli(
        { QStringLiteral("parse-log"), kFixtureDir + QStringLiteral("megatron-04.log"), QStringLiteral("--json") });
    QCOMPARE(r.exit_code, 0);
    json j = json::parse(r.out.toStdString());
    for (const auto& step : j.at("steps")) {
        QVERIFY(step.contains("step_time_s"));
        for (const char* absent : { "tokens_per_s", "samples_per_s", "tflops_per_gpu", "mfu", "power_W" })
            QVERIFY2(!step.contains(absent), absent);
        QCOMPARE(step.contains("memory_GiB"), step.at("step").get<int>() == 20);
    }
    QCOMPARE(j.at("steps").at(1).at("memory_GiB").get<double>(), 26880.0 / 1024);
    QVERIFY(std::abs(j.at("summary").at("step_time_s").get<double>() - 1.6235) < 1e-12);
    QVERIFY(!j.at("summary").contains("tokens_per_s"));
    QVERIFY(!j.at("summary").contains("tflops_per_gpu"));

    // torchtitan with a single step: no medians, but the peak memory.
    r = run_cli(
        { QStringLiteral("parse-log"), kFixtureDir + QStringLiteral("torchtitan-08.log"), QStringLiteral("--json") });
    QCOMPARE(r.exit_code, 0);
    j = json::parse(r.out.toStdString());
    QCOMPARE(j.at("steps").size(), std::size_t(1));
    QCOMPARE(j.at("steps").at(0).at("tokens_per_s").get<double>(), 6785.0);
    QCOMPARE(j.at("steps").at(0).at("mfu").get<double>(), 0.3973);
    QVERIFY(!j.at("steps").at(0).contains("step_time_s"));
    QVERIFY(!j.at("summary").contains("step_time_s"));
    QCOMPARE(j.at("summary").at("peak_memory_GiB").get<double>(), 68.57);
}

void TestParseLogCli::explicitFormat()
{
    const QString log = kFixtureDir + QStringLiteral("torchtitan-06.log");
    Run r = run_cli({ QStringLiteral("parse-log"), log, QStringLiteral("--format"), QStringLiteral("torchtitan"),
        QStringLiteral("--json") });
    QCOMPARE(r.exit_code, 0);
    const json j = json::parse(r.out.toStdString());
    QCOMPARE(j.at("summary").at("tokens_per_s").get<double>(), 10290.0);
    QCOMPARE(j.at("summary").at("step_time_s").get<double>(), 1.991);
    r = run_cli({ QStringLiteral("parse-log"), log, QStringLiteral("--format=megatron") });
    QCOMPARE(r.exit_code, 2);
    QVERIFY2(r.err.contains(log.toUtf8()) && r.err.contains("megatron"), r.err.constData());
}

void TestParseLogCli::tableOutput()
{
    const QString log = kFixtureDir + QStringLiteral("megatron-07.log");
    const Run r = run_cli({ QStringLiteral("parse-log"), log });
    QCOMPARE(r.exit_code, 0);
    QVERIFY(r.out.contains("megatron log, 11 steps"));
    QVERIFY(r.out.contains("TFLOP/s/GPU"));
    QVERIFY(r.out.contains("31214"));
    QVERIFY(r.out.contains("106.46"));
    QVERIFY(r.out.contains("147.485")); // the summary's median TFLOP/s
    QVERIFY(!r.out.contains("tokens/s/GPU  ")); // no empty tokens/s column
    QVERIFY(r.err.isEmpty());
}

void TestParseLogCli::unreadableFileExits2NamingIt()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString missing = dir.filePath(QStringLiteral("no-such.log"));
    Run r = run_cli({ QStringLiteral("parse-log"), missing, QStringLiteral("--json") });
    QCOMPARE(r.exit_code, 2);
    QVERIFY2(r.err.contains(missing.toUtf8()), r.err.constData());
    QVERIFY(r.out.isEmpty());

    r = run_cli({ QStringLiteral("parse-log"), dir.path() });
    QCOMPARE(r.exit_code, 2);
    QVERIFY2(r.err.contains(dir.path().toUtf8()), r.err.constData());
}

void TestParseLogCli::unrecognisedLogExits2NamingIt()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("noise.log"));
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    static const char kNoise[] = "just some\nwarnings\n\x00\xff binary";
    f.write(kNoise, sizeof kNoise - 1);
    f.close();
    for (const QString& format : { QStringLiteral("auto"), QStringLiteral("probe") }) {
        const Run r = run_cli(
            { QStringLiteral("parse-log"), path, QStringLiteral("--format"), format, QStringLiteral("--json") });
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.err.contains(path.toUtf8()), r.err.constData());
        QVERIFY(r.out.isEmpty());
    }
    const QString empty = dir.filePath(QStringLiteral("empty.log"));
    QFile e(empty);
    QVERIFY(e.open(QIODevice::WriteOnly));
    e.close();
    QCOMPARE(run_cli({ QStringLiteral("parse-log"), empty }).exit_code, 2);
}

void TestParseLogCli::badArguments()
{
    const QString log = kFixtureDir + QStringLiteral("megatron-04.log");
    Run r = run_cli({ QStringLiteral("parse-log"), log, QStringLiteral("--format"), QStringLiteral("nemo") });
    QCOMPARE(r.exit_code, 2);
    QVERIFY2(r.err.contains("--format") && r.err.contains("nemo"), r.err.constData());
    QCOMPARE(run_cli({ QStringLiteral("parse-log") }).exit_code, 2);
    QCOMPARE(run_cli({ QStringLiteral("parse-log"), log, log }).exit_code, 2);
    QCOMPARE(run_cli({ QStringLiteral("parse-log"), log, QStringLiteral("--bogus") }).exit_code, 2);
    r = run_cli({ QStringLiteral("parse-log"), QStringLiteral("--help") });
    QCOMPARE(r.exit_code, 0);
    QVERIFY(r.out.contains("--format"));
    r = run_cli({ QStringLiteral("--help") });
    QVERIFY(r.out.contains("parse-log LOG"));
}

QTEST_GUILESS_MAIN(TestParseLogCli)
#include "tst_parse_log_cli.moc"

// parallax-cli on hostile and extreme inputs (docs/robustness.md): oversized files, /dev/zero, FIFOs,
// directories, deep nesting, NUL bytes, huge unknown keys, 10^6 and 10^9 batches, 10^6 GPUs, odd model
// names in traces, and the contract slips of `run`, `runs` and `validate`. Each must end within seconds,
// under 2 GB of address space, with exit 0, 2 or 3 (never 1, a signal or a hang).
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <sys/resource.h>
#include <sys/stat.h>

namespace {

struct Run {
    int code = -1;
    QByteArray out;
    QByteArray err;
    bool crashed = false;
    bool hung = false;
    double seconds = 0;
};

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true; // ASan reserves terabytes of address space: no RLIMIT_AS
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

constexpr rlim_t kAddressSpaceLimitBytes = rlim_t { 2 } << 30; // "under 2 GB"
// "Within seconds" on a loaded 2-core CI machine.
constexpr int kTimeLimitMs = 30000;

Run cli(const QStringList& args, const QString& workdir = {}, const QByteArray& stdin_bytes = {})
{
    QProcess p;
    p.setProgram(QStringLiteral(PARALLAX_CLI_PATH));
    p.setArguments(args);
    if (!workdir.isEmpty())
        p.setWorkingDirectory(workdir);
    p.setChildProcessModifier([] {
        if (!kSanitized) {
            const rlimit limit { kAddressSpaceLimitBytes, kAddressSpaceLimitBytes };
            ::setrlimit(RLIMIT_AS, &limit);
        }
    });
    QElapsedTimer clock;
    clock.start();
    p.start();
    Run r;
    if (!p.waitForStarted(10000))
        return r;
    if (!stdin_bytes.isEmpty())
        p.write(stdin_bytes);
    p.closeWriteChannel();
    if (!p.waitForFinished(kTimeLimitMs)) {
        r.hung = true;
        p.kill();
        p.waitForFinished(5000);
    }
    r.seconds = clock.elapsed() / 1000.0;
    r.crashed = p.exitStatus() != QProcess::NormalExit;
    r.code = p.exitCode();
    r.out = p.readAllStandardOutput();
    r.err = p.readAllStandardError();
    return r;
}

QString describe(const Run& r)
{
    return QStringLiteral("exit %1%2%3 after %4 s; stderr: %5")
        .arg(r.code)
        .arg(r.crashed ? QStringLiteral(" (crashed)") : QString())
        .arg(r.hung ? QStringLiteral(" (hung, killed)") : QString())
        .arg(r.seconds, 0, 'f', 1)
        .arg(QString::fromUtf8(r.err.left(600)));
}

// Exit 0, 2 or 3, on its own, in time.
bool ended_by_contract(const Run& r)
{
    return !r.hung && !r.crashed && (r.code == 0 || r.code == 2 || r.code == 3);
}

void write_file(const QString& path, const QByteArray& bytes)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    QCOMPARE(f.write(bytes), bytes.size());
}

// A valid scenario with `training` and `model` spliced in.
QByteArray scenario(const QByteArray& model, const QByteArray& training, const QByteArray& cluster_nodes = "2",
    const QByteArray& strategy = R"({ "tp": 2, "pp": 2, "dp": 4 })")
{
    return R"({ "schema": 1, "model": )" + model + R"(,
  "cluster": { "gpu": "H100-SXM5-80GB", "nodes": )"
        + cluster_nodes + R"(, "gpus_per_node": 8, "intra_node": "nvlink4-nvswitch", "inter_node": "ib-ndr" },
  "training": )"
        + training + R"(,
  "strategy": )"
        + strategy + " }";
}

const QByteArray kTraining = R"({ "global_batch": 64, "seq_len": 4096 })";

} // namespace

class TestHostileInputs : public QObject {
    Q_OBJECT
private slots:
    void init() { QVERIFY(m_dir.isValid()); }

    void oversized_file_is_refused();
    void huge_unknown_key_is_quick_and_not_echoed();
    void non_regular_files_are_refused_data();
    void non_regular_files_are_refused();
    void deep_nesting_is_refused();
    void nul_inside_a_string_keeps_the_message();
    void oversized_stdin_is_refused();
    void huge_batches_and_clusters_end_in_seconds_data();
    void huge_batches_and_clusters_end_in_seconds();
    void timeline_of_odd_model_names_is_valid_json_data();
    void timeline_of_odd_model_names_is_valid_json();
    void run_from_with_a_non_string_run_id_is_bad_input();
    void junk_store_is_bad_input();
    void runs_does_not_create_a_store();
    void validate_without_usable_rows_is_bad_input();

private:
    QString path(const QString& name) const { return m_dir.filePath(name); }
    QTemporaryDir m_dir;
};

void TestHostileInputs::oversized_file_is_refused()
{
    // 17 MiB of white space around a scenario: valid JSON, over the limit.
    QByteArray bytes = scenario(R"("llama3-8b")", kTraining);
    bytes.append(QByteArray(17 << 20, ' '));
    write_file(path(QStringLiteral("big.json")), bytes);
    const Run r = cli({ QStringLiteral("predict"), path(QStringLiteral("big.json")) });
    QVERIFY2(r.code == 2 && !r.crashed && !r.hung, qPrintable(describe(r)));
    QVERIFY2(r.err.contains("16 MiB"), qPrintable(describe(r)));
    QVERIFY2(r.err.contains("big.json"), qPrintable(describe(r)));
}

void TestHostileInputs::huge_unknown_key_is_quick_and_not_echoed()
{
    // A 12 MB key (under the size limit): it used to be compared letter by letter with every known key
    // (minutes at 200 MB) and echoed whole.
    const QByteArray key(12'000'000, 'k');
    const QByteArray training = R"({ "global_batch": 64, "seq_len": 4096, ")" + key + R"(": 1 })";
    write_file(path(QStringLiteral("key.json")), scenario(R"("llama3-8b")", training));
    const Run r = cli({ QStringLiteral("predict"), path(QStringLiteral("key.json")) });
    QVERIFY2(r.code == 2 && !r.crashed && !r.hung, qPrintable(describe(r)));
    QVERIFY2(r.seconds < 10, qPrintable(describe(r)));
    QVERIFY2(r.err.size() < 2000, qPrintable(QStringLiteral("stderr is %1 bytes").arg(r.err.size())));
    QVERIFY2(
        r.err.contains("unknown key") && r.err.contains("12000") && r.err.contains("bytes)"), qPrintable(describe(r)));
}

void TestHostileInputs::non_regular_files_are_refused_data()
{
    QTest::addColumn<QString>("command");
    QTest::addColumn<QString>("file"); // "fifo" and "dir" are made in the test
    for (const char* command : { "predict", "parse-log", "validate", "import", "timeline" }) {
        for (const char* file : { "/dev/zero", "fifo", "dir" })
            QTest::addRow("%s %s", command, file) << QString::fromLatin1(command) << QString::fromLatin1(file);
    }
}

void TestHostileInputs::non_regular_files_are_refused()
{
    QFETCH(QString, command);
    QFETCH(QString, file);
    QString target = file;
    if (file == QLatin1String("fifo")) {
        target = path(QStringLiteral("fifo-") + command);
        QCOMPARE(::mkfifo(QFile::encodeName(target).constData(), 0600), 0);
    } else if (file == QLatin1String("dir")) {
        target = path(QStringLiteral("dir-") + command);
        QVERIFY(QDir().mkpath(target));
    }
    QStringList args { command, target };
    if (command == QLatin1String("timeline"))
        args << QStringLiteral("--out") << path(QStringLiteral("t.json"));
    const Run r = cli(args);
    QVERIFY2(r.code == 2 && !r.crashed && !r.hung, qPrintable(describe(r)));
    QVERIFY2(r.seconds < 10, qPrintable(describe(r)));
    QVERIFY2(r.err.contains(QFile::encodeName(target)), qPrintable(describe(r)));
    QVERIFY2(r.err.contains("not a regular file") || r.err.contains("is a directory"), qPrintable(describe(r)));
}

void TestHostileInputs::deep_nesting_is_refused()
{
    const QByteArray deep = QByteArray(100000, '[') + QByteArray(100000, ']');
    write_file(path(QStringLiteral("deep.json")), scenario(R"({ "name": "x", "extra": )" + deep + "}", kTraining));
    const Run r = cli({ QStringLiteral("predict"), path(QStringLiteral("deep.json")) });
    QVERIFY2(r.code == 2 && !r.crashed && !r.hung, qPrintable(describe(r)));
    QVERIFY2(r.err.contains("nests arrays and objects deeper than 64"), qPrintable(describe(r)));
}

void TestHostileInputs::nul_inside_a_string_keeps_the_message()
{
    // what() is a C string: a raw NUL in the message used to cut it at the NUL.
    const QByteArray strategy = R"({ "tp": 2, "pp": 2, "dp": 4, "schedule": "1f1b\u0000evil" })";
    write_file(path(QStringLiteral("nul.json")), scenario(R"("llama3-8b")", kTraining, "2", strategy));
    const Run r = cli({ QStringLiteral("predict"), path(QStringLiteral("nul.json")) });
    QVERIFY2(r.code == 2 && !r.crashed, qPrintable(describe(r)));
    QVERIFY2(r.err.contains("1f1b\\x00evil"), qPrintable(describe(r)));
    QVERIFY2(r.err.contains("must be one of"), qPrintable(describe(r)));
    QVERIFY2(!r.err.contains('\0'), qPrintable(describe(r)));
}

void TestHostileInputs::oversized_stdin_is_refused()
{
    const Run r = cli(
        { QStringLiteral("import"), QStringLiteral("-"), QStringLiteral("--format"), QStringLiteral("deepspeed-json") },
        {}, QByteArray(17 << 20, ' '));
    QVERIFY2(r.code == 2 && !r.crashed && !r.hung, qPrintable(describe(r)));
    QVERIFY2(r.err.contains("16 MiB"), qPrintable(describe(r)));
}

void TestHostileInputs::huge_batches_and_clusters_end_in_seconds_data()
{
    QTest::addColumn<QByteArray>("file");
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<bool>("extrapolated"); // the output says a window was simulated
    const QByteArray b6 = R"({ "global_batch": 1000000, "seq_len": 4096 })";
    const QByteArray b9 = R"({ "global_batch": 1000000000, "seq_len": 4096 })";
    const QStringList sim { QStringLiteral("--fidelity"), QStringLiteral("simulated") };
    // 8 stages x 10^6 micro-batches: 7 GB and minutes when every micro-batch was simulated.
    const QByteArray deep_pipeline = R"({ "tp": 2, "pp": 8, "dp": 1 })";
    QTest::newRow("predict simulated, global_batch 1e6, pp 8")
        << scenario(R"("llama3-8b")", b6, "2", deep_pipeline) << sim << true;
    QTest::newRow("predict simulated, global_batch 1e9") << scenario(R"("llama3-8b")", b9) << sim << true;
    QTest::newRow("predict analytic, global_batch 1e9") << scenario(R"("llama3-8b")", b9) << QStringList {} << false;
    QTest::newRow("timeline, global_batch 1e6, pp 8")
        << scenario(R"("llama3-8b")", b6, "2", deep_pipeline) << QStringList { QStringLiteral("timeline") } << true;
    // 10^6 GPUs: 125,000 nodes of 8.
    const QByteArray gpus_1e6 = scenario(R"("llama3-8b")", R"({ "global_batch": 4000000, "seq_len": 4096 })", "125000",
        R"({ "tp": 8, "pp": 1, "dp": 125000 })");
    QTest::newRow("predict simulated, 1e6 GPUs") << gpus_1e6 << sim << false; // 32 micro-batches
    QTest::newRow("predict analytic, 1e6 GPUs") << gpus_1e6 << QStringList {} << false;
}

void TestHostileInputs::huge_batches_and_clusters_end_in_seconds()
{
    QFETCH(QByteArray, file);
    QFETCH(QStringList, args);
    QFETCH(bool, extrapolated);
    write_file(path(QStringLiteral("huge.json")), file);
    QStringList full;
    if (args.value(0) == QLatin1String("timeline"))
        full = { QStringLiteral("timeline"), path(QStringLiteral("huge.json")), QStringLiteral("--out"),
            path(QStringLiteral("huge-trace.json")) };
    else
        full = QStringList { QStringLiteral("predict"), path(QStringLiteral("huge.json")) } + args;
    const Run r = cli(full);
    QVERIFY2(ended_by_contract(r), qPrintable(describe(r)));
    QVERIFY2(r.seconds < 20, qPrintable(describe(r)));
    if (r.code == 0 && extrapolated)
        QVERIFY2(r.out.contains("extrapolated"), r.out.left(2000).constData());
}

void TestHostileInputs::timeline_of_odd_model_names_is_valid_json_data()
{
    QTest::addColumn<QByteArray>("name"); // as written in the JSON file
    QTest::newRow("tab") << QByteArray(R"(a\tb)");
    QTest::newRow("quote and backslash") << QByteArray(R"(a \"quoted\" \\ name)");
    QTest::newRow("500 characters") << QByteArray(500, 'n');
    QTest::newRow("NUL and escape") << QByteArray(R"(x\u0000y\u001b[31m)");
    QTest::newRow("unicode") << QByteArray("Llama \xe2\x80\x94 \xe6\xa8\xa1\xe5\x9e\x8b");
}

void TestHostileInputs::timeline_of_odd_model_names_is_valid_json()
{
    QFETCH(QByteArray, name);
    const QByteArray model = R"({ "name": ")" + name + R"(", "layers": 8, "hidden": 1024, "heads": 16, "kv_heads": 4,
      "ffn_hidden": 4096, "vocab": 32000, "ffn_act": "swiglu", "tied_embeddings": false })";
    write_file(path(QStringLiteral("odd.json")),
        scenario(model, R"({ "global_batch": 16, "seq_len": 2048 })", "1", R"({ "tp": 2, "pp": 2, "dp": 2 })"));
    const QString trace = path(QStringLiteral("odd-trace.json"));
    const Run r = cli({ QStringLiteral("timeline"), path(QStringLiteral("odd.json")), QStringLiteral("--out"), trace });
    QVERIFY2(r.code == 0, qPrintable(describe(r)));
    QFile f(trace);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray text = f.readAll();
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(text.constData(), text.constData() + text.size());
    } catch (const nlohmann::json::exception& e) {
        QFAIL(e.what());
    }
    const auto& events = j.at("traceEvents");
    QVERIFY(events.size() > 10);
    bool titled = false, flow = false, counter = false;
    for (const auto& e : events) {
        if (e.value("ph", "") == "M" && e.value("name", "") == "process_name")
            titled = titled || e["args"]["name"].get<std::string>().find("(whole step)") != std::string::npos;
        flow = flow || e.value("ph", "") == "s";
        counter = counter || e.value("ph", "") == "C";
    }
    QVERIFY(titled);
    QVERIFY2(flow, "the critical path is drawn as flow events");
    QVERIFY2(counter, "power is a counter track");
}

void TestHostileInputs::run_from_with_a_non_string_run_id_is_bad_input()
{
    const QString dir = path(QStringLiteral("job"));
    QVERIFY(QDir().mkpath(dir));
    write_file(dir + QStringLiteral("/plan.json"), R"({ "run_id": 42, "framework": "probe", "scenario": {} })");
    write_file(path(QStringLiteral("profile.json")),
        R"({ "name": "loop", "host": "127.0.0.1", "user": "nobody", "launcher": "direct", "work_dir": "/tmp/parallax-hostile-unused" })");
    const Run r = cli({ QStringLiteral("run"), QStringLiteral("--cluster"), path(QStringLiteral("profile.json")),
        QStringLiteral("--from"), dir, QStringLiteral("--store"), path(QStringLiteral("runs.sqlite")) });
    QVERIFY2(r.code == 2 && !r.crashed, qPrintable(describe(r)));
    QVERIFY2(r.err.contains("run_id") && r.err.contains("must be a string"), qPrintable(describe(r)));
}

void TestHostileInputs::junk_store_is_bad_input()
{
    write_file(path(QStringLiteral("junk.sqlite")), QByteArray(4096, 'j'));
    for (const QStringList& args :
        { QStringList { QStringLiteral("runs") }, QStringList { QStringLiteral("runs"), QStringLiteral("some-run") },
            QStringList { QStringLiteral("calibrate"), QStringLiteral("--from-store") },
            QStringList { QStringLiteral("run"), QStringLiteral("--attach"), QStringLiteral("some-run") } }) {
        const Run r = cli(args + QStringList { QStringLiteral("--store"), path(QStringLiteral("junk.sqlite")) });
        QVERIFY2(r.code == 2 && !r.crashed && !r.hung,
            qPrintable(args.join(QLatin1Char(' ')) + QStringLiteral(": ") + describe(r)));
        QVERIFY2(r.err.contains("junk.sqlite"), qPrintable(describe(r)));
    }
}

void TestHostileInputs::runs_does_not_create_a_store()
{
    const QString store = path(QStringLiteral("absent/runs.sqlite"));
    const Run list = cli({ QStringLiteral("runs"), QStringLiteral("--store"), store });
    QVERIFY2(list.code == 0, qPrintable(describe(list)));
    QVERIFY2(list.out.contains("no runs yet"), list.out.constData());
    const Run json = cli({ QStringLiteral("runs"), QStringLiteral("--json"), QStringLiteral("--store"), store });
    QVERIFY2(json.code == 0, qPrintable(describe(json)));
    QCOMPARE(nlohmann::json::parse(json.out.toStdString()).at("runs").size(), std::size_t { 0 });
    const Run one = cli({ QStringLiteral("runs"), QStringLiteral("r1"), QStringLiteral("--store"), store });
    QVERIFY2(one.code == 2, qPrintable(describe(one)));
    QVERIFY2(!QFileInfo::exists(store), "looking at the runs created a store");
    QVERIFY(!QFileInfo::exists(path(QStringLiteral("absent"))));
}

void TestHostileInputs::validate_without_usable_rows_is_bad_input()
{
    // Two rows that are not objects: both skipped, so nothing is left to validate.
    write_file(path(QStringLiteral("runs.json")), R"([ 1, "two" ])");
    const Run r = cli({ QStringLiteral("validate"), path(QStringLiteral("runs.json")) });
    QVERIFY2(r.code == 2 && !r.crashed, qPrintable(describe(r)));
    QVERIFY2(!r.out.contains("MAPE 0.0%"), r.out.constData());
    QVERIFY2(r.out.contains("no usable rows") && r.err.contains("no usable rows"), qPrintable(describe(r)));
}

QTEST_GUILESS_MAIN(TestHostileInputs)
#include "tst_hostile_inputs.moc"

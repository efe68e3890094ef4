// parallax-cli import as a user runs it: the scenario on stdout (or --out) and the report on stderr, --json
// with "scenario" and "import_report", stdin, exit 2 with the file and the key on bad input, and the
// imported Megatron-LM command line of the default plan predicting what `predict default` predicts.
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

namespace {

struct Run {
    int code = -1;
    QByteArray out;
    QByteArray err;
};

QString data(const char* rel)
{
    return QStringLiteral(PARALLAX_SOURCE_DIR "/tests/data/import/") + QLatin1String(rel);
}

Run cli(const QStringList& args, const QByteArray& input = {})
{
    QProcess p;
    p.start(QStringLiteral(PARALLAX_CLI_PATH), args);
    Run r;
    if (!p.waitForStarted(10000))
        return r;
    p.write(input);
    p.closeWriteChannel();
    if (!p.waitForFinished(120000)) {
        p.kill();
        p.waitForFinished();
        return r;
    }
    r.out = p.readAllStandardOutput();
    r.err = p.readAllStandardError();
    r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    return r;
}

QJsonObject object(const QByteArray& bytes)
{
    return QJsonDocument::fromJson(bytes).object();
}

} // namespace

class TestImportCli : public QObject {
    Q_OBJECT

private slots:
    void scenario_on_stdout_report_on_stderr();
    void json_output();
    void out_file_predicts_like_the_default_scenario();
    void stdin_and_options();
    void bad_input_exits_2_naming_file_and_key();
};

void TestImportCli::scenario_on_stdout_report_on_stderr()
{
    const Run r = cli({ QStringLiteral("import"), data("megatron/llama3_70b_default_plan.sh") });
    QCOMPARE(r.code, 0);
    const QJsonObject s = object(r.out);
    QCOMPARE(s.value(QStringLiteral("schema")).toInt(), 1);
    QCOMPARE(s.value(QStringLiteral("model")).toString(), QStringLiteral("llama3-70b"));
    QCOMPARE(s.value(QStringLiteral("strategy")).toObject().value(QStringLiteral("tp")).toInt(), 4);
    const QString report = QString::fromUtf8(r.err);
    QVERIFY(report.contains(QStringLiteral("imported as megatron-args")));
    QVERIFY(report.contains(QStringLiteral("--context-parallel-size 2 -> strategy.cp")));
    QVERIFY(report.contains(QStringLiteral("does not affect the prediction")));
    QVERIFY(report.contains(QStringLiteral("--lr")));
    QVERIFY(report.contains(QStringLiteral("not modelled")));
    QVERIFY(report.contains(QStringLiteral("--normalization RMSNorm")));
}

void TestImportCli::json_output()
{
    const Run r = cli({ QStringLiteral("import"), data("hf/DeepSeek-V3.config.json"), QStringLiteral("--json") });
    QCOMPARE(r.code, 0);
    QVERIFY(r.err.isEmpty());
    const QJsonObject j = object(r.out);
    QCOMPARE(j.value(QStringLiteral("schema")).toInt(), 1);
    QCOMPARE(j.value(QStringLiteral("scenario")).toObject().value(QStringLiteral("model")).toString(),
        QStringLiteral("deepseek-v3"));
    const QJsonObject report = j.value(QStringLiteral("import_report")).toObject();
    QCOMPARE(report.value(QStringLiteral("format")).toString(), QStringLiteral("hf-config"));
    for (const char* list : { "mapped", "no_effect", "not_modelled", "assumed" })
        QVERIFY2(report.value(QLatin1String(list)).isArray(), list);
    bool found = false;
    for (const auto& v : report.value(QStringLiteral("mapped")).toArray()) {
        const QJsonObject e = v.toObject();
        if (e.value(QStringLiteral("key")).toString() == QStringLiteral("n_routed_experts")) {
            found = true;
            QCOMPARE(e.value(QStringLiteral("value")).toString(), QStringLiteral("256"));
            QCOMPARE(e.value(QStringLiteral("to")).toString(), QStringLiteral("model.moe.experts"));
        }
    }
    QVERIFY(found);
}

void TestImportCli::out_file_predicts_like_the_default_scenario()
{
    QTemporaryDir dir;
    const QString out = dir.filePath(QStringLiteral("imported.json"));
    const Run r
        = cli({ QStringLiteral("import"), data("megatron/llama3_70b_default_plan.sh"), QStringLiteral("--out"), out });
    QCOMPARE(r.code, 0);
    QVERIFY(r.out.isEmpty());
    QVERIFY(QString::fromUtf8(r.err).contains(QStringLiteral("wrote ") + out));
    const Run imported = cli({ QStringLiteral("predict"), out, QStringLiteral("--json") });
    const Run reference = cli({ QStringLiteral("predict"), QStringLiteral("default"), QStringLiteral("--json") });
    QCOMPARE(imported.code, 0);
    QCOMPARE(reference.code, 0);
    const QJsonObject a = object(imported.out);
    const QJsonObject b = object(reference.out);
    for (const char* key : { "step_time_s", "tokens_per_s", "tflops_per_gpu", "mfu", "bubble_fraction" })
        QCOMPARE(a.value(QLatin1String(key)).toDouble(), b.value(QLatin1String(key)).toDouble());
    QCOMPARE(a.value(QStringLiteral("memory")).toObject().value(QStringLiteral("peak_GiB")).toDouble(),
        b.value(QStringLiteral("memory")).toObject().value(QStringLiteral("peak_GiB")).toDouble());
}

void TestImportCli::stdin_and_options()
{
    QFile f(data("deepspeed/ds_zero2_config.json"));
    QVERIFY(f.open(QIODevice::ReadOnly));
    const Run r
        = cli({ QStringLiteral("import"), QStringLiteral("-"), QStringLiteral("--model"), QStringLiteral("llama3-8b"),
                  QStringLiteral("--gpus"), QStringLiteral("16"), QStringLiteral("--seq-len"), QStringLiteral("2048"),
                  QStringLiteral("--cluster"), QStringLiteral("dgx-a100-superpod") },
            f.readAll());
    QCOMPARE(r.code, 0);
    const QJsonObject s = object(r.out);
    QCOMPARE(s.value(QStringLiteral("model")).toString(), QStringLiteral("llama3-8b"));
    const QJsonObject cluster = s.value(QStringLiteral("cluster")).toObject();
    QCOMPARE(cluster.value(QStringLiteral("gpu")).toString(), QStringLiteral("A100-SXM4-80GB"));
    QCOMPARE(cluster.value(QStringLiteral("nodes")).toInt(), 2);
    QCOMPARE(s.value(QStringLiteral("strategy")).toObject().value(QStringLiteral("zero")).toInt(), 2);
    QVERIFY(QString::fromUtf8(r.err).contains(QStringLiteral("<stdin>: imported as deepspeed-json")));
}

void TestImportCli::bad_input_exits_2_naming_file_and_key()
{
    Run r = cli({ QStringLiteral("import"), data("deepspeed/ds_zero2_config.json") });
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("ds_zero2_config.json: --model: "), r.err.constData());
    r = cli({ QStringLiteral("import"), data("megatron/train_gpt3_175b_distributed.sh") });
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("train_gpt3_175b_distributed.sh: torchrun --nnodes: "), r.err.constData());
    r = cli({ QStringLiteral("import"), data("hf/DeepSeek-V3.config.json"), QStringLiteral("--format"),
        QStringLiteral("yaml") });
    QCOMPARE(r.code, 2);
    QVERIFY2(
        r.err.contains("--format: must be one of megatron-args|nemo-yaml|torchtitan-toml|deepspeed-json|hf-config"),
        r.err.constData());
    r = cli({ QStringLiteral("import"), QStringLiteral("/nonexistent/train.sh") });
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("/nonexistent/train.sh"), r.err.constData());
    r = cli({ QStringLiteral("import"), data("hf/DeepSeek-V3.config.json"), QStringLiteral("--gpus"),
        QStringLiteral("0") });
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("--gpus"), r.err.constData());
}

QTEST_GUILESS_MAIN(TestImportCli)
#include "tst_import_cli.moc"

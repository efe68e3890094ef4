// parallax-cli in the conventions its users know (docs/cli.md): subcommands with their own usage line,
// one plan notation (the "label") in text, JSON and CSV, search rows that say what tells two plans apart,
// an empty search that says what removed the candidates, --csv tables that parse, and logging through
// QLoggingCategory (--verbose, QT_LOGGING_RULES, libssh and a failed dispatch).
#include "cli_process.hpp"

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

namespace {

using Run = parallax::test::CliRun;

// 16 H100 running Llama 3 8B: small enough to search in well under a second.
const char* const kScenario = R"({
  "schema": 1,
  "model": "llama3-8b",
  "cluster": { "gpu": "H100-SXM5-80GB", "nodes": 2, "gpus_per_node": 8,
               "intra_node": "nvlink4-nvswitch", "inter_node": "ib-ndr" },
  "training": { "global_batch": 64, "seq_len": 4096, "precision": "bf16" },
  "strategy": { "tp": 2, "pp": 2, "dp": 4 }SEARCH
})";

// Every setting pinned but how context parallelism exchanges attention (ring or all-to-all): the two
// plans the search returns differ only there, which the old row format did not print.
const char* const kPinnedButCpKind = R"(,
  "search": { "fix": { "tp": 2, "pp": 1, "cp": 2, "dp": 4, "vpp": 1, "micro_batch": 1, "zero": 1,
                       "sequence_parallel": true, "recompute": "selective", "offload_optimizer": false,
                       "schedule": "1f1b", "optimizer": "adam" } })";

// A batch of 3 sequences cannot be split over DP 2: every candidate breaks the batch rule.
const char* const kIndivisibleBatch = R"(,
  "search": { "fix": { "dp": 2 } })";

// A trillion parameters on one node: out of memory whatever the plan.
const char* const kTooBig = R"({
  "schema": 1,
  "model": "megatron-1t",
  "cluster": { "gpu": "H100-SXM5-80GB", "nodes": 1, "gpus_per_node": 8,
               "intra_node": "nvlink4-nvswitch", "inter_node": "ib-ndr" },
  "training": { "global_batch": 8, "seq_len": 2048 },
  "strategy": { "tp": 8 }
})";

QByteArray scenario(const char* search)
{
    return QByteArray(kScenario).replace("SEARCH", search);
}

// RFC 4180 as the CSV writer writes it: quoted fields may hold commas, doubled quotes and newlines.
QList<QStringList> parse_csv(const QString& text)
{
    QList<QStringList> rows;
    QStringList row;
    QString field;
    bool quoted = false;
    for (qsizetype i = 0; i < text.size(); ++i) {
        const QChar c = text.at(i);
        if (quoted) {
            if (c == QLatin1Char('"') && i + 1 < text.size() && text.at(i + 1) == QLatin1Char('"')) {
                field += c;
                ++i;
            } else if (c == QLatin1Char('"')) {
                quoted = false;
            } else {
                field += c;
            }
        } else if (c == QLatin1Char('"')) {
            quoted = true;
        } else if (c == QLatin1Char(',')) {
            row << field;
            field.clear();
        } else if (c == QLatin1Char('\n')) {
            row << field;
            field.clear();
            rows << row;
            row.clear();
        } else {
            field += c;
        }
    }
    if (!field.isEmpty() || !row.isEmpty())
        rows << (row << field);
    return rows;
}

QJsonObject json_object(const QByteArray& bytes)
{
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(bytes, &error);
    if (!doc.isObject())
        qWarning("not a JSON object: %s", qPrintable(error.errorString()));
    return doc.object();
}

// The column of `name` in a CSV header, or -1.
int column(const QList<QStringList>& rows, const char* name)
{
    return rows.isEmpty() ? -1 : static_cast<int>(rows.front().indexOf(QLatin1String(name)));
}

} // namespace

class TestCliConventions : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void subcommandHelpNamesTheSubcommand_data();
    void subcommandHelpNamesTheSubcommand();
    void topLevelHelpListsEverySubcommand();
    void oneLabelInTextJsonAndCsv();
    void rowsShowTheSettingThatDiffers();
    void memoryCapacityWording();
    void emptySearchSaysWhatRemovedWhat();
    void emptySearchByARule();
    void emptySweepPointSaysWhy();
    void csvTablesParse();
    void csvAndJsonAreExclusive();
    void verboseAndLoggingRules();
    void failedDispatchLogsEachStep();

private:
    Run run(const QStringList& args, const QProcessEnvironment& env = {}) const;
    QString writeFile(const QString& name, const QByteArray& bytes) const;

    QTemporaryDir m_dir;
    QProcessEnvironment m_env;
};

Run TestCliConventions::run(const QStringList& args, const QProcessEnvironment& env) const
{
    return parallax::test::run_cli(args, env.isEmpty() ? m_env : env);
}

QString TestCliConventions::writeFile(const QString& name, const QByteArray& bytes) const
{
    return parallax::test::write_test_file(m_dir.path(), name, bytes);
}

void TestCliConventions::initTestCase()
{
    QVERIFY(m_dir.isValid());
    QDir(m_dir.path()).mkpath(QStringLiteral("empty-presets"));
    QDir(m_dir.path()).mkpath(QStringLiteral("empty-config"));
    m_env = QProcessEnvironment::systemEnvironment();
    m_env.insert(QStringLiteral("PARALLAX_PRESET_PATH"), QDir(m_dir.path()).filePath(QStringLiteral("empty-presets")));
    m_env.insert(QStringLiteral("XDG_CONFIG_HOME"), QDir(m_dir.path()).filePath(QStringLiteral("empty-config")));
    m_env.insert(QStringLiteral("XDG_DATA_HOME"), QDir(m_dir.path()).filePath(QStringLiteral("data")));
    m_env.remove(QStringLiteral("QT_LOGGING_RULES"));
    m_env.remove(QStringLiteral("QT_MESSAGE_PATTERN"));
}

void TestCliConventions::subcommandHelpNamesTheSubcommand_data()
{
    QTest::addColumn<QString>("command");
    QTest::addColumn<QString>("positional");
    QTest::addColumn<bool>("table"); // prints a table, so takes --csv
    QTest::newRow("predict") << QStringLiteral("predict") << QStringLiteral("SCENARIO") << false;
    QTest::newRow("search") << QStringLiteral("search") << QStringLiteral("SCENARIO") << true;
    QTest::newRow("sweep") << QStringLiteral("sweep") << QStringLiteral("SCENARIO") << true;
    QTest::newRow("validate") << QStringLiteral("validate") << QStringLiteral("RUNS") << true;
    QTest::newRow("runs") << QStringLiteral("runs") << QStringLiteral("RUN_ID") << true;
    QTest::newRow("presets") << QStringLiteral("presets") << QStringLiteral("KIND") << true;
    QTest::newRow("error-bands") << QStringLiteral("error-bands") << QStringLiteral("RUNS") << true;
    QTest::newRow("timeline") << QStringLiteral("timeline") << QStringLiteral("SCENARIO") << false;
    QTest::newRow("clocks") << QStringLiteral("clocks") << QStringLiteral("SCENARIO") << true;
}

void TestCliConventions::subcommandHelpNamesTheSubcommand()
{
    QFETCH(QString, command);
    QFETCH(QString, positional);
    QFETCH(bool, table);
    const Run r = run({ command, QStringLiteral("--help") });
    QVERIFY(!r.crashed);
    QCOMPARE(r.code, 0);
    const QStringList lines = QString::fromUtf8(r.out).split(QLatin1Char('\n'));
    QVERIFY(lines.size() > 3);
    QCOMPARE(lines.at(0), QStringLiteral("Usage: parallax-cli %1 [options] %2").arg(command, positional));
    QVERIFY2(!lines.at(1).trimmed().isEmpty(), "a description follows the usage line");
    const QString out = QString::fromUtf8(r.out);
    QVERIFY(out.contains(QStringLiteral("--verbose")));
    QCOMPARE(out.contains(QStringLiteral("--csv")), table);
    // The same usage line when the arguments are wrong (exit 2).
    const Run bad = run({ command, QStringLiteral("--no-such-option") });
    QCOMPARE(bad.code, 2);
    QVERIFY2(QString::fromUtf8(bad.err).startsWith(QStringLiteral("parallax-cli ") + command + QStringLiteral(": ")),
        bad.err.constData());
}

void TestCliConventions::topLevelHelpListsEverySubcommand()
{
    const Run r = run({ QStringLiteral("--help") });
    QCOMPARE(r.code, 0);
    const QString out = QString::fromUtf8(r.out);
    for (const char* c : { "predict", "search", "sweep", "export", "presets", "validate", "calibrate", "error-bands",
             "timeline", "clocks", "parse-log", "import", "run", "runs" })
        QVERIFY2(out.contains(QRegularExpression(QStringLiteral("\\n  %1 ").arg(QLatin1String(c)))), c);
    QVERIFY(out.contains(QStringLiteral("--verbose")));
}

void TestCliConventions::oneLabelInTextJsonAndCsv()
{
    // predict: the text's strategy line and the JSON's label are the same words.
    const Run text = run({ QStringLiteral("predict"), QStringLiteral("default") });
    const Run json = run({ QStringLiteral("predict"), QStringLiteral("default"), QStringLiteral("--json") });
    QCOMPARE(text.code, 0);
    QCOMPARE(json.code, 0);
    const QString label = json_object(json.out).value(QStringLiteral("label")).toString();
    QVERIFY2(label.startsWith(QStringLiteral("TP 4 × PP 4 × CP 2 × DP 2, VPP 5")), qPrintable(label));
    QVERIFY2(QString::fromUtf8(text.out).contains(QStringLiteral("strategy   ") + label + QStringLiteral("  (")),
        text.out.constData());

    // search: each JSON result's label is its text row and its CSV row.
    const QString path = writeFile(QStringLiteral("label.json"), scenario(""));
    const QStringList common = { QStringLiteral("search"), path, QStringLiteral("--top"), QStringLiteral("3"),
        QStringLiteral("--refine"), QStringLiteral("0") };
    const Run sj = run(common + QStringList { QStringLiteral("--json") });
    const Run st = run(common);
    const Run sc = run(common + QStringList { QStringLiteral("--csv") });
    QCOMPARE(sj.code, 0);
    const QJsonArray results = json_object(sj.out).value(QStringLiteral("results")).toArray();
    QCOMPARE(results.size(), 3);
    const QList<QStringList> rows = parse_csv(QString::fromUtf8(sc.out));
    QCOMPARE(rows.size(), 4);
    const int label_col = column(rows, "label");
    QVERIFY(label_col >= 0);
    for (int i = 0; i < 3; ++i) {
        const QJsonObject r = results.at(i).toObject();
        const QString l = r.value(QStringLiteral("label")).toString();
        QVERIFY(l.startsWith(QStringLiteral("TP ")));
        QVERIFY2(QString::fromUtf8(st.out).contains(QStringLiteral("%1. %2\n").arg(i + 1, 2).arg(l)), qPrintable(l));
        QCOMPARE(rows.at(i + 1).at(label_col), l);
        const QJsonObject runner_up
            = r.value(QStringLiteral("explanation")).toObject().value(QStringLiteral("runner_up")).toObject();
        if (!runner_up.isEmpty())
            QVERIFY(runner_up.value(QStringLiteral("label")).toString().startsWith(QStringLiteral("TP ")));
    }
    for (const auto& p : json_object(sj.out).value(QStringLiteral("pareto")).toArray())
        QVERIFY(p.toObject().value(QStringLiteral("label")).toString().startsWith(QStringLiteral("TP ")));

    // validate: every row carries its plan's label.
    const Run v = run({ QStringLiteral("validate"),
        QStringLiteral(PARALLAX_SOURCE_DIR "/validation/published-runs.json"), QStringLiteral("--json") });
    QCOMPARE(v.code, 0);
    const QJsonArray vrows = json_object(v.out).value(QStringLiteral("rows")).toArray();
    QVERIFY(!vrows.isEmpty());
    for (const auto& row : vrows)
        QVERIFY(row.toObject().value(QStringLiteral("label")).toString().startsWith(QStringLiteral("TP ")));
}

void TestCliConventions::rowsShowTheSettingThatDiffers()
{
    const QString path = writeFile(QStringLiteral("cp-kind.json"), scenario(kPinnedButCpKind));
    const QStringList common = { QStringLiteral("search"), path, QStringLiteral("--any-framework"),
        QStringLiteral("--refine"), QStringLiteral("0") };
    const Run j = run(common + QStringList { QStringLiteral("--json") });
    QVERIFY(!j.crashed);
    QCOMPARE(j.code, 0);
    const QJsonArray results = json_object(j.out).value(QStringLiteral("results")).toArray();
    QCOMPARE(results.size(), 2);
    QStringList kinds;
    QStringList labels;
    for (const auto& r : results) {
        kinds << r.toObject().value(QStringLiteral("strategy")).toObject().value(QStringLiteral("cp_kind")).toString();
        labels << r.toObject().value(QStringLiteral("label")).toString();
    }
    kinds.sort();
    QCOMPARE(kinds, (QStringList { QStringLiteral("all-to-all"), QStringLiteral("ring") }));
    QVERIFY2(labels.at(0) != labels.at(1), qPrintable(labels.join(QStringLiteral(" | "))));
    // The part before the hidden setting is the same: only the CP kind tells them apart.
    const auto visible = [](const QString& l) { return l.left(l.lastIndexOf(QStringLiteral(", "))); };
    QCOMPARE(visible(labels.at(0)), visible(labels.at(1)));
    const Run t = run(common);
    const QString text = QString::fromUtf8(t.out);
    QVERIFY2(text.contains(QStringLiteral(", ring CP\n")) && text.contains(QStringLiteral(", all-to-all CP\n")),
        t.out.constData());
    // Nothing else hidden was added: the plans agree on it.
    QVERIFY(!text.contains(QStringLiteral("expert TP")));
}

void TestCliConventions::memoryCapacityWording()
{
    const QString path = writeFile(QStringLiteral("wording.json"), scenario(""));
    const Run r = run({ QStringLiteral("search"), path, QStringLiteral("--top"), QStringLiteral("200"),
        QStringLiteral("--refine"), QStringLiteral("0"), QStringLiteral("--json") });
    QCOMPARE(r.code, 0);
    QStringList limiters;
    for (const auto& x : json_object(r.out).value(QStringLiteral("results")).toArray())
        limiters
            << x.toObject().value(QStringLiteral("explanation")).toObject().value(QStringLiteral("limiter")).toString();
    QVERIFY(!limiters.contains(QStringLiteral("memory-bound")));
    // Among 200 plans of a model that fills an 80 GiB GPU only with little recompute, some leave < 5% free.
    QVERIFY2(limiters.contains(QStringLiteral("memory-capacity")), qPrintable(limiters.join(QLatin1Char(','))));
}

void TestCliConventions::emptySearchSaysWhatRemovedWhat()
{
    const QString path = writeFile(QStringLiteral("too-big.json"), kTooBig);
    const Run j = run({ QStringLiteral("search"), path, QStringLiteral("--json") });
    QVERIFY(!j.crashed);
    QCOMPARE(j.code, 3);
    const QJsonObject o = json_object(j.out);
    QVERIFY(o.value(QStringLiteral("results")).toArray().isEmpty());
    const QJsonArray removed = o.value(QStringLiteral("removed")).toArray();
    QVERIFY(!removed.isEmpty());
    const QJsonObject first = removed.at(0).toObject(); // most first: memory removed the most
    QCOMPARE(first.value(QStringLiteral("key")).toString(), QStringLiteral("cluster.gpu.memory_GiB"));
    QVERIFY(first.value(QStringLiteral("count")).toInteger() > 0);
    // Every valid plan the framework runs was costed for memory: the memory count is what was evaluated
    // less the dominated variants never costed.
    QCOMPARE(first.value(QStringLiteral("count")).toInteger(),
        o.value(QStringLiteral("evaluated")).toInteger() - o.value(QStringLiteral("pruned")).toInteger());
    const Run t = run({ QStringLiteral("search"), path });
    QCOMPARE(t.code, 3);
    const QString text = QString::fromUtf8(t.out);
    QVERIFY2(text.contains(QStringLiteral("no feasible strategy; candidates removed")), t.out.constData());
    QVERIFY(text.contains(QStringLiteral("cluster.gpu.memory_GiB: do not fit in the GPU's")));
    // CSV: the table is empty, stderr says why.
    const Run c = run({ QStringLiteral("search"), path, QStringLiteral("--csv") });
    QCOMPARE(c.code, 3);
    QCOMPARE(parse_csv(QString::fromUtf8(c.out)).size(), 1);
    QVERIFY2(QString::fromUtf8(c.err).contains(QStringLiteral("cluster.gpu.memory_GiB")), c.err.constData());

    // A power budget no plan meets is named as the limit that removed them.
    const QString fits = writeFile(QStringLiteral("budget.json"), scenario(""));
    const Run b = run({ QStringLiteral("search"), fits, QStringLiteral("--power-budget-kW"), QStringLiteral("0.01"),
        QStringLiteral("--json") });
    QCOMPARE(b.code, 3);
    QStringList keys;
    for (const auto& x : json_object(b.out).value(QStringLiteral("removed")).toArray())
        keys << x.toObject().value(QStringLiteral("key")).toString();
    QVERIFY2(keys.contains(QStringLiteral("search.limits.power_budget_kW")), qPrintable(keys.join(QLatin1Char(','))));
}

void TestCliConventions::emptySearchByARule()
{
    QByteArray text = scenario(kIndivisibleBatch);
    text.replace("\"global_batch\": 64", "\"global_batch\": 3");
    const QString path = writeFile(QStringLiteral("batch.json"), text);
    const Run j = run({ QStringLiteral("search"), path, QStringLiteral("--json") });
    QCOMPARE(j.code, 3);
    bool batch_rule = false;
    bool dp_pin = false;
    for (const auto& x : json_object(j.out).value(QStringLiteral("removed")).toArray()) {
        const QJsonObject r = x.toObject();
        QVERIFY(r.value(QStringLiteral("count")).toInteger() > 0);
        batch_rule = batch_rule
            || r.value(QStringLiteral("reason")).toString().contains(QStringLiteral("global_batch 3 must be"));
        dp_pin = dp_pin || r.value(QStringLiteral("key")).toString() == QLatin1String("search.fix.dp");
    }
    QVERIFY2(batch_rule && dp_pin, j.out.constData());
}

void TestCliConventions::emptySweepPointSaysWhy()
{
    const QString path = writeFile(QStringLiteral("too-big-sweep.json"), kTooBig);
    const QStringList args = { QStringLiteral("sweep"), path, QStringLiteral("--gpus"), QStringLiteral("8"),
        QStringLiteral("--refine"), QStringLiteral("0") };
    const Run t = run(args);
    QCOMPARE(t.code, 0);
    QVERIFY2(QString::fromUtf8(t.out).contains(QStringLiteral("removed ")), t.out.constData());
    QVERIFY(QString::fromUtf8(t.out).contains(QStringLiteral("cluster.gpu.memory_GiB")));
    const Run j = run(args + QStringList { QStringLiteral("--json") });
    const QJsonObject point = json_object(j.out).value(QStringLiteral("points")).toArray().at(0).toObject();
    QVERIFY(point.value(QStringLiteral("best")).isNull());
    QVERIFY(!point.value(QStringLiteral("removed")).toArray().isEmpty());
}

void TestCliConventions::csvTablesParse()
{
    // sweep: one row per point, the plan as its label.
    const QString path = writeFile(QStringLiteral("sweep.json"), scenario(""));
    const Run sw = run(
        { QStringLiteral("sweep"), path, QStringLiteral("--gpus"), QStringLiteral("8,16"), QStringLiteral("--refine"),
            QStringLiteral("0"), QStringLiteral("--top"), QStringLiteral("1"), QStringLiteral("--csv") });
    QCOMPARE(sw.code, 0);
    const QList<QStringList> sweep = parse_csv(QString::fromUtf8(sw.out));
    QCOMPARE(sweep.size(), 3);
    QCOMPARE(sweep.at(1).at(column(sweep, "gpus")), QStringLiteral("8"));
    QCOMPARE(sweep.at(2).at(column(sweep, "gpus")), QStringLiteral("16"));
    QVERIFY(sweep.at(2).at(column(sweep, "label")).startsWith(QStringLiteral("TP ")));
    QVERIFY(sweep.at(2).at(column(sweep, "tokens_per_s")).toDouble() > 0);

    // validate: every predicted and every skipped row of the file.
    const QString runs = QStringLiteral(PARALLAX_SOURCE_DIR "/validation/published-runs.json");
    const Run vj = run({ QStringLiteral("validate"), runs, QStringLiteral("--json") });
    const Run vc = run({ QStringLiteral("validate"), runs, QStringLiteral("--csv") });
    QCOMPARE(vc.code, 0);
    const QJsonObject v = json_object(vj.out);
    const QList<QStringList> validate = parse_csv(QString::fromUtf8(vc.out));
    QCOMPARE(validate.size() - 1,
        v.value(QStringLiteral("rows")).toArray().size() + v.value(QStringLiteral("skipped")).toArray().size());
    const QJsonObject row0 = v.value(QStringLiteral("rows")).toArray().at(0).toObject();
    QCOMPARE(validate.at(1).at(column(validate, "id")), row0.value(QStringLiteral("id")).toString());
    QVERIFY(
        qAbs(validate.at(1).at(column(validate, "error")).toDouble() - row0.value(QStringLiteral("error")).toDouble())
        < 1e-6);

    // presets: one row per preset, as many as the JSON lists.
    const Run pj = run({ QStringLiteral("presets"), QStringLiteral("--json") });
    const Run pc = run({ QStringLiteral("presets"), QStringLiteral("--csv") });
    QCOMPARE(pc.code, 0);
    qsizetype presets = 0;
    const QJsonObject pobj = json_object(pj.out);
    for (const QString& kind : pobj.keys())
        presets += pobj.value(kind).toArray().size();
    const QList<QStringList> preset_rows = parse_csv(QString::fromUtf8(pc.out));
    QCOMPARE(preset_rows.size() - 1, presets);
    QCOMPARE(preset_rows.front(),
        (QStringList { QStringLiteral("kind"), QStringLiteral("name"), QStringLiteral("user"), QStringLiteral("origin"),
            QStringLiteral("summary") }));

    // error-bands: the class rows and the coverage rows of the JSON.
    const Run ej = run({ QStringLiteral("error-bands"), QStringLiteral("--json") });
    const Run ec = run({ QStringLiteral("error-bands"), QStringLiteral("--csv") });
    QCOMPARE(ec.code, 0);
    const QList<QStringList> bands = parse_csv(QString::fromUtf8(ec.out));
    const int table = column(bands, "table");
    int classes = 0;
    int coverage = 0;
    for (qsizetype i = 1; i < bands.size(); ++i) {
        QCOMPARE(bands.at(i).size(), bands.front().size());
        classes += bands.at(i).at(table) == QLatin1String("class") ? 1 : 0;
        coverage += bands.at(i).at(table) == QLatin1String("coverage") ? 1 : 0;
    }
    QCOMPARE(classes, json_object(ej.out).value(QStringLiteral("classes")).toArray().size());
    QCOMPARE(coverage, json_object(ej.out).value(QStringLiteral("coverage")).toArray().size());

    // clocks: one row per pipeline stage, as the JSON's per-stage lists.
    const QString clocks = QStringLiteral(PARALLAX_SOURCE_DIR "/docs/examples/power-uneven-1f1b.json");
    const Run cj = run({ QStringLiteral("clocks"), clocks, QStringLiteral("--no-simulate"), QStringLiteral("--json") });
    const Run cc = run({ QStringLiteral("clocks"), clocks, QStringLiteral("--no-simulate"), QStringLiteral("--csv") });
    QCOMPARE(cc.code, 0);
    const QJsonArray stage_clocks = json_object(cj.out).value(QStringLiteral("stage_clock_MHz")).toArray();
    const QList<QStringList> clock_rows = parse_csv(QString::fromUtf8(cc.out));
    QCOMPARE(clock_rows.size() - 1, stage_clocks.size());
    for (qsizetype i = 0; i < stage_clocks.size(); ++i)
        QCOMPARE(clock_rows.at(i + 1).at(column(clock_rows, "clock_MHz")).toDouble(), stage_clocks.at(i).toDouble());

    // runs: an empty store is a header alone.
    const Run rc = run({ QStringLiteral("runs"), QStringLiteral("--store"),
        QDir(m_dir.path()).filePath(QStringLiteral("empty.sqlite")), QStringLiteral("--csv") });
    QCOMPARE(rc.code, 0);
    const QList<QStringList> run_rows = parse_csv(QString::fromUtf8(rc.out));
    QCOMPARE(run_rows.size(), 1);
    QVERIFY(run_rows.front().contains(QStringLiteral("label")));
}

void TestCliConventions::csvAndJsonAreExclusive()
{
    const Run r = run({ QStringLiteral("presets"), QStringLiteral("--csv"), QStringLiteral("--json") });
    QCOMPARE(r.code, 2);
    QVERIFY(r.out.isEmpty());
    QVERIFY2(QString::fromUtf8(r.err).contains(QStringLiteral("--csv and --json")), r.err.constData());
}

void TestCliConventions::verboseAndLoggingRules()
{
    const QStringList args = { QStringLiteral("predict"), QStringLiteral("default") };
    const Run quiet = run(args);
    QCOMPARE(quiet.code, 0);
    QVERIFY2(!quiet.err.contains("parallax.cli"), quiet.err.constData());
    // --verbose before or after the command.
    for (const QStringList& verbose :
        { QStringList { QStringLiteral("--verbose") } + args, args + QStringList { QStringLiteral("--verbose") } }) {
        const Run r = run(verbose);
        QCOMPARE(r.code, 0);
        QVERIFY2(r.err.contains("parallax.cli: scenario default from the presets"), r.err.constData());
        QCOMPARE(r.out, quiet.out); // logging never reaches stdout
    }
    // QT_LOGGING_RULES turns a category on without --verbose, and overrides --verbose.
    QProcessEnvironment env = m_env;
    env.insert(QStringLiteral("QT_LOGGING_RULES"), QStringLiteral("parallax.cli.debug=true"));
    QVERIFY(run(args, env).err.contains("parallax.cli: "));
    env.insert(QStringLiteral("QT_LOGGING_RULES"), QStringLiteral("parallax.*.debug=false"));
    const Run off = run(QStringList { QStringLiteral("--verbose") } + args, env);
    QCOMPARE(off.code, 0);
    QVERIFY2(!off.err.contains("parallax.cli"), off.err.constData());
}

void TestCliConventions::failedDispatchLogsEachStep()
{
    // Nothing listens on port 1 of the loopback: the connection is refused at once.
    const QString known_hosts = QDir(m_dir.path()).filePath(QStringLiteral("known_hosts"));
    const QString profile = writeFile(QStringLiteral("nowhere.json"),
        QStringLiteral(R"({ "name": "nowhere", "host": "127.0.0.1", "port": 1, "launcher": "direct",
  "hosts": ["127.0.0.1", "127.0.0.2"], "known_hosts": "%1", "connect_timeout_s": 2, "use_agent": false,
  "gpu_type": "cpu", "gpus_per_node": 8 })")
            .arg(known_hosts)
            .toUtf8());
    const QString plan = writeFile(QStringLiteral("dispatch.json"), scenario("")); // 2 nodes of 8 GPUs
    const QStringList args = { QStringLiteral("run"), plan, QStringLiteral("--cluster"), profile,
        QStringLiteral("--store"), QDir(m_dir.path()).filePath(QStringLiteral("dispatch.sqlite")) };
    const Run r = run(QStringList { QStringLiteral("--verbose") } + args);
    QVERIFY(!r.crashed);
    QCOMPARE(r.code, 4);
    const QString err = QString::fromUtf8(r.err);
    // Each step on its way to the failure, with its category: the connection attempt that failed, the
    // dispatch step it broke, and libssh's own account of the connect.
    QVERIFY2(err.contains(QStringLiteral("parallax.remote.run: run ")), r.err.constData());
    QVERIFY2(err.contains(QStringLiteral(": creating the run folder on 127.0.0.1")), r.err.constData());
    QVERIFY2(err.contains(QStringLiteral("parallax.remote.ssh: connecting to")), r.err.constData());
    QVERIFY2(err.contains(QStringLiteral("parallax.remote.ssh: connection attempt 1 failed:")), r.err.constData());
    QVERIFY2(err.contains(QStringLiteral("step 'create the run folder' failed:")), r.err.constData());
    QVERIFY2(err.contains(QStringLiteral("parallax.remote.ssh: libssh: ssh_connect")), r.err.constData());
    // Without --verbose the failed steps are still there (warnings), libssh's chatter is not.
    const Run quiet = run(args);
    QCOMPARE(quiet.code, 4);
    QVERIFY2(quiet.err.contains("connection attempt 1 failed:"), quiet.err.constData());
    QVERIFY2(!quiet.err.contains("libssh:"), quiet.err.constData());
}

QTEST_GUILESS_MAIN(TestCliConventions)
#include "tst_cli_conventions.moc"

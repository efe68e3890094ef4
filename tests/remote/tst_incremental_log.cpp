// A run's log is read as it grows: each poll parses only the bytes it brought and writes only the steps it
// added or changed, and what ends up stored is what parsing the whole log at once gives.
#include "runs/measurement_sync.hpp"
#include "runs/measurements.hpp"
#include "store/run_store.hpp"

#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>

#include <string>

using namespace parallax::remote;

namespace {

// A Megatron log: an iteration record per step, a memory report now and then that raises an earlier step's
// memory (a changed step), a record hard-wrapped over two lines, and no newline after the last record.
std::string megatron_log(int steps)
{
    std::string log;
    for (int i = 1; i <= steps; ++i) {
        const std::string ms = std::to_string(1000 + (i * 37) % 200) + ".5";
        if (i % 50 == 7) {
            log += " iteration " + std::to_string(i) + "/ 100000 | elapsed time per iteration (ms): " + ms
                + " | throughput per GPU\n(TFLOP/s/GPU): 401.2 | lm loss: 2.5E+00 |\n";
        } else {
            log += " iteration " + std::to_string(i) + "/ 100000 | elapsed time per iteration (ms): " + ms
                + " | throughput per GPU (TFLOP/s/GPU): 401.2 | lm loss: 2.5E+00 |";
            log += i == steps ? "" : "\n";
        }
        if (i % 25 == 0 && i != steps)
            log += "[Rank 3] (after " + std::to_string(i - 3)
                + " iterations) memory (MB) | allocated: 1000.0 | max allocated: 2000.0 | reserved: 3000.0 | "
                  "max reserved: "
                + std::to_string(40000 + i) + ".0\n";
    }
    return log;
}

RunRecord stored_run(RunStore& store)
{
    RunRecord r;
    r.id = "r1";
    r.framework = "megatron";
    r.launcher = "slurm";
    r.cluster = "test";
    r.profile_json = "{}";
    r.scenario_json = "{}";
    r.plan_json = "{}";
    r.remote_dir = "/scratch/run";
    store.create(r);
    return r;
}

// Counts the rows written into run_steps, by a trigger in the store's file (every connection fires it).
void count_step_writes(const QString& path)
{
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("counter"));
        db.setDatabaseName(path);
        QVERIFY(db.open());
        QSqlQuery q(db);
        QVERIFY(q.exec(QStringLiteral("CREATE TABLE step_writes (n INTEGER)")));
        QVERIFY(q.exec(QStringLiteral("INSERT INTO step_writes VALUES (0)")));
        QVERIFY(q.exec(QStringLiteral(
            "CREATE TRIGGER count_steps AFTER INSERT ON run_steps BEGIN UPDATE step_writes SET n = n + 1; END")));
    }
    QSqlDatabase::removeDatabase(QStringLiteral("counter"));
}

int step_writes(const QString& path)
{
    int n = -1;
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("reader"));
        db.setDatabaseName(path);
        if (db.open()) {
            QSqlQuery q(db);
            if (q.exec(QStringLiteral("SELECT n FROM step_writes")) && q.next())
                n = q.value(0).toInt();
        }
    }
    QSqlDatabase::removeDatabase(QStringLiteral("reader"));
    return n;
}

} // namespace

class TestIncrementalLog : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void chunkedFeedsGiveTheWholeParse_data()
    {
        QTest::addColumn<int>("chunk_bytes");
        QTest::newRow("1 byte") << 1;
        QTest::newRow("7 bytes") << 7;
        QTest::newRow("4 KiB") << 4096;
    }
    void chunkedFeedsGiveTheWholeParse()
    {
        QFETCH(int, chunk_bytes);
        const std::string log = megatron_log(300);
        const Measurements whole = parse_measurements(log, LogFormat::megatron);
        QCOMPARE(whole.parsed.steps.size(), std::size_t(300));
        MeasurementCollector c(LogFormat::megatron);
        for (std::size_t i = 0; i < log.size(); i += static_cast<std::size_t>(chunk_bytes)) {
            c.feed(std::string_view(log).substr(i, static_cast<std::size_t>(chunk_bytes)));
            // A live snapshot never holds a step the whole parse reads differently: at most the one whose line
            // has not ended yet is missing, or holds fewer fields.
            const Measurements live = c.snapshot();
            QVERIFY(live.parsed.steps.size() <= whole.parsed.steps.size());
        }
        QCOMPARE(c.size(), log.size());
        QCOMPARE(std::string(c.tail(100)), log.substr(log.size() - 100));
        // The unterminated last record waits for its end while the job runs...
        QCOMPARE(c.snapshot().parsed.steps.size(), std::size_t(299));
        // ...and is read once the log is complete.
        const Measurements done = c.finish();
        QVERIFY(done.parsed.steps == whole.parsed.steps);
        QCOMPARE(done.summary_json().dump(), whole.summary_json().dump());
        QVERIFY(c.finished());
        QVERIFY_THROWS_EXCEPTION(std::logic_error, c.feed("more"));
    }

    void probeRecordsArriveAsTheirLinesEnd()
    {
        MeasurementCollector c(LogFormat::probe);
        c.feed("PARALLAX_PROBE {\"kind\":\"bench\",\"op\":\"gemm\",\"time_s\":0.5}\nPARALLAX_PROBE {\"kind\":\"ben");
        QCOMPARE(c.snapshot().benches.size(), std::size_t(1));
        c.feed("ch\",\"op\":\"p2p\",\"time_s\":0.25}\n");
        const Measurements m = c.snapshot();
        QCOMPARE(m.benches.size(), std::size_t(2));
        QCOMPARE(m.benches[1].seq, 1);
        QCOMPARE(m.benches[1].op, std::string("p2p"));
        c.clear();
        QCOMPARE(c.size(), std::size_t(0));
        QVERIFY(c.snapshot().benches.empty());
    }

    // 100 polls of a growing 5,000-step log: the store receives each step about once (plus the few that a
    // later memory report changed), not every step at every poll, and holds what the whole parse gives.
    void pollsWriteOnlyNewAndChangedSteps()
    {
        QTemporaryDir tmp;
        const QString path = tmp.filePath(QStringLiteral("runs.sqlite"));
        const std::string log = megatron_log(5000);
        const Measurements whole = parse_measurements(log, LogFormat::megatron);
        {
            RunStore store(path);
            const RunRecord run = stored_run(store);
            count_step_writes(path);
            MeasurementCollector c(LogFormat::megatron);
            StoredMeasurements stored;
            const std::size_t increment = log.size() / 100 + 1;
            for (std::size_t at = 0; at < log.size(); at += increment) {
                c.feed(std::string_view(log).substr(at, increment));
                store.store_measurements(run.id, stored.delta_to(c.snapshot()));
            }
            store.store_measurements(run.id, stored.delta_to(c.finish()));
            QVERIFY(store.steps(run.id) == whole.parsed.steps);
            QCOMPARE(store.get(run.id)->summary_json, whole.summary_json().dump());
            QCOMPARE(store.get(run.id)->log_format, std::string("megatron"));
        }
        const int writes = step_writes(path);
        qInfo("%d step rows written for 5,000 steps in 100 polls", writes);
        // 5,000 steps, 200 of them raised by a memory report after they were first stored, a few cut by a
        // poll in the middle of their wrapped record.
        QVERIFY2(writes >= 5000 && writes <= 5300, qPrintable(QString::number(writes)));
    }

    // A replaced log (requeue) drops what was stored: the next write replaces every step.
    void aResetReplacesEverything()
    {
        QTemporaryDir tmp;
        RunStore store(tmp.filePath(QStringLiteral("runs.sqlite")));
        const RunRecord run = stored_run(store);
        StoredMeasurements stored;
        store.store_measurements(run.id, stored.delta_to(parse_measurements(megatron_log(40), LogFormat::megatron)));
        QCOMPARE(store.steps(run.id).size(), std::size_t(40));
        const Measurements shorter = parse_measurements(megatron_log(5), LogFormat::megatron);
        stored.reset();
        const MeasurementDelta d = stored.delta_to(shorter);
        QVERIFY(d.replace);
        store.store_measurements(run.id, d);
        QVERIFY(store.steps(run.id) == shorter.parsed.steps);
        // Unchanged measurements write no step.
        QVERIFY(stored.delta_to(shorter).steps.empty());
    }
};

QTEST_GUILESS_MAIN(TestIncrementalLog)
#include "tst_incremental_log.moc"

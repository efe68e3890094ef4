#include "store/run_store.hpp"

#include "io/input_limits.hpp"
#include "logging/log_categories.hpp"

#include <QAtomicInteger>
#include <QDateTime>
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QStandardPaths>
#include <QThread>
#include <QVariant>

#include <algorithm>
#include <array>

namespace parallax::remote {

std::string utc_now_iso()
{
    return QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs).toStdString();
}

namespace {

// Schema history. Append a migration for every change; never edit one that has shipped (databases in the
// field have already run it). PRAGMA user_version holds the number of the last one applied.
struct Migration {
    int version;
    const char* what;
    std::vector<const char*> statements;
};

const std::vector<Migration>& migrations()
{
    static const std::vector<Migration> kMigrations {
        { 1, "runs, state transitions, log chunks, steps and benchmarks",
            {
                "CREATE TABLE runs ("
                " id TEXT PRIMARY KEY,"
                " created_at TEXT NOT NULL, updated_at TEXT NOT NULL,"
                " framework TEXT NOT NULL, launcher TEXT NOT NULL, cluster TEXT NOT NULL,"
                " scenario_label TEXT NOT NULL DEFAULT '', description TEXT NOT NULL DEFAULT '',"
                " profile_json TEXT NOT NULL, scenario_json TEXT NOT NULL, plan_json TEXT NOT NULL,"
                " script TEXT NOT NULL, submit_command TEXT NOT NULL DEFAULT '',"
                " remote_dir TEXT NOT NULL, log_path TEXT NOT NULL DEFAULT '', job_id TEXT NOT NULL DEFAULT '',"
                " state TEXT NOT NULL, detail TEXT NOT NULL DEFAULT '', exit_code INTEGER,"
                " log_bytes INTEGER NOT NULL DEFAULT 0, log_format TEXT NOT NULL DEFAULT '',"
                " prediction_json TEXT NOT NULL DEFAULT '', workload_prediction_json TEXT NOT NULL DEFAULT '',"
                " summary_json TEXT NOT NULL DEFAULT '', notes_json TEXT NOT NULL DEFAULT '[]',"
                " run_info_json TEXT NOT NULL DEFAULT '')",
                "CREATE INDEX runs_state ON runs(state)",
                "CREATE TABLE run_states ("
                " run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
                " seq INTEGER NOT NULL, at TEXT NOT NULL, state TEXT NOT NULL, detail TEXT NOT NULL,"
                " PRIMARY KEY (run_id, seq))",
                "CREATE TABLE run_log_chunks ("
                " run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
                " offset INTEGER NOT NULL, data BLOB NOT NULL,"
                " PRIMARY KEY (run_id, offset))",
                "CREATE TABLE run_steps ("
                " run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
                " step INTEGER NOT NULL, step_time_s REAL, tokens_per_s REAL, samples_per_s REAL,"
                " tflops_per_gpu REAL, mfu REAL, memory_GiB REAL, power_W REAL, loss REAL,"
                " PRIMARY KEY (run_id, step))",
                "CREATE TABLE run_files ("
                " run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
                " name TEXT NOT NULL, mode INTEGER NOT NULL, content BLOB NOT NULL,"
                " PRIMARY KEY (run_id, name))",
                "CREATE TABLE run_bench ("
                " run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
                " seq INTEGER NOT NULL, op TEXT NOT NULL, name TEXT NOT NULL, grp TEXT NOT NULL,"
                " time_s REAL NOT NULL, bytes REAL, tflops REAL, bus_GBps REAL, json TEXT NOT NULL,"
                " PRIMARY KEY (run_id, seq))",
            } },
    };
    return kMigrations;
}

QString q(const std::string& s)
{
    return QString::fromStdString(s);
}
QString q(std::string_view s)
{
    return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size()));
}
std::string s(const QVariant& v)
{
    return v.toString().toStdString();
}

QVariant opt(const std::optional<double>& v)
{
    return v ? QVariant(*v) : QVariant(QMetaType(QMetaType::Double));
}
std::optional<double> opt_double(const QVariant& v)
{
    if (v.isNull())
        return std::nullopt;
    return v.toDouble();
}

QSqlDatabase db(const QString& connection)
{
    return QSqlDatabase::database(connection, false);
}

[[noreturn]] void fail(const QString& what, const QSqlError& e)
{
    throw StoreError("run store: " + what.toStdString() + ": " + e.text().toStdString());
}

// Positional values bound by index, so a prepared statement can be executed again with new values.
void bind_all(QSqlQuery& query, std::initializer_list<QVariant> values)
{
    int i = 0;
    for (const QVariant& v : values)
        query.bindValue(i++, v);
}

void exec(QSqlQuery& query, const char* what)
{
    if (!query.exec())
        fail(QLatin1String(what), query.lastError());
}

QSqlQuery prepare(const QString& connection, const char* sql)
{
    QSqlQuery query(db(connection));
    if (!query.prepare(QLatin1String(sql)))
        fail(QLatin1String(sql), query.lastError());
    return query;
}

void exec_sql(const QString& connection, const char* sql)
{
    QSqlQuery query(db(connection));
    if (!query.exec(QLatin1String(sql)))
        fail(QLatin1String(sql), query.lastError());
}

// Switching a fresh file to WAL takes an exclusive lock that SQLite does not wait for (the busy timeout
// does not apply to it): when another process opens the same fresh store at that moment the switch
// reports "database is locked". It is retried for up to this long, then reported.
constexpr int kWalSwitchRetryMs = 10000;
constexpr int kWalSwitchPauseMs = 20;

void switch_to_wal(const QString& connection)
{
    QElapsedTimer waited;
    waited.start();
    for (;;) {
        QSqlQuery query(db(connection));
        if (query.exec(QStringLiteral("PRAGMA journal_mode=WAL")))
            return;
        const bool locked = query.lastError().nativeErrorCode() == QLatin1String("5") // SQLITE_BUSY
            || query.lastError().text().contains(QLatin1String("locked"));
        if (!locked || waited.elapsed() > kWalSwitchRetryMs)
            fail(QStringLiteral("PRAGMA journal_mode=WAL"), query.lastError());
        QThread::msleep(kWalSwitchPauseMs);
    }
}

const char* kRunColumns = "id, created_at, updated_at, framework, launcher, cluster, scenario_label, description, "
                          "profile_json, scenario_json, plan_json, script, submit_command, remote_dir, log_path, "
                          "job_id, state, detail, exit_code, log_bytes, log_format, prediction_json, "
                          "workload_prediction_json, summary_json, notes_json, run_info_json";

RunRecord read_run(const QSqlQuery& r)
{
    RunRecord run;
    int i = 0;
    run.id = s(r.value(i++));
    run.created_at = s(r.value(i++));
    run.updated_at = s(r.value(i++));
    run.framework = s(r.value(i++));
    run.launcher = s(r.value(i++));
    run.cluster = s(r.value(i++));
    run.scenario_label = s(r.value(i++));
    run.description = s(r.value(i++));
    run.profile_json = s(r.value(i++));
    run.scenario_json = s(r.value(i++));
    run.plan_json = s(r.value(i++));
    run.script = s(r.value(i++));
    run.submit_command = s(r.value(i++));
    run.remote_dir = s(r.value(i++));
    run.log_path = s(r.value(i++));
    run.job_id = s(r.value(i++));
    run.state = run_state_from_string(s(r.value(i++))).value_or(RunState::failed);
    run.detail = s(r.value(i++));
    const QVariant exit = r.value(i++);
    if (!exit.isNull())
        run.exit_code = exit.toInt();
    run.log_bytes = r.value(i++).toLongLong();
    run.log_format = s(r.value(i++));
    run.prediction_json = s(r.value(i++));
    run.workload_prediction_json = s(r.value(i++));
    run.summary_json = s(r.value(i++));
    run.notes_json = s(r.value(i++));
    run.run_info_json = s(r.value(i++));
    return run;
}

QAtomicInteger<quint64> g_connection_counter;

} // namespace

// BEGIN IMMEDIATE ... COMMIT; rolled back when destroyed uncommitted (an exception on the way).
class RunStore::Transaction {
public:
    explicit Transaction(const QString& connection)
        : m_connection(connection)
    {
        // IMMEDIATE takes the write lock now: a reader-turned-writer cannot deadlock against another writer.
        exec_sql(m_connection, "BEGIN IMMEDIATE");
    }
    ~Transaction()
    {
        if (!m_done) {
            QSqlQuery query(db(m_connection));
            query.exec(QStringLiteral("ROLLBACK"));
        }
    }
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;
    void commit()
    {
        exec_sql(m_connection, "COMMIT");
        m_done = true;
    }

private:
    QString m_connection;
    bool m_done = false;
};

int RunStore::latest_schema()
{
    return migrations().back().version;
}

QString RunStore::default_path()
{
    const QByteArray env = qgetenv("PARALLAX_RUN_STORE");
    if (!env.isEmpty())
        return QString::fromLocal8Bit(env);
    return QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation)
        + QStringLiteral("/parallax/runs.sqlite");
}

RunStore::RunStore(const QString& path)
    : m_path(path)
    , m_connection(QStringLiteral("parallax-runs-%1").arg(g_connection_counter.fetchAndAddRelaxed(1)))
{
    qCDebug(lcStore).noquote() << "opening" << path;
    if (!QSqlDatabase::isDriverAvailable(QStringLiteral("QSQLITE")))
        throw StoreError("run store: Qt's QSQLITE driver is not installed (Debian: libqt6sql6-sqlite)");
    const QFileInfo info(path);
    if (!QDir().mkpath(info.absolutePath()))
        throw StoreError("run store: cannot create the folder " + info.absolutePath().toStdString());
    QSqlDatabase d = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), m_connection);
    d.setDatabaseName(path);
    // Another connection (the GUI reading while a worker writes) waits up to 10 s for a lock.
    d.setConnectOptions(QStringLiteral("QSQLITE_BUSY_TIMEOUT=10000"));
    if (!d.open()) {
        const QString err = d.lastError().text();
        d = QSqlDatabase();
        QSqlDatabase::removeDatabase(m_connection);
        throw StoreError("run store: cannot open " + path.toStdString() + ": " + err.toStdString());
    }
    try {
        // WAL: readers never block the writer; synchronous=FULL: a committed transaction survives power loss.
        switch_to_wal(m_connection);
        exec_sql(m_connection, "PRAGMA synchronous=FULL");
        exec_sql(m_connection, "PRAGMA foreign_keys=ON");
        migrate();
    } catch (...) {
        d.close();
        d = QSqlDatabase();
        QSqlDatabase::removeDatabase(m_connection);
        throw;
    }
}

RunStore::~RunStore()
{
    {
        QSqlDatabase d = db(m_connection);
        if (d.isOpen())
            d.close();
    }
    QSqlDatabase::removeDatabase(m_connection);
}

namespace {

int schema_version(const QString& connection)
{
    QSqlQuery v(db(connection));
    if (!v.exec(QStringLiteral("PRAGMA user_version")) || !v.next())
        fail(QStringLiteral("reading the schema version"), v.lastError());
    return v.value(0).toInt();
}

} // namespace

void RunStore::migrate()
{
    m_opened_schema = schema_version(m_connection);
    check_schema_is_readable();
    if (m_opened_schema == latest_schema())
        return;
    // Another process (or the GUI's reader and worker) may be opening the same fresh file: the version is read
    // again under the write lock, so only the first opener migrates and the others see its result.
    Transaction tx(m_connection);
    m_opened_schema = schema_version(m_connection);
    check_schema_is_readable();
    for (const Migration& m : migrations()) {
        if (m.version <= m_opened_schema)
            continue;
        for (const char* sql : m.statements)
            exec_sql(m_connection, sql);
        QSqlQuery set(db(m_connection));
        if (!set.exec(QStringLiteral("PRAGMA user_version = %1").arg(m.version)))
            fail(QStringLiteral("setting the schema version"), set.lastError());
    }
    tx.commit();
}

void RunStore::check_schema_is_readable() const
{
    if (m_opened_schema > latest_schema())
        throw StoreError("run store: " + m_path.toStdString() + " has schema " + std::to_string(m_opened_schema)
            + ", written by a newer Parallax; this one reads schemas up to " + std::to_string(latest_schema())
            + ". It was left untouched.");
}

void RunStore::create(const RunRecord& run, const std::vector<StoredFile>& files)
{
    Transaction tx(m_connection);
    QSqlQuery file = prepare(m_connection, "INSERT INTO run_files (run_id, name, mode, content) VALUES (?, ?, ?, ?)");
    QSqlQuery ins = prepare(m_connection,
        "INSERT INTO runs (id, created_at, updated_at, framework, launcher, cluster, scenario_label, description, "
        "profile_json, scenario_json, plan_json, script, submit_command, remote_dir, log_path, job_id, state, detail, "
        "exit_code, log_bytes, log_format, prediction_json, workload_prediction_json, summary_json, notes_json, "
        "run_info_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, '', ?, ?, '', ?, '')");
    const std::string now = run.created_at.empty() ? utc_now_iso() : run.created_at;
    for (const QVariant& v : { QVariant(q(run.id)), QVariant(q(now)), QVariant(q(now)), QVariant(q(run.framework)),
             QVariant(q(run.launcher)), QVariant(q(run.cluster)), QVariant(q(run.scenario_label)),
             QVariant(q(run.description)), QVariant(q(run.profile_json)), QVariant(q(run.scenario_json)),
             QVariant(q(run.plan_json)), QVariant(q(run.script)), QVariant(q(run.submit_command)),
             QVariant(q(run.remote_dir)), QVariant(q(run.log_path)), QVariant(q(run.job_id)),
             QVariant(q(to_string(run.state))), QVariant(q(run.detail)),
             run.exit_code ? QVariant(*run.exit_code) : QVariant(QMetaType(QMetaType::Int)),
             QVariant(q(run.prediction_json)), QVariant(q(run.workload_prediction_json)),
             QVariant(q(run.notes_json.empty() ? std::string("[]") : run.notes_json)) })
        ins.addBindValue(v);
    exec(ins, "storing the run");
    QSqlQuery st
        = prepare(m_connection, "INSERT INTO run_states (run_id, seq, at, state, detail) VALUES (?, 0, ?, ?, ?)");
    st.addBindValue(q(run.id));
    st.addBindValue(q(now));
    st.addBindValue(q(to_string(run.state)));
    st.addBindValue(q(run.detail));
    exec(st, "storing the first state");
    for (const StoredFile& f : files) {
        bind_all(file,
            { q(run.id), q(f.name), f.mode, QByteArray(f.content.data(), static_cast<qsizetype>(f.content.size())) });
        exec(file, "storing a file of the run");
    }
    tx.commit();
}

std::vector<StoredFile> RunStore::files(const std::string& id) const
{
    QSqlQuery r = prepare(m_connection, "SELECT name, mode, content FROM run_files WHERE run_id = ? ORDER BY name");
    r.addBindValue(q(id));
    exec(r, "reading the files of a run");
    std::vector<StoredFile> out;
    while (r.next()) {
        const QByteArray content = r.value(2).toByteArray();
        out.push_back({ s(r.value(0)), r.value(1).toInt(),
            std::string(content.constData(), static_cast<std::size_t>(content.size())) });
    }
    return out;
}

void RunStore::set_state(const std::string& id, RunState state, const std::string& detail, std::optional<int> exit_code)
{
    qCDebug(lcStore).noquote() << "run" << id.c_str() << "->" << to_string(state).data() << ":" << detail.c_str();
    Transaction tx(m_connection);
    QSqlQuery cur = prepare(m_connection, "SELECT state, detail FROM runs WHERE id = ?");
    cur.addBindValue(q(id));
    exec(cur, "reading the run's state");
    if (!cur.next())
        throw StoreError("run store: no run " + quoted_for_message(id));
    if (s(cur.value(0)) == to_string(state) && s(cur.value(1)) == detail && !exit_code)
        return; // nothing changed: no transition
    cur.finish();
    const std::string now = utc_now_iso();
    QSqlQuery st = prepare(m_connection,
        "INSERT INTO run_states (run_id, seq, at, state, detail) "
        "VALUES (?, (SELECT COALESCE(MAX(seq), -1) + 1 FROM run_states WHERE run_id = ?), ?, ?, ?)");
    st.addBindValue(q(id));
    st.addBindValue(q(id));
    st.addBindValue(q(now));
    st.addBindValue(q(to_string(state)));
    st.addBindValue(q(detail));
    exec(st, "storing a state transition");
    QSqlQuery up = prepare(m_connection,
        "UPDATE runs SET state = ?, detail = ?, updated_at = ?, exit_code = COALESCE(?, exit_code) WHERE id = ?");
    up.addBindValue(q(to_string(state)));
    up.addBindValue(q(detail));
    up.addBindValue(q(now));
    up.addBindValue(exit_code ? QVariant(*exit_code) : QVariant(QMetaType(QMetaType::Int)));
    up.addBindValue(q(id));
    exec(up, "updating the run's state");
    tx.commit();
}

void RunStore::set_job(
    const std::string& id, const std::string& job_id, const std::string& log_path, const std::string& submit_command)
{
    Transaction tx(m_connection);
    QSqlQuery up = prepare(
        m_connection, "UPDATE runs SET job_id = ?, log_path = ?, submit_command = ?, updated_at = ? WHERE id = ?");
    up.addBindValue(q(job_id));
    up.addBindValue(q(log_path));
    up.addBindValue(q(submit_command));
    up.addBindValue(q(utc_now_iso()));
    up.addBindValue(q(id));
    exec(up, "storing the job id");
    if (up.numRowsAffected() != 1)
        throw StoreError("run store: no run " + quoted_for_message(id));
    tx.commit();
}

void RunStore::reset_log(const std::string& id, const std::string& why)
{
    const std::optional<RunRecord> run = get(id);
    if (!run)
        throw StoreError("run store: no run " + quoted_for_message(id));
    {
        Transaction tx(m_connection);
        QSqlQuery del = prepare(m_connection, "DELETE FROM run_log_chunks WHERE run_id = ?");
        del.addBindValue(q(id));
        exec(del, "dropping the replaced log");
        QSqlQuery up = prepare(m_connection, "UPDATE runs SET log_bytes = 0, updated_at = ? WHERE id = ?");
        up.addBindValue(q(utc_now_iso()));
        up.addBindValue(q(id));
        exec(up, "dropping the replaced log");
        tx.commit();
    }
    set_state(id, run->state, why);
}

std::int64_t RunStore::append_log(const std::string& id, std::int64_t offset, std::string_view bytes)
{
    Transaction tx(m_connection);
    QSqlQuery cur = prepare(m_connection, "SELECT log_bytes FROM runs WHERE id = ?");
    cur.addBindValue(q(id));
    exec(cur, "reading the log size");
    if (!cur.next())
        throw StoreError("run store: no run " + quoted_for_message(id));
    const std::int64_t stored = cur.value(0).toLongLong();
    cur.finish();
    if (offset > stored)
        throw StoreError("run store: log of run " + quoted_for_message(id) + " would have a gap: it holds "
            + std::to_string(stored) + " bytes, new data starts at " + std::to_string(offset));
    const std::int64_t end = offset + static_cast<std::int64_t>(bytes.size());
    if (end <= stored)
        return stored; // all of it was stored before (a re-read after a reconnect)
    const std::string_view fresh = bytes.substr(static_cast<std::size_t>(stored - offset));
    QSqlQuery ins = prepare(m_connection, "INSERT INTO run_log_chunks (run_id, offset, data) VALUES (?, ?, ?)");
    ins.addBindValue(q(id));
    ins.addBindValue(static_cast<qlonglong>(stored));
    ins.addBindValue(QByteArray(fresh.data(), static_cast<qsizetype>(fresh.size())));
    exec(ins, "storing log bytes");
    QSqlQuery up = prepare(m_connection, "UPDATE runs SET log_bytes = ?, updated_at = ? WHERE id = ?");
    up.addBindValue(static_cast<qlonglong>(end));
    up.addBindValue(q(utc_now_iso()));
    up.addBindValue(q(id));
    exec(up, "updating the log size");
    tx.commit();
    return end;
}

void RunStore::set_measurements(const std::string& id, const ParsedLog& parsed, const std::vector<BenchRecord>& benches,
    const std::string& summary_json, const std::string& run_info_json)
{
    MeasurementDelta all;
    all.replace = true;
    all.steps = parsed.steps;
    all.benches = benches;
    all.log_format = parsed.recognised() ? log_format_name(parsed.format) : std::string_view();
    all.summary_json = summary_json;
    all.run_info_json = run_info_json;
    store_measurements(id, all);
}

void RunStore::store_measurements(const std::string& id, const MeasurementDelta& delta)
{
    Transaction tx(m_connection);
    if (delta.replace) {
        for (const char* sql : { "DELETE FROM run_steps WHERE run_id = ?", "DELETE FROM run_bench WHERE run_id = ?" }) {
            QSqlQuery del = prepare(m_connection, sql);
            del.addBindValue(q(id));
            exec(del, "replacing the measurements");
        }
    }
    QSqlQuery ins = prepare(m_connection,
        "INSERT OR REPLACE INTO run_steps (run_id, step, step_time_s, tokens_per_s, samples_per_s, tflops_per_gpu, "
        "mfu, memory_GiB, power_W, loss) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    for (const StepRecord& st : delta.steps) {
        bind_all(ins,
            { q(id), static_cast<qlonglong>(st.step), opt(st.step_time_s), opt(st.tokens_per_s), opt(st.samples_per_s),
                opt(st.tflops_per_gpu), opt(st.mfu), opt(st.memory_GiB), opt(st.power_W), opt(st.loss) });
        exec(ins, "storing a step");
    }
    QSqlQuery insb = prepare(m_connection,
        "INSERT OR REPLACE INTO run_bench (run_id, seq, op, name, grp, time_s, bytes, tflops, bus_GBps, json) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    for (const BenchRecord& b : delta.benches) {
        bind_all(insb,
            { q(id), b.seq, q(b.op), q(b.name), q(b.group), b.time_s, opt(b.bytes), opt(b.tflops), opt(b.bus_GBps),
                q(b.json) });
        exec(insb, "storing a benchmark");
    }
    QSqlQuery up = prepare(m_connection,
        "UPDATE runs SET summary_json = ?, log_format = ?, run_info_json = ?, updated_at = ? WHERE id = ?");
    up.addBindValue(q(delta.summary_json));
    up.addBindValue(q(delta.log_format));
    up.addBindValue(q(delta.run_info_json));
    up.addBindValue(q(utc_now_iso()));
    up.addBindValue(q(id));
    exec(up, "storing the summary");
    tx.commit();
}

std::optional<RunRecord> RunStore::get(const std::string& id) const
{
    QSqlQuery r(db(m_connection));
    r.prepare(QStringLiteral("SELECT %1 FROM runs WHERE id = ?").arg(QLatin1String(kRunColumns)));
    r.addBindValue(q(id));
    exec(r, "reading a run");
    if (!r.next())
        return std::nullopt;
    return read_run(r);
}

std::vector<RunRecord> RunStore::list(int limit) const
{
    QSqlQuery r(db(m_connection));
    QString sql
        = QStringLiteral("SELECT %1 FROM runs ORDER BY created_at DESC, id DESC").arg(QLatin1String(kRunColumns));
    if (limit > 0)
        sql += QStringLiteral(" LIMIT %1").arg(limit);
    if (!r.exec(sql))
        fail(QStringLiteral("listing runs"), r.lastError());
    std::vector<RunRecord> out;
    while (r.next())
        out.push_back(read_run(r));
    return out;
}

std::vector<RunRecord> RunStore::active() const
{
    QSqlQuery r(db(m_connection));
    const QString sql = QStringLiteral("SELECT %1 FROM runs WHERE state NOT IN ('completed', 'failed', 'cancelled') "
                                       "ORDER BY created_at, id")
                            .arg(QLatin1String(kRunColumns));
    if (!r.exec(sql))
        fail(QStringLiteral("listing active runs"), r.lastError());
    std::vector<RunRecord> out;
    while (r.next())
        out.push_back(read_run(r));
    return out;
}

std::vector<StateTransition> RunStore::transitions(const std::string& id) const
{
    QSqlQuery r = prepare(m_connection, "SELECT seq, at, state, detail FROM run_states WHERE run_id = ? ORDER BY seq");
    r.addBindValue(q(id));
    exec(r, "reading state transitions");
    std::vector<StateTransition> out;
    while (r.next())
        out.push_back({ r.value(0).toInt(), s(r.value(1)),
            run_state_from_string(s(r.value(2))).value_or(RunState::failed), s(r.value(3)) });
    return out;
}

std::vector<StepRecord> RunStore::steps(const std::string& id) const
{
    QSqlQuery r = prepare(m_connection,
        "SELECT step, step_time_s, tokens_per_s, samples_per_s, tflops_per_gpu, mfu, memory_GiB, power_W, loss "
        "FROM run_steps WHERE run_id = ? ORDER BY step");
    r.addBindValue(q(id));
    exec(r, "reading steps");
    std::vector<StepRecord> out;
    while (r.next()) {
        StepRecord st;
        st.step = r.value(0).toLongLong();
        st.step_time_s = opt_double(r.value(1));
        st.tokens_per_s = opt_double(r.value(2));
        st.samples_per_s = opt_double(r.value(3));
        st.tflops_per_gpu = opt_double(r.value(4));
        st.mfu = opt_double(r.value(5));
        st.memory_GiB = opt_double(r.value(6));
        st.power_W = opt_double(r.value(7));
        st.loss = opt_double(r.value(8));
        out.push_back(st);
    }
    return out;
}

std::vector<BenchRecord> RunStore::benches(const std::string& id) const
{
    QSqlQuery r = prepare(m_connection,
        "SELECT seq, op, name, grp, time_s, bytes, tflops, bus_GBps, json FROM run_bench WHERE run_id = ? ORDER BY "
        "seq");
    r.addBindValue(q(id));
    exec(r, "reading benchmarks");
    std::vector<BenchRecord> out;
    while (r.next()) {
        BenchRecord b;
        b.seq = r.value(0).toInt();
        b.op = s(r.value(1));
        b.name = s(r.value(2));
        b.group = s(r.value(3));
        b.time_s = r.value(4).toDouble();
        b.bytes = opt_double(r.value(5));
        b.tflops = opt_double(r.value(6));
        b.bus_GBps = opt_double(r.value(7));
        b.json = s(r.value(8));
        out.push_back(std::move(b));
    }
    return out;
}

void RunStore::for_each_log_chunk(const std::string& id, const std::function<void(std::string_view)>& fn) const
{
    QSqlQuery r = prepare(m_connection, "SELECT data FROM run_log_chunks WHERE run_id = ? ORDER BY offset");
    r.addBindValue(q(id));
    exec(r, "reading the log");
    while (r.next()) {
        const QByteArray data = r.value(0).toByteArray();
        fn(std::string_view(data.constData(), static_cast<std::size_t>(data.size())));
    }
}

std::string RunStore::log_from(const std::string& id, std::int64_t offset, std::size_t max_bytes) const
{
    std::string out;
    QSqlQuery r = prepare(m_connection,
        "SELECT offset, data FROM run_log_chunks WHERE run_id = ? AND offset + length(data) > ? ORDER BY offset");
    r.addBindValue(q(id));
    r.addBindValue(static_cast<qlonglong>(std::max<std::int64_t>(0, offset)));
    exec(r, "reading the log");
    while (r.next() && out.size() < max_bytes) {
        const std::int64_t at = r.value(0).toLongLong();
        const QByteArray data = r.value(1).toByteArray();
        const std::int64_t skip = std::clamp<std::int64_t>(offset - at, 0, data.size());
        const std::size_t take = std::min(static_cast<std::size_t>(data.size() - skip), max_bytes - out.size());
        out.append(data.constData() + skip, take);
    }
    return out;
}

std::string RunStore::log(const std::string& id) const
{
    std::string out;
    for_each_log_chunk(id, [&](std::string_view chunk) { out.append(chunk); });
    return out;
}

} // namespace parallax::remote

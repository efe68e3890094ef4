#include "runs/remote_worker.hpp"

#include "runs/run_engine.hpp"
#include "spec/input_error.hpp"
#include "store/run_store.hpp"

#include <QTimer>

#include <algorithm>
#include <chrono>
#include <cmath>

namespace parallax::remote {

namespace {

QString q(const std::string& s)
{
    return QString::fromStdString(s);
}

// Polling back-off while nothing changes: a cluster's squeue is not polled in a tight loop.
constexpr double kBackoffFactor = 1.5;

} // namespace

RemoteWorker::RemoteWorker(
    QString store_path, std::shared_ptr<SshInteraction> interaction, ReconnectPolicy policy, CancelToken cancel)
    : m_store_path(std::move(store_path))
    , m_interaction(std::move(interaction))
    , m_policy(policy)
    , m_cancel(std::move(cancel))
{
}

RemoteWorker::~RemoteWorker() = default;

void RemoteWorker::open()
{
    if (m_store)
        return;
    m_store = std::make_unique<RunStore>(m_store_path);
    m_pool = std::make_unique<ConnectionPool>(m_interaction, m_policy);
    m_pool->on_state = [this](const std::string& label, ConnectionState s, const std::string& msg) {
        Q_EMIT connection_state_changed(q(label), QLatin1String(to_string(s)), q(msg));
    };
    m_engine = std::make_unique<RunEngine>(*m_store, *m_pool);
    m_engine->on_created = [this](const std::string& id) { Q_EMIT run_created(q(id)); };
}

void RemoteWorker::ensure_keepalive(int keepalive_s)
{
    if (keepalive_s <= 0)
        return;
    if (m_keepalive_s > 0 && m_keepalive_s <= keepalive_s)
        return;
    m_keepalive_s = keepalive_s;
    if (!m_keepalive) {
        m_keepalive = new QTimer(this);
        connect(m_keepalive, &QTimer::timeout, this, [this] {
            if (m_pool)
                m_pool->keepalive_all();
        });
    }
    m_keepalive->start(keepalive_s * 1000);
}

void RemoteWorker::forget_refusals(const ClusterProfile& profile)
{
    const std::vector<std::string> hosts
        = profile.launcher == LauncherKind::direct ? profile.direct_hosts() : std::vector<std::string> { profile.host };
    for (const auto& host : hosts) {
        SshConnection& c = m_pool->get(profile, host);
        if (c.state() == ConnectionState::refused)
            c.reset();
    }
}

void RemoteWorker::dispatch(const RunRequest& request)
{
    try {
        open();
        forget_refusals(request.profile);
        ensure_keepalive(request.profile.keepalive_s);
        const std::string id = m_engine->dispatch(request, m_cancel);
        const auto run = m_store->get(id);
        Q_EMIT dispatched(q(id), run ? q(run->description) : QString());
        if (run)
            Q_EMIT run_state_changed(q(id), run->state, q(run->detail));
        if (run && is_terminal(run->state)) {
            Q_EMIT run_finished(q(id), run->state, q(run->detail));
            return;
        }
        RunTimer& t = m_runs[id];
        t.min_s = request.profile.poll_min_s;
        t.max_s = request.profile.poll_max_s;
        t.interval_s = t.min_s;
        schedule(id, t.min_s);
    } catch (const std::exception& e) {
        Q_EMIT dispatch_failed(QString::fromStdString(e.what()));
    }
}

void RemoteWorker::attach(const QString& run_id)
{
    try {
        open();
        const std::string id = run_id.toStdString();
        const auto run = m_store->get(id);
        if (!run) {
            Q_EMIT run_error(run_id, QStringLiteral("no run %1 in %2").arg(run_id, m_store_path));
            return;
        }
        if (is_terminal(run->state) && !m_engine->reopen(id)) {
            Q_EMIT run_finished(run_id, run->state, q(run->detail));
            return;
        }
        if (is_terminal(run->state)) {
            const auto reopened = m_store->get(id);
            Q_EMIT run_state_changed(run_id, reopened->state, q(reopened->detail));
        }
        const ClusterProfile p = profile_from_json(nlohmann::json::parse(run->profile_json), "run " + id);
        forget_refusals(p);
        ensure_keepalive(p.keepalive_s);
        RunTimer& t = m_runs[id];
        t.min_s = p.poll_min_s;
        t.max_s = p.poll_max_s;
        t.interval_s = t.min_s;
        schedule(id, 0);
    } catch (const std::exception& e) {
        Q_EMIT run_error(run_id, QString::fromStdString(e.what()));
    }
}

void RemoteWorker::cancel_run(const QString& run_id)
{
    const std::string id = run_id.toStdString();
    try {
        open();
        m_engine->cancel(id, m_cancel);
        const auto run = m_store->get(id);
        if (run)
            Q_EMIT run_state_changed(run_id, run->state, q(run->detail));
        if (run && is_terminal(run->state)) {
            Q_EMIT run_finished(run_id, run->state, q(run->detail));
            return;
        }
        if (m_runs.find(id) == m_runs.end()) {
            const ClusterProfile p = profile_from_json(nlohmann::json::parse(run->profile_json), "run " + id);
            RunTimer& t = m_runs[id];
            t.min_s = p.poll_min_s;
            t.max_s = p.poll_max_s;
        }
        RunTimer& t = m_runs[id];
        t.interval_s = t.min_s;
        schedule(id, t.min_s);
    } catch (const std::exception& e) {
        Q_EMIT run_error(run_id, QStringLiteral("cancel: %1").arg(QString::fromStdString(e.what())));
    }
}

void RemoteWorker::fetch_traces(const QString& run_id, const QString& local_dir)
{
    try {
        open();
        const TraceFetch f = m_engine->fetch_traces(run_id.toStdString(), local_dir.toStdString(), m_cancel);
        QStringList paths;
        for (const auto& p : f.local_paths)
            paths << q(p);
        Q_EMIT traces_fetched(run_id, paths, q(f.message), QString());
    } catch (const std::exception& e) {
        Q_EMIT traces_fetched(run_id, {}, QString(), QString::fromStdString(e.what()));
    }
}

void RemoteWorker::schedule(const std::string& run_id, double seconds)
{
    RunTimer& t = m_runs[run_id];
    if (!t.timer) {
        t.timer = new QTimer(this);
        t.timer->setSingleShot(true);
        connect(t.timer, &QTimer::timeout, this, [this, run_id] { poll(run_id); });
    }
    t.timer->start(static_cast<int>(std::lround(std::max(0.0, seconds) * 1000)));
}

void RemoteWorker::poll(const std::string& run_id)
{
    if (!m_engine)
        return;
    auto it = m_runs.find(run_id);
    if (it == m_runs.end())
        return;
    const QString id = q(run_id);
    RunTimer& t = it->second;
    try {
        const PollOutcome out = m_engine->poll(run_id, m_cancel);
        if (!out.appended.empty())
            Q_EMIT log_appended(id, QByteArray(out.appended.data(), static_cast<qsizetype>(out.appended.size())));
        if (out.measurements_changed)
            Q_EMIT measurements_updated(id);
        if (out.state_changed)
            Q_EMIT run_state_changed(id, out.state, q(out.detail));
        if (out.terminal()) {
            t.timer->deleteLater();
            m_runs.erase(it);
            Q_EMIT run_finished(id, out.state, q(out.detail));
            return;
        }
        // Something moved: look again soon; quiet: back off.
        if (out.state_changed || !out.appended.empty())
            t.interval_s = t.min_s;
        else
            t.interval_s = std::min(t.max_s, t.interval_s * kBackoffFactor);
        schedule(run_id, t.interval_s);
    } catch (const SshError& e) {
        if (e.transient() || e.kind() == SshErrorKind::cancelled) {
            // The connection is down: try again when its back-off allows, without giving up on the run
            // (the job keeps running on the cluster; nothing read so far is lost).
            double wait = t.max_s;
            if (m_store) {
                if (const auto run = m_store->get(run_id)) {
                    const ClusterProfile p
                        = profile_from_json(nlohmann::json::parse(run->profile_json), "run " + run_id);
                    const auto next = m_pool->primary(p).next_attempt();
                    wait = std::chrono::duration<double>(next - std::chrono::steady_clock::now()).count();
                }
            }
            if (m_cancel.cancelled())
                return;
            schedule(run_id, std::clamp(wait, t.min_s, t.max_s));
        } else {
            t.timer->deleteLater();
            m_runs.erase(it);
            Q_EMIT run_error(id, QString::fromStdString(e.what()));
        }
    } catch (const std::exception& e) {
        t.timer->deleteLater();
        m_runs.erase(it);
        Q_EMIT run_error(id, QString::fromStdString(e.what()));
    }
}

void RemoteWorker::close()
{
    for (auto& [id, t] : m_runs)
        if (t.timer)
            t.timer->stop();
    m_runs.clear();
    if (m_keepalive)
        m_keepalive->stop();
    m_engine.reset();
    if (m_pool)
        m_pool->close_all();
    m_pool.reset();
    m_store.reset();
    Q_EMIT closed();
}

} // namespace parallax::remote

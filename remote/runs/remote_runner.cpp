#include "runs/remote_runner.hpp"

#include "runs/remote_worker.hpp"
#include "ssh/prompt_bridge.hpp"
#include "store/run_store.hpp"

#include <QThread>

namespace parallax::remote {

RemoteRunner::RemoteRunner(QString store_path, std::shared_ptr<SshInteraction> interaction, QObject* parent)
    : QObject(parent)
    , m_store_path(std::move(store_path))
    , m_interaction(std::move(interaction))
{
}

RemoteRunner::~RemoteRunner()
{
    shutdown();
}

RemoteWorker* RemoteRunner::worker_for(const ClusterProfile& profile)
{
    const QString key = QString::fromStdString(profile.ssh_target().label());
    auto it = m_workers.find(key);
    if (it != m_workers.end())
        return it->second.worker;
    auto* thread = new QThread(this);
    thread->setObjectName(QStringLiteral("parallax-ssh ") + key);
    auto* worker = new RemoteWorker(m_store_path, m_interaction, m_policy, m_cancel);
    worker->moveToThread(thread);
    connect(thread, &QThread::finished, worker, &QObject::deleteLater);
    connect(worker, &RemoteWorker::run_created, this, &RemoteRunner::run_created);
    connect(worker, &RemoteWorker::dispatched, this, &RemoteRunner::dispatched);
    connect(worker, &RemoteWorker::dispatch_failed, this, &RemoteRunner::dispatch_failed);
    connect(worker, &RemoteWorker::run_state_changed, this, &RemoteRunner::run_state_changed);
    connect(worker, &RemoteWorker::log_appended, this, &RemoteRunner::log_appended);
    connect(worker, &RemoteWorker::measurements_updated, this, &RemoteRunner::measurements_updated);
    connect(worker, &RemoteWorker::run_finished, this, &RemoteRunner::run_finished);
    connect(worker, &RemoteWorker::run_error, this, &RemoteRunner::run_error);
    connect(worker, &RemoteWorker::connection_state_changed, this, &RemoteRunner::connection_state_changed);
    connect(worker, &RemoteWorker::traces_fetched, this, &RemoteRunner::traces_fetched);
    thread->start();
    m_workers.emplace(key, Slot { thread, worker });
    return worker;
}

RemoteWorker* RemoteRunner::worker_for_run(const QString& run_id, QString& error)
{
    // Reading the run's profile here is a local SQLite read on this thread (its own connection), not network.
    try {
        RunStore store(m_store_path);
        const auto run = store.get(run_id.toStdString());
        if (!run) {
            error = QStringLiteral("no run %1 in %2").arg(run_id, m_store_path);
            return nullptr;
        }
        const ClusterProfile p = profile_from_json(nlohmann::json::parse(run->profile_json), "run " + run->id);
        return worker_for(p);
    } catch (const std::exception& e) {
        error = QString::fromStdString(e.what());
        return nullptr;
    }
}

void RemoteRunner::dispatch(RunRequest request)
{
    RemoteWorker* w = worker_for(request.profile);
    QMetaObject::invokeMethod(
        w, [w, request = std::move(request)] { w->dispatch(request); }, Qt::QueuedConnection);
}

void RemoteRunner::attach(const QString& run_id)
{
    QString error;
    RemoteWorker* w = worker_for_run(run_id, error);
    if (!w) {
        Q_EMIT run_error(run_id, error);
        return;
    }
    QMetaObject::invokeMethod(
        w, [w, run_id] { w->attach(run_id); }, Qt::QueuedConnection);
}

int RemoteRunner::attach_active()
{
    std::vector<RunRecord> active;
    try {
        RunStore store(m_store_path);
        active = store.active();
    } catch (const std::exception& e) {
        Q_EMIT run_error(QString(), QString::fromStdString(e.what()));
        return 0;
    }
    for (const RunRecord& run : active)
        attach(QString::fromStdString(run.id));
    return static_cast<int>(active.size());
}

void RemoteRunner::cancel(const QString& run_id)
{
    QString error;
    RemoteWorker* w = worker_for_run(run_id, error);
    if (!w) {
        Q_EMIT run_error(run_id, error);
        return;
    }
    QMetaObject::invokeMethod(
        w, [w, run_id] { w->cancel_run(run_id); }, Qt::QueuedConnection);
}

void RemoteRunner::fetch_traces(const QString& run_id, const QString& local_dir)
{
    QString error;
    RemoteWorker* w = worker_for_run(run_id, error);
    if (!w) {
        Q_EMIT traces_fetched(run_id, {}, QString(), error);
        return;
    }
    QMetaObject::invokeMethod(
        w, [w, run_id, local_dir] { w->fetch_traces(run_id, local_dir); }, Qt::QueuedConnection);
}

void RemoteRunner::shutdown()
{
    if (m_workers.empty())
        return;
    // Interrupt blocking SSH steps in flight, release a worker waiting for an answer from this very thread
    // (which is about to block on it), then let each worker close on its own thread.
    m_cancel.cancel();
    if (auto* bridge = dynamic_cast<PromptBridge*>(m_interaction.get()))
        bridge->refuse_all();
    for (auto& [key, slot] : m_workers) {
        RemoteWorker* w = slot.worker;
        QMetaObject::invokeMethod(
            w, [w] { w->close(); }, Qt::BlockingQueuedConnection);
        slot.thread->quit();
        slot.thread->wait();
    }
    m_workers.clear();
}

} // namespace parallax::remote

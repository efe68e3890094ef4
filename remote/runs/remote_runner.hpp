#pragma once
// The front door to remote runs for the GUI and the CLI, used from one thread (the GUI thread). Starts one
// RemoteWorker per host (user@host:port), each on its own QThread, routes requests to them and forwards
// their signals, which arrive queued on this object's thread. No method waits for the network.
//
//   RemoteRunner runner(RunStore::default_path(), std::make_shared<PromptBridge>());
//   connect(&runner, &RemoteRunner::runFinished, ...);
//   runner.dispatch(request);        // returns at once; dispatched(runId) follows
//   runner.attachActive();           // after a restart: resume watching every unfinished run
#include "jobs/job_bundle.hpp"
#include "runs/cancel_flag.hpp"
#include "ssh/ssh_connection.hpp"

#include <QByteArray>
#include <QObject>
#include <QString>
#include <QStringList>

#include <map>
#include <memory>

class QThread;

namespace parallax::remote {

class RemoteWorker;

class RemoteRunner : public QObject {
    Q_OBJECT
public:
    RemoteRunner(QString store_path, std::shared_ptr<SshInteraction> interaction, QObject* parent = nullptr);
    // Cancels what is in flight, closes every worker on its thread and joins the threads.
    ~RemoteRunner() override;

    void setReconnectPolicy(ReconnectPolicy policy) { m_policy = policy; }
    const QString& storePath() const { return m_store_path; }

    void dispatch(RunRequest request);
    // Resumes watching a stored run (its cluster profile as dispatched decides the worker).
    void attach(const QString& run_id);
    // Every run of the store that has not finished; returns how many.
    int attachActive();
    void cancel(const QString& run_id);
    // Copies the run's Chrome/Perfetto trace files (*trace*.json in its folder on the cluster) into local_dir;
    // tracesFetched follows.
    void fetchTraces(const QString& run_id, const QString& local_dir);
    // Closes every worker (connections, store) and stops their threads; safe to call twice.
    void shutdown();

Q_SIGNALS:
    void runCreated(QString runId);
    void dispatched(QString runId, QString description);
    void dispatchFailed(QString message);
    void runStateChanged(QString runId, QString state, QString detail);
    void logAppended(QString runId, QByteArray bytes);
    void measurementsUpdated(QString runId);
    void runFinished(QString runId, QString state, QString detail);
    void runError(QString runId, QString message);
    void connectionStateChanged(QString host, QString state, QString message);
    void tracesFetched(QString runId, QStringList paths, QString message, QString error);

private:
    struct Slot {
        QThread* thread = nullptr;
        RemoteWorker* worker = nullptr;
    };
    RemoteWorker* worker_for(const ClusterProfile& profile);
    RemoteWorker* worker_for_run(const QString& run_id);

    QString m_store_path;
    std::shared_ptr<SshInteraction> m_interaction;
    ReconnectPolicy m_policy;
    CancelFlag m_cancel;
    std::map<QString, Slot> m_workers;
};

} // namespace parallax::remote

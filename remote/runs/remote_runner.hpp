#pragma once
// The front door to remote runs for the GUI and the CLI, used from one thread (the GUI thread). Starts one
// RemoteWorker per host (user@host:port), each on its own QThread, routes requests to them and forwards
// their signals, which arrive queued on this object's thread. No method waits for the network.
//
//   RemoteRunner runner(RunCatalog::default_store_path(), std::make_shared<PromptBridge>());
//   connect(&runner, &RemoteRunner::run_finished, ...);
//   runner.dispatch(request);        // returns at once; dispatched(runId) follows
//   runner.attach_active();           // after a restart: resume watching every unfinished run
#include "jobs/cancel_token.hpp"
#include "jobs/job_bundle.hpp"
#include "ssh/ssh_connection.hpp"
#include "store/run_record.hpp"

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

    void set_reconnect_policy(ReconnectPolicy policy) { m_policy = policy; }
    const QString& store_path() const { return m_store_path; }

    void dispatch(RunRequest request);
    // Resumes watching a stored run (its cluster profile as dispatched decides the worker).
    void attach(const QString& run_id);
    // Every run of the store that has not finished; returns how many.
    int attach_active();
    void cancel(const QString& run_id);
    // Copies the run's Chrome/Perfetto trace files (*trace*.json in its folder on the cluster) into local_dir;
    // traces_fetched follows.
    void fetch_traces(const QString& run_id, const QString& local_dir);
    // Closes every worker (connections, store) and stops their threads; safe to call twice.
    void shutdown();

Q_SIGNALS:
    void run_created(QString run_id);
    void dispatched(QString run_id, QString description);
    void dispatch_failed(QString message);
    void run_state_changed(QString run_id, parallax::remote::RunState state, QString detail);
    void log_appended(QString run_id, QByteArray bytes);
    void measurements_updated(QString run_id);
    void run_finished(QString run_id, parallax::remote::RunState state, QString detail);
    void run_error(QString run_id, QString message);
    void connection_state_changed(QString host, QString state, QString message);
    void traces_fetched(QString run_id, QStringList paths, QString message, QString error);

private:
    struct Slot {
        QThread* thread = nullptr;
        RemoteWorker* worker = nullptr;
    };
    RemoteWorker* worker_for(const ClusterProfile& profile);
    // The worker of a stored run's cluster, or nullptr with `error` saying why (no such run, unreadable store).
    RemoteWorker* worker_for_run(const QString& run_id, QString& error);

    QString m_store_path;
    std::shared_ptr<SshInteraction> m_interaction;
    ReconnectPolicy m_policy;
    CancelToken m_cancel;
    std::map<QString, Slot> m_workers;
};

} // namespace parallax::remote

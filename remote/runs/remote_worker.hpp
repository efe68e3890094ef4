#pragma once
// One host's worker: lives on its own QThread and owns everything that must stay on one thread there: the
// SSH connections (libssh is not thread-safe), its RunStore connection (Qt's rule for QSqlDatabase) and the
// RunEngine. Each active run has a poll timer that backs off while nothing changes (poll_min_s, x1.5 per
// quiet poll, up to poll_max_s) and snaps back when the state or the log moves; a lost connection is
// retried on the next tick after its back-off, while the worker keeps serving requests. Results leave as
// queued signals: the GUI thread never waits for the network.
//
// Create through RemoteRunner, which moves workers to their threads and routes requests.
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

class QTimer;

namespace parallax::remote {

class ConnectionPool;
class RunEngine;
class RunStore;

class RemoteWorker : public QObject {
    Q_OBJECT
public:
    RemoteWorker(
        QString store_path, std::shared_ptr<SshInteraction> interaction, ReconnectPolicy policy, CancelToken cancel);
    ~RemoteWorker() override;

    // All of these run on the worker's thread: call them through QMetaObject::invokeMethod (RemoteRunner does).
    void open(); // the store connection and engine, on this thread
    void dispatch(const RunRequest& request);
    void attach(const QString& run_id);
    void cancel_run(const QString& run_id);
    // Copies the run's trace files from the cluster into local_dir (RunEngine::fetch_traces).
    void fetch_traces(const QString& run_id, const QString& local_dir);
    void close(); // stops timers, closes connections and the store

Q_SIGNALS:
    // The run is in the store (files not yet on the cluster); dispatched() follows once it is submitted.
    void run_created(QString run_id);
    void dispatched(QString run_id, QString description);
    void dispatch_failed(QString message);
    void run_state_changed(QString run_id, parallax::remote::RunState state, QString detail);
    void log_appended(QString run_id, QByteArray bytes);
    // New steps/benchmarks are in the store: re-read them (RunStore::steps) on the receiving thread.
    void measurements_updated(QString run_id);
    void run_finished(QString run_id, parallax::remote::RunState state, QString detail);
    // A run could not be polled for a reason that retrying will not fix (refused host key, bad store).
    void run_error(QString run_id, QString message);
    void connection_state_changed(QString host, QString state, QString message);
    // fetch_traces() done: the local copies (possibly none) and what was found or skipped; error: why it failed.
    void traces_fetched(QString run_id, QStringList paths, QString message, QString error);
    void closed();

private:
    struct RunTimer {
        QTimer* timer = nullptr;
        double interval_s = 1.0;
        double min_s = 1.0;
        double max_s = 30.0;
    };
    void schedule(const std::string& run_id, double seconds);
    void poll(const std::string& run_id);
    void ensure_keepalive(int keepalive_s);
    // A request from the user (send, attach) forgets earlier refusals of the profile's hosts: the user may
    // have accepted the key this time, fixed known_hosts or the key file.
    void forget_refusals(const ClusterProfile& profile);

    QString m_store_path;
    std::shared_ptr<SshInteraction> m_interaction;
    ReconnectPolicy m_policy;
    CancelToken m_cancel;
    std::unique_ptr<RunStore> m_store;
    std::unique_ptr<ConnectionPool> m_pool;
    std::unique_ptr<RunEngine> m_engine;
    std::map<std::string, RunTimer> m_runs;
    QTimer* m_keepalive = nullptr;
    int m_keepalive_s = 0;
};

} // namespace parallax::remote

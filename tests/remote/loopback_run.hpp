#pragma once
// What the remote tests that dispatch real runs to the loopback cluster (local_cluster.hpp) share: the
// cluster profile of that cluster, the built-in probe's request, and a recorder of a runner's signals.
#include "local_cluster.hpp"

#include "cluster/cluster_profile.hpp"
#include "jobs/job_bundle.hpp"
#include "runs/remote_runner.hpp"

#include <QSignalSpy>
#include <QString>
#include <QVariant>

#include <string>

namespace parallax::test {

// How long a run on the loopback cluster may take before a test gives up on it (two busy CI cores).
constexpr int kLoopbackRunTimeoutMs = 240000;

inline std::string str(const QString& s)
{
    return s.toStdString();
}

// A run-state argument of a runner or controller signal, as stored and printed.
QString state_text(const QVariant& arg);
QByteArray read_file(const QString& path);

// The SLURM profile of the loopback cluster: key login, this server's host key file below `dir`, the run
// folders in dir/cluster-home/parallax-runs, CPU ranks, and polls fast enough for a test.
remote::ClusterProfile loopback_slurm_profile(const LocalSshServer& ssh, const LocalSlurm& slurm, const QString& dir,
    const QString& name = QStringLiteral("loopback"));

// The built-in probe on tests/remote/data/tiny_probe_scenario.json for `steps` steps of 2 micro-batches.
remote::RunRequest tiny_probe_request(int steps, const remote::ClusterProfile& p);

// Every signal of a runner, recorded in order, for one test.
struct RunRecorder {
    explicit RunRecorder(remote::RemoteRunner& r);
    QSignalSpy created;
    QSignalSpy dispatched;
    QSignalSpy dispatch_failed;
    QSignalSpy states;
    QSignalSpy logs;
    QSignalSpy measurements;
    QSignalSpy finished;
    QSignalSpy errors;
    QSignalSpy connection;

    QString run_id() const { return dispatched.isEmpty() ? QString() : dispatched.first().at(0).toString(); }
    bool ended() const { return !finished.isEmpty() || !dispatch_failed.isEmpty() || !errors.isEmpty(); }
    bool saw_state(const QString& state) const;
    bool saw_detail(const QString& part) const;
    bool saw_connection(const QString& state) const;
    // Every failure and state change so far, one per line: the message of a failed check.
    QString problems() const;
};

} // namespace parallax::test

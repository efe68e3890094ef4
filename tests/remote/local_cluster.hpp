#pragma once
// Real servers for the remote tests, on 127.0.0.1 only, each in its own folder with free ports: an OpenSSH
// server (own config, host keys, client keys) and a single-node SLURM (munged + slurmctld + slurmd), set
// up as local_cluster.cpp shows. Everything started is stopped by PID when the object dies, failures
// included; children also die with the test process (PR_SET_PDEATHSIG), so a killed test leaves nothing.
#include <QProcess>
#include <QString>
#include <QStringList>

#include <memory>
#include <vector>

namespace parallax::test {

// A free TCP port on 127.0.0.1 (bound, read, released).
quint16 free_port();
// Runs a program to completion; returns its exit code (-1: did not start / crashed / timed out).
int run_program(const QString& program, const QStringList& args, QByteArray* out = nullptr, QByteArray* err = nullptr,
    const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment(), int timeout_ms = 60000);
// The pids of every live descendant of `pid` (children first walk of /proc).
std::vector<qint64> descendants(qint64 pid);
bool process_alive(qint64 pid);
// SIGTERM, then SIGKILL after grace_ms, to each pid; waits until they are gone.
void kill_pids(const std::vector<qint64>& pids, int grace_ms = 3000);
bool running_as_root();
QString user_name();

// One child process with its output in a log file.
class ChildProcess {
public:
    ChildProcess() = default;
    ~ChildProcess() { stop(); }
    ChildProcess(const ChildProcess&) = delete;
    ChildProcess& operator=(const ChildProcess&) = delete;
    bool start(const QString& program, const QStringList& args, const QString& log_file,
        const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment());
    // The process and all its descendants, by PID.
    void stop(int grace_ms = 3000);
    qint64 pid() const { return m_pid; }
    bool running() const { return m_pid > 0 && process_alive(m_pid); }

private:
    std::unique_ptr<QProcess> m_process;
    qint64 m_pid = 0;
};

class LocalSshServer {
public:
    explicit LocalSshServer(const QString& dir);
    ~LocalSshServer() { stop(); }

    // Starts sshd (port 0: a free one; later starts reuse it). Waits until the port accepts connections.
    bool start(QString* error = nullptr);
    // Kills the listener and every connection's process: clients see the connection drop.
    void stop();
    bool running() const { return m_sshd.running(); }

    quint16 port() const { return m_port; }
    QString user() const { return user_name(); }
    QString dir() const { return m_dir; }
    QString client_key() const; // private key in authorized_keys
    QString known_hosts() const; // an empty known_hosts file of the tests' own
    QString host_key() const { return m_host_key; }
    // The fingerprint of the host key in use, as `ssh-keygen -lf` prints it ("SHA256:...").
    QString host_fingerprint() const;
    // A new key pair in the server folder; returns the private key path.
    QString make_key(const QString& name, const QString& type = QStringLiteral("ed25519")) const;
    // Serve with another host key from the next start() on (the "host key changed" case).
    void use_host_key(const QString& private_key) { m_host_key = private_key; }
    // A known_hosts line for this server and `public_key_file`.
    QString known_hosts_line(const QString& public_key_file) const;

private:
    bool write_config();
    QString m_dir;
    quint16 m_port = 0;
    QString m_host_key;
    ChildProcess m_sshd;
};

class LocalSlurm {
public:
    explicit LocalSlurm(const QString& dir);
    ~LocalSlurm() { stop(); }

    // munged, slurmctld, slurmd; waits until the node is idle. Needs root (SlurmUser=root).
    bool start(QString* error);
    // Cancels every job of this cluster, waits for them, stops the daemons and any process left from a
    // job (found by SLURM_CONF = this cluster's file in its environment), all by PID.
    void stop();

    // slurmctld alone, stopped (SIGTERM: it saves its state) and started again on the same state, as an
    // outage of the controller; running jobs go on under slurmd.
    void stop_controller();
    bool start_controller(QString* error);
    // The last `bytes` of slurmctld's and slurmd's logs, for a failure message.
    QString controller_log_tail(int bytes) const;

    QString conf() const { return m_dir + QStringLiteral("/slurm.conf"); }
    // A copy of slurm.conf for clients only, whose commands give up on an unreachable controller after about
    // `message_timeout_s` (the default retries for ~18 s): a login node's view during an outage, quickly.
    QString client_conf(int message_timeout_s) const;
    QProcessEnvironment env() const;
    // A client command (squeue, scontrol, ...) against this cluster.
    int client(
        const QString& program, const QStringList& args, QByteArray* out = nullptr, QByteArray* err = nullptr) const;
    int cpus() const { return m_cpus; }

private:
    QString m_dir;
    int m_cpus = 0;
    ChildProcess m_munged;
    ChildProcess m_slurmctld;
    ChildProcess m_slurmd;
    bool m_started = false;
};

// The loop tests' cluster: a "cluster-home" folder, sshd and single-node SLURM, all under `dir`, with
// at least the 2 CPUs the probe's 2 ranks need. False with `error` set on the first failure.
bool start_loopback_cluster(
    const QString& dir, std::unique_ptr<LocalSshServer>& ssh, std::unique_ptr<LocalSlurm>& slurm, QString* error);

} // namespace parallax::test

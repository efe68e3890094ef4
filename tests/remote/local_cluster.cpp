#include "local_cluster.hpp"

#include <QDeadlineTimer>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRandomGenerator>
#include <QThread>

#include <arpa/inet.h>
#include <csignal>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

namespace parallax::test {

namespace {

sockaddr_in loopback(quint16 port)
{
    sockaddr_in a {};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return a;
}

bool port_accepts(quint16 port)
{
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return false;
    const sockaddr_in a = loopback(port);
    const bool ok = ::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0;
    ::close(fd);
    return ok;
}

} // namespace

quint16 free_port()
{
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return 0;
    sockaddr_in a = loopback(0);
    socklen_t len = sizeof a;
    quint16 port = 0;
    if (::bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0
        && ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
        port = ntohs(a.sin_port);
    ::close(fd);
    return port;
}

int run_program(const QString& program, const QStringList& args, QByteArray* out, QByteArray* err,
    const QProcessEnvironment& env, int timeout_ms)
{
    QProcess p;
    p.setProcessEnvironment(env);
    p.start(program, args);
    if (!p.waitForStarted(10000))
        return -1;
    if (!p.waitForFinished(timeout_ms)) {
        p.kill();
        p.waitForFinished();
        return -1;
    }
    if (out)
        *out = p.readAllStandardOutput();
    if (err)
        *err = p.readAllStandardError();
    return p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
}

bool process_alive(qint64 pid)
{
    if (pid <= 0)
        return false;
    // A zombie still answers kill(0): read its state.
    QFile stat(QStringLiteral("/proc/%1/stat").arg(pid));
    if (!stat.open(QIODevice::ReadOnly))
        return false;
    const QByteArray s = stat.readAll();
    const int close = s.lastIndexOf(')');
    return close > 0 && close + 2 < s.size() && s.at(close + 2) != 'Z';
}

std::vector<qint64> descendants(qint64 pid)
{
    // ppid of every process, then a breadth-first walk from pid.
    std::vector<std::pair<qint64, qint64>> parent_of;
    const QStringList entries = QDir(QStringLiteral("/proc")).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    for (const QString& e : entries) {
        bool ok = false;
        const qint64 p = e.toLongLong(&ok);
        if (!ok)
            continue;
        QFile stat(QStringLiteral("/proc/%1/stat").arg(p));
        if (!stat.open(QIODevice::ReadOnly))
            continue;
        const QByteArray s = stat.readAll();
        const int close = s.lastIndexOf(')');
        if (close < 0)
            continue;
        const QList<QByteArray> fields = s.mid(close + 2).split(' ');
        if (fields.size() > 1)
            parent_of.emplace_back(p, fields.at(1).toLongLong());
    }
    std::vector<qint64> out;
    std::vector<qint64> frontier { pid };
    while (!frontier.empty()) {
        const qint64 parent = frontier.back();
        frontier.pop_back();
        for (const auto& [child, ppid] : parent_of) {
            if (ppid == parent) {
                out.push_back(child);
                frontier.push_back(child);
            }
        }
    }
    return out;
}

void kill_pids(const std::vector<qint64>& pids, int grace_ms)
{
    for (qint64 p : pids)
        if (p > 0)
            ::kill(static_cast<pid_t>(p), SIGTERM);
    QDeadlineTimer deadline(grace_ms);
    for (;;) {
        bool any = false;
        for (qint64 p : pids)
            any = any || process_alive(p);
        if (!any)
            return;
        if (deadline.hasExpired())
            break;
        QThread::msleep(20);
    }
    for (qint64 p : pids)
        if (process_alive(p))
            ::kill(static_cast<pid_t>(p), SIGKILL);
    QDeadlineTimer hard(5000);
    for (;;) {
        bool any = false;
        for (qint64 p : pids)
            any = any || process_alive(p);
        if (!any || hard.hasExpired())
            return;
        QThread::msleep(20);
    }
}

bool running_as_root()
{
    return ::geteuid() == 0;
}

QString user_name()
{
    const passwd* pw = ::getpwuid(::geteuid());
    return pw ? QString::fromLocal8Bit(pw->pw_name) : QStringLiteral("root");
}

bool ChildProcess::start(
    const QString& program, const QStringList& args, const QString& log_file, const QProcessEnvironment& env)
{
    stop();
    m_process = std::make_unique<QProcess>();
    m_process->setProgram(program);
    m_process->setArguments(args);
    m_process->setProcessEnvironment(env);
    m_process->setStandardOutputFile(log_file, QIODevice::Append);
    m_process->setStandardErrorFile(log_file, QIODevice::Append);
    // If the test process dies (crash, ctest timeout), the kernel kills the servers too.
    m_process->setChildProcessModifier([] { ::prctl(PR_SET_PDEATHSIG, SIGKILL); });
    m_process->start();
    if (!m_process->waitForStarted(10000)) {
        m_process.reset();
        return false;
    }
    m_pid = m_process->processId();
    return true;
}

void ChildProcess::stop(int grace_ms)
{
    if (!m_process)
        return;
    std::vector<qint64> pids;
    if (m_pid > 0) {
        pids = descendants(m_pid);
        pids.insert(pids.begin(), m_pid);
    }
    kill_pids(pids, grace_ms);
    m_process->waitForFinished(1000);
    m_process.reset();
    m_pid = 0;
}

// ------------------------------------------------------------------------------------------------

LocalSshServer::LocalSshServer(const QString& dir)
    : m_dir(dir)
{
    QDir().mkpath(m_dir);
    m_host_key = make_key(QStringLiteral("host_key"));
    const QString client = make_key(QStringLiteral("client_key"));
    QFile::copy(client + QStringLiteral(".pub"), m_dir + QStringLiteral("/authorized_keys"));
    QFile::setPermissions(m_dir + QStringLiteral("/authorized_keys"),
        QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ReadGroup | QFileDevice::ReadOther);
    QFile kh(known_hosts());
    kh.open(QIODevice::WriteOnly);
}

QString LocalSshServer::client_key() const
{
    return m_dir + QStringLiteral("/client_key");
}
QString LocalSshServer::known_hosts() const
{
    return m_dir + QStringLiteral("/known_hosts");
}

QString LocalSshServer::make_key(const QString& name, const QString& type) const
{
    const QString path = m_dir + QLatin1Char('/') + name;
    QFile::remove(path);
    QFile::remove(path + QStringLiteral(".pub"));
    QStringList args { QStringLiteral("-q"), QStringLiteral("-t"), type, QStringLiteral("-N"), QString(),
        QStringLiteral("-f"), path };
    if (type == QLatin1String("rsa"))
        args << QStringLiteral("-b") << QStringLiteral("2048");
    run_program(QStringLiteral("ssh-keygen"), args);
    return path;
}

QString LocalSshServer::host_fingerprint() const
{
    QByteArray out;
    run_program(QStringLiteral("ssh-keygen"),
        { QStringLiteral("-l"), QStringLiteral("-f"), m_host_key + QStringLiteral(".pub") }, &out);
    // "256 SHA256:abc... comment (ED25519)"
    const QList<QByteArray> parts = out.split(' ');
    return parts.size() > 1 ? QString::fromLatin1(parts.at(1)) : QString();
}

QString LocalSshServer::known_hosts_line(const QString& public_key_file) const
{
    QFile f(public_key_file);
    f.open(QIODevice::ReadOnly);
    const QList<QByteArray> parts = f.readAll().trimmed().split(' ');
    return QStringLiteral("[127.0.0.1]:%1 %2 %3")
        .arg(m_port)
        .arg(QString::fromLatin1(parts.value(0)), QString::fromLatin1(parts.value(1)));
}

bool LocalSshServer::write_config()
{
    QFile f(m_dir + QStringLiteral("/sshd_config"));
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate))
        return false;
    const QString text = QStringLiteral("Port %1\n"
                                        "ListenAddress 127.0.0.1\n"
                                        "HostKey %2\n"
                                        "PidFile %3/sshd.pid\n"
                                        "AuthorizedKeysFile %3/authorized_keys\n"
                                        "PubkeyAuthentication yes\n"
                                        "PasswordAuthentication no\n"
                                        "KbdInteractiveAuthentication no\n"
                                        "UsePAM no\n"
                                        "StrictModes no\n"
                                        "PermitRootLogin prohibit-password\n"
                                        "Subsystem sftp internal-sftp\n"
                                        "LogLevel ERROR\n")
                             .arg(m_port)
                             .arg(m_host_key, m_dir);
    f.write(text.toUtf8());
    return true;
}

bool LocalSshServer::start(QString* error)
{
    const auto fail = [&](const QString& why) {
        if (error)
            *error = why;
        return false;
    };
    if (m_port == 0)
        m_port = free_port();
    if (!write_config())
        return fail(QStringLiteral("cannot write sshd_config"));
    QDir().mkpath(QStringLiteral("/run/sshd")); // sshd refuses to start without its privilege-separation folder
    if (!m_sshd.start(QStringLiteral("/usr/sbin/sshd"),
            { QStringLiteral("-D"), QStringLiteral("-e"), QStringLiteral("-f"),
                m_dir + QStringLiteral("/sshd_config") },
            m_dir + QStringLiteral("/sshd.log")))
        return fail(QStringLiteral("/usr/sbin/sshd did not start"));
    // Listening takes ~20 ms; probe the port.
    QDeadlineTimer deadline(10000);
    while (!deadline.hasExpired()) {
        if (port_accepts(m_port))
            return true;
        if (!m_sshd.running()) {
            QFile log(m_dir + QStringLiteral("/sshd.log"));
            log.open(QIODevice::ReadOnly);
            return fail(QStringLiteral("sshd exited: ") + QString::fromLocal8Bit(log.readAll()));
        }
        QThread::msleep(20);
    }
    return fail(QStringLiteral("sshd does not accept connections on port %1").arg(m_port));
}

void LocalSshServer::stop()
{
    m_sshd.stop(1000);
}

// ------------------------------------------------------------------------------------------------

LocalSlurm::LocalSlurm(const QString& dir)
    : m_dir(dir)
{
}

QProcessEnvironment LocalSlurm::env() const
{
    QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
    e.insert(QStringLiteral("SLURM_CONF"), conf());
    return e;
}

int LocalSlurm::client(const QString& program, const QStringList& args, QByteArray* out, QByteArray* err) const
{
    return run_program(program, args, out, err, env(), 30000);
}

bool LocalSlurm::start(QString* error)
{
    const auto fail = [&](const QString& why) {
        if (error)
            *error = why;
        stop();
        return false;
    };
    QDir d;
    for (const char* sub : { "state", "spool", "munge" })
        d.mkpath(m_dir + QLatin1Char('/') + QLatin1String(sub));
    // munged refuses a socket whose folders are not searchable by everyone (clients of any user connect);
    // a QTemporaryDir is 0700.
    const auto searchable = QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner
        | QFileDevice::ReadGroup | QFileDevice::ExeGroup | QFileDevice::ReadOther | QFileDevice::ExeOther;
    for (QDir up(m_dir); !up.isRoot() && up.absolutePath() != QDir::tempPath(); up.cdUp())
        QFile::setPermissions(up.absolutePath(), searchable);
    QFile::setPermissions(m_dir + QStringLiteral("/munge"),
        QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner | QFileDevice::ReadGroup
            | QFileDevice::ExeGroup | QFileDevice::ReadOther | QFileDevice::ExeOther);
    {
        QFile key(m_dir + QStringLiteral("/munge.key"));
        if (!key.open(QIODevice::WriteOnly))
            return fail(QStringLiteral("cannot write the munge key"));
        QByteArray bytes(1024, '\0');
        for (auto& b : bytes)
            b = static_cast<char>(QRandomGenerator::global()->bounded(256));
        key.write(bytes);
    }
    QFile::setPermissions(m_dir + QStringLiteral("/munge.key"), QFileDevice::ReadOwner);

    // The node's real shape (CPUs, cores, memory) from slurmd -C, renamed to localhost on 127.0.0.1.
    QByteArray shape;
    run_program(QStringLiteral("slurmd"), { QStringLiteral("-C") }, &shape);
    QString node_line;
    for (const QByteArray& line : shape.split('\n')) {
        if (!line.startsWith("NodeName="))
            continue;
        QStringList fields = QString::fromLatin1(line).split(QLatin1Char(' '), Qt::SkipEmptyParts);
        fields.removeFirst();
        for (const QString& f : std::as_const(fields))
            if (f.startsWith(QLatin1String("CPUs=")))
                m_cpus = f.mid(5).toInt();
        node_line = QStringLiteral("NodeName=localhost NodeAddr=127.0.0.1 ") + fields.join(QLatin1Char(' '))
            + QStringLiteral(" State=UNKNOWN");
    }
    if (node_line.isEmpty())
        return fail(QStringLiteral("slurmd -C printed no node line"));
    const QString socket = m_dir + QStringLiteral("/munge/munge.socket");
    QFile conf_file(conf());
    if (!conf_file.open(QIODevice::WriteOnly))
        return fail(QStringLiteral("cannot write slurm.conf"));
    const QString user = user_name();
    const QString text = QStringLiteral("ClusterName=paralloc\n"
                                        "SlurmctldHost=localhost(127.0.0.1)\n"
                                        "SlurmctldPort=%1\n"
                                        "SlurmdPort=%2\n"
                                        "SlurmUser=%3\n"
                                        "SlurmdUser=%3\n"
                                        "AuthType=auth/munge\n"
                                        "CredType=cred/munge\n"
                                        "AuthInfo=socket=%4\n"
                                        "StateSaveLocation=%5/state\n"
                                        "SlurmdSpoolDir=%5/spool\n"
                                        "SlurmctldPidFile=%5/slurmctld.pid\n"
                                        "SlurmdPidFile=%5/slurmd.pid\n"
                                        "SlurmctldLogFile=%5/slurmctld.log\n"
                                        "SlurmdLogFile=%5/slurmd.log\n"
                                        "ProctrackType=proctrack/linuxproc\n"
                                        "TaskPlugin=task/none\n"
                                        "JobAcctGatherType=jobacct_gather/none\n"
                                        "SelectType=select/cons_tres\n"
                                        "SelectTypeParameters=CR_Core\n"
                                        "SchedulerType=sched/backfill\n"
                                        "MpiDefault=none\n"
                                        "MailProg=/bin/true\n"
                                        "ReturnToService=2\n"
                                        "AccountingStorageType=accounting_storage/none\n"
                                        "JobCompType=jobcomp/filetxt\n"
                                        "JobCompLoc=%5/jobcomp.txt\n"
                                        "SchedulerParameters=sched_interval=1\n"
                                        "MinJobAge=300\n"
                                        "KillWait=5\n"
                                        "%6\n"
                                        "PartitionName=debug Nodes=localhost Default=YES MaxTime=60 State=UP\n")
                             .arg(free_port())
                             .arg(free_port())
                             .arg(user, socket, m_dir, node_line);
    conf_file.write(text.toUtf8());
    conf_file.close();
    // Without a cgroup filesystem (a chroot or container without /sys/fs/cgroup), Slurm 22.05's
    // slurmd cannot autodetect a cgroup version and refuses to start, although this cluster's
    // plugins (proctrack/linuxproc, task/none) never use cgroups; naming the v1 plugin skips the
    // detection (slurm.schedmd.com/cgroup.conf.html, CgroupPlugin).
    if (!QFileInfo::exists(QStringLiteral("/sys/fs/cgroup/cgroup.controllers"))
        && !QFileInfo::exists(QStringLiteral("/sys/fs/cgroup/systemd"))) {
        QFile cgroup_conf(m_dir + QStringLiteral("/cgroup.conf"));
        if (!cgroup_conf.open(QIODevice::WriteOnly))
            return fail(QStringLiteral("cannot write cgroup.conf"));
        cgroup_conf.write("CgroupPlugin=cgroup/v1\n");
    }

    if (!m_munged.start(QStringLiteral("munged"),
            { QStringLiteral("--foreground"), QStringLiteral("--socket=") + socket,
                QStringLiteral("--key-file=") + m_dir + QStringLiteral("/munge.key"),
                QStringLiteral("--pid-file=") + m_dir + QStringLiteral("/munged.pid"),
                QStringLiteral("--seed-file=") + m_dir + QStringLiteral("/munge.seed"),
                QStringLiteral("--log-file=") + m_dir + QStringLiteral("/munged.log") },
            m_dir + QStringLiteral("/munged.out"), env()))
        return fail(QStringLiteral("munged did not start"));
    QDeadlineTimer munge_ready(10000);
    while (!QFileInfo::exists(socket) && !munge_ready.hasExpired())
        QThread::msleep(20);
    if (!QFileInfo::exists(socket))
        return fail(QStringLiteral("munged created no socket"));
    m_started = true;
    if (!m_slurmctld.start(QStringLiteral("slurmctld"), { QStringLiteral("-D"), QStringLiteral("-f"), conf() },
            m_dir + QStringLiteral("/slurmctld.out"), env()))
        return fail(QStringLiteral("slurmctld did not start"));
    if (!m_slurmd.start(QStringLiteral("slurmd"),
            { QStringLiteral("-D"), QStringLiteral("-N"), QStringLiteral("localhost"), QStringLiteral("-f"), conf() },
            m_dir + QStringLiteral("/slurmd.out"), env()))
        return fail(QStringLiteral("slurmd did not start"));
    QDeadlineTimer idle(60000);
    QByteArray state;
    while (!idle.hasExpired()) {
        state.clear();
        client(QStringLiteral("sinfo"), { QStringLiteral("-h"), QStringLiteral("-o"), QStringLiteral("%T") }, &state);
        if (state.trimmed() == "idle")
            return true;
        if (!m_slurmctld.running() || !m_slurmd.running())
            break;
        QThread::msleep(100);
    }
    // slurmd's own words first: Qt Test cuts long messages.
    const auto tail = [this](const QString& name, int bytes) {
        QFile f(m_dir + QLatin1Char('/') + name);
        return f.open(QIODevice::ReadOnly) ? QString::fromLocal8Bit(f.readAll().right(bytes)).trimmed()
                                           : QStringLiteral("(none)");
    };
    return fail(QStringLiteral("the SLURM node did not become idle (sinfo: '%1'; slurmctld %2, slurmd %3); "
                               "slurmd output: %4 | slurmd.log: %5 | slurmctld.log: %6")
                    .arg(QString::fromLatin1(state.trimmed()),
                        m_slurmctld.running() ? QStringLiteral("running") : QStringLiteral("exited"),
                        m_slurmd.running() ? QStringLiteral("running") : QStringLiteral("exited"),
                        tail(QStringLiteral("slurmd.out"), 300), tail(QStringLiteral("slurmd.log"), 400),
                        tail(QStringLiteral("slurmctld.log"), 200)));
}

QString LocalSlurm::client_conf(int message_timeout_s) const
{
    const QString path = m_dir + QStringLiteral("/slurm-client-%1.conf").arg(message_timeout_s);
    QFile in(conf());
    QFile out(path);
    if (in.open(QIODevice::ReadOnly) && out.open(QIODevice::WriteOnly | QIODevice::Truncate))
        out.write(in.readAll() + "MessageTimeout=" + QByteArray::number(message_timeout_s) + "\n");
    return path;
}

void LocalSlurm::stop_controller()
{
    // A clean shutdown writes the job state; on two busy cores that takes longer than the usual 3 s grace,
    // and a SIGKILL before it ends would be a crash, not the maintenance outage being modelled.
    constexpr int kStateSaveGraceMs = 30000;
    m_slurmctld.stop(kStateSaveGraceMs);
}

QString LocalSlurm::controller_log_tail(int bytes) const
{
    QString out;
    for (const QString& name : { QStringLiteral("slurmctld.log"), QStringLiteral("slurmd.log") }) {
        QFile f(m_dir + QLatin1Char('/') + name);
        if (f.open(QIODevice::ReadOnly))
            out += name + QStringLiteral(": ") + QString::fromLocal8Bit(f.readAll().right(bytes)) + QLatin1Char('\n');
    }
    return out;
}

bool LocalSlurm::start_controller(QString* error)
{
    if (!m_slurmctld.start(QStringLiteral("slurmctld"), { QStringLiteral("-D"), QStringLiteral("-f"), conf() },
            m_dir + QStringLiteral("/slurmctld-restart.out"), env())) {
        *error = QStringLiteral("slurmctld did not start again");
        return false;
    }
    QDeadlineTimer ready(60000);
    while (!ready.hasExpired()) {
        if (client(QStringLiteral("scontrol"), { QStringLiteral("ping") }) == 0)
            return true;
        if (!m_slurmctld.running())
            break;
        QThread::msleep(200);
    }
    *error = QStringLiteral("the restarted slurmctld does not answer scontrol ping");
    return false;
}

void LocalSlurm::stop()
{
    if (m_started && m_slurmctld.running()) {
        client(QStringLiteral("scancel"), { QStringLiteral("--user=") + user_name() });
        QDeadlineTimer deadline(20000);
        while (!deadline.hasExpired()) {
            QByteArray out;
            client(QStringLiteral("squeue"),
                { QStringLiteral("-h"), QStringLiteral("-t"), QStringLiteral("PD,R,CG,CF,S") }, &out);
            if (out.trimmed().isEmpty())
                break;
            QThread::msleep(200);
        }
    }
    m_slurmd.stop();
    m_slurmctld.stop();
    m_munged.stop();
    if (!m_started)
        return;
    m_started = false;
    // Job processes outlive slurmd (slurmstepd detaches): find ours by SLURM_CONF in their environment.
    // (the prefix also finds jobs sent with a client_conf() copy)
    const QByteArray marker = "SLURM_CONF=" + m_dir.toLocal8Bit() + "/slurm";
    std::vector<qint64> leftovers;
    const QStringList entries = QDir(QStringLiteral("/proc")).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    for (const QString& e : entries) {
        bool ok = false;
        const qint64 p = e.toLongLong(&ok);
        if (!ok || p == ::getpid())
            continue;
        QFile environ(QStringLiteral("/proc/%1/environ").arg(p));
        if (!environ.open(QIODevice::ReadOnly))
            continue;
        if (QByteArray(environ.readAll() + '\0').contains(marker))
            leftovers.push_back(p);
    }
    kill_pids(leftovers, 2000);
}

bool start_loopback_cluster(
    const QString& dir, std::unique_ptr<LocalSshServer>& ssh, std::unique_ptr<LocalSlurm>& slurm, QString* error)
{
    if (!QDir().mkpath(dir + QStringLiteral("/cluster-home"))) {
        *error = QStringLiteral("cannot create ") + dir + QStringLiteral("/cluster-home");
        return false;
    }
    ssh = std::make_unique<LocalSshServer>(dir + QStringLiteral("/sshd"));
    if (!ssh->start(error))
        return false;
    slurm = std::make_unique<LocalSlurm>(dir + QStringLiteral("/slurm"));
    if (!slurm->start(error))
        return false;
    if (slurm->cpus() < 2) {
        *error = QStringLiteral("the probe runs 2 ranks with one CPU each; SLURM sees %1 CPU(s)").arg(slurm->cpus());
        return false;
    }
    return true;
}

} // namespace parallax::test

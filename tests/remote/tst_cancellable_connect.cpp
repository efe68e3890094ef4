// A server that accepts the TCP connection and then says nothing (a hung sshd, a tarpit) must not hold a
// connect for its whole timeout once the work is cancelled, nor the app's shutdown with it.
#include "cluster/cluster_profile.hpp"
#include "runs/remote_runner.hpp"
#include "ssh/ssh_error.hpp"
#include "ssh/ssh_interaction.hpp"
#include "ssh/ssh_session.hpp"
#include "store/run_store.hpp"

#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QTest>

#include <libssh/libssh.h>
#include <libssh/server.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

using namespace parallax;
using namespace parallax::remote;
using namespace std::chrono_literals;

namespace {

// Listens without ever accepting: the kernel completes the TCP handshake, nobody sends a banner.
class MuteServer {
public:
    MuteServer()
    {
        m_fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a {};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof a;
        if (m_fd >= 0 && ::bind(m_fd, reinterpret_cast<sockaddr*>(&a), len) == 0 && ::listen(m_fd, 8) == 0
            && ::getsockname(m_fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
            m_port = ntohs(a.sin_port);
    }
    ~MuteServer() { ::close(m_fd); }
    MuteServer(const MuteServer&) = delete;
    MuteServer& operator=(const MuteServer&) = delete;
    bool listening() const { return m_port != 0; }
    unsigned port() const { return m_port; }

private:
    int m_fd = -1;
    unsigned m_port = 0;
};

SshTarget mute_target(const MuteServer& mute, std::chrono::milliseconds connect_timeout)
{
    SshTarget t;
    t.host = "127.0.0.1";
    t.port = mute.port();
    t.user = "nobody";
    t.use_agent = false;
    t.connect_timeout = connect_timeout;
    return t;
}

// Completes the SSH key exchange (libssh's server side, an ephemeral ed25519 host key) and then reads
// nothing more: an sshd whose authentication hangs (a PAM module waiting on a dead directory server).
class StallingServer {
public:
    StallingServer()
        : m_listen(::socket(AF_INET, SOCK_STREAM, 0))
    {
        sockaddr_in a {};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof a;
        if (m_listen < 0 || ::bind(m_listen, reinterpret_cast<sockaddr*>(&a), len) != 0 || ::listen(m_listen, 1) != 0
            || ::getsockname(m_listen, reinterpret_cast<sockaddr*>(&a), &len) != 0)
            return;
        m_port = ntohs(a.sin_port);
        m_thread = std::thread([this] { serve(); });
    }
    ~StallingServer()
    {
        m_stop = true;
        if (m_thread.joinable())
            m_thread.join();
        ::close(m_listen);
    }
    StallingServer(const StallingServer&) = delete;
    StallingServer& operator=(const StallingServer&) = delete;
    unsigned port() const { return m_port; }
    bool key_exchange_done() const { return m_kex_done; }

private:
    void serve()
    {
        pollfd p { m_listen, POLLIN, 0 };
        while (!m_stop && ::poll(&p, 1, 50) == 0) { }
        if (m_stop)
            return;
        const int fd = ::accept(m_listen, nullptr, nullptr);
        ssh_key host_key = nullptr;
        ssh_bind bind = ssh_bind_new();
        ssh_session session = ssh_new();
        if (fd >= 0 && ssh_pki_generate(SSH_KEYTYPE_ED25519, 0, &host_key) == SSH_OK
            && ssh_bind_options_set(bind, SSH_BIND_OPTIONS_IMPORT_KEY, host_key) == SSH_OK
            && ssh_bind_accept_fd(bind, session, fd) == SSH_OK && ssh_handle_key_exchange(session) == SSH_OK) {
            m_kex_done = true;
            while (!m_stop) // the client's authentication request is never read
                std::this_thread::sleep_for(10ms);
        }
        ssh_free(session); // closes fd
        ssh_bind_free(bind); // frees the imported key
    }

    int m_listen = -1;
    unsigned m_port = 0;
    std::atomic<bool> m_stop { false };
    std::atomic<bool> m_kex_done { false };
    std::thread m_thread;
};

// Trusts whatever host key it is shown (the stalling server's key is new every run).
class TrustingInteraction : public NonInteractive {
public:
    bool confirm_unknown_host(const HostKeyInfo&) override { return true; }
};

SshTarget stalling_target(const StallingServer& server, const QTemporaryDir& dir, std::chrono::milliseconds io_timeout)
{
    SshTarget t;
    t.host = "127.0.0.1";
    t.port = server.port();
    t.user = "nobody";
    t.use_agent = false;
    t.known_hosts = dir.filePath(QStringLiteral("known_hosts")).toStdString();
    t.connect_timeout = 5s;
    t.io_timeout = io_timeout;
    return t;
}

} // namespace

class TestCancellableConnect : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void aCancelInterruptsAConnectToAMuteServer()
    {
        MuteServer mute;
        QVERIFY(mute.listening());
        CancelToken cancel;
        NonInteractive interaction;
        QElapsedTimer timer;
        timer.start();
        auto connecting = std::async(std::launch::async, [&] {
            SshSession s;
            try {
                s.connect(mute_target(mute, 20s), interaction, cancel);
            } catch (const SshError& e) {
                return e.kind();
            }
            return SshErrorKind::config; // connected: cannot be
        });
        std::this_thread::sleep_for(200ms);
        QVERIFY(connecting.wait_for(0ms) == std::future_status::timeout); // still waiting for the banner
        cancel.cancel();
        QVERIFY(connecting.wait_for(3s) == std::future_status::ready);
        QCOMPARE(connecting.get(), SshErrorKind::cancelled);
        qInfo("connect cancelled at 200 ms, returned after %lld ms", static_cast<long long>(timer.elapsed()));
        QVERIFY2(timer.elapsed() < 1000, qPrintable(QString::number(timer.elapsed())));
    }

    void aMuteServerTimesOutAtTheConnectTimeout()
    {
        MuteServer mute;
        QVERIFY(mute.listening());
        NonInteractive interaction;
        SshSession s;
        QElapsedTimer timer;
        timer.start();
        try {
            s.connect(mute_target(mute, 600ms), interaction);
            QFAIL("connected to a server that never spoke");
        } catch (const SshError& e) {
            QCOMPARE(e.kind(), SshErrorKind::timeout);
        }
        QVERIFY2(timer.elapsed() >= 550 && timer.elapsed() < 2000, qPrintable(QString::number(timer.elapsed())));
    }

    // Past the key exchange, authentication is polled too: a cancel stops a login the server never answers.
    void aCancelInterruptsAnAuthenticationTheServerNeverAnswers()
    {
        StallingServer server;
        QVERIFY(server.port() != 0);
        QTemporaryDir dir;
        CancelToken cancel;
        TrustingInteraction interaction;
        auto connecting = std::async(std::launch::async, [&] {
            SshSession s;
            try {
                s.connect(stalling_target(server, dir, 30s), interaction, cancel);
            } catch (const SshError& e) {
                return e.kind();
            }
            return SshErrorKind::config; // authenticated: cannot be
        });
        QTRY_VERIFY_WITH_TIMEOUT(server.key_exchange_done(), 5000);
        std::this_thread::sleep_for(200ms);
        QVERIFY(connecting.wait_for(0ms) == std::future_status::timeout); // waiting for the server's answer
        QElapsedTimer timer;
        timer.start();
        cancel.cancel();
        QVERIFY(connecting.wait_for(3s) == std::future_status::ready);
        QCOMPARE(connecting.get(), SshErrorKind::cancelled);
        qInfo("authentication cancelled, returned after %lld ms", static_cast<long long>(timer.elapsed()));
        QVERIFY2(timer.elapsed() < 1000, qPrintable(QString::number(timer.elapsed())));
    }

    void anUnansweredAuthenticationTimesOutAtTheIoTimeout()
    {
        StallingServer server;
        QVERIFY(server.port() != 0);
        QTemporaryDir dir;
        TrustingInteraction interaction;
        SshSession s;
        QElapsedTimer timer;
        timer.start();
        try {
            s.connect(stalling_target(server, dir, 800ms), interaction);
            QFAIL("authenticated on a server that never answered");
        } catch (const SshError& e) {
            QCOMPARE(e.kind(), SshErrorKind::timeout);
            QVERIFY2(std::string(e.what()).find("authentication") != std::string::npos, e.what());
        }
        QVERIFY(server.key_exchange_done());
        QVERIFY2(timer.elapsed() >= 750 && timer.elapsed() < 4000, qPrintable(QString::number(timer.elapsed())));
    }

    // The runner's shutdown (closing the app) cancels its workers before joining them: a worker sitting in a
    // connect to the mute server lets go at once.
    void shutdownDoesNotWaitForAMuteServer()
    {
        MuteServer mute;
        QVERIFY(mute.listening());
        QTemporaryDir tmp;
        const QString path = tmp.filePath(QStringLiteral("runs.sqlite"));
        ClusterProfile p;
        p.name = "mute";
        p.host = "127.0.0.1";
        p.port = mute.port();
        p.user = "nobody";
        p.connect_timeout_s = 30;
        {
            RunStore store(path);
            RunRecord r;
            r.id = "r1";
            r.framework = "probe";
            r.launcher = "slurm";
            r.cluster = p.name;
            r.profile_json = profile_to_json(p).dump();
            r.scenario_json = "{}";
            r.plan_json = "{}";
            r.remote_dir = "/scratch/r1";
            r.log_path = "/scratch/r1/job.log";
            r.job_id = "42";
            r.state = RunState::running;
            store.create(r);
        }
        RemoteRunner runner(path, std::make_shared<NonInteractive>());
        runner.attach(QStringLiteral("r1"));
        QTest::qWait(300); // the worker polls the run: it connects and waits for a banner
        QElapsedTimer timer;
        timer.start();
        runner.shutdown();
        qInfo("shutdown took %lld ms", static_cast<long long>(timer.elapsed()));
        QVERIFY2(timer.elapsed() < 1000, qPrintable(QString::number(timer.elapsed())));
    }
};

QTEST_GUILESS_MAIN(TestCancellableConnect)
#include "tst_cancellable_connect.moc"

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

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

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

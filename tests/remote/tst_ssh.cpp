// remote/ssh against a real OpenSSH server on 127.0.0.1 (started and stopped by this test): host-key
// policy (unknown asked with the SHA256 fingerprint, changed and other-type refused with both fingerprints),
// authentication (agent, key file, passphrase, wrong key), commands (stdout and stderr together, exit
// status, signals, timeout, cancel, hostile arguments), SFTP, ~/.ssh/config aliases, keepalive and reconnect.
#include "local_cluster.hpp"

#include "jobs/shell_quote.hpp"
#include "ssh/ssh_connection.hpp"
#include "ssh/ssh_session.hpp"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include <atomic>
#include <chrono>
#include <thread>

using namespace parallax::remote;
using namespace parallax::test;

namespace {

// Answers as told and remembers what it was asked.
class ScriptedInteraction : public SshInteraction {
public:
    bool accept_host = false;
    std::optional<std::string> passphrase;
    int host_questions = 0;
    int passphrase_questions = 0;
    HostKeyInfo last_host;
    std::string last_key_file;

    bool confirm_unknown_host(const HostKeyInfo& key) override
    {
        ++host_questions;
        last_host = key;
        return accept_host;
    }
    std::optional<Secret> key_passphrase(const std::string& key_file) override
    {
        ++passphrase_questions;
        last_key_file = key_file;
        if (!passphrase)
            return std::nullopt;
        return Secret(*passphrase);
    }
    std::optional<std::vector<Secret>> answer_prompts(const KbdPrompt&) override { return std::nullopt; }
};

std::string str(const QString& s)
{
    return s.toStdString();
}

QByteArray read_file(const QString& path)
{
    QFile f(path);
    f.open(QIODevice::ReadOnly);
    return f.readAll();
}

} // namespace

class TestSsh : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_tmp;
    std::unique_ptr<LocalSshServer> m_server;

    SshTarget target(const QString& known_hosts = {}) const
    {
        SshTarget t;
        t.host = "127.0.0.1";
        t.port = m_server->port();
        t.user = str(m_server->user());
        t.key_file = str(m_server->client_key());
        t.known_hosts = str(known_hosts.isEmpty() ? m_server->known_hosts() : known_hosts);
        t.global_known_hosts = "/dev/null";
        t.use_agent = false;
        t.connect_timeout = std::chrono::seconds(10);
        t.io_timeout = std::chrono::seconds(20);
        return t;
    }

    // A known_hosts file of its own that already trusts the server.
    QString trusted_known_hosts(const QString& name)
    {
        const QString path = m_tmp.filePath(name);
        QFile f(path);
        f.open(QIODevice::WriteOnly | QIODevice::Truncate);
        f.write(m_server->known_hosts_line(m_server->host_key() + QStringLiteral(".pub")).toUtf8() + "\n");
        return path;
    }

    void connect_trusted(SshSession& s)
    {
        ScriptedInteraction no;
        s.connect(target(trusted_known_hosts(QStringLiteral("trusted_known_hosts"))), no);
        QCOMPARE(no.host_questions, 0);
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_tmp.isValid());
        m_server = std::make_unique<LocalSshServer>(m_tmp.filePath(QStringLiteral("sshd")));
        QString error;
        QVERIFY2(m_server->start(&error), qPrintable(error));
    }

    void cleanupTestCase() { m_server.reset(); }

    void unknownHostKeyIsAskedWithItsFingerprint()
    {
        const QString kh = m_tmp.filePath(QStringLiteral("unknown_known_hosts"));
        ScriptedInteraction refuse;
        SshSession s;
        try {
            s.connect(target(kh), refuse);
            QFAIL("connected to an unknown host without asking");
        } catch (const SshError& e) {
            QCOMPARE(e.kind(), SshErrorKind::host_key_unknown);
        }
        QCOMPARE(refuse.host_questions, 1);
        QCOMPARE(QString::fromStdString(refuse.last_host.fingerprint), m_server->host_fingerprint());
        QVERIFY(refuse.last_host.fingerprint.rfind("SHA256:", 0) == 0);
        QCOMPARE(QString::fromStdString(refuse.last_host.host), QStringLiteral("[127.0.0.1]:%1").arg(m_server->port()));
        QCOMPARE(refuse.last_host.key_type, std::string("ssh-ed25519"));
        QVERIFY(!s.connected());

        ScriptedInteraction accept;
        accept.accept_host = true;
        s.connect(target(kh), accept);
        QVERIFY(s.connected());
        QCOMPARE(accept.host_questions, 1);
        QVERIFY(read_file(kh).contains(QStringLiteral("[127.0.0.1]:%1").arg(m_server->port()).toUtf8()));
        s.disconnect();

        // Stored: the next connection does not ask.
        ScriptedInteraction again;
        s.connect(target(kh), again);
        QCOMPARE(again.host_questions, 0);
        QCOMPARE(s.auth_method(), std::string("publickey"));
    }

    void stdoutAndStderrAreReadTogether()
    {
        SshSession s;
        connect_trusted(s);
        // 8 MB on stderr before anything on stdout: reading stdout alone deadlocks here.
        ExecOptions o;
        o.timeout = std::chrono::seconds(60);
        const ExecResult r = s.exec("head -c 8000000 /dev/zero | tr '\\000' e >&2; echo out; exit 3", o);
        QCOMPARE(r.err.size(), std::size_t(8000000));
        QCOMPARE(r.out, std::string("out\n"));
        QVERIFY(r.exit_status.has_value());
        QCOMPARE(*r.exit_status, 3);
        QVERIFY(!r.ok());
    }

    void exitStatusIsOptionalForSignalKills()
    {
        SshSession s;
        connect_trusted(s);
        const ExecResult ok = s.exec("true");
        QVERIFY(ok.ok());
        const ExecResult killed = s.exec("kill -TERM $$");
        QVERIFY(!killed.exit_status.has_value());
        QCOMPARE(killed.exit_signal, std::string("TERM"));
    }

    void hostileArgumentsArriveLiterally()
    {
        const QString marker = m_tmp.filePath(QStringLiteral("pwned"));
        QFile::remove(marker);
        const std::string m = marker.toStdString();
        const std::vector<std::string> hostile { "it's", "$(touch " + m + ")", "`touch " + m + "`", "x; touch " + m,
            "x\ntouch " + m + "\n", "'; touch " + m + "; echo '", "\"$(touch " + m + ")\"", "$HOME ${PATH} $$ $0",
            "| touch " + m + " > " + m, "* ? [a-z]", "a\\'b\\\"c", "Grüße 日本語", "" };
        SshSession s;
        connect_trusted(s);
        // One command (a login shell costs seconds here), twice quoted: once for printf's arguments, once
        // more for the login shell around them. printf prints each argument back followed by a NUL.
        std::vector<std::string> argv { "printf", "%s\\0" };
        argv.insert(argv.end(), hostile.begin(), hostile.end());
        const ExecResult r = s.exec(login_shell(shell_join(argv)));
        QVERIFY2(r.ok(), r.err.c_str());
        std::string expected;
        for (const auto& h : hostile)
            expected += h + std::string(1, '\0');
        QVERIFY(r.out.size() >= expected.size());
        QCOMPARE(r.out.substr(r.out.size() - expected.size()), expected);
        QVERIFY2(!QFileInfo::exists(marker), "an argument was executed");
    }

    void sftpRoundTrip()
    {
        SshSession s;
        connect_trusted(s);
        std::string data(1 << 20, '\0');
        for (auto& c : data)
            c = static_cast<char>(QRandomGenerator::global()->bounded(256));
        const std::string path = str(m_tmp.filePath(QStringLiteral("upload.bin")));
        const auto start = std::chrono::steady_clock::now();
        s.upload(path, data, 0755);
        const double upload_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        qInfo("1 MiB SFTP upload: %.3f s", upload_s);
        QCOMPARE(s.download(path), data);
        QCOMPARE(s.read_from(path, 1000, 10).value(), data.substr(1000, 10));
        QCOMPARE(s.read_from(path, data.size(), 10).value(), std::string());
        QCOMPARE(s.file_size(path).value(), std::uint64_t(data.size()));
        QVERIFY(!s.read_from(path + ".missing", 0, 10).has_value());
        QVERIFY(!s.file_size(path + ".missing").has_value());
        QCOMPARE(QFileInfo(QString::fromStdString(path)).permissions() & QFileDevice::ExeOwner, QFileDevice::ExeOwner);
        try {
            s.upload("/nonexistent-folder/x", "x");
            QFAIL("uploaded into a folder that does not exist");
        } catch (const SshError& e) {
            QCOMPARE(e.kind(), SshErrorKind::sftp);
            QVERIFY(std::string(e.what()).find("/nonexistent-folder/x") != std::string::npos);
        }
        QVERIFY(s.exec("true").ok()); // the session survives a failed file operation
    }

    // Closing the app while a large file uploads: the transfer stops at its next 32 KiB request.
    void cancelStopsAnUploadBetweenChunks()
    {
        SshSession s;
        connect_trusted(s);
        const std::string data(256u << 20, 'x');
        const std::string path = str(m_tmp.filePath(QStringLiteral("cancelled-upload.bin")));
        parallax::CancelToken cancel;
        s.set_cancel(cancel);
        std::atomic<bool> done { false };
        std::thread canceller([&] { // once the upload is under way
            while (!done && QFileInfo(QString::fromStdString(path)).size() < (1 << 20))
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            cancel.cancel();
        });
        try {
            s.upload(path, data, 0644);
            QFAIL("the upload ignored the cancel");
        } catch (const SshError& e) {
            QCOMPARE(e.kind(), SshErrorKind::cancelled);
        }
        done = true;
        canceller.join();
        const qint64 written = QFileInfo(QString::fromStdString(path)).size();
        qInfo("cancelled after %lld of %zu bytes", static_cast<long long>(written), data.size());
        QVERIFY(written < static_cast<qint64>(data.size()));
        cancel.reset();
        QVERIFY(s.exec("true").ok()); // the session is still usable
    }

    void timeoutAndCancelStopACommand()
    {
        SshSession s;
        connect_trusted(s);
        ExecOptions o;
        o.timeout = std::chrono::milliseconds(300);
        auto start = std::chrono::steady_clock::now();
        try {
            s.exec("sleep 30", o);
            QFAIL("no timeout");
        } catch (const SshError& e) {
            QCOMPARE(e.kind(), SshErrorKind::timeout);
        }
        QVERIFY(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
        ExecOptions c;
        std::thread canceller([flag = c.cancel] {
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
            flag.cancel();
        });
        start = std::chrono::steady_clock::now();
        try {
            s.exec("sleep 30", c);
            QFAIL("not cancelled");
        } catch (const SshError& e) {
            QCOMPARE(e.kind(), SshErrorKind::cancelled);
        }
        canceller.join();
        QVERIFY(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
        QVERIFY(s.exec("echo still here").ok());
        s.send_keepalive();
    }

    void wrongKeyIsACleanAuthError()
    {
        const QString stranger = m_server->make_key(QStringLiteral("stranger_key"));
        SshTarget t = target(trusted_known_hosts(QStringLiteral("wrong_key_known_hosts")));
        t.key_file = str(stranger);
        ScriptedInteraction no;
        SshSession s;
        try {
            s.connect(t, no);
            QFAIL("authenticated with a key that is not authorized");
        } catch (const SshError& e) {
            QCOMPARE(e.kind(), SshErrorKind::auth);
            const std::string msg = e.what();
            QVERIFY2(msg.find("authentication failed") != std::string::npos, e.what());
            QVERIFY2(msg.find(str(stranger)) != std::string::npos, e.what());
            QVERIFY(!e.transient());
        }
        QVERIFY(!s.connected());
        t.key_file = str(m_tmp.filePath(QStringLiteral("no-such-key")));
        try {
            s.connect(t, no);
            QFAIL("connected with a missing key file");
        } catch (const SshError& e) {
            QCOMPARE(e.kind(), SshErrorKind::config);
        }
    }

    void encryptedKeyAsksForItsPassphrase()
    {
        const QString key = m_tmp.filePath(QStringLiteral("sshd/locked_key"));
        QVERIFY(run_program(QStringLiteral("ssh-keygen"),
                    { QStringLiteral("-q"), QStringLiteral("-t"), QStringLiteral("ed25519"), QStringLiteral("-N"),
                        QStringLiteral("open sesame"), QStringLiteral("-f"), key })
            == 0);
        QFile auth(m_server->dir() + QStringLiteral("/authorized_keys"));
        QVERIFY(auth.open(QIODevice::Append));
        auth.write(read_file(key + QStringLiteral(".pub")));
        auth.close();
        SshTarget t = target(trusted_known_hosts(QStringLiteral("locked_known_hosts")));
        t.key_file = str(key);
        ScriptedInteraction ask;
        ask.passphrase = "open sesame";
        SshSession s;
        s.connect(t, ask);
        QCOMPARE(ask.passphrase_questions, 1);
        QCOMPARE(ask.last_key_file, str(key));
        s.disconnect();
        ScriptedInteraction wrong;
        wrong.passphrase = "wrong";
        try {
            s.connect(t, wrong);
            QFAIL("a wrong passphrase authenticated");
        } catch (const SshError& e) {
            QCOMPARE(e.kind(), SshErrorKind::auth);
        }
    }

    void agentIsTriedFirst()
    {
        const QString socket = m_tmp.filePath(QStringLiteral("agent.sock"));
        ChildProcess agent;
        QVERIFY(agent.start(QStringLiteral("ssh-agent"), { QStringLiteral("-D"), QStringLiteral("-a"), socket },
            m_tmp.filePath(QStringLiteral("agent.log"))));
        for (int i = 0; i < 200 && !QFileInfo::exists(socket); ++i)
            QThread::msleep(10);
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("SSH_AUTH_SOCK"), socket);
        QCOMPARE(run_program(QStringLiteral("ssh-add"), { QStringLiteral("-q"), m_server->client_key() }, nullptr,
                     nullptr, env),
            0);
        const QByteArray saved = qgetenv("SSH_AUTH_SOCK");
        qputenv("SSH_AUTH_SOCK", socket.toLocal8Bit());
        SshTarget t = target(trusted_known_hosts(QStringLiteral("agent_known_hosts")));
        t.use_agent = true;
        t.key_file = str(m_tmp.filePath(QStringLiteral("no-key-needed"))); // never read: the agent succeeds first
        ScriptedInteraction no;
        SshSession s;
        s.connect(t, no);
        QCOMPARE(s.auth_method(), std::string("agent"));
        s.disconnect();
        if (saved.isEmpty())
            qunsetenv("SSH_AUTH_SOCK");
        else
            qputenv("SSH_AUTH_SOCK", saved);
        agent.stop();
    }

    void sshConfigAliasesWork()
    {
        const QString config = m_tmp.filePath(QStringLiteral("ssh_config"));
        QFile f(config);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QStringLiteral("Host mycluster\n  HostName 127.0.0.1\n  Port %1\n  User %2\n  IdentityFile %3\n")
                    .arg(m_server->port())
                    .arg(m_server->user(), m_server->client_key())
                    .toUtf8());
        f.close();
        SshTarget t;
        t.host = "mycluster";
        t.use_ssh_config = true;
        t.ssh_config_file = str(config);
        t.known_hosts = str(trusted_known_hosts(QStringLiteral("alias_known_hosts")));
        t.global_known_hosts = "/dev/null";
        t.use_agent = false;
        ScriptedInteraction no;
        SshSession s;
        s.connect(t, no);
        QCOMPARE(no.host_questions, 0);
        QVERIFY(s.exec("true").ok());
        QCOMPARE(int(s.target().port), int(m_server->port()));
    }

    void reconnectAfterTheServerComesBack()
    {
        ScriptedInteraction no;
        auto shared = std::make_shared<ScriptedInteraction>();
        SshConnection c(target(trusted_known_hosts(QStringLiteral("reconnect_known_hosts"))), shared,
            ReconnectPolicy { std::chrono::milliseconds(100), std::chrono::milliseconds(400) });
        std::vector<ConnectionState> states;
        c.on_state = [&](ConnectionState s, const std::string&) { states.push_back(s); };
        QVERIFY(c.run([](SshSession& s) { return s.exec("true"); }).ok());
        m_server->stop();
        try {
            c.run([](SshSession& s) { return s.exec("true"); });
            QFAIL("a command ran on a dead server");
        } catch (const SshError& e) {
            QVERIFY2(e.transient(), e.what());
        }
        QCOMPARE(c.state(), ConnectionState::lost);
        QString error;
        QVERIFY2(m_server->start(&error), qPrintable(error));
        bool ok = false;
        for (int i = 0; i < 50 && !ok; ++i) {
            try {
                ok = c.run([](SshSession& s) { return s.exec("true"); }).ok();
            } catch (const SshError& e) {
                QVERIFY2(e.transient(), e.what());
                QThread::msleep(100);
            }
        }
        QVERIFY(ok);
        QCOMPARE(c.reconnects(), 1);
        QCOMPARE(c.state(), ConnectionState::connected);
        QVERIFY(std::find(states.begin(), states.end(), ConnectionState::lost) != states.end());
    }

    // Last: it changes the server's host key.
    void changedHostKeyIsRefusedWithBothFingerprints()
    {
        const QString kh = trusted_known_hosts(QStringLiteral("changed_known_hosts"));
        const QString old_fp = m_server->host_fingerprint();
        const QByteArray before = read_file(kh);
        m_server->stop();
        m_server->use_host_key(m_server->make_key(QStringLiteral("new_host_key")));
        QString error;
        QVERIFY2(m_server->start(&error), qPrintable(error));
        const QString new_fp = m_server->host_fingerprint();
        QVERIFY(old_fp != new_fp);
        ScriptedInteraction yes; // would accept an unknown key: must not even be asked
        yes.accept_host = true;
        SshSession s;
        try {
            s.connect(target(kh), yes);
            QFAIL("connected although the host key changed");
        } catch (const SshError& e) {
            QCOMPARE(e.kind(), SshErrorKind::host_key_changed);
            const QString msg = QString::fromStdString(e.what());
            QVERIFY2(msg.contains(old_fp), e.what());
            QVERIFY2(msg.contains(new_fp), e.what());
            QVERIFY2(msg.contains(QStringLiteral("CHANGED")), e.what());
            QVERIFY(!e.transient());
        }
        QCOMPARE(yes.host_questions, 0);
        QCOMPARE(read_file(kh), before); // the stored key is never replaced
        QVERIFY(!s.connected());

        // Only a key of another type is known for this host: refused as well, never offered.
        const QString rsa = m_server->make_key(QStringLiteral("rsa_host_key"), QStringLiteral("rsa"));
        const QString other = m_tmp.filePath(QStringLiteral("other_known_hosts"));
        QFile f(other);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(m_server->known_hosts_line(rsa + QStringLiteral(".pub")).toUtf8() + "\n");
        f.close();
        try {
            s.connect(target(other), yes);
            QFAIL("connected with only an other-type key known");
        } catch (const SshError& e) {
            QCOMPARE(e.kind(), SshErrorKind::host_key_other_type);
            QVERIFY2(QString::fromStdString(e.what()).contains(new_fp), e.what());
        }
        QCOMPARE(yes.host_questions, 0);
    }
};

QTEST_GUILESS_MAIN(TestSsh)
#include "tst_ssh.moc"

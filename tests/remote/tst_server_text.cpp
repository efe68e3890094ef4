// Text from outside, a server's (keyboard-interactive prompts, banners, a command's error output kept in a
// run's state) or a user's (a run id, a profile value), never reaches a terminal with its control characters
// live: an escape sequence could retitle the window, move the cursor over what the user reads or hide it. A
// long value quoted in an error is cut.
#include "runs/run_report.hpp"
#include "ssh/ssh_interaction.hpp"
#include "store/run_store.hpp"

#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

using namespace parallax::remote;

namespace {

// A banner with markup (harmless on a terminal, kept as written), an OSC title change, a carriage return
// that would overwrite its line, and the C1 CSI (U+009B).
const std::string kHostile = "<b>Welcome</b>\x1b]0;owned\x07 to login\rFAKE\nsecond line \xc2\x9b"
                             "31m";

RunRecord hostile_run()
{
    RunRecord r;
    r.id = "r1";
    r.framework = "probe";
    r.launcher = "slurm";
    r.cluster = "test";
    r.profile_json = "{}";
    r.scenario_json = "{}";
    r.plan_json = "{}";
    r.remote_dir = "/scratch/r1";
    r.state = RunState::failed;
    r.detail = "sbatch refused the job: " + kHostile;
    return r;
}

} // namespace

class TestServerText : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void controlCharactersAreMadeVisible()
    {
        QCOMPARE(terminal_text(kHostile),
            std::string("<b>Welcome</b>\\x1b]0;owned\\x07 to login\\rFAKE\nsecond line \\u009b31m"));
        // Ordinary text, UTF-8 included, is left as it is.
        QCOMPARE(terminal_text("Password for me@login (é): "), std::string("Password for me@login (é): "));
    }

    // `runs RUN_ID` prints a run's state details and history, which quote the cluster's own output.
    void runsShowPrintsNoLiveEscapes()
    {
        QTemporaryDir tmp;
        const QString path = tmp.filePath(QStringLiteral("runs.sqlite"));
        {
            RunStore store(path);
            store.create(hostile_run());
            QVERIFY(run_summary_text(store, *store.get("r1")).find('\x1b') == std::string::npos);
        }
        QProcess cli;
        cli.start(QStringLiteral(PARALLAX_CLI_PATH),
            { QStringLiteral("runs"), QStringLiteral("r1"), QStringLiteral("--store"), path });
        QVERIFY(cli.waitForFinished(30000));
        QCOMPARE(cli.exitCode(), 0);
        const QByteArray out = cli.readAllStandardOutput();
        QVERIFY2(out.contains("\\x1b]0;owned\\x07"), out.constData());
        QVERIFY(!out.contains('\x1b'));
        QVERIFY(!out.contains('\r'));
        QVERIFY(!out.contains("\xc2\x9b"));
    }

    void errorsQuoteUserTextEscapedAndCut()
    {
        QTemporaryDir tmp;
        const QString path = tmp.filePath(QStringLiteral("runs.sqlite"));
        const std::string id = "\x1b]0;owned\x07" + std::string(300, 'x');
        {
            RunStore store(path);
            store.create(hostile_run());
            try {
                store.set_state(id, RunState::failed, "x");
                QFAIL("no such run, yet no error");
            } catch (const StoreError& e) {
                const std::string what = e.what();
                QVERIFY2(what.find("\\x1b]0;owned\\x07xxx") != std::string::npos, what.c_str());
                QVERIFY2(what.find("(310 bytes)") != std::string::npos, what.c_str());
                QVERIFY(what.find('\x1b') == std::string::npos);
            }
        }
        QProcess cli;
        cli.start(QStringLiteral(PARALLAX_CLI_PATH),
            { QStringLiteral("runs"), QString::fromStdString(id), QStringLiteral("--store"), path });
        QVERIFY(cli.waitForFinished(30000));
        const QByteArray err = cli.readAllStandardError();
        QVERIFY2(err.contains("no run \\x1b]0;owned\\x07xxx"), err.constData());
        QVERIFY(!err.contains('\x1b'));
        QVERIFY2(err.size() < 400, err.constData());
    }
};

QTEST_GUILESS_MAIN(TestServerText)
#include "tst_server_text.moc"

// remote/shell_quote.hpp: every string a user or a preset can hold reaches the remote program as one
// literal argument. Proven by running a real POSIX shell on the quoted text: nothing is expanded,
// split, globbed or executed.
#include "jobs/shell_quote.hpp"

#include <QProcess>
#include <QTest>

#include <stdexcept>
#include <string>
#include <vector>

using namespace parallax::remote;

namespace {

struct ShellResult {
    int code = -1;
    QByteArray out;
    QByteArray err;
};

// Runs `/bin/sh -c command`. With `isolated`, PATH finds no programs at all, so that even if quoting were
// broken an injected command (rm, touch, cat...) could not run; printf is a shell builtin.
ShellResult sh(const std::string& command, bool isolated = true)
{
    QProcess p;
    p.setWorkingDirectory(QStringLiteral(PARALLAX_SOURCE_DIR)); // a folder with files, so a glob would expand
    if (isolated) {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("PATH"), QStringLiteral("/nonexistent"));
        p.setProcessEnvironment(env);
    }
    p.start(QStringLiteral("/bin/sh"), { QStringLiteral("-c"), QString::fromStdString(command) });
    ShellResult r;
    if (!p.waitForStarted(10000) || !p.waitForFinished(30000)) {
        p.kill();
        p.waitForFinished();
        return r;
    }
    r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = p.readAllStandardOutput();
    r.err = p.readAllStandardError();
    return r;
}

QByteArray bytes(const std::string& s)
{
    return QByteArray(s.data(), static_cast<qsizetype>(s.size()));
}

void addHostileRows(bool destructive = true)
{
    QTest::addColumn<QByteArray>("arg");
    QTest::newRow("plain") << QByteArray("hello");
    QTest::newRow("empty") << QByteArray();
    QTest::newRow("single quote") << QByteArray("it's");
    QTest::newRow("only a single quote") << QByteArray("'");
    QTest::newRow("quote escape sequence") << QByteArray("'\\''");
    QTest::newRow("unbalanced quotes") << QByteArray("a'b\"c");
    QTest::newRow("double quotes") << QByteArray("say \"hi\"");
    if (destructive)
        QTest::newRow("command substitution") << QByteArray("$(rm -rf /)");
    else
        QTest::newRow("command substitution") << QByteArray("$(exit 7)");
    QTest::newRow("command substitution in quotes") << QByteArray("\"$(touch /tmp/parallax-pwned)\"");
    QTest::newRow("backticks") << QByteArray("`id`");
    QTest::newRow("variable") << QByteArray("$HOME ${PATH} $0 $1 $@ $$");
    QTest::newRow("IFS") << QByteArray("a${IFS}b");
    QTest::newRow("newline") << QByteArray("line1\nline2\n");
    QTest::newRow("newline then command") << QByteArray("x\necho pwned");
    QTest::newRow("carriage return and tab") << QByteArray("a\rb\tc");
    QTest::newRow("semicolon") << QByteArray("a; echo pwned");
    QTest::newRow("and") << QByteArray("true && echo pwned");
    QTest::newRow("or") << QByteArray("false || echo pwned");
    QTest::newRow("pipe") << QByteArray("a | cat /etc/passwd");
    QTest::newRow("redirections") << QByteArray("> /tmp/parallax-pwned < /dev/null 2>&1");
    QTest::newRow("background") << QByteArray("sleep 100 &");
    QTest::newRow("spaces") << QByteArray("  many   spaces  ");
    QTest::newRow("unicode") << QByteArray("Grüße — 日本語 🚀");
    QTest::newRow("dash rf") << QByteArray("-rf");
    QTest::newRow("double dash") << QByteArray("--");
    QTest::newRow("glob star") << QByteArray("*");
    QTest::newRow("glob patterns") << QByteArray("*.json ?? [a-z]* {a,b}");
    QTest::newRow("tilde") << QByteArray("~ ~root");
    QTest::newRow("backslashes") << QByteArray("\\ \\\\ \\n \\'");
    QTest::newRow("comment") << QByteArray("# not a comment");
    QTest::newRow("history and percent") << QByteArray("!! %s %d %%");
    QTest::newRow("parentheses and braces") << QByteArray("( ) { } [[ ]]");
    QTest::newRow("control bytes") << QByteArray("\x01\x1b[31mred\x7f");
    QTest::newRow("long") << QByteArray(10000, '\'');
}

} // namespace

class TestShellQuote : public QObject {
    Q_OBJECT
private slots:
    void exactQuoting();
    void shellPrintsExactly_data();
    void shellPrintsExactly();
    void joinRoundTrips();
    void joinRoundTripsEachHostileString_data();
    void joinRoundTripsEachHostileString();
    void loginShell();
    void loginShellRunsQuotedCommand_data();
    void loginShellRunsQuotedCommand();
    void nulBytesRejected();
};

void TestShellQuote::exactQuoting()
{
    // The documented form: single quotes, ' as '\'' and '' for the empty string.
    QCOMPARE(QString::fromStdString(shell_quote("abc")), QStringLiteral("'abc'"));
    QCOMPARE(QString::fromStdString(shell_quote("")), QStringLiteral("''"));
    QCOMPARE(QString::fromStdString(shell_quote("it's")), QStringLiteral("'it'\\''s'"));
    QCOMPARE(QString::fromStdString(shell_join({})), QString());
    QCOMPARE(QString::fromStdString(shell_join({ "a b", "", "c" })), QStringLiteral("'a b' '' 'c'"));
}

void TestShellQuote::shellPrintsExactly_data()
{
    addHostileRows();
}

void TestShellQuote::shellPrintsExactly()
{
    QFETCH(QByteArray, arg);
    const std::string s = arg.toStdString();
    const ShellResult r = sh("printf %s " + shell_quote(s));
    QCOMPARE(r.code, 0);
    QCOMPARE(r.err, QByteArray());
    QCOMPARE(r.out, arg);
    // One argument, not several: $# is 1 whatever the string holds.
    const ShellResult n = sh("set -- " + shell_quote(s) + "; printf %s \"$#\"");
    QCOMPARE(n.out, QByteArray("1"));
}

void TestShellQuote::joinRoundTrips()
{
    // An argv with every hostile string at once, including empty ones, comes back exactly.
    std::vector<std::string> argv = { "", "program", "--flag=$(id)", "", "a b", "it's", "\n", "*", "-rf", "日本語" };
    const std::string joined = shell_join(argv);
    const ShellResult r = sh("/bin/sh -c 'for a; do printf \"%s\\0\" \"$a\"; done' sh " + joined);
    QCOMPARE(r.code, 0);
    QCOMPARE(r.err, QByteArray());
    QByteArray expected;
    for (const auto& a : argv)
        expected += bytes(a) + QByteArray(1, '\0');
    QCOMPARE(r.out, expected);
}

void TestShellQuote::joinRoundTripsEachHostileString_data()
{
    addHostileRows();
}

void TestShellQuote::joinRoundTripsEachHostileString()
{
    QFETCH(QByteArray, arg);
    const std::vector<std::string> argv = { "first", arg.toStdString(), arg.toStdString(), "last" };
    const ShellResult r = sh("/bin/sh -c 'for a; do printf \"%s\\0\" \"$a\"; done' sh " + shell_join(argv));
    QCOMPARE(r.code, 0);
    QByteArray expected;
    for (const auto& a : argv)
        expected += bytes(a) + QByteArray(1, '\0');
    QCOMPARE(r.out, expected);
}

void TestShellQuote::loginShell()
{
    QCOMPARE(QString::fromStdString(login_shell("squeue -u me")), QStringLiteral("bash -lc 'squeue -u me'"));
    QCOMPARE(QString::fromStdString(login_shell("echo 'x'")), QStringLiteral("bash -lc 'echo '\\''x'\\'''"));
    QCOMPARE(QString::fromStdString(login_shell("")), QStringLiteral("bash -lc ''"));
}

// bash -l resets PATH from /etc/profile, so these rows run without the PATH guard: no rm here.
void TestShellQuote::loginShellRunsQuotedCommand_data()
{
    addHostileRows(false);
}

void TestShellQuote::loginShellRunsQuotedCommand()
{
    // Two levels of quoting: the outer shell runs bash -lc, bash runs printf with the argument.
    QFETCH(QByteArray, arg);
    const std::string command = login_shell("printf %s " + shell_quote(arg.toStdString()));
    // A clean HOME so no personal profile prints anything.
    const ShellResult r = sh("HOME=/nonexistent " + command, false);
    QCOMPARE(r.code, 0);
    QCOMPARE(r.out, arg);
}

void TestShellQuote::nulBytesRejected()
{
    const std::string nul("a\0b", 3);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, shell_quote(nul));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, shell_quote(std::string(1, '\0')));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, shell_join({ "ok", nul }));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, login_shell(nul));
    try {
        shell_quote(nul);
    } catch (const std::invalid_argument& e) {
        QVERIFY(QString::fromUtf8(e.what()).contains(QStringLiteral("NUL")));
    }
}

QTEST_GUILESS_MAIN(TestShellQuote)
#include "tst_shell_quote.moc"

// Every command the README prints runs as printed, and the documentation's links lead somewhere. The test reads
// README.md, takes each line of a fenced code block whose first word (after an optional "$ " prompt) is `parallax-cli`
// or `parallax`, and runs it with bash in a scratch folder where those two names are the binaries just built and the
// repository's folders (docs/, validation/, presets/, ...) are reachable by their relative paths. A command must exit
// 0, or the code its trailing comment states ("# exit code 3").
//
// Markers, HTML comments on the line before a fenced block (invisible on GitHub):
//   <!-- readme-test: file NAME -->   the block is a file: written to NAME in the scratch folder first
//   <!-- readme-test: skip WHY -->    the block's commands are not run (they need a cluster, a display, ...)
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

namespace {

struct Command {
    int line = 0; // 1-based line of README.md where the command starts
    QString text; // as printed, continuation lines joined, the prompt removed
    int expected_exit = 0;
    bool gui = false; // runs `parallax` (the GUI), not the CLI
};

struct FileBlock {
    int line = 0;
    QString name;
    QByteArray content;
};

struct Readme {
    QList<Command> commands;
    QList<FileBlock> files;
    QStringList problems; // markers the test does not understand
};

const QRegularExpression kMarker(QStringLiteral(R"(^\s*<!--\s*readme-test:\s*(\S+)\s*(.*?)\s*-->\s*$)"));
const QRegularExpression kFence(QStringLiteral(R"(^\s*```)"));
const QRegularExpression kExpectedExit(QStringLiteral(R"(#.*\bexit code (\d+))"));

Readme parse_readme(const QString& path)
{
    Readme r;
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly | QIODevice::Text)) {
        r.problems << path + QStringLiteral(": cannot read");
        return r;
    }
    const QStringList lines = QString::fromUtf8(f.readAll()).split(u'\n');
    QString marker;
    QString marker_arg;
    for (int i = 0; i < lines.size(); ++i) {
        const QString& line = lines.at(i);
        if (const auto m = kMarker.match(line); m.hasMatch()) {
            marker = m.captured(1);
            marker_arg = m.captured(2);
            if (marker != QStringLiteral("skip") && marker != QStringLiteral("file"))
                r.problems << QStringLiteral("line %1: unknown marker '%2'").arg(i + 1).arg(marker);
            if (marker == QStringLiteral("file") && marker_arg.isEmpty())
                r.problems << QStringLiteral("line %1: 'file' needs a name").arg(i + 1);
            continue;
        }
        if (!kFence.match(line).hasMatch()) {
            if (!line.trimmed().isEmpty())
                marker.clear(); // a marker applies to the block right after it
            continue;
        }
        // A fenced block: lines up to the closing fence.
        const int first = i + 1;
        int end = first;
        while (end < lines.size() && !kFence.match(lines.at(end)).hasMatch())
            ++end;
        const QStringList block = lines.mid(first, end - first);
        if (marker == QStringLiteral("file")) {
            r.files.push_back({ first + 1, marker_arg, (block.join(u'\n') + u'\n').toUtf8() });
        } else if (marker != QStringLiteral("skip")) {
            for (int j = 0; j < block.size(); ++j) {
                QString text = block.at(j).trimmed();
                const int start = j;
                while (text.endsWith(u'\\') && j + 1 < block.size())
                    text = text.chopped(1) + u' ' + block.at(++j).trimmed();
                if (text.startsWith(QStringLiteral("$ ")))
                    text = text.mid(2).trimmed();
                const QString word = text.section(u' ', 0, 0);
                if (word != QStringLiteral("parallax-cli") && word != QStringLiteral("parallax"))
                    continue;
                Command c;
                c.line = first + start + 1;
                c.text = text;
                c.gui = word == QStringLiteral("parallax");
                if (const auto m = kExpectedExit.match(text); m.hasMatch())
                    c.expected_exit = m.captured(1).toInt();
                r.commands.push_back(c);
            }
        }
        marker.clear();
        i = end;
    }
    return r;
}

QString readme_path()
{
    return QStringLiteral(PARALLAX_SOURCE_DIR "/README.md");
}

} // namespace

class TestReadmeCommands : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void markersAreUnderstood();
    void linksResolve();
    void readmeLinksEveryDocsPage();
    void commands_data();
    void commands();

private:
    QTemporaryDir m_dir;
    QString m_work;
    QString m_bin;
    Readme m_readme;
};

void TestReadmeCommands::initTestCase()
{
    QVERIFY(m_dir.isValid());
    m_readme = parse_readme(readme_path());
    m_work = m_dir.filePath(QStringLiteral("work"));
    m_bin = m_dir.filePath(QStringLiteral("bin"));
    QVERIFY(QDir().mkpath(m_work));
    QVERIFY(QDir().mkpath(m_bin));
    // `parallax-cli` and `parallax` on PATH are the binaries of this build.
    QVERIFY(QFile::link(QStringLiteral(PARALLAX_CLI_PATH), m_bin + QStringLiteral("/parallax-cli")));
#ifdef PARALLAX_GUI_PATH
    QVERIFY(QFile::link(QStringLiteral(PARALLAX_GUI_PATH), m_bin + QStringLiteral("/parallax")));
#endif
    // The repository's files by their relative paths, as from a clone's root; what the commands write stays here.
    const QDir source(QStringLiteral(PARALLAX_SOURCE_DIR));
    for (const QFileInfo& e : source.entryInfoList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden)) {
        if (e.fileName() == QStringLiteral("build") || e.fileName() == QStringLiteral(".git"))
            continue;
        QVERIFY(QFile::link(e.absoluteFilePath(), m_work + u'/' + e.fileName()));
    }
    for (const FileBlock& f : m_readme.files) {
        const QString target = m_work + u'/' + f.name;
        QFile::remove(target); // a symlink of the same name would write into the repository
        QFile out(target);
        QVERIFY2(out.open(QIODevice::WriteOnly), qPrintable(target));
        out.write(f.content);
    }
}

void TestReadmeCommands::markersAreUnderstood()
{
    QVERIFY2(m_readme.problems.isEmpty(), qPrintable(m_readme.problems.join(u'\n')));
    // The README shows the CLI and the GUI at work; an empty list means the parsing broke, not the README.
    QVERIFY2(m_readme.commands.size() >= 5, qPrintable(QString::number(m_readme.commands.size())));
}

namespace {

// Pages that other branches add; a link to them may point nowhere until they are merged.
const QStringList kPendingPages = { QStringLiteral("docs/import.md") };

QStringList documentation_files()
{
    QStringList files { QStringLiteral("README.md") };
    const QDir docs(QStringLiteral(PARALLAX_SOURCE_DIR "/docs"));
    for (const QString& f : docs.entryList({ QStringLiteral("*.md") }, QDir::Files))
        files << QStringLiteral("docs/") + f;
    return files;
}

// Relative link targets of a Markdown file ([text](target) and ![alt](target)), without #anchors.
QStringList relative_links(const QString& text)
{
    static const QRegularExpression link(QStringLiteral(R"(\]\(([^)\s]+)\))"));
    QStringList out;
    for (auto it = link.globalMatch(text); it.hasNext();) {
        const QString target = it.next().captured(1).section(u'#', 0, 0);
        if (target.isEmpty() || target.contains(QStringLiteral("://")) || target.startsWith(QStringLiteral("mailto:")))
            continue;
        out << target;
    }
    return out;
}

QString read_source_file(const QString& relative)
{
    QFile f(QStringLiteral(PARALLAX_SOURCE_DIR "/") + relative);
    return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()) : QString();
}

} // namespace

void TestReadmeCommands::linksResolve()
{
    const QDir root(QStringLiteral(PARALLAX_SOURCE_DIR));
    QStringList broken;
    for (const QString& file : documentation_files()) {
        const QString dir = QFileInfo(file).path();
        for (const QString& target : relative_links(read_source_file(file))) {
            const QString resolved = QDir::cleanPath(dir + u'/' + target);
            if (!QFileInfo::exists(root.filePath(resolved)) && !kPendingPages.contains(resolved))
                broken << file + QStringLiteral(" -> ") + target;
        }
    }
    QVERIFY2(broken.isEmpty(), qPrintable(broken.join(u'\n')));
}

void TestReadmeCommands::readmeLinksEveryDocsPage()
{
    const QStringList links = relative_links(read_source_file(QStringLiteral("README.md")));
    QStringList missing;
    for (const QString& file : documentation_files())
        if (file != QStringLiteral("README.md") && !links.contains(file))
            missing << file;
    QVERIFY2(missing.isEmpty(), qPrintable(QStringLiteral("not linked from README.md: ") + missing.join(u' ')));
}

void TestReadmeCommands::commands_data()
{
    QTest::addColumn<QString>("command");
    QTest::addColumn<int>("expected_exit");
    QTest::addColumn<bool>("gui");
    for (const Command& c : m_readme.commands)
        QTest::addRow("README.md:%d %s", c.line, qPrintable(c.text.left(60))) << c.text << c.expected_exit << c.gui;
}

void TestReadmeCommands::commands()
{
    QFETCH(QString, command);
    QFETCH(int, expected_exit);
    QFETCH(bool, gui);
#ifndef PARALLAX_GUI_PATH
    if (gui)
        QSKIP("built without the GUI");
#else
    Q_UNUSED(gui);
#endif
    QProcess p;
    p.setWorkingDirectory(m_work);
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("PATH"), m_bin + u':' + env.value(QStringLiteral("PATH")));
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    p.setProcessEnvironment(env);
    p.start(QStringLiteral("bash"), { QStringLiteral("-c"), QStringLiteral("set -o pipefail; ") + command });
    QVERIFY2(p.waitForFinished(300000), qPrintable(command + QStringLiteral(": did not finish in 300 s")));
    const QString out = QString::fromUtf8(p.readAllStandardOutput()).right(2000);
    const QString err = QString::fromUtf8(p.readAllStandardError()).right(2000);
    QVERIFY2(p.exitStatus() == QProcess::NormalExit, qPrintable(command + QStringLiteral(": crashed\n") + err));
    QVERIFY2(p.exitCode() == expected_exit,
        qPrintable(QStringLiteral("%1\nexit %2, expected %3\nstdout: %4\nstderr: %5")
                       .arg(command)
                       .arg(p.exitCode())
                       .arg(expected_exit)
                       .arg(out, err)));
}

QTEST_GUILESS_MAIN(TestReadmeCommands)
#include "tst_readme_commands.moc"

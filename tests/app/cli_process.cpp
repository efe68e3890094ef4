#include "cli_process.hpp"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>

namespace parallax::test {

CliRun run_cli(const QStringList& args, const QProcessEnvironment& env)
{
    constexpr int kStartMs = 10000;
    constexpr int kFinishMs = 120000;
    QProcess p;
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(PARALLAX_CLI_PATH), args);
    CliRun r;
    if (!p.waitForStarted(kStartMs)) {
        r.crashed = true;
        return r;
    }
    p.closeWriteChannel();
    if (!p.waitForFinished(kFinishMs)) {
        p.kill();
        p.waitForFinished();
        r.crashed = true;
    }
    r.out = p.readAllStandardOutput();
    r.err = p.readAllStandardError();
    r.crashed = r.crashed || p.exitStatus() != QProcess::NormalExit;
    r.code = p.exitCode();
    return r;
}

QString write_test_file(const QString& dir, const QString& name, const QByteArray& bytes)
{
    const QString path = QDir(dir).filePath(name);
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate) || f.write(bytes) != bytes.size())
        qFatal("cannot write %s", qPrintable(path));
    return path;
}

} // namespace parallax::test

#pragma once
// parallax-cli run as a user runs it, for the CLI tests: no stdin, its own environment, a generous limit.
#include <QByteArray>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>

namespace parallax::test {

struct CliRun {
    int code = -1;
    QByteArray out;
    QByteArray err;
    bool crashed = false; // did not start, crashed, or was killed after two minutes
};

CliRun run_cli(const QStringList& args, const QProcessEnvironment& env);

// Writes `bytes` to dir/name (creating the folders); a test cannot go on without its input, so a failure aborts.
QString write_test_file(const QString& dir, const QString& name, const QByteArray& bytes);

} // namespace parallax::test

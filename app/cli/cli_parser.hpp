#pragma once
// QCommandLineParser set up the way every parallax-cli command wants it: --help prints and exits 0,
// a parse error exits 2 (bad input) rather than QCommandLineParser's own exit(1).
#include <QCommandLineParser>

#include <optional>

namespace parallax::cli {

class CommandParser {
public:
    CommandParser(const QString& description, const QString& positional_name, const QString& positional_help);
    QCommandLineParser& parser() { return m_parser; }
    // Returns an exit code when the command should stop now (help printed, or bad arguments).
    std::optional<int> parse(const QStringList& args, int min_positional, int max_positional);
    QString positional(int i) const;

private:
    QCommandLineParser m_parser;
};

} // namespace parallax::cli

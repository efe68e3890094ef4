#pragma once
// QCommandLineParser set up the way every parallax-cli command wants it: --help prints and exits 0,
// a parse error exits 2 (bad input) rather than QCommandLineParser's own exit(1), and the usage line
// names the command.
#include <QCommandLineParser>

#include <optional>

namespace parallax::cli {

class CommandParser {
public:
    CommandParser(const QString& description, const QString& positional_name, const QString& positional_help);
    QCommandLineParser& parser() { return m_parser; }
    const QCommandLineParser& parser() const { return m_parser; }
    // --csv: the command's table as CSV (core/io/csv_writer.hpp); parse() refuses it next to --json.
    void add_csv_option();
    bool csv() const { return m_parser.isSet(QStringLiteral("csv")); }
    // Returns an exit code when the command should stop now (help printed, or bad arguments).
    std::optional<int> parse(const QStringList& args, int min_positional, int max_positional);
    QString positional(int i) const;
    // QCommandLineParser's help with the usage line naming the command: "Usage: parallax-cli search
    // [options] SCENARIO" (Qt would name only the executable).
    QString help_text() const;

private:
    QCommandLineParser m_parser;
    bool m_has_csv = false;
    QString m_command; // "search"; the last word of args[0] ("parallax-cli search")
};

} // namespace parallax::cli

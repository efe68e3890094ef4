#include "cli/cli_parser.hpp"

#include "cli/cli_common.hpp"
#include "io/input_limits.hpp"

#include <cstdio>

namespace parallax::cli {

CommandParser::CommandParser(const QString& description, const QString& positional_name, const QString& positional_help)
{
    m_parser.setApplicationDescription(description);
    m_parser.addHelpOption();
    // Read by main() before the command runs (cli_logging.hpp); declared here so that every command takes it.
    m_parser.addOption({ { QStringLiteral("verbose"), QStringLiteral("V") },
        QStringLiteral(
            "Debug messages of every parallax.* logging category on stderr (QT_LOGGING_RULES overrides).") });
    if (!positional_name.isEmpty())
        m_parser.addPositionalArgument(positional_name, positional_help);
}

std::optional<int> CommandParser::parse(const QStringList& args, int min_positional, int max_positional)
{
    if (!args.isEmpty())
        m_command = args.first().section(QLatin1Char(' '), -1);
    if (!m_parser.parse(args)) {
        print_err(
            "parallax-cli " + m_command.toStdString() + ": " + printable_rule(m_parser.errorText().toStdString()));
        return kBadInput;
    }
    if (m_parser.isSet(QStringLiteral("help"))) {
        std::fputs(help_text().toUtf8().constData(), stdout);
        return kOk;
    }
    if (m_has_csv && m_parser.isSet(QStringLiteral("csv")) && m_parser.optionNames().contains(QStringLiteral("json"))) {
        print_err("parallax-cli " + m_command.toStdString() + ": --csv and --json are exclusive: choose one output");
        return kBadInput;
    }
    const int n = static_cast<int>(m_parser.positionalArguments().size());
    if (n < min_positional || n > max_positional) {
        print_err(
            "parallax-cli " + m_command.toStdString() + ": wrong number of arguments\n" + help_text().toStdString());
        return kBadInput;
    }
    return std::nullopt;
}

void CommandParser::add_csv_option()
{
    m_parser.addOption({ QStringLiteral("csv"), QStringLiteral("Print the table as CSV (RFC 4180, a header row).") });
    m_has_csv = true;
}

QString CommandParser::help_text() const
{
    QString text = m_parser.helpText();
    // The first line is "Usage: EXECUTABLE [options] ...": the executable becomes "parallax-cli COMMAND".
    static const QString kUsage = QStringLiteral("Usage: ");
    if (text.startsWith(kUsage)) {
        const qsizetype end = text.indexOf(QLatin1Char(' '), kUsage.size());
        if (end > 0)
            text.replace(kUsage.size(), end - kUsage.size(), QStringLiteral("parallax-cli ") + m_command);
    }
    return text;
}

QString CommandParser::positional(int i) const
{
    const QStringList p = m_parser.positionalArguments();
    return i < p.size() ? p.at(i) : QString();
}

} // namespace parallax::cli

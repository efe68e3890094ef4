#include "cli/cli_parser.hpp"

#include "cli/cli_common.hpp"

#include <cstdio>

namespace parallax::cli {

CommandParser::CommandParser(const QString& description, const QString& positional_name, const QString& positional_help)
{
    m_parser.setApplicationDescription(description);
    m_parser.addHelpOption();
    if (!positional_name.isEmpty())
        m_parser.addPositionalArgument(positional_name, positional_help);
}

std::optional<int> CommandParser::parse(const QStringList& args, int min_positional, int max_positional)
{
    if (!m_parser.parse(args)) {
        print_err("parallax-cli: " + m_parser.errorText().toStdString());
        return kBadInput;
    }
    if (m_parser.isSet(QStringLiteral("help"))) {
        std::fputs(m_parser.helpText().toUtf8().constData(), stdout);
        return kOk;
    }
    const int n = static_cast<int>(m_parser.positionalArguments().size());
    if (n < min_positional || n > max_positional) {
        print_err("parallax-cli: wrong number of arguments\n" + m_parser.helpText().toStdString());
        return kBadInput;
    }
    return std::nullopt;
}

QString CommandParser::positional(int i) const
{
    const QStringList p = m_parser.positionalArguments();
    return i < p.size() ? p.at(i) : QString();
}

} // namespace parallax::cli

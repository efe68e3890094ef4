#include "cli/cli_logging.hpp"

namespace parallax::cli {

Q_LOGGING_CATEGORY(lcCli, "parallax.cli", QtInfoMsg)

void setup_logging(bool verbose)
{
    // Every line names its category, so that a user knows which QT_LOGGING_RULES to write.
    qSetMessagePattern(QStringLiteral("%{if-category}%{category}: %{endif}%{message}"));
    if (verbose) // Qt applies QT_LOGGING_RULES after these rules: the environment has the last word
        QLoggingCategory::setFilterRules(QStringLiteral("parallax.*.debug=true"));
}

} // namespace parallax::cli

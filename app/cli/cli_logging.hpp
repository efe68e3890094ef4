#pragma once
// parallax-cli's logging: the parallax.cli category and --verbose. Debug output of every parallax.*
// category (the CLI's, remote's SSH, SLURM, run and store categories, libssh's own log) goes to stderr
// with --verbose; QT_LOGGING_RULES, read after, still decides (docs/cli.md#logging).
#include <QLoggingCategory>

namespace parallax::cli {

Q_DECLARE_LOGGING_CATEGORY(lcCli) // parallax.cli: what a command read, chose and did

// Before any command runs: the message format (unless QT_MESSAGE_PATTERN sets one) and, with `verbose`,
// the rule that turns on parallax.*'s debug messages.
void setup_logging(bool verbose);

} // namespace parallax::cli

#pragma once
// The logging categories of remote/ (QLoggingCategory): debug output is off unless asked for
// (parallax-cli --verbose, or QT_LOGGING_RULES="parallax.remote.ssh.debug=true"); warnings, such as a
// failed step of a dispatch, are on. docs/cli.md#logging lists them.
#include <QLoggingCategory>

namespace parallax::remote {

Q_DECLARE_LOGGING_CATEGORY(lcSsh) // parallax.remote.ssh: connections, authentication, libssh's own log
Q_DECLARE_LOGGING_CATEGORY(lcSlurm) // parallax.remote.slurm: sbatch, squeue, scancel
Q_DECLARE_LOGGING_CATEGORY(lcDirect) // parallax.remote.direct: the plain-hosts launcher
Q_DECLARE_LOGGING_CATEGORY(lcRun) // parallax.remote.run: dispatching and following runs
Q_DECLARE_LOGGING_CATEGORY(lcStore) // parallax.store: the run store

} // namespace parallax::remote

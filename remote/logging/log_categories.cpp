#include "logging/log_categories.hpp"

namespace parallax::remote {

// QtInfoMsg: debug messages stay off until a rule turns them on; info, warnings and errors are shown.
Q_LOGGING_CATEGORY(lcSsh, "parallax.remote.ssh", QtInfoMsg)
Q_LOGGING_CATEGORY(lcSlurm, "parallax.remote.slurm", QtInfoMsg)
Q_LOGGING_CATEGORY(lcDirect, "parallax.remote.direct", QtInfoMsg)
Q_LOGGING_CATEGORY(lcRun, "parallax.remote.run", QtInfoMsg)
Q_LOGGING_CATEGORY(lcStore, "parallax.store", QtInfoMsg)

} // namespace parallax::remote

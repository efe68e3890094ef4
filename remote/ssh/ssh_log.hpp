#pragma once
// libssh's own log, routed into the parallax.remote.ssh category: its verbosity follows what the
// category lets through (debug on: libssh's protocol messages; off: libssh stays silent), and every
// message it writes arrives as qCDebug(lcSsh) instead of on stderr.
#include <libssh/libssh.h>

namespace parallax::remote {

// libssh's verbosity for the category's current rules (SSH_LOG_PROTOCOL or SSH_LOG_NOLOG).
int libssh_verbosity();

// Installs the callback (once per process) and sets the session's verbosity.
void route_libssh_log(ssh_session session);

} // namespace parallax::remote

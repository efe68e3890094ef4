#include "ssh/ssh_log.hpp"

#include "logging/log_categories.hpp"

#include <libssh/callbacks.h>

#include <mutex>

namespace parallax::remote {

namespace {

// libssh calls this from whichever thread runs the session; qCDebug is thread-safe.
void to_category(int /*priority*/, const char* /*function*/, const char* buffer, void* /*userdata*/)
{
    // `buffer` already starts with the libssh function's name ("ssh_connect: ...").
    qCDebug(lcSsh).noquote() << "libssh:" << buffer;
}

} // namespace

int libssh_verbosity()
{
    return lcSsh().isDebugEnabled() ? SSH_LOG_PROTOCOL : SSH_LOG_NOLOG;
}

void route_libssh_log(ssh_session session)
{
    static std::once_flag once;
    std::call_once(once, [] { ssh_set_log_callback(&to_category); });
    const int verbosity = libssh_verbosity();
    // The global level covers messages written before a session exists; the option the session's own.
    ssh_set_log_level(verbosity);
    ssh_options_set(session, SSH_OPTIONS_LOG_VERBOSITY, &verbosity);
}

} // namespace parallax::remote

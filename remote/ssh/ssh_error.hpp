#pragma once
// What can go wrong on an SSH connection, sorted by what the caller should do about it.
#include <stdexcept>
#include <string>

namespace parallax::remote {

enum class SshErrorKind : unsigned char {
    connect, // could not reach the server (refused, unreachable, name not resolved)
    host_key_unknown, // the host is not in known_hosts and the user did not accept its key
    host_key_changed, // known_hosts holds a different key of the same type: possible attack, refused
    host_key_other_type, // known_hosts holds only keys of other types for this host: refused
    auth, // every authentication method failed
    timeout, // an operation took longer than allowed
    cancelled, // the caller cancelled
    disconnected, // an established connection went away
    channel, // the server refused a channel or a command could not be started
    sftp, // a file operation failed (the message names the path)
    config, // bad settings (ssh config file, key file path)
    remote_command, // a command on the cluster ran and failed (mkdir refused, scancel error, ...)
};

const char* to_string(SshErrorKind kind);

class SshError : public std::runtime_error {
public:
    SshError(SshErrorKind kind, const std::string& message)
        : std::runtime_error(message)
        , m_kind(kind)
    {
    }
    SshErrorKind kind() const { return m_kind; }
    // The network or the server went away: reconnecting and retrying may succeed. Host-key and
    // authentication refusals never are: retrying cannot change the answer.
    bool transient() const
    {
        return m_kind == SshErrorKind::connect || m_kind == SshErrorKind::timeout
            || m_kind == SshErrorKind::disconnected;
    }

private:
    SshErrorKind m_kind;
};

} // namespace parallax::remote

#pragma once
// One libssh session: connect with strict host-key checking, authenticate (agent, then key file, then
// keyboard-interactive), run commands on channels and move files over SFTP. Many channels share the
// session, so a 2FA cluster asks once per session.
//
// libssh sessions are not thread-safe: a session belongs to the thread that created it and every call
// must come from that thread (RemoteWorker owns one per host on its own QThread). Calls block; every
// blocking step is bounded by the target's timeouts and checks the cancel flag between steps.
#include "jobs/cancel_token.hpp"
#include "ssh/ssh_error.hpp"
#include "ssh/ssh_interaction.hpp"
#include "ssh/ssh_target.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

struct ssh_session_struct;
struct sftp_session_struct;
struct ssh_callbacks_struct;

namespace parallax::remote {

struct ExecOptions {
    std::chrono::milliseconds timeout { std::chrono::minutes(2) };
    std::string stdin_data; // written, then EOF; empty: EOF at once
    // Streamed output as it arrives (optional); the result also holds it, up to max_capture_bytes.
    std::function<void(std::string_view)> on_stdout;
    std::function<void(std::string_view)> on_stderr;
    std::size_t max_capture_bytes = 16u << 20;
    CancelToken cancel;
};

struct ExecResult {
    std::string out;
    std::string err;
    // Absent when the command was killed by a signal (then exit_signal names it) or the server sent no status.
    std::optional<int> exit_status;
    std::string exit_signal; // "TERM", "KILL", ... without "SIG"
    bool ok() const { return exit_status && *exit_status == 0; }
};

class SshSession {
public:
    SshSession();
    ~SshSession();
    SshSession(const SshSession&) = delete;
    SshSession& operator=(const SshSession&) = delete;

    // Connects, verifies the host key against target.known_hosts and authenticates. Throws SshError.
    void connect(const SshTarget& target, SshInteraction& interaction, const CancelToken& cancel = {});
    void disconnect();
    bool connected() const;
    const SshTarget& target() const { return m_target; }
    // The authentication method that succeeded: "agent", "publickey", "keyboard-interactive".
    const std::string& auth_method() const { return m_auth_method; }
    std::string label() const { return m_target.label(); }

    // Runs `command` through the remote user's shell; stdout and stderr are read in the same loop (reading
    // one alone deadlocks when the other fills its window). Throws SshError on timeout, cancellation or a
    // lost connection; a command that ran and failed is a result with its exit status, not an error.
    ExecResult exec(const std::string& command, const ExecOptions& options = {});

    // SFTP. Paths are remote paths as the server sees them (absolute, or relative to the login folder).
    // `mode` as for open(2): the server's umask narrows it. A mode without group/other bits is set exactly.
    void upload(const std::string& remote_path, std::string_view data, int mode = 0644);
    std::string download(const std::string& remote_path, std::size_t max_bytes = 256u << 20);
    // Up to max_bytes of the file from `offset`; nullopt when the file does not exist (yet).
    std::optional<std::string> read_from(const std::string& remote_path, std::uint64_t offset, std::size_t max_bytes);
    // Size in bytes, or nullopt when the file does not exist.
    std::optional<std::uint64_t> file_size(const std::string& remote_path);

    // Transfers stop at their next chunk once this token is cancelled (SshConnection::run sets it per call).
    void set_cancel(const CancelToken& cancel) { m_cancel = cancel; }

    // An SSH_MSG_IGNORE packet: keeps NAT/firewall state alive and finds a dead connection (libssh 0.10 has
    // no keepalive option). Throws SshError(disconnected) when the connection is gone.
    void send_keepalive();

private:
    void connect_cancellable(const CancelToken& cancel);
    void throw_if_cancelled(const char* what, const std::string& path) const;
    void verify_host_key(SshInteraction& interaction);
    void authenticate(SshInteraction& interaction, const CancelToken& cancel);
    bool try_key_file(const std::string& path, SshInteraction& interaction, const CancelToken& cancel);
    // One authentication request, resumed until answered, cancelled or past the I/O timeout.
    int auth_request(const CancelToken& cancel, const std::function<int()>& request);
    // Waits up to one poll slice for the server to send something.
    void wait_for_socket() const;
    bool try_keyboard_interactive(SshInteraction& interaction, const CancelToken& cancel);
    sftp_session_struct* sftp();
    [[noreturn]] void fail(SshErrorKind kind, const std::string& what);
    [[noreturn]] void fail_sftp(const std::string& what, const std::string& path);
    SshErrorKind io_error_kind() const;

    struct CallbacksDeleter {
        void operator()(ssh_callbacks_struct* c) const;
    };
    ssh_session_struct* m_session = nullptr;
    std::unique_ptr<ssh_callbacks_struct, CallbacksDeleter> m_callbacks;
    sftp_session_struct* m_sftp = nullptr;
    SshTarget m_target;
    std::string m_auth_method;
    CancelToken m_cancel;
};

// "SHA256:..." of a public key file's key (tests compare with ssh-keygen -lf).
std::string public_key_file_fingerprint(const std::string& path);

} // namespace parallax::remote

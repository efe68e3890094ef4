#include "ssh/ssh_session.hpp"

#include "logging/log_categories.hpp"
#include "ssh/ssh_log.hpp"

#include <libssh/callbacks.h>
#include <libssh/libssh.h>
#include <libssh/sftp.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <memory>
#include <poll.h>
#include <sys/stat.h>
#include <thread>
#include <vector>

namespace parallax::remote {

const char* to_string(SshErrorKind kind)
{
    switch (kind) {
    case SshErrorKind::connect:
        return "connect";
    case SshErrorKind::host_key_unknown:
        return "host-key-unknown";
    case SshErrorKind::host_key_changed:
        return "host-key-changed";
    case SshErrorKind::host_key_other_type:
        return "host-key-other-type";
    case SshErrorKind::auth:
        return "auth";
    case SshErrorKind::timeout:
        return "timeout";
    case SshErrorKind::cancelled:
        return "cancelled";
    case SshErrorKind::disconnected:
        return "disconnected";
    case SshErrorKind::channel:
        return "channel";
    case SshErrorKind::sftp:
        return "sftp";
    case SshErrorKind::config:
        return "config";
    case SshErrorKind::remote_command:
        return "remote-command";
    }
    return "unknown";
}

namespace {

// SFTP requests of 32 KiB: every server accepts them (OpenSSH allows 256 KiB, some appliances less).
constexpr std::size_t kSftpChunkBytes = 32 * 1024;
// How long one wait for channel data lasts before the loop checks the deadline and the cancel flag.
constexpr int kChannelPollMs = 50;
// The same while connecting: how soon a cancel interrupts a server that does not answer.
constexpr int kConnectPollMs = 20;

struct KeyDeleter {
    void operator()(ssh_key k) const { ssh_key_free(k); }
};
using KeyPtr = std::unique_ptr<ssh_key_struct, KeyDeleter>;

std::string expand_home(const std::string& path)
{
    if (path.rfind("~/", 0) == 0) {
        const char* home = std::getenv("HOME");
        if (home)
            return std::string(home) + path.substr(1);
    }
    return path;
}

std::string default_known_hosts()
{
    const char* home = std::getenv("HOME");
    return std::string(home ? home : ".") + "/.ssh/known_hosts";
}

std::string fingerprint_of(ssh_key key)
{
    unsigned char* hash = nullptr;
    size_t len = 0;
    if (ssh_get_publickey_hash(key, SSH_PUBLICKEY_HASH_SHA256, &hash, &len) != SSH_OK)
        return "(no fingerprint)";
    char* text = ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash, len);
    ssh_clean_pubkey_hash(&hash);
    std::string out = text ? text : "(no fingerprint)";
    ssh_string_free_char(text);
    return out;
}

// The host as known_hosts spells it: "host" on port 22, "[host]:port" otherwise (OpenSSH's rule).
std::string known_hosts_name(const std::string& host, unsigned port)
{
    if (port == 0 || port == 22)
        return host;
    return "[" + host + "]:" + std::to_string(port);
}

// Every key stored for `host` in `file` (hashed names included), for the changed/other-type messages.
void collect_known(const std::string& file, const std::string& host, std::vector<HostKeyInfo::Known>& out)
{
    std::ifstream in(file);
    std::string line;
    while (std::getline(in, line)) {
        const auto first = line.find_first_not_of(" \t");
        if (first == std::string::npos || line[first] == '#')
            continue;
        ssh_knownhosts_entry* entry = nullptr;
        if (ssh_known_hosts_parse_line(host.c_str(), line.c_str() + first, &entry) == SSH_OK && entry) {
            if (entry->publickey)
                out.push_back(
                    { ssh_key_type_to_char(ssh_key_type(entry->publickey)), fingerprint_of(entry->publickey), file });
        }
        SSH_KNOWNHOSTS_ENTRY_FREE(entry);
    }
}

// libssh asks for passphrases of its own identities (publickey_auto) through this callback.
int auth_callback(const char* prompt, char* buf, size_t len, int, int, void* userdata)
{
    auto* interaction = static_cast<SshInteraction*>(userdata);
    if (!interaction || len == 0)
        return SSH_ERROR;
    std::optional<Secret> secret = interaction->key_passphrase(prompt ? prompt : "a private key");
    if (!secret)
        return SSH_ERROR;
    const std::string_view value(secret->c_str());
    if (value.size() + 1 > len)
        return SSH_ERROR;
    std::memcpy(buf, value.data(), value.size());
    buf[value.size()] = '\0';
    secret->wipe();
    return SSH_OK;
}

struct ChannelState {
    std::optional<int> exit_status;
    std::string exit_signal;
    bool closed = false;
};

void on_exit_status(ssh_session, ssh_channel, int status, void* userdata)
{
    static_cast<ChannelState*>(userdata)->exit_status = status;
}

void on_exit_signal(ssh_session, ssh_channel, const char* signal, int, const char*, const char*, void* userdata)
{
    static_cast<ChannelState*>(userdata)->exit_signal = signal ? signal : "";
}

void on_close(ssh_session, ssh_channel, void* userdata)
{
    static_cast<ChannelState*>(userdata)->closed = true;
}

struct ChannelCloser {
    void operator()(ssh_channel c) const
    {
        if (!ssh_channel_is_closed(c))
            ssh_channel_close(c);
        ssh_channel_free(c);
    }
};
using ChannelPtr = std::unique_ptr<ssh_channel_struct, ChannelCloser>;

struct SftpFileCloser {
    void operator()(sftp_file f) const { sftp_close(f); }
};
using SftpFilePtr = std::unique_ptr<sftp_file_struct, SftpFileCloser>;

struct SftpAttrFree {
    void operator()(sftp_attributes a) const { sftp_attributes_free(a); }
};

} // namespace

void SshSession::CallbacksDeleter::operator()(ssh_callbacks_struct* c) const
{
    delete c;
}

SshSession::SshSession() = default;

SshSession::~SshSession()
{
    disconnect();
}

void SshSession::disconnect()
{
    if (m_sftp) {
        sftp_free(m_sftp);
        m_sftp = nullptr;
    }
    if (m_session) {
        if (ssh_is_connected(m_session))
            ssh_disconnect(m_session);
        ssh_free(m_session);
        m_session = nullptr;
    }
    m_auth_method.clear();
}

bool SshSession::connected() const
{
    return m_session && ssh_is_connected(m_session);
}

void SshSession::fail(SshErrorKind kind, const std::string& what)
{
    std::string detail = m_session ? ssh_get_error(m_session) : "";
    std::string msg = m_target.label() + ": " + what;
    if (!detail.empty())
        msg += ": " + detail;
    qCDebug(lcSsh).noquote() << "failed:" << QString::fromStdString(msg);
    throw SshError(kind, msg);
}

SshErrorKind SshSession::io_error_kind() const
{
    return connected() ? SshErrorKind::channel : SshErrorKind::disconnected;
}

void SshSession::connect(const SshTarget& target, SshInteraction& interaction, const CancelToken& cancel)
{
    disconnect();
    m_target = target;
    if (target.host.empty())
        throw SshError(SshErrorKind::config, "no host given");
    m_session = ssh_new();
    if (!m_session)
        throw SshError(SshErrorKind::config, "libssh could not create a session");
    route_libssh_log(m_session);

    // Options: mind the types (ssh_options_set: port is unsigned int*, timeout is long*).
    ssh_options_set(m_session, SSH_OPTIONS_HOST, target.host.c_str());
    bool process_config = false; // parsed explicitly below when asked, never behind the user's back
    ssh_options_set(m_session, SSH_OPTIONS_PROCESS_CONFIG, &process_config);
    if (target.use_ssh_config) {
        const std::string file = expand_home(target.ssh_config_file);
        if (!file.empty() && !std::filesystem::exists(file))
            throw SshError(SshErrorKind::config, "ssh config file " + file + " does not exist");
        if (ssh_options_parse_config(m_session, file.empty() ? nullptr : file.c_str()) != SSH_OK)
            fail(SshErrorKind::config, "cannot read ssh config " + (file.empty() ? "~/.ssh/config" : file));
    }
    // Explicit settings win over the config file (as `ssh -p` beats Port).
    if (target.port != 0) {
        unsigned int port = target.port;
        ssh_options_set(m_session, SSH_OPTIONS_PORT, &port);
    }
    if (!target.user.empty())
        ssh_options_set(m_session, SSH_OPTIONS_USER, target.user.c_str());
    long timeout_s = std::max<long>(1, static_cast<long>((target.io_timeout.count() + 999) / 1000));
    long connect_timeout_s = std::max<long>(1, static_cast<long>((target.connect_timeout.count() + 999) / 1000));
    ssh_options_set(m_session, SSH_OPTIONS_TIMEOUT, &connect_timeout_s);
    int nodelay = 1; // without it a 1 MiB SFTP upload took 1 s instead of 10 ms
    ssh_options_set(m_session, SSH_OPTIONS_NODELAY, &nodelay);
    const std::string known_hosts
        = target.known_hosts.empty() ? default_known_hosts() : expand_home(target.known_hosts);
    ssh_options_set(m_session, SSH_OPTIONS_KNOWNHOSTS, known_hosts.c_str());
    if (!target.global_known_hosts.empty())
        ssh_options_set(m_session, SSH_OPTIONS_GLOBAL_KNOWNHOSTS, expand_home(target.global_known_hosts).c_str());
    m_target.known_hosts = known_hosts;
    // The effective user and port (after the config file) for labels and known_hosts names.
    char* user = nullptr;
    if (ssh_options_get(m_session, SSH_OPTIONS_USER, &user) == SSH_OK && user) {
        m_target.user = user;
        ssh_string_free_char(user);
    }
    unsigned int effective_port = 22;
    ssh_options_get_port(m_session, &effective_port);
    m_target.port = effective_port;

    // Passphrases of libssh's own identities come from the interaction, like those of key_file.
    m_callbacks.reset(new ssh_callbacks_struct {});
    m_callbacks->userdata = &interaction;
    m_callbacks->auth_function = auth_callback;
    ssh_callbacks_init(m_callbacks.get());
    ssh_set_callbacks(m_session, m_callbacks.get());
    if (!target.use_agent) // publickey_auto would otherwise still ask $SSH_AUTH_SOCK
        ssh_options_set(m_session, SSH_OPTIONS_IDENTITY_AGENT, "/dev/null");

    if (cancel.cancelled())
        throw SshError(SshErrorKind::cancelled, m_target.label() + ": cancelled");
    qCDebug(lcSsh).noquote() << "connecting to" << QString::fromStdString(m_target.label());
    connect_cancellable(cancel);
    // From here on blocking protocol steps use the (longer) I/O timeout.
    ssh_options_set(m_session, SSH_OPTIONS_TIMEOUT, &timeout_s);
    try {
        if (cancel.cancelled()) // before asking anyone anything
            throw SshError(SshErrorKind::cancelled, m_target.label() + ": cancelled");
        verify_host_key(interaction);
        authenticate(interaction, cancel);
    } catch (...) {
        m_callbacks->userdata = nullptr;
        disconnect();
        throw;
    }
    m_callbacks->userdata = nullptr; // the interaction is the caller's; only authentication uses it
}

void SshSession::connect_cancellable(const CancelToken& cancel)
{
    // Non-blocking, polled in short slices: a server that accepts the TCP connection but never speaks SSH (a
    // hung sshd, a firewall's tarpit) would otherwise hold the thread for the whole connect timeout, and the
    // app's shutdown with it. libssh enforces no timeout in this mode; the deadline below does.
    const auto deadline = std::chrono::steady_clock::now() + m_target.connect_timeout;
    ssh_set_blocking(m_session, 0);
    int rc = ssh_connect(m_session);
    while (rc == SSH_AGAIN) {
        if (cancel.cancelled())
            throw SshError(SshErrorKind::cancelled, m_target.label() + ": cancelled while connecting");
        if (std::chrono::steady_clock::now() >= deadline)
            throw SshError(SshErrorKind::timeout,
                m_target.label() + ": cannot connect: no SSH answer within "
                    + std::to_string(m_target.connect_timeout.count()) + " ms");
        wait_for_socket();
        rc = ssh_connect(m_session);
    }
    ssh_set_blocking(m_session, 1);
    if (rc != SSH_OK) {
        const std::string detail = ssh_get_error(m_session);
        const bool timed_out
            = detail.find("imeout") != std::string::npos || detail.find("timed out") != std::string::npos;
        fail(timed_out ? SshErrorKind::timeout : SshErrorKind::connect, "cannot connect");
    }
}

void SshSession::wait_for_socket() const
{
    const socket_t fd = ssh_get_fd(m_session);
    if (fd == SSH_INVALID_SOCKET) {
        std::this_thread::sleep_for(std::chrono::milliseconds(kConnectPollMs));
        return;
    }
    pollfd p { fd, POLLIN, 0 };
    ::poll(&p, 1, kConnectPollMs);
}

namespace {

// Puts a session in non-blocking mode for one scope and back, also when the scope is left by an exception.
class NonBlockingScope {
public:
    explicit NonBlockingScope(ssh_session s)
        : m_session(s)
    {
        ssh_set_blocking(m_session, 0);
    }
    ~NonBlockingScope() { ssh_set_blocking(m_session, 1); }
    NonBlockingScope(const NonBlockingScope&) = delete;
    NonBlockingScope& operator=(const NonBlockingScope&) = delete;

private:
    ssh_session m_session;
};

} // namespace

int SshSession::auth_request(const CancelToken& cancel, const std::function<int()>& request)
{
    // Polled like the connect: a server that finishes the key exchange and then stops answering (an
    // overloaded login node, a PAM module waiting on a dead LDAP server) would otherwise hold the thread for
    // the whole I/O timeout, and a cancel (closing the app) with it. libssh resumes a request that returned
    // SSH_AUTH_AGAIN when it is called again with the same arguments.
    const auto deadline = std::chrono::steady_clock::now() + m_target.io_timeout;
    NonBlockingScope non_blocking(m_session);
    int rc = request();
    while (rc == SSH_AUTH_AGAIN) {
        if (cancel.cancelled())
            throw SshError(SshErrorKind::cancelled, m_target.label() + ": cancelled while authenticating");
        if (std::chrono::steady_clock::now() >= deadline)
            throw SshError(SshErrorKind::timeout,
                m_target.label() + ": the server did not answer the authentication request within "
                    + std::to_string(m_target.io_timeout.count()) + " ms");
        wait_for_socket();
        rc = request();
    }
    return rc;
}

void SshSession::verify_host_key(SshInteraction& interaction)
{
    ssh_key raw = nullptr;
    if (ssh_get_server_publickey(m_session, &raw) != SSH_OK)
        fail(SshErrorKind::connect, "the server sent no host key");
    KeyPtr key(raw);
    HostKeyInfo info;
    char* host = nullptr;
    ssh_options_get(m_session, SSH_OPTIONS_HOST, &host);
    info.host = known_hosts_name(host ? host : m_target.host, m_target.port);
    ssh_string_free_char(host);
    info.key_type = ssh_key_type_to_char(ssh_key_type(key.get()));
    info.fingerprint = fingerprint_of(key.get());
    info.known_hosts_file = m_target.known_hosts;

    const ssh_known_hosts_e state = ssh_session_is_known_server(m_session);
    switch (state) {
    case SSH_KNOWN_HOSTS_OK:
        return;
    case SSH_KNOWN_HOSTS_CHANGED:
    case SSH_KNOWN_HOSTS_OTHER: {
        collect_known(m_target.known_hosts, info.host, info.known);
        collect_known(
            m_target.global_known_hosts.empty() ? "/etc/ssh/ssh_known_hosts" : expand_home(m_target.global_known_hosts),
            info.host, info.known);
        std::string stored;
        for (const auto& k : info.known)
            stored += "\n  stored:    " + k.key_type + " " + k.fingerprint + "  (" + k.file + ")";
        const bool changed = state == SSH_KNOWN_HOSTS_CHANGED;
        const std::string msg = m_target.label() + ": "
            + (changed ? "REFUSED: the host key of " + info.host + " has CHANGED."
                       : "REFUSED: " + info.host + " presented a key of a type that known_hosts does not hold for it.")
            + "\n  presented: " + info.key_type + " " + info.fingerprint + stored
            + "\nSomeone may be intercepting the connection (man-in-the-middle), or the host was reinstalled. "
              "Parallax will not connect and will not replace the stored key. If the change is expected, confirm "
              "the new fingerprint with the cluster's administrators, then remove the old entry with: ssh-keygen -R '"
            + info.host + "' -f '" + m_target.known_hosts + "'";
        interaction.host_key_refused(info, changed, msg);
        throw SshError(changed ? SshErrorKind::host_key_changed : SshErrorKind::host_key_other_type, msg);
    }
    case SSH_KNOWN_HOSTS_NOT_FOUND:
    case SSH_KNOWN_HOSTS_UNKNOWN: {
        if (!interaction.confirm_unknown_host(info))
            throw SshError(SshErrorKind::host_key_unknown,
                m_target.label() + ": the host key of " + info.host + " (" + info.key_type + " " + info.fingerprint
                    + ") is not in " + m_target.known_hosts + " and was not accepted");
        std::error_code ec;
        const auto dir = std::filesystem::path(m_target.known_hosts).parent_path();
        if (!dir.empty() && !std::filesystem::exists(dir, ec)) {
            std::filesystem::create_directories(dir, ec);
            ::chmod(dir.c_str(), 0700);
        }
        if (ssh_session_update_known_hosts(m_session) != SSH_OK)
            fail(SshErrorKind::config, "cannot write " + m_target.known_hosts);
        return;
    }
    case SSH_KNOWN_HOSTS_ERROR:
        break;
    }
    fail(SshErrorKind::config, "cannot check the host key against " + m_target.known_hosts);
}

bool SshSession::try_key_file(const std::string& path, SshInteraction& interaction, const CancelToken& cancel)
{
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        return false;
    ssh_key raw = nullptr;
    int rc = ssh_pki_import_privkey_file(path.c_str(), nullptr, nullptr, nullptr, &raw);
    if (rc != SSH_OK) {
        // Encrypted (or unreadable): ask for the passphrase, held only for this call.
        std::optional<Secret> passphrase = interaction.key_passphrase(path);
        if (!passphrase)
            return false;
        rc = ssh_pki_import_privkey_file(path.c_str(), passphrase->c_str(), nullptr, nullptr, &raw);
        passphrase->wipe();
        if (rc != SSH_OK)
            return false;
    }
    KeyPtr key(raw);
    return auth_request(cancel, [&] { return ssh_userauth_publickey(m_session, nullptr, key.get()); })
        == SSH_AUTH_SUCCESS;
}

bool SshSession::try_keyboard_interactive(SshInteraction& interaction, const CancelToken& cancel)
{
    const auto next_round
        = [&] { return auth_request(cancel, [&] { return ssh_userauth_kbdint(m_session, nullptr, nullptr); }); };
    int rc = next_round();
    // Servers may send several rounds (password, then a one-time code) and empty info requests.
    for (int round = 0; rc == SSH_AUTH_INFO && round < 16; ++round) {
        if (cancel.cancelled())
            throw SshError(SshErrorKind::cancelled, m_target.label() + ": cancelled");
        KbdPrompt prompt;
        prompt.target = m_target.label();
        const char* name = ssh_userauth_kbdint_getname(m_session);
        const char* instruction = ssh_userauth_kbdint_getinstruction(m_session);
        prompt.name = name ? name : "";
        prompt.instruction = instruction ? instruction : "";
        const int n = ssh_userauth_kbdint_getnprompts(m_session);
        for (int i = 0; i < n; ++i) {
            char echo = 0;
            const char* text = ssh_userauth_kbdint_getprompt(m_session, static_cast<unsigned>(i), &echo);
            prompt.prompts.push_back({ text ? text : "", echo != 0 });
        }
        if (n > 0) {
            auto answers = interaction.answer_prompts(prompt);
            if (!answers || static_cast<int>(answers->size()) != n)
                return false;
            for (int i = 0; i < n; ++i)
                ssh_userauth_kbdint_setanswer(
                    m_session, static_cast<unsigned>(i), (*answers)[static_cast<std::size_t>(i)].c_str());
            for (auto& a : *answers)
                a.wipe();
        }
        rc = next_round();
    }
    return rc == SSH_AUTH_SUCCESS;
}

void SshSession::authenticate(SshInteraction& interaction, const CancelToken& cancel)
{
    const int rc = auth_request(cancel, [&] { return ssh_userauth_none(m_session, nullptr); });
    if (rc == SSH_AUTH_SUCCESS) {
        m_auth_method = "none";
        qCDebug(lcSsh) << "authenticated without credentials";
        return;
    }
    if (rc == SSH_AUTH_ERROR)
        fail(io_error_kind() == SshErrorKind::disconnected ? SshErrorKind::disconnected : SshErrorKind::auth,
            "authentication failed");
    const int methods = ssh_userauth_list(m_session, nullptr);
    std::vector<std::string> tried;
    // Each method tried is logged with its outcome: a refused login then shows every step, not the last.
    const auto outcome = [](const std::string& method, bool ok) {
        qCDebug(lcSsh).noquote() << "authentication by" << QString::fromStdString(method)
                                 << (ok ? "succeeded" : "was refused");
        return ok;
    };

    if ((methods & SSH_AUTH_METHOD_PUBLICKEY) && m_target.use_agent && std::getenv("SSH_AUTH_SOCK")) {
        tried.push_back("ssh-agent");
        if (outcome(tried.back(),
                auth_request(cancel, [&] { return ssh_userauth_agent(m_session, nullptr); }) == SSH_AUTH_SUCCESS)) {
            m_auth_method = "agent";
            return;
        }
    }
    if (cancel.cancelled())
        throw SshError(SshErrorKind::cancelled, m_target.label() + ": cancelled");
    if (methods & SSH_AUTH_METHOD_PUBLICKEY) {
        if (!m_target.key_file.empty()) {
            const std::string key = expand_home(m_target.key_file);
            std::error_code ec;
            if (!std::filesystem::exists(key, ec))
                throw SshError(SshErrorKind::config, m_target.label() + ": key file " + key + " does not exist");
            tried.push_back("key " + key);
            if (outcome(tried.back(), try_key_file(key, interaction, cancel))) {
                m_auth_method = "publickey";
                return;
            }
        } else {
            // No key file in the profile: libssh's identities, i.e. IdentityFile of ~/.ssh/config (when used)
            // and the default ~/.ssh/id_*; encrypted ones ask through auth_callback (the interaction).
            tried.push_back("the identities of ~/.ssh (and ~/.ssh/config)");
            if (outcome(tried.back(), auth_request(cancel, [&] {
                    return ssh_userauth_publickey_auto(m_session, nullptr, nullptr);
                }) == SSH_AUTH_SUCCESS)) {
                m_auth_method = "publickey";
                return;
            }
        }
        if (!connected())
            fail(SshErrorKind::disconnected, "connection lost during authentication");
    }
    if (cancel.cancelled())
        throw SshError(SshErrorKind::cancelled, m_target.label() + ": cancelled");
    if (methods & SSH_AUTH_METHOD_INTERACTIVE) {
        tried.push_back("keyboard-interactive");
        if (outcome(tried.back(), try_keyboard_interactive(interaction, cancel))) {
            m_auth_method = "keyboard-interactive";
            return;
        }
    }
    std::string offered;
    if (methods & SSH_AUTH_METHOD_PUBLICKEY)
        offered += " publickey";
    if (methods & SSH_AUTH_METHOD_INTERACTIVE)
        offered += " keyboard-interactive";
    if (methods & SSH_AUTH_METHOD_PASSWORD)
        offered += " password";
    if (methods & SSH_AUTH_METHOD_GSSAPI_MIC)
        offered += " gssapi";
    std::string tried_text;
    for (const auto& t : tried)
        tried_text += (tried_text.empty() ? "" : ", ") + t;
    throw SshError(SshErrorKind::auth,
        m_target.label() + ": authentication failed: the server refused "
            + (tried_text.empty() ? std::string("every method Parallax can use") : tried_text)
            + " (the server offers:" + (offered.empty() ? std::string(" nothing") : offered)
            + "). Check the user name and the key file of the cluster profile, or load the key into ssh-agent.");
}

ExecResult SshSession::exec(const std::string& command, const ExecOptions& options)
{
    qCDebug(lcSsh).noquote() << QString::fromStdString(m_target.label()) << "runs" << QString::fromStdString(command);
    if (!connected())
        fail(SshErrorKind::disconnected, "not connected");
    ChannelPtr channel(ssh_channel_new(m_session));
    if (!channel)
        fail(io_error_kind(), "cannot create a channel");
    if (ssh_channel_open_session(channel.get()) != SSH_OK)
        fail(io_error_kind(), "the server refused a session channel");

    ChannelState state;
    ssh_channel_callbacks_struct callbacks {};
    callbacks.userdata = &state;
    callbacks.channel_exit_status_function = on_exit_status;
    callbacks.channel_exit_signal_function = on_exit_signal;
    callbacks.channel_close_function = on_close;
    ssh_callbacks_init(&callbacks);
    ssh_set_channel_callbacks(channel.get(), &callbacks);
    // The callbacks struct lives on this stack frame: remove it before returning in every path.
    struct Unset {
        ssh_channel c;
        ssh_channel_callbacks_struct* cb;
        ~Unset() { ssh_remove_channel_callbacks(c, cb); }
    } unset { channel.get(), &callbacks };

    if (ssh_channel_request_exec(channel.get(), command.c_str()) != SSH_OK)
        fail(io_error_kind(), "cannot start the command");
    if (!options.stdin_data.empty()) {
        std::string_view rest = options.stdin_data;
        while (!rest.empty()) {
            const auto chunk = static_cast<uint32_t>(std::min<std::size_t>(rest.size(), kSftpChunkBytes));
            const int n = ssh_channel_write(channel.get(), rest.data(), chunk);
            if (n <= 0)
                fail(io_error_kind(), "cannot write the command's input");
            rest.remove_prefix(static_cast<std::size_t>(n));
        }
    }
    ssh_channel_send_eof(channel.get());

    ExecResult result;
    const auto deadline = std::chrono::steady_clock::now() + options.timeout;
    std::vector<char> buffer(64 * 1024);
    const auto take = [&](int is_stderr) -> int {
        const int n = ssh_channel_read_nonblocking(
            channel.get(), buffer.data(), static_cast<uint32_t>(buffer.size()), is_stderr);
        if (n > 0) {
            const std::string_view data(buffer.data(), static_cast<std::size_t>(n));
            std::string& sink = is_stderr ? result.err : result.out;
            if (sink.size() < options.max_capture_bytes)
                sink.append(data.substr(0, options.max_capture_bytes - sink.size()));
            const auto& cb = is_stderr ? options.on_stderr : options.on_stdout;
            if (cb)
                cb(data);
        }
        return n;
    };
    for (;;) {
        const int n_out = take(0);
        const int n_err = take(1);
        if (n_out == SSH_ERROR || n_err == SSH_ERROR)
            fail(io_error_kind(), "reading the output of the command failed");
        if (n_out > 0 || n_err > 0)
            continue;
        if (ssh_channel_is_eof(channel.get()))
            break;
        if (options.cancel.cancelled())
            throw SshError(SshErrorKind::cancelled, m_target.label() + ": command cancelled");
        if (std::chrono::steady_clock::now() > deadline)
            throw SshError(SshErrorKind::timeout,
                m_target.label() + ": the command did not finish within "
                    + std::to_string(std::chrono::duration_cast<std::chrono::seconds>(options.timeout).count()) + " s");
        // Waits for stdout data, EOF or the poll interval; stderr that arrives meanwhile is buffered by
        // libssh and taken on the next turn.
        const int polled = ssh_channel_poll_timeout(channel.get(), kChannelPollMs, 0);
        if (polled == SSH_ERROR)
            fail(io_error_kind(), "waiting for the command's output failed");
    }
    // Both streams are at EOF; the exit status (or the signal that killed the command) arrives with or just
    // after the close. ssh_channel_get_exit_status waits for it, bounded by the session's I/O timeout, and
    // returns -1 for a signal kill; the callbacks above have recorded which it was.
    if (!state.exit_status && state.exit_signal.empty()) {
        const int status = ssh_channel_get_exit_status(channel.get());
        if (status >= 0 && !state.exit_status && state.exit_signal.empty())
            state.exit_status = status;
    }
    result.exit_status = state.exit_status;
    result.exit_signal = state.exit_signal;
    return result;
}

sftp_session_struct* SshSession::sftp()
{
    if (m_sftp)
        return m_sftp;
    if (!connected())
        fail(SshErrorKind::disconnected, "not connected");
    m_sftp = sftp_new(m_session);
    if (!m_sftp)
        fail(io_error_kind(), "cannot open an SFTP channel");
    if (sftp_init(m_sftp) != SSH_OK) {
        sftp_free(m_sftp);
        m_sftp = nullptr;
        fail(io_error_kind(), "the server has no SFTP subsystem");
    }
    return m_sftp;
}

void SshSession::fail_sftp(const std::string& what, const std::string& path)
{
    const int code = m_sftp ? sftp_get_error(m_sftp) : -1;
    if (!connected()) {
        if (m_sftp) {
            sftp_free(m_sftp);
            m_sftp = nullptr;
        }
        throw SshError(SshErrorKind::disconnected, m_target.label() + ": connection lost while " + what + " " + path);
    }
    std::string reason;
    switch (code) {
    case SSH_FX_NO_SUCH_FILE:
        reason = "no such file";
        break;
    case SSH_FX_PERMISSION_DENIED:
        reason = "permission denied";
        break;
    case SSH_FX_NO_SUCH_PATH:
        reason = "no such folder";
        break;
    case SSH_FX_FILE_ALREADY_EXISTS:
        reason = "already exists";
        break;
    case SSH_FX_WRITE_PROTECT:
        reason = "read-only file system";
        break;
    case SSH_FX_NO_MEDIA:
        reason = "no media";
        break;
    default:
        reason = ssh_get_error(m_session);
        break;
    }
    throw SshError(SshErrorKind::sftp, m_target.label() + ": " + what + " " + path + ": " + reason);
}

void SshSession::throw_if_cancelled(const char* what, const std::string& path) const
{
    if (m_cancel.cancelled())
        throw SshError(SshErrorKind::cancelled, m_target.label() + ": " + what + " " + path + " cancelled");
}

void SshSession::upload(const std::string& remote_path, std::string_view data, int mode)
{
    sftp_session s = sftp();
    SftpFilePtr file(sftp_open(s, remote_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, static_cast<mode_t>(mode)));
    if (!file)
        fail_sftp("cannot create", remote_path);
    while (!data.empty()) {
        throw_if_cancelled("upload of", remote_path);
        const std::size_t chunk = std::min(data.size(), kSftpChunkBytes);
        const ssize_t n = sftp_write(file.get(), data.data(), chunk);
        if (n <= 0)
            fail_sftp("cannot write", remote_path);
        data.remove_prefix(static_cast<std::size_t>(n));
    }
    // O_CREAT's mode is filtered by the server's umask, which is the site's choice and never widened. A private
    // file (no group/other bits: env.sh) is set to `mode` exactly, in case it existed with a wider one.
    if ((mode & 077) == 0 && sftp_chmod(s, remote_path.c_str(), static_cast<mode_t>(mode)) != SSH_OK)
        fail_sftp("cannot chmod", remote_path);
}

std::optional<std::string> SshSession::read_from(
    const std::string& remote_path, std::uint64_t offset, std::size_t max_bytes)
{
    sftp_session s = sftp();
    SftpFilePtr file(sftp_open(s, remote_path.c_str(), O_RDONLY, 0));
    if (!file) {
        if (sftp_get_error(s) == SSH_FX_NO_SUCH_FILE && connected())
            return std::nullopt;
        fail_sftp("cannot open", remote_path);
    }
    if (offset > 0 && sftp_seek64(file.get(), offset) != 0)
        fail_sftp("cannot seek in", remote_path);
    std::string out;
    std::vector<char> buffer(kSftpChunkBytes);
    while (out.size() < max_bytes) {
        throw_if_cancelled("read of", remote_path);
        const std::size_t want = std::min(buffer.size(), max_bytes - out.size());
        const ssize_t n = sftp_read(file.get(), buffer.data(), want);
        if (n < 0)
            fail_sftp("cannot read", remote_path);
        if (n == 0)
            break; // end of file (for now: a log may still grow)
        out.append(buffer.data(), static_cast<std::size_t>(n));
    }
    return out;
}

std::string SshSession::download(const std::string& remote_path, std::size_t max_bytes)
{
    auto data = read_from(remote_path, 0, max_bytes);
    if (!data)
        throw SshError(SshErrorKind::sftp, m_target.label() + ": cannot open " + remote_path + ": no such file");
    return std::move(*data);
}

std::optional<std::uint64_t> SshSession::file_size(const std::string& remote_path)
{
    sftp_session s = sftp();
    std::unique_ptr<sftp_attributes_struct, SftpAttrFree> attr(sftp_stat(s, remote_path.c_str()));
    if (!attr) {
        if (sftp_get_error(s) == SSH_FX_NO_SUCH_FILE && connected())
            return std::nullopt;
        fail_sftp("cannot stat", remote_path);
    }
    return attr->size;
}

void SshSession::send_keepalive()
{
    if (!connected() || ssh_send_ignore(m_session, "parallax-keepalive") != SSH_OK)
        fail(SshErrorKind::disconnected, "keepalive failed");
    // Sending alone does not notice a peer that closed the socket; reading does.
    if (ssh_blocking_flush(m_session, 1000) == SSH_ERROR || !connected())
        fail(SshErrorKind::disconnected, "connection lost");
}

std::string public_key_file_fingerprint(const std::string& path)
{
    ssh_key raw = nullptr;
    if (ssh_pki_import_pubkey_file(path.c_str(), &raw) != SSH_OK)
        return {};
    KeyPtr key(raw);
    return fingerprint_of(key.get());
}

} // namespace parallax::remote

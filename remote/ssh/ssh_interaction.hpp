#pragma once
// Questions an SSH connection must ask a person: trust an unknown host key, a key's passphrase,
// keyboard-interactive prompts (passwords, 2FA codes). Called on the connection's worker thread; an
// implementation may block until answered. The GUI's implementation forwards to dialogs on the GUI
// thread (PromptBridge), the CLI's asks on the terminal, tests answer in code.
#include "ssh/secret.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace parallax::remote {

struct HostKeyInfo {
    std::string host; // as known_hosts names it: "host" or "[host]:port"
    std::string key_type; // "ssh-ed25519"
    std::string fingerprint; // "SHA256:..." exactly as OpenSSH prints it
    std::string known_hosts_file; // where an accepted key is stored
    struct Known {
        std::string key_type;
        std::string fingerprint;
        std::string file;
    };
    std::vector<Known> known; // keys already stored for this host (changed / other-type cases)
};

struct KbdPrompt {
    std::string target; // user@host:port
    std::string name;
    std::string instruction;
    struct Item {
        std::string text;
        bool echo = false;
    };
    std::vector<Item> prompts;
};

// Server text (keyboard-interactive names, instructions and prompts, remote error output) as it may be written
// to a terminal: control and escape characters made visible (\x1b, \r, \u009b ...), line breaks kept, so
// that it cannot move the cursor, retitle the window or hide what it says.
std::string terminal_text(std::string_view server_text);

class SshInteraction {
public:
    virtual ~SshInteraction() = default;
    // The host is not in known_hosts. true: trust this key and store it.
    virtual bool confirm_unknown_host(const HostKeyInfo& key) = 0;
    // The key file is encrypted: its passphrase, or nullopt to skip this key.
    virtual std::optional<Secret> key_passphrase(const std::string& key_file) = 0;
    // Keyboard-interactive round: one answer per prompt, or nullopt to give up.
    virtual std::optional<std::vector<Secret>> answer_prompts(const KbdPrompt& prompt) = 0;
    // Told (nothing is asked) that the host's key was refused: known_hosts holds a different key of the same
    // type (changed = true) or only keys of other types; key.known lists them. `message` is the explanation
    // the connection then fails with. A GUI shows it; the default ignores it (the error carries the text).
    virtual void host_key_refused(const HostKeyInfo& key, bool changed, const std::string& message)
    {
        (void)key;
        (void)changed;
        (void)message;
    }
};

// Answers no to everything: for headless use where nobody can be asked. An optional pinned fingerprint
// accepts exactly that unknown host key (`parallax-cli run --accept-host-key SHA256:...`).
class NonInteractive : public SshInteraction {
public:
    explicit NonInteractive(std::string accepted_fingerprint = {})
        : m_accepted(std::move(accepted_fingerprint))
    {
    }
    bool confirm_unknown_host(const HostKeyInfo& key) override
    {
        return !m_accepted.empty() && key.fingerprint == m_accepted;
    }
    std::optional<Secret> key_passphrase(const std::string&) override { return std::nullopt; }
    std::optional<std::vector<Secret>> answer_prompts(const KbdPrompt&) override { return std::nullopt; }

private:
    std::string m_accepted;
};

// Asks on the controlling terminal (/dev/tty), echo off for secrets; falls back to NonInteractive's
// answers when there is no terminal.
class TerminalInteraction : public SshInteraction {
public:
    explicit TerminalInteraction(std::string accepted_fingerprint = {})
        : m_fallback(std::move(accepted_fingerprint))
    {
    }
    bool confirm_unknown_host(const HostKeyInfo& key) override;
    std::optional<Secret> key_passphrase(const std::string& key_file) override;
    std::optional<std::vector<Secret>> answer_prompts(const KbdPrompt& prompt) override;

private:
    NonInteractive m_fallback;
};

// The text shown when asking about an unknown host key, in OpenSSH's words.
std::string describe_unknown_host(const HostKeyInfo& key);

} // namespace parallax::remote

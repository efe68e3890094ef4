#pragma once
// Where and how to connect: everything an SSH connection needs except secrets (passphrases and one-time
// codes come from an SshInteraction when asked, and are never stored).
#include <chrono>
#include <string>

namespace parallax::remote {

struct SshTarget {
    std::string host; // name or address; with use_ssh_config also a Host alias of ~/.ssh/config
    unsigned port = 0; // 0: from the ssh config, else 22
    std::string user; // empty: from the ssh config, else the local user name
    std::string key_file; // private key; empty: the default ~/.ssh/id_* files
    std::string known_hosts; // the known_hosts file checked strictly; empty: ~/.ssh/known_hosts
    std::string global_known_hosts; // read-only second file; empty: /etc/ssh/ssh_known_hosts
    bool use_agent = true; // try ssh-agent first when SSH_AUTH_SOCK is set
    bool use_ssh_config = false; // apply ~/.ssh/config (aliases, User, Port, IdentityFile, ProxyJump)
    std::string ssh_config_file; // empty: ~/.ssh/config
    std::chrono::milliseconds connect_timeout { std::chrono::seconds(20) };
    // Blocking protocol steps (opening a channel, SFTP requests) give up after this long.
    std::chrono::milliseconds io_timeout { std::chrono::seconds(60) };

    // "user@host:port" for messages.
    std::string label() const
    {
        std::string out = user.empty() ? host : user + "@" + host;
        if (port != 0 && port != 22)
            out += ":" + std::to_string(port);
        return out;
    }
};

} // namespace parallax::remote

#include "ssh/ssh_interaction.hpp"

#include "io/input_limits.hpp"

#include <cstdio>
#include <fcntl.h>
#include <string>
#include <termios.h>
#include <unistd.h>

namespace parallax::remote {

std::string terminal_text(std::string_view server_text)
{
    return printable_rule(server_text);
}

std::string describe_unknown_host(const HostKeyInfo& key)
{
    return "The authenticity of host '" + key.host + "' can't be established.\n" + key.key_type + " key fingerprint is "
        + key.fingerprint
        + ".\nThis key is not known by any other names.\nCompare it with the fingerprint the cluster's "
          "administrators publish before accepting; an accepted key is stored in "
        + key.known_hosts_file + ".";
}

namespace {

// The controlling terminal, opened for one question.
class Tty {
public:
    Tty()
        : m_fd(::open("/dev/tty", O_RDWR | O_CLOEXEC))
    {
    }
    ~Tty()
    {
        if (m_fd >= 0)
            ::close(m_fd);
    }
    Tty(const Tty&) = delete;
    Tty& operator=(const Tty&) = delete;
    bool ok() const { return m_fd >= 0; }

    void write(const std::string& text)
    {
        std::size_t done = 0;
        while (done < text.size()) {
            const ssize_t n = ::write(m_fd, text.data() + done, text.size() - done);
            if (n <= 0)
                return;
            done += static_cast<std::size_t>(n);
        }
    }

    // One line without its newline; echo off for secrets. nullopt at end of input.
    std::optional<std::string> read_line(bool echo)
    {
        termios saved {};
        const bool have_termios = ::tcgetattr(m_fd, &saved) == 0;
        if (have_termios && !echo) {
            termios quiet = saved;
            quiet.c_lflag &= static_cast<tcflag_t>(~ECHO);
            ::tcsetattr(m_fd, TCSAFLUSH, &quiet);
        }
        std::string line;
        bool got = false;
        char c = 0;
        while (::read(m_fd, &c, 1) == 1) {
            got = true;
            if (c == '\n' || c == '\r')
                break;
            line.push_back(c);
        }
        if (have_termios && !echo) {
            ::tcsetattr(m_fd, TCSAFLUSH, &saved);
            write("\n");
        }
        if (!got)
            return std::nullopt;
        return line;
    }

private:
    int m_fd;
};

} // namespace

bool TerminalInteraction::confirm_unknown_host(const HostKeyInfo& key)
{
    if (m_fallback.confirm_unknown_host(key))
        return true;
    Tty tty;
    if (!tty.ok())
        return false;
    tty.write(terminal_text(describe_unknown_host(key)) + "\nAre you sure you want to continue connecting (yes/no)? ");
    auto answer = tty.read_line(true);
    return answer && *answer == "yes";
}

std::optional<Secret> TerminalInteraction::key_passphrase(const std::string& key_file)
{
    Tty tty;
    if (!tty.ok())
        return std::nullopt;
    tty.write("Enter passphrase for key '" + key_file + "': ");
    auto line = tty.read_line(false);
    if (!line)
        return std::nullopt;
    Secret s(std::move(*line));
    return s;
}

std::optional<std::vector<Secret>> TerminalInteraction::answer_prompts(const KbdPrompt& prompt)
{
    Tty tty;
    if (!tty.ok())
        return std::nullopt;
    if (!prompt.name.empty())
        tty.write(terminal_text(prompt.name) + "\n");
    if (!prompt.instruction.empty())
        tty.write(terminal_text(prompt.instruction) + "\n");
    std::vector<Secret> answers;
    for (const auto& p : prompt.prompts) {
        tty.write(terminal_text(p.text));
        auto line = tty.read_line(p.echo);
        if (!line)
            return std::nullopt;
        answers.emplace_back(std::move(*line));
    }
    return answers;
}

} // namespace parallax::remote

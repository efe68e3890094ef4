#pragma once
// Builds the bash scripts Parallax sends to clusters, so that every value from a plan, a profile or a
// preset goes through shell_quote and comments cannot be escaped (a newline inside a user string starts a
// new "# " line, never a command). Code written with raw() is Parallax's own text only.
#include "jobs/shell_quote.hpp"

#include <string>
#include <utility>
#include <vector>

namespace parallax::remote {

// One word of a command: a literal (quoted) or trusted shell text such as "\"$MASTER_ADDR\"".
struct ShellWord {
    std::string text;
    bool raw = false;
    static ShellWord lit(std::string s) { return { std::move(s), false }; }
    static ShellWord code(std::string s) { return { std::move(s), true }; }
    std::string render() const { return raw ? text : shell_quote(text); }
};

class BashScript {
public:
    explicit BashScript(const std::string& shebang = "#!/bin/bash") { m_text = shebang + "\n"; }

    void comment(const std::string& text)
    {
        std::size_t start = 0;
        while (start <= text.size()) {
            const std::size_t nl = text.find_first_of("\n\r", start);
            const std::string line = text.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
            m_text += line.empty() ? "#\n" : "# " + line + "\n";
            if (nl == std::string::npos)
                break;
            start = nl + 1;
        }
    }
    void blank() { m_text += "\n"; }
    void raw(const std::string& code) { m_text += code + "\n"; }
    void export_var(const std::string& name, const std::string& value)
    {
        m_text += "export " + name + "=" + shell_quote(value) + "\n";
    }
    // name=(\n  word\n  word\n): one argument per line, reviewable and diffable.
    void array(const std::string& name, const std::vector<ShellWord>& words)
    {
        m_text += name + "=(\n";
        for (const auto& w : words)
            m_text += "  " + w.render() + "\n";
        m_text += ")\n";
    }
    void command(const std::vector<ShellWord>& words)
    {
        std::string line;
        for (const auto& w : words)
            line += (line.empty() ? "" : " ") + w.render();
        m_text += line + "\n";
    }
    const std::string& text() const { return m_text; }

private:
    std::string m_text;
};

} // namespace parallax::remote

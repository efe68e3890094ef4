#pragma once
// Shell words and bash scripts, written so that every value from a plan, a profile or a preset goes
// through shell_quote and comments cannot be escaped (a newline inside a user string starts a new "# "
// line, never a command). Code written with raw() is Parallax's own text only. Used by the launch files
// of export (core/io/export) and by the job bundles remote/ sends to clusters.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace parallax {

// 'it'\''s' style quoting; the empty string becomes ''. Throws std::invalid_argument on a NUL byte (a shell
// cannot carry it).
std::string shell_quote(std::string_view arg);
// The word as it is when it needs no quotes (letters, digits and _-./:=,+@%), else shell_quote: for
// scripts people read (`--num-layers 80`, not `'--num-layers' '80'`).
std::string shell_word(std::string_view arg);
// Joins quoted arguments with spaces.
std::string shell_join(const std::vector<std::string>& argv);

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
    // name=(\n    --flag value\n    --switch\n): a flag and its values on one line, as Megatron-LM's
    // example scripts write them; words quoted only where needed (shell_word).
    void flag_array(const std::string& name, const std::vector<std::string>& words)
    {
        m_text += name + "=(\n";
        std::string line;
        for (const auto& w : words) {
            if (w.size() > 1 && w[0] == '-' && w[1] == '-' && !line.empty()) {
                m_text += "    " + line + "\n";
                line.clear();
            }
            line += (line.empty() ? "" : " ") + shell_word(w);
        }
        if (!line.empty())
            m_text += "    " + line + "\n";
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

} // namespace parallax

#include "io/export/launch_text.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>

namespace parallax::launch_text {

std::string num(long long v)
{
    return std::to_string(v);
}

std::string decimal(double v)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    std::string s = buf;
    if (s.find_first_of(".e") == std::string::npos)
        s += ".0";
    return s;
}

void add(std::vector<std::string>& words, std::initializer_list<std::string> more)
{
    words.insert(words.end(), more.begin(), more.end());
}

std::string toml_string(const std::string& v)
{
    std::string out = "\"";
    for (char c : v) {
        switch (c) {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\r':
            out += "\\r";
            break;
        case '\t':
            out += "\\t";
            break;
        default:
            if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) { // TOML forbids both raw in strings
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
                out += buf;
            } else {
                out += c;
            }
        }
    }
    return out + "\"";
}

// YAML double-quoted scalars escape like JSON strings.
std::string yaml_string(const std::string& v)
{
    return nlohmann::json(v).dump();
}

std::string boolean(bool b)
{
    return b ? "true" : "false";
}

// The lines of a user string as comment text. TOML and YAML forbid control characters in comments (a parser
// rejects the file), and YAML 1.1 readers (PyYAML, under OmegaConf) also end a line at NEL, U+2028 and U+2029:
// every one of those starts a new comment line, every other control character becomes '?'.
std::vector<std::string> comment_safe_lines(const std::string& text)
{
    std::vector<std::string> lines(1);
    for (std::size_t i = 0; i < text.size(); ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        const bool nel = c == 0xC2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) == 0x85;
        const bool ls_ps = c == 0xE2 && i + 2 < text.size() && static_cast<unsigned char>(text[i + 1]) == 0x80
            && (static_cast<unsigned char>(text[i + 2]) == 0xA8 || static_cast<unsigned char>(text[i + 2]) == 0xA9);
        if (c == '\n' || c == '\r' || nel || ls_ps) {
            i += nel ? 1 : ls_ps ? 2 : 0;
            lines.emplace_back();
        } else if ((c < 0x20 && c != '\t') || c == 0x7F) {
            lines.back() += '?';
        } else {
            lines.back() += static_cast<char>(c);
        }
    }
    return lines;
}

// A comment block: every line of `text` behind `prefix` ("# "), so that no user string can end the comment.
std::string comment_lines(const std::string& text, const std::string& prefix)
{
    std::string out;
    for (const std::string& line : comment_safe_lines(text))
        out += prefix + line + "\n";
    return out;
}

} // namespace parallax::launch_text

#include "io/export/shell_script.hpp"

#include <stdexcept>

namespace parallax {

std::string shell_quote(std::string_view arg)
{
    if (arg.find('\0') != std::string_view::npos)
        throw std::invalid_argument("a shell argument cannot contain a NUL byte");
    std::string out;
    out.reserve(arg.size() + 2);
    out += '\'';
    for (char c : arg) {
        if (c == '\'')
            out += "'\\''"; // close, escaped quote, reopen
        else
            out += c;
    }
    out += '\'';
    return out;
}

std::string shell_word(std::string_view arg)
{
    if (arg.empty())
        return "''";
    for (char c : arg) {
        const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'
            || c == '-' || c == '.' || c == '/' || c == ':' || c == '=' || c == ',' || c == '+' || c == '@' || c == '%';
        if (!plain)
            return shell_quote(arg);
    }
    return std::string(arg);
}

std::string shell_join(const std::vector<std::string>& argv)
{
    std::string out;
    for (const auto& a : argv) {
        if (!out.empty())
            out += ' ';
        out += shell_quote(a);
    }
    return out;
}

} // namespace parallax

#include "jobs/shell_quote.hpp"

#include <stdexcept>

namespace parallax::remote {

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

std::string login_shell(const std::string& command)
{
    return "bash -lc " + shell_quote(command);
}

} // namespace parallax::remote

#include "jobs/shell_quote.hpp"

namespace parallax::remote {

std::string login_shell(const std::string& command)
{
    return "bash -lc " + shell_quote(command);
}

} // namespace parallax::remote

#pragma once
// The one function that builds remote command lines: every argument is single-quoted for a POSIX
// shell, so nothing a user typed or a preset holds can inject a command. The quoting itself is core's
// (io/export/shell_script.hpp), shared with the launch files of `export`.
#include "io/export/shell_script.hpp"

#include <string>

namespace parallax::remote {

using parallax::shell_join;
using parallax::shell_quote;
// `bash -lc '<command>'` so that cluster module systems and PATH apply.
std::string login_shell(const std::string& command);

} // namespace parallax::remote

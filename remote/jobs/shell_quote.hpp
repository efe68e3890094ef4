#pragma once
// The one function that builds remote command lines: every argument is single-quoted for a POSIX
// shell, so nothing a user typed or a preset holds can inject a command.
#include <string>
#include <string_view>
#include <vector>

namespace parallax::remote {

// 'it'\''s' style quoting; the empty string becomes ''. Rejects NUL bytes (a shell cannot carry them).
std::string shell_quote(std::string_view arg);
// Joins quoted arguments with spaces.
std::string shell_join(const std::vector<std::string>& argv);
// `bash -lc '<command>'` so that cluster module systems and PATH apply.
std::string login_shell(const std::string& command);

} // namespace parallax::remote

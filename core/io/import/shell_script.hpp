#pragma once
// Just enough of the shell to read the scripts that launch training (Megatron-LM's examples): variables
// (VAR=value, export, ${VAR:-default}, ${VAR+x}, arrays NAME=(...) and NAME+=(...), "${NAME[@]}"),
// quoting, comments, line continuations, $((arithmetic)), if/elif/else on [ ] and [[ ]] tests, eval,
// pipes and redirections. Command substitutions, loops, case and functions are not run: a value that
// needs them is unknown (it carries kUnknownShellValue), a branch whose test is unknown is not taken,
// and both are said in `notes`.
#include <string>
#include <string_view>
#include <vector>

namespace parallax {

inline constexpr char kUnknownShellValue = '\x01';
inline bool is_unknown_shell_value(std::string_view s)
{
    return s.find(kUnknownShellValue) != std::string_view::npos;
}
// An unknown value as a reader sees it: "$(python3 -c ...)" without the marker.
std::string shell_value_text(std::string_view s);

struct ShellCommand {
    std::vector<std::string> words; // after expansion, quotes removed
    int line = 0; // 1-based, of the command's first word
};

struct ShellRun {
    std::vector<ShellCommand> commands; // every simple command the script would run, in order
    std::vector<std::string> notes; // what could not be evaluated
};

ShellRun run_shell_script(const std::string& text);

} // namespace parallax

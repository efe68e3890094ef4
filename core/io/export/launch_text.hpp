#pragma once
// Words and quoting shared by the launch-file writers (shell flags, TOML, YAML, comments): one place for
// the escaping rules, so no user string can break out of a value or a comment in any format.
#include <initializer_list>
#include <string>
#include <vector>

namespace parallax::launch_text {

std::string num(long long v);
// A decimal without trailing zeros ("1.25", "0.0").
std::string decimal(double v);
void add(std::vector<std::string>& words, std::initializer_list<std::string> more);
std::string boolean(bool b);
// A TOML basic string, quoted and escaped.
std::string toml_string(const std::string& v);
// A YAML double-quoted scalar (escaped like a JSON string).
std::string yaml_string(const std::string& v);
// The lines of a user string as comment text: line breaks of any kind start a new line, other control
// characters become '?'.
std::vector<std::string> comment_safe_lines(const std::string& text);
// A comment block: every line of `text` behind `prefix`.
std::string comment_lines(const std::string& text, const std::string& prefix = "# ");

} // namespace parallax::launch_text

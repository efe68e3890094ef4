#pragma once
// The bash scripts Parallax sends to clusters are written with core's BashScript and ShellWord
// (io/export/shell_script.hpp), the same as the launch files of `export`.
#include "io/export/shell_script.hpp"
#include "jobs/shell_quote.hpp"

namespace parallax::remote {

using parallax::BashScript;
using parallax::ShellWord;

} // namespace parallax::remote

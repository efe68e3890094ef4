#pragma once
// One number through a printf format ("%.1f GiB", "%+.1f%%"): the text every report and label uses.
#include <string>

namespace parallax {

// `printf_format` holds exactly one double conversion. The result is never truncated.
std::string format_number(const char* printf_format, double value);

} // namespace parallax

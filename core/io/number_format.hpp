#pragma once
// One number through a printf format ("%.1f GiB", "%+.1f%%"): the text every report and label uses.
#include <string>

namespace parallax {

// `printf_format` holds exactly one double conversion. The result is never truncated.
std::string format_number(const char* printf_format, double value);

// A whole number with thousands separators ("1,743,851"); with `significant_digits` > 0 rounded
// to that many significant digits first ("1,740,000"), as interval ends are written.
std::string format_grouped(double value, int significant_digits = 0);

} // namespace parallax

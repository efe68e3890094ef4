#include "io/number_format.hpp"

#include <cstdio>

namespace parallax {

std::string format_number(const char* printf_format, double value)
{
    // A stack buffer serves every label and table cell; only huge fixed-point values need the heap.
    char buf[96];
    const int needed = std::snprintf(buf, sizeof buf, printf_format, value);
    if (needed < 0)
        return {};
    if (static_cast<std::size_t>(needed) < sizeof buf)
        return std::string(buf, static_cast<std::size_t>(needed));
    std::string out(static_cast<std::size_t>(needed) + 1, '\0');
    std::snprintf(out.data(), out.size(), printf_format, value);
    out.resize(static_cast<std::size_t>(needed));
    return out;
}

} // namespace parallax

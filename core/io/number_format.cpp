#include "io/number_format.hpp"

#include <cmath>
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

std::string format_grouped(double value, int significant_digits)
{
    if (!std::isfinite(value))
        return format_number("%g", value);
    if (significant_digits > 0 && value != 0) {
        const double scale = std::pow(10.0, std::floor(std::log10(std::fabs(value))) + 1 - significant_digits);
        value = std::round(value / scale) * scale;
    }
    const std::string digits = format_number("%.0f", std::fabs(value));
    std::string out = value <= -0.5 ? "-" : "";
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0)
            out += ',';
        out += digits[i];
    }
    return out;
}

} // namespace parallax

#include "log_parse/text_scan.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <system_error>

namespace parallax::remote::text {

namespace {

constexpr char kEsc = '\x1b';
constexpr char kBel = '\x07';

// Longer mantissas never occur in logs; refusing them keeps the conversion buffer on the stack.
constexpr std::size_t kMaxMantissaDigits = 40;
// Exponents beyond this are out of double range anyway; clamping keeps the arithmetic in int.
constexpr int kMaxExponentMagnitude = 9999;

char to_lower(char c)
{
    return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

// Digits of a mantissa without sign, separators or point, kept on the stack.
struct Mantissa {
    std::array<char, kMaxMantissaDigits> digits {};
    std::size_t int_count = 0;
    std::size_t frac_count = 0;
    bool overflow = false;

    void push(char c)
    {
        if (int_count + frac_count < digits.size())
            digits[int_count + frac_count] = c;
        else
            overflow = true;
    }
    void push_int(char c)
    {
        push(c);
        ++int_count;
    }
    void push_frac(char c)
    {
        push(c);
        ++frac_count;
    }
};

// Converts "[-]int.frac" times 10^exponent by writing "-int.frace<exponent>" and letting from_chars round once.
std::optional<double> convert(bool negative, const Mantissa& m, int exponent)
{
    if (m.overflow || m.int_count + m.frac_count == 0)
        return std::nullopt;
    std::array<char, kMaxMantissaDigits + 24> buf {};
    std::size_t n = 0;
    if (negative)
        buf[n++] = '-';
    if (m.int_count == 0)
        buf[n++] = '0';
    for (std::size_t k = 0; k < m.int_count; ++k)
        buf[n++] = m.digits[k];
    if (m.frac_count > 0) {
        buf[n++] = '.';
        for (std::size_t k = 0; k < m.frac_count; ++k)
            buf[n++] = m.digits[m.int_count + k];
    }
    buf[n++] = 'e';
    const auto [end, ec] = std::to_chars(buf.data() + n, buf.data() + buf.size(), exponent);
    if (ec != std::errc())
        return std::nullopt;
    double value = 0;
    const auto res = std::from_chars(buf.data(), end, value);
    if (res.ec != std::errc() || res.ptr != end || !std::isfinite(value))
        return std::nullopt;
    return value;
}

// Reads an optional exponent "e[+-]digits" at s[pos]; returns its length (0 if none) and the value.
std::size_t read_exponent(std::string_view s, std::size_t pos, int& exponent)
{
    exponent = 0;
    if (pos >= s.size() || (s[pos] != 'e' && s[pos] != 'E'))
        return 0;
    std::size_t i = pos + 1;
    bool negative = false;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
        negative = s[i] == '-';
        ++i;
    }
    const std::size_t digits_start = i;
    int value = 0;
    while (i < s.size() && is_digit(s[i])) {
        if (value < kMaxExponentMagnitude)
            value = value * 10 + (s[i] - '0');
        ++i;
    }
    if (i == digits_start)
        return 0; // "1e" or "1e+" : the 'e' belongs to whatever follows the number
    exponent = negative ? -value : value;
    return i - pos;
}

std::optional<double> parse_impl(std::string_view s, int pow10, std::size_t* consumed, bool grouped)
{
    if (consumed)
        *consumed = 0;
    std::size_t i = 0;
    bool negative = false;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
        negative = s[i] == '-';
        ++i;
    }
    Mantissa m;
    const std::size_t int_start = i;
    while (i < s.size() && is_digit(s[i]))
        m.push_int(s[i++]);
    const std::size_t first_group = i - int_start;
    // Thousands separators: only after a first group of one to three digits.
    if (grouped && first_group >= 1 && first_group <= 3) {
        while (i < s.size() && s[i] == ',') {
            std::size_t j = i + 1;
            while (j < s.size() && is_digit(s[j]))
                ++j;
            if (j - (i + 1) != 3)
                return std::nullopt; // "10,5" is a cut or foreign number, not ten
            for (std::size_t k = i + 1; k < j; ++k)
                m.push_int(s[k]);
            i = j;
        }
    }
    if (i < s.size() && s[i] == '.') {
        std::size_t j = i + 1;
        while (j < s.size() && is_digit(s[j]))
            m.push_frac(s[j++]);
        if (m.int_count + m.frac_count > 0)
            i = j;
    }
    if (m.int_count + m.frac_count == 0)
        return std::nullopt;
    int exponent = 0;
    i += read_exponent(s, i, exponent);
    const auto value = convert(negative, m, exponent + pow10);
    if (value && consumed)
        *consumed = i;
    return value;
}

bool read_fixed_digits(std::string_view s, std::size_t pos, std::size_t count, int& value)
{
    if (pos + count > s.size())
        return false;
    value = 0;
    for (std::size_t k = 0; k < count; ++k) {
        if (!is_digit(s[pos + k]))
            return false;
        value = value * 10 + (s[pos + k] - '0');
    }
    return true;
}

// Days since 0001-01-01 in the proleptic Gregorian calendar; only differences are ever used.
std::int64_t days_since_year_one(int year, int month, int day)
{
    static constexpr std::array<int, 12> kDaysBeforeMonth { 0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334 };
    const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    const std::int64_t past_years = year - 1;
    return past_years * 365 + past_years / 4 - past_years / 100 + past_years / 400
        + kDaysBeforeMonth[static_cast<std::size_t>(month - 1)] + ((leap && month > 2) ? 1 : 0) + (day - 1);
}

char byte_at(std::string_view s, std::size_t i)
{
    return i < s.size() ? s[i] : '\0';
}

// "YYYY-MM-DD HH:MM:SS" + fraction starting exactly at s[pos].
std::optional<std::int64_t> timestamp_at(std::string_view s, std::size_t pos)
{
    int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
    const char date_time_separator = byte_at(s, pos + 10);
    if (!read_fixed_digits(s, pos, 4, year) || byte_at(s, pos + 4) != '-' || !read_fixed_digits(s, pos + 5, 2, month)
        || byte_at(s, pos + 7) != '-' || !read_fixed_digits(s, pos + 8, 2, day)
        || (date_time_separator != ' ' && date_time_separator != 'T') || !read_fixed_digits(s, pos + 11, 2, hour)
        || byte_at(s, pos + 13) != ':' || !read_fixed_digits(s, pos + 14, 2, minute) || byte_at(s, pos + 16) != ':'
        || !read_fixed_digits(s, pos + 17, 2, second))
        return std::nullopt;
    if (year < 1 || month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60)
        return std::nullopt;
    std::size_t i = pos + 19;
    const char fraction_mark = byte_at(s, i);
    if ((fraction_mark != ',' && fraction_mark != '.') || !is_digit(byte_at(s, i + 1)))
        return std::nullopt;
    ++i;
    // Up to microseconds; further digits add nothing a step time needs.
    std::int64_t fraction_us = 0;
    int scale = 100000;
    while (i < s.size() && is_digit(s[i])) {
        fraction_us += (s[i] - '0') * scale;
        scale /= 10;
        ++i;
    }
    constexpr std::int64_t kSecondsPerDay = 86400;
    constexpr std::int64_t kMicrosecondsPerSecond = 1000000;
    const std::int64_t seconds
        = days_since_year_one(year, month, day) * kSecondsPerDay + hour * 3600 + minute * 60 + second;
    return seconds * kMicrosecondsPerSecond + fraction_us;
}

} // namespace

std::string_view trim(std::string_view s)
{
    std::size_t b = 0;
    std::size_t e = s.size();
    while (b < e && is_space(s[b]))
        ++b;
    while (e > b && is_space(s[e - 1]))
        --e;
    return s.substr(b, e - b);
}

std::size_t skip_spaces(std::string_view s, std::size_t pos)
{
    while (pos < s.size() && is_space(s[pos]))
        ++pos;
    return pos;
}

void strip_ansi(std::string_view in, std::string& out)
{
    std::size_t i = 0;
    while (i < in.size()) {
        const char c = in[i];
        if (c != kEsc) {
            out += c;
            ++i;
            continue;
        }
        ++i;
        if (i >= in.size())
            break;
        if (in[i] == '[') {
            // CSI: parameter bytes 0x30-0x3F, intermediate bytes 0x20-0x2F, one final byte 0x40-0x7E.
            ++i;
            while (i < in.size() && in[i] >= 0x20 && in[i] <= 0x3F)
                ++i;
            if (i < in.size() && in[i] >= 0x40 && in[i] <= 0x7E)
                ++i;
        } else if (in[i] == ']') {
            // OSC (e.g. terminal titles): ends at BEL or ESC '\'.
            ++i;
            while (i < in.size() && in[i] != kBel && in[i] != kEsc)
                ++i;
            if (i < in.size() && in[i] == kBel)
                ++i;
            else if (i + 1 < in.size() && in[i] == kEsc && in[i + 1] == '\\')
                i += 2;
        } else {
            ++i; // two-byte escape
        }
    }
}

std::size_t find_word(std::string_view hay, std::string_view needle, std::size_t from)
{
    while (from <= hay.size()) {
        const std::size_t p = hay.find(needle, from);
        if (p == std::string_view::npos)
            return p;
        if (p == 0 || !is_alnum(hay[p - 1]))
            return p;
        from = p + 1;
    }
    return std::string_view::npos;
}

void normalize_key(std::string_view key, std::string& out)
{
    out.clear();
    bool pending_space = false;
    for (char c : key) {
        if (is_space(c)) {
            pending_space = !out.empty();
            continue;
        }
        if (pending_space)
            out += ' ';
        pending_space = false;
        out += to_lower(c);
    }
}

std::optional<double> parse_number(std::string_view s, int pow10, std::size_t* consumed)
{
    return parse_impl(s, pow10, consumed, false);
}

std::optional<double> parse_grouped_number(std::string_view s, int pow10, std::size_t* consumed)
{
    return parse_impl(s, pow10, consumed, true);
}

std::optional<std::int64_t> parse_count(std::string_view s, std::size_t* consumed)
{
    constexpr std::size_t kMaxDigits = 18;
    if (consumed)
        *consumed = 0;
    std::size_t i = 0;
    std::int64_t value = 0;
    while (i < s.size() && is_digit(s[i])) {
        if (i == kMaxDigits)
            return std::nullopt;
        value = value * 10 + (s[i] - '0');
        ++i;
    }
    if (i == 0)
        return std::nullopt;
    if (consumed)
        *consumed = i;
    return value;
}

std::optional<std::int64_t> find_fractional_timestamp_us(std::string_view s)
{
    constexpr std::size_t kMinLength = 21; // "YYYY-MM-DD HH:MM:SS,f"
    for (std::size_t pos = 0; pos + kMinLength <= s.size(); ++pos) {
        if (!is_digit(s[pos]) || byte_at(s, pos + 4) != '-')
            continue;
        if (const auto t = timestamp_at(s, pos))
            return t;
    }
    return std::nullopt;
}

} // namespace parallax::remote::text

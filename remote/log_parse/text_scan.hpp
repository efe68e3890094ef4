#pragma once
// Byte-level helpers shared by the log parsers. Logs are untrusted bytes (colour codes, binary junk,
// truncated lines), so every helper takes a string_view, never reads past it and never throws.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace parallax::remote::text {

inline bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}
inline bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\v' || c == '\f';
}
inline bool is_alnum(char c)
{
    return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

std::string_view trim(std::string_view s);
std::size_t skip_spaces(std::string_view s, std::size_t pos);

// Appends `in` to `out` without terminal escape sequences (CSI "ESC [ ... final", OSC "ESC ] ... BEL",
// two-byte "ESC x"): torchtitan colours every field.
void strip_ansi(std::string_view in, std::string& out);

// Position of `needle` at or after `from` where it starts a word (start of text or a non-alphanumeric
// byte before it), or npos. Keeps "tps:" from matching inside "steps:".
std::size_t find_word(std::string_view hay, std::string_view needle, std::size_t from = 0);

// ASCII-lowercase, whitespace runs collapsed to one space, trimmed: hard-wrapped Megatron records
// join as "learning  rate" and must still match "learning rate".
void normalize_key(std::string_view key, std::string& out);

// A decimal number at the start of `s` ([+-]digits[.digits][e[+-]digits]) times 10^pow10. Scaling goes
// through the decimal exponent, so 1572.7 ms becomes exactly the double nearest 1.5727 s. Only finite
// values; `consumed` receives the length read (0 when there is no number).
std::optional<double> parse_number(std::string_view s, int pow10 = 0, std::size_t* consumed = nullptr);

// Like parse_number but also accepts thousands separators ("10,530", "1,234.5"), as torchtitan prints
// them. A comma that does not separate groups of three digits makes the value unreadable rather than
// silently shorter.
std::optional<double> parse_grouped_number(std::string_view s, int pow10 = 0, std::size_t* consumed = nullptr);

// A non-negative integer at the start of `s` (at most 18 digits, so it cannot overflow).
std::optional<std::int64_t> parse_count(std::string_view s, std::size_t* consumed = nullptr);

// The first "YYYY-MM-DD HH:MM:SS" (or with 'T') in `s`, as microseconds on a proleptic Gregorian
// count, but only when it carries a fraction (",141" or ".918469"): whole seconds are too coarse for
// step times of about a second.
std::optional<std::int64_t> find_fractional_timestamp_us(std::string_view s);

} // namespace parallax::remote::text

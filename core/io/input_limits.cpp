#include "io/input_limits.hpp"

#include "spec/input_error.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace parallax {

namespace {

std::string mib(std::uintmax_t bytes)
{
    return std::to_string((bytes + (std::uintmax_t { 1 } << 20) - 1) >> 20) + " MiB";
}

std::string too_large_rule(std::size_t max_bytes)
{
    return "is larger than " + mib(max_bytes)
        + (max_bytes == kMaxInputFileBytes
                ? ", the limit for input files (scenarios, presets, calibrations, run lists, launch configurations)"
                : ", the limit for this kind of file");
}

// Reads at most the limit + 1 byte, so a file that grows while it is read cannot exhaust memory.
std::string read_capped(std::istream& in, const std::string& name, std::size_t max_bytes)
{
    std::string text;
    char buffer[1 << 16];
    while (in) {
        in.read(buffer, sizeof buffer);
        text.append(buffer, static_cast<std::size_t>(in.gcount()));
        if (text.size() > max_bytes)
            throw InputError(name, "", too_large_rule(max_bytes));
    }
    if (in.bad())
        throw InputError(name, "", "error while reading the file");
    return text;
}

} // namespace

void require_regular_file(const std::string& path, const std::string& what)
{
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    if (ec || !std::filesystem::exists(status))
        throw InputError(path, "", "cannot open the file for reading (it does not exist or is not accessible)");
    if (std::filesystem::is_directory(status))
        throw InputError(path, "", "is a directory, expected " + what);
    if (!std::filesystem::is_regular_file(status))
        throw InputError(path, "", "is not a regular file (a device, FIFO or socket), expected " + what);
}

std::string read_input_file(const std::string& path, std::size_t max_bytes)
{
    require_regular_file(path);
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    if (!ec && size > max_bytes)
        throw InputError(path, "", too_large_rule(max_bytes) + "; this one is " + mib(size));
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw InputError(path, "", "cannot open the file for reading");
    return read_capped(in, path, max_bytes);
}

std::string read_input_stream(std::istream& in, const std::string& name)
{
    return read_capped(in, name, kMaxInputFileBytes);
}

void check_json_nesting(std::string_view text, const std::string& file)
{
    int depth = 0;
    bool in_string = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (in_string) {
            if (c == '\\')
                ++i;
            else if (c == '"')
                in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > kMaxJsonNestingDepth)
                throw InputError(file, "",
                    "nests arrays and objects deeper than " + std::to_string(kMaxJsonNestingDepth)
                        + " levels (the limit for input files), at byte " + std::to_string(i));
        } else if (c == ']' || c == '}') {
            --depth;
        }
    }
}

std::string quoted_for_message(std::string_view text, std::size_t max_chars)
{
    std::size_t cut = text.size();
    if (cut > max_chars) {
        cut = max_chars;
        // Never split a UTF-8 sequence: back up over continuation bytes.
        while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80)
            --cut;
    }
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    out.reserve(cut + 16);
    for (std::size_t i = 0; i < cut; ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c == '\n')
            out += "\\n";
        else if (c == '\t')
            out += "\\t";
        else if (c == '\r')
            out += "\\r";
        else if (c < 0x20 || c == 0x7F) {
            out += "\\x";
            out += kHex[c >> 4];
            out += kHex[c & 0xF];
        } else if (c == 0xC2 && i + 1 < cut && (static_cast<unsigned char>(text[i + 1]) & 0xE0) == 0x80) {
            // U+0080..U+009F, the C1 controls (U+009B is a one-character CSI to some terminals).
            const auto low = static_cast<unsigned char>(text[++i]);
            out += "\\u00";
            out += kHex[low >> 4];
            out += kHex[low & 0xF];
        } else {
            out += static_cast<char>(c);
        }
    }
    if (cut < text.size())
        out += "... (" + std::to_string(text.size()) + " bytes)";
    return out;
}

std::string printable_rule(std::string_view rule)
{
    constexpr std::size_t kMaxRuleChars = 4000;
    std::string out;
    std::size_t start = 0;
    while (out.size() < kMaxRuleChars) {
        const std::size_t end = std::min(rule.find('\n', start), rule.size());
        out += quoted_for_message(rule.substr(start, end - start), kMaxRuleChars);
        if (end >= rule.size())
            break;
        out += '\n';
        start = end + 1;
    }
    return out;
}

} // namespace parallax

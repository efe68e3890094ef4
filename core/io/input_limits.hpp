#pragma once
// Limits on what a user's file may hold, so that a hostile or mistaken input (a 200 MB file,
// /dev/zero, a FIFO, ten thousand nested brackets, a NUL in a name) ends in a clear InputError
// within seconds instead of exhausting memory or hanging. docs/robustness.md lists them.
#include <cstddef>
#include <istream>
#include <string>
#include <string_view>

namespace parallax {

// Scenarios, presets, calibrations, run lists and launch configurations are kilobytes (the largest
// shipped, validation/published-runs.json, is 180 kB); 16 MiB leaves room for any real one while a
// parsed JSON document stays near 300 MB and takes seconds at worst (16 MiB of "0," is 8 M values).
inline constexpr std::size_t kMaxInputFileBytes = std::size_t { 16 } << 20;
// A measured PyTorch/Perfetto trace of a few steps is larger; its parsed tree is ~8x the text.
inline constexpr std::size_t kMaxTraceFileBytes = std::size_t { 128 } << 20;
// Real files nest a handful of levels; the parsed tree is walked recursively elsewhere.
inline constexpr int kMaxJsonNestingDepth = 64;

// Throws InputError unless `path` names a regular file (not a directory, device, FIFO or socket:
// /dev/zero never ends and opening a FIFO blocks). `what` says what was expected ("a scenario").
void require_regular_file(const std::string& path, const std::string& what = "an input file");

// The whole file, refusing non-regular files and anything over `max_bytes`.
std::string read_input_file(const std::string& path, std::size_t max_bytes = kMaxInputFileBytes);
// At most kMaxInputFileBytes from a stream (stdin); `name` is how errors call it.
std::string read_input_stream(std::istream& in, const std::string& name);

// A key, name or value quoted in an error message is cut to this many bytes.
inline constexpr std::size_t kMaxQuotedChars = 80;
// A key path in an error message (keys nest: "model.moe.experts") is cut to this many bytes.
inline constexpr std::size_t kMaxQuotedPathChars = 200;

// `text` fit for an error message: control characters (NUL, tab, newline, escape) written as
// \t, \n, \x00 ... (the C1 controls U+0080..U+009F as \u0080 ...), and cut to `max_chars` bytes (at a UTF-8 boundary)
// with the full length stated, so a NUL cannot end the message early (what() is a C string) and a 200 MB key is not
// echoed whole.
std::string quoted_for_message(std::string_view text, std::size_t max_chars = kMaxQuotedChars);

// A rule for an InputError: control characters escaped as in quoted_for_message except its line
// breaks (rules may list reasons line by line), cut to a few thousand bytes.
std::string printable_rule(std::string_view rule);

// Throws InputError when brackets/braces outside strings nest deeper than kMaxJsonNestingDepth.
void check_json_nesting(std::string_view text, const std::string& file);

} // namespace parallax

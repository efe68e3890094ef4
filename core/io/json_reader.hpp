#pragma once
// Strict reading of one JSON object: typed getters with ranges, and finish() rejects keys nobody
// asked for (a typo must never silently change a plan). Every error is an InputError naming the
// file, the full key path and the rule.
#include "spec/input_error.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace parallax {

class JsonObjectReader {
public:
    JsonObjectReader(const nlohmann::json& object, std::string file, std::string path);

    bool has(const std::string& key) const;
    const nlohmann::json* raw(const std::string& key); // nullptr when absent; marks the key known

    long long get_int(const std::string& key, long long min, long long max, std::optional<long long> fallback = {});
    double get_number(const std::string& key, double min, double max, std::optional<double> fallback = {});
    // Absent or null -> nullopt.
    std::optional<double> get_optional_number(const std::string& key, double min, double max);
    bool get_bool(const std::string& key, std::optional<bool> fallback = {});
    std::string get_string(const std::string& key, std::optional<std::string> fallback = {});
    // One of `choices`; the error lists them.
    std::string get_choice(
        const std::string& key, const std::vector<std::string>& choices, std::optional<std::string> fallback = {});

    // Throws on the first key that no getter asked for, suggesting the closest known key.
    void finish() const;

    std::string path_of(const std::string& key) const;
    const std::string& file() const { return m_file; }
    const std::string& path() const { return m_path; }
    [[noreturn]] void fail(const std::string& key, const std::string& rule) const;

private:
    const nlohmann::json& require(const std::string& key);

    const nlohmann::json& m_object;
    std::string m_file;
    std::string m_path;
    std::set<std::string> m_known;
};

// The JSON type as a user would name it ("a string", "an object", ...).
std::string json_type_name(const nlohmann::json& v);
// Closest of `candidates` to `word` by edit distance, or empty when nothing is close.
std::string closest_match(const std::string& word, const std::vector<std::string>& candidates);
// Parses text; syntax errors become InputErrors with line and column.
nlohmann::json parse_json_text(const std::string& text, const std::string& file);
// The whole file; throws InputError when unreadable, not a regular file or over kMaxInputFileBytes.
std::string read_text_file(const std::string& path);

} // namespace parallax

#include "io/json_reader.hpp"

#include "io/input_limits.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

namespace parallax {

std::string json_type_name(const nlohmann::json& v)
{
    switch (v.type()) {
    case nlohmann::json::value_t::null:
        return "null";
    case nlohmann::json::value_t::object:
        return "an object";
    case nlohmann::json::value_t::array:
        return "an array";
    case nlohmann::json::value_t::string:
        return "a string";
    case nlohmann::json::value_t::boolean:
        return "a boolean";
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
        return "an integer";
    case nlohmann::json::value_t::number_float:
        return "a number";
    default:
        return "an unsupported value";
    }
}

namespace {

std::size_t edit_distance(const std::string& a, const std::string& b)
{
    std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j)
        prev[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        cur[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
            cur[j] = std::min({ prev[j] + 1, cur[j - 1] + 1, sub });
        }
        std::swap(prev, cur);
    }
    return prev[b.size()];
}

std::string format_number(double v)
{
    std::ostringstream os;
    os << v;
    return os.str();
}

} // namespace

std::string closest_match(const std::string& word, const std::vector<std::string>& candidates)
{
    std::string best;
    std::size_t best_d = std::max<std::size_t>(2, word.size() / 3) + 1;
    for (const auto& c : candidates) {
        // The distance is at least the length difference: a 200 MB key is not compared letter by letter.
        const std::size_t length_gap = word.size() > c.size() ? word.size() - c.size() : c.size() - word.size();
        if (length_gap >= best_d)
            continue;
        const std::size_t d = edit_distance(word, c);
        if (d < best_d) {
            best_d = d;
            best = c;
        }
    }
    return best;
}

nlohmann::json parse_json_text(const std::string& text, const std::string& file)
{
    // Duplicate keys are rejected: JSON parsers silently keep the last one, so a pasted line could
    // change a plan unnoticed. One set of seen keys per open object.
    std::vector<std::set<std::string>> seen;
    std::string duplicate, duplicate_path;
    std::vector<std::string> path;
    auto callback = [&](int /*depth*/, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
        switch (event) {
        case nlohmann::json::parse_event_t::object_start:
            seen.emplace_back();
            path.emplace_back();
            break;
        case nlohmann::json::parse_event_t::object_end:
            if (!seen.empty())
                seen.pop_back();
            if (!path.empty())
                path.pop_back();
            break;
        case nlohmann::json::parse_event_t::key:
            if (!seen.empty() && parsed.is_string()) {
                const std::string k = parsed.get<std::string>();
                path.back() = k;
                if (!seen.back().insert(k).second && duplicate.empty()) {
                    duplicate = k;
                    for (const auto& p : path)
                        if (!p.empty())
                            duplicate_path += (duplicate_path.empty() ? "" : ".") + p;
                }
            }
            break;
        default:
            break;
        }
        return true;
    };
    check_json_nesting(text, file);
    nlohmann::json result;
    try {
        result = nlohmann::json::parse(text, callback);
    } catch (const nlohmann::json::parse_error& e) {
        // Turn the byte offset into line:column, which is what editors show.
        const std::size_t offset = std::min<std::size_t>(e.byte > 0 ? e.byte - 1 : 0, text.size());
        std::size_t line = 1, column = 1;
        for (std::size_t i = 0; i < offset; ++i) {
            if (text[i] == '\n') {
                ++line;
                column = 1;
            } else {
                ++column;
            }
        }
        std::string what = e.what();
        const auto pos = what.find("parse error");
        if (pos != std::string::npos)
            what = what.substr(pos);
        throw InputError(file, "",
            "not valid JSON at line " + std::to_string(line) + ", column " + std::to_string(column) + ": " + what);
    } catch (const nlohmann::json::exception& e) {
        // e.g. a number beyond the range of a double (1e400)
        std::string what = e.what();
        throw InputError(file, "", "not valid JSON: " + what);
    }
    if (!duplicate.empty())
        throw InputError(file, quoted_for_message(duplicate_path, kMaxQuotedPathChars),
            "duplicate key \"" + quoted_for_message(duplicate) + "\" (only one value per key is allowed)");
    return result;
}

std::string read_text_file(const std::string& path)
{
    return read_input_file(path);
}

JsonObjectReader::JsonObjectReader(const nlohmann::json& object, std::string file, std::string path)
    : m_object(object)
    , m_file(std::move(file))
    , m_path(std::move(path))
{
    if (!m_object.is_object())
        throw InputError(m_file,
            m_path.empty() ? std::string("(top level)") : quoted_for_message(m_path, kMaxQuotedPathChars),
            "must be a JSON object, found " + json_type_name(m_object));
}

std::string JsonObjectReader::path_of(const std::string& key) const
{
    return m_path.empty() ? key : m_path + "." + key;
}

void JsonObjectReader::fail(const std::string& key, const std::string& rule) const
{
    // Keys and values come from the file: a NUL must not end the message, a 200 MB key not fill it.
    throw InputError(
        m_file, quoted_for_message(key.empty() ? m_path : path_of(key), kMaxQuotedPathChars), printable_rule(rule));
}

bool JsonObjectReader::has(const std::string& key) const
{
    return m_object.contains(key);
}

const nlohmann::json* JsonObjectReader::raw(const std::string& key)
{
    m_known.insert(key);
    auto it = m_object.find(key);
    return it == m_object.end() ? nullptr : &*it;
}

const nlohmann::json& JsonObjectReader::require(const std::string& key)
{
    const nlohmann::json* v = raw(key);
    if (!v)
        fail(key, "missing (required)");
    return *v;
}

long long JsonObjectReader::get_int(
    const std::string& key, long long min, long long max, std::optional<long long> fallback)
{
    const nlohmann::json* v = raw(key);
    if (!v) {
        if (fallback)
            return *fallback;
        fail(key, "missing (required)");
    }
    long long value = 0;
    if (v->is_number_integer() && !v->is_number_unsigned()) {
        value = v->get<long long>();
    } else if (v->is_number_unsigned()) {
        const auto u = v->get<unsigned long long>();
        if (u > static_cast<unsigned long long>(max))
            fail(key,
                "must be an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "], got " + v->dump());
        value = static_cast<long long>(u);
    } else if (v->is_number_float()) {
        const double d = v->get<double>();
        if (std::isfinite(d) && std::floor(d) == d && std::fabs(d) < 9e15) {
            value = static_cast<long long>(d);
        } else {
            fail(key, "must be an integer, got " + v->dump());
        }
    } else {
        fail(key, "must be an integer, found " + json_type_name(*v));
    }
    if (value < min || value > max)
        fail(key,
            "must be an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "], got "
                + std::to_string(value));
    return value;
}

double JsonObjectReader::get_number(const std::string& key, double min, double max, std::optional<double> fallback)
{
    const nlohmann::json* v = raw(key);
    if (!v) {
        if (fallback)
            return *fallback;
        fail(key, "missing (required)");
    }
    if (!v->is_number())
        fail(key, "must be a number, found " + json_type_name(*v));
    const double d = v->get<double>();
    if (!std::isfinite(d) || d < min || d > max)
        fail(key, "must be a number in [" + format_number(min) + ", " + format_number(max) + "], got " + v->dump());
    return d;
}

std::optional<double> JsonObjectReader::get_optional_number(const std::string& key, double min, double max)
{
    const nlohmann::json* v = raw(key);
    if (!v || v->is_null())
        return std::nullopt;
    return get_number(key, min, max);
}

bool JsonObjectReader::get_bool(const std::string& key, std::optional<bool> fallback)
{
    const nlohmann::json* v = raw(key);
    if (!v) {
        if (fallback)
            return *fallback;
        fail(key, "missing (required)");
    }
    if (!v->is_boolean())
        fail(key, "must be true or false, found " + json_type_name(*v));
    return v->get<bool>();
}

std::string JsonObjectReader::get_string(const std::string& key, std::optional<std::string> fallback)
{
    const nlohmann::json* v = raw(key);
    if (!v) {
        if (fallback)
            return *fallback;
        fail(key, "missing (required)");
    }
    if (!v->is_string())
        fail(key, "must be a string, found " + json_type_name(*v));
    return v->get<std::string>();
}

std::string JsonObjectReader::get_choice(
    const std::string& key, const std::vector<std::string>& choices, std::optional<std::string> fallback)
{
    const nlohmann::json* v = raw(key);
    if (!v && fallback)
        return *fallback;
    const std::string s = get_string(key);
    if (std::find(choices.begin(), choices.end(), s) != choices.end())
        return s;
    std::string list;
    for (const auto& c : choices)
        list += (list.empty() ? "\"" : ", \"") + c + "\"";
    fail(key, "must be one of " + list + ", got \"" + quoted_for_message(s) + "\"");
}

void JsonObjectReader::finish() const
{
    std::vector<std::string> known(m_known.begin(), m_known.end());
    for (auto it = m_object.begin(); it != m_object.end(); ++it) {
        if (m_known.count(it.key()))
            continue;
        const std::string guess = closest_match(it.key(), known);
        std::string rule = "unknown key";
        if (!guess.empty())
            rule += " (did you mean \"" + guess + "\"?)";
        else {
            rule += "; known keys here: ";
            bool first = true;
            for (const auto& k : known) {
                rule += (first ? "" : ", ") + k;
                first = false;
            }
        }
        throw InputError(m_file, quoted_for_message(path_of(it.key()), kMaxQuotedPathChars), rule);
    }
}

} // namespace parallax

#pragma once
#include <stdexcept>
#include <string>

namespace parallax {

// Bad user input: names the file, the key path (e.g. "strategy.tp") and the rule that failed.
// Maps to exit code 2 in the CLI; the GUI shows it and keeps the previous plan.
class InputError : public std::runtime_error {
public:
    InputError(std::string file, std::string key, std::string rule)
        : std::runtime_error(format(file, key, rule))
        , m_file(std::move(file))
        , m_key(std::move(key))
        , m_rule(std::move(rule))
    {
    }
    const std::string& file() const { return m_file; }
    const std::string& key() const { return m_key; }
    const std::string& rule() const { return m_rule; }

private:
    static std::string format(const std::string& file, const std::string& key, const std::string& rule)
    {
        std::string s = file.empty() ? std::string("<input>") : file;
        s += ": ";
        if (!key.empty()) {
            s += key;
            s += ": ";
        }
        s += rule;
        return s;
    }
    std::string m_file;
    std::string m_key;
    std::string m_rule;
};

} // namespace parallax

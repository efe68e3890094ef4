#pragma once
// A passphrase or one-time code: held in memory only as long as needed and wiped when destroyed. Never
// written to disk, settings or logs.
#include <string.h> // explicit_bzero (glibc)
#include <string>

namespace parallax::remote {

class Secret {
public:
    Secret() = default;
    explicit Secret(std::string value)
        : m_value(std::move(value))
    {
    }
    Secret(const Secret& other)
        : m_value(other.m_value)
    {
    }
    Secret& operator=(const Secret& other)
    {
        if (this != &other) {
            wipe();
            m_value = other.m_value;
        }
        return *this;
    }
    Secret(Secret&& other) noexcept
        : m_value(std::move(other.m_value))
    {
        other.wipe();
    }
    Secret& operator=(Secret&& other) noexcept
    {
        if (this != &other) {
            wipe();
            m_value = std::move(other.m_value);
            other.wipe();
        }
        return *this;
    }
    ~Secret() { wipe(); }

    const char* c_str() const { return m_value.c_str(); }
    bool empty() const { return m_value.empty(); }
    void wipe()
    {
        if (!m_value.empty())
            explicit_bzero(m_value.data(), m_value.size());
        m_value.clear();
    }

private:
    std::string m_value;
};

} // namespace parallax::remote

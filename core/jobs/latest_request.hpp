#pragma once
// "The latest request wins": an interactive view asks for work faster than it finishes (a slider
// dragged, a zoom, a new selection). Each request takes a ticket; starting a new one makes every
// older ticket's token read cancelled, so stale work stops at its next checkpoint, and a result is
// delivered only if its ticket is still the latest when it arrives. Thread-safe; copies of the
// tokens may outlive this object.
#include "jobs/cancel_token.hpp"

#include <atomic>
#include <cstdint>
#include <memory>

namespace parallax {

class LatestRequest {
public:
    struct Ticket {
        std::uint64_t id = 0;
        CancelToken token;
    };

    // Starts a new request: every earlier ticket is stale from now on.
    Ticket next()
    {
        const std::uint64_t id = m_latest->fetch_add(1, std::memory_order_relaxed) + 1;
        return Ticket { id, CancelToken(m_latest, id) };
    }
    // Makes every outstanding ticket stale without starting a new request (shutdown, a reset).
    void cancel_all() { m_latest->fetch_add(1, std::memory_order_relaxed); }

    bool is_latest(std::uint64_t id) const { return m_latest->load(std::memory_order_relaxed) == id; }
    std::uint64_t latest() const { return m_latest->load(std::memory_order_relaxed); }

private:
    std::shared_ptr<std::atomic<std::uint64_t>> m_latest = std::make_shared<std::atomic<std::uint64_t>>(0);
};

} // namespace parallax

#pragma once
// The one way background work learns that it should stop. A token is cheap to copy and every copy
// reads the same state; the worker polls cancelled() at its natural checkpoints (a strategy, a row,
// an SSH wait) and returns early. A token is cancelled when someone calls cancel() on any copy, or,
// for a token handed out by LatestRequest, as soon as a newer request has started.
#include <atomic>
#include <cstdint>
#include <memory>

namespace parallax {

class LatestRequest;

class CancelToken {
public:
    CancelToken()
        : m_flag(std::make_shared<std::atomic<bool>>(false))
    {
    }

    void cancel() const { m_flag->store(true, std::memory_order_relaxed); }
    // Makes a token usable again after its work was cancelled (a worker that outlives one job).
    void reset() const { m_flag->store(false, std::memory_order_relaxed); }
    bool cancelled() const
    {
        if (m_flag->load(std::memory_order_relaxed))
            return true;
        return m_latest && m_latest->load(std::memory_order_relaxed) != m_request_id;
    }

private:
    friend class LatestRequest;
    CancelToken(std::shared_ptr<const std::atomic<std::uint64_t>> latest, std::uint64_t request_id)
        : m_flag(std::make_shared<std::atomic<bool>>(false))
        , m_latest(std::move(latest))
        , m_request_id(request_id)
    {
    }

    std::shared_ptr<std::atomic<bool>> m_flag;
    std::shared_ptr<const std::atomic<std::uint64_t>> m_latest;
    std::uint64_t m_request_id = 0;
};

} // namespace parallax

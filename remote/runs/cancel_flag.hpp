#pragma once
// A cancellation request shared between the thread that asks and the worker that checks it. Cheap to copy;
// every copy sees the same flag.
#include <atomic>
#include <memory>

namespace parallax::remote {

class CancelFlag {
public:
    CancelFlag()
        : m_flag(std::make_shared<std::atomic<bool>>(false))
    {
    }
    void cancel() const { m_flag->store(true, std::memory_order_relaxed); }
    void reset() const { m_flag->store(false, std::memory_order_relaxed); }
    bool cancelled() const { return m_flag->load(std::memory_order_relaxed); }

private:
    std::shared_ptr<std::atomic<bool>> m_flag;
};

} // namespace parallax::remote

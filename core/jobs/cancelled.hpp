#pragma once
// Long computations (a simulation, a lowering) that find their token cancelled deep inside, where
// returning early would leave no sensible value, throw Cancelled; the task that started them catches
// it (jobs/task_outcome.hpp).
#include "jobs/cancel_token.hpp"

#include <stdexcept>

namespace parallax {

class Cancelled : public std::runtime_error {
public:
    Cancelled()
        : std::runtime_error("cancelled")
    {
    }
};

inline void throw_if_cancelled(const CancelToken& token)
{
    if (token.cancelled())
        throw Cancelled();
}

} // namespace parallax

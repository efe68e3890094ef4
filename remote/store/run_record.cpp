#include "store/run_record.hpp"

namespace parallax::remote {

std::string_view to_string(RunState s)
{
    switch (s) {
    case RunState::created:
        return "created";
    case RunState::submitted:
        return "submitted";
    case RunState::queued:
        return "queued";
    case RunState::running:
        return "running";
    case RunState::cancelling:
        return "cancelling";
    case RunState::completed:
        return "completed";
    case RunState::failed:
        return "failed";
    case RunState::cancelled:
        return "cancelled";
    }
    return "created";
}

std::optional<RunState> run_state_from_string(std::string_view s)
{
    for (RunState r : { RunState::created, RunState::submitted, RunState::queued, RunState::running,
             RunState::cancelling, RunState::completed, RunState::failed, RunState::cancelled })
        if (to_string(r) == s)
            return r;
    return std::nullopt;
}

bool is_terminal(RunState s)
{
    return s == RunState::completed || s == RunState::failed || s == RunState::cancelled;
}

} // namespace parallax::remote

#pragma once
// Event simulator of the execution DAG: every device stream runs one op at a time, choosing its next
// op by the stream's ordering (program order, priority, zero-bubble fillers, or first-ready for
// communication links so collectives sharing a link contend). Gives start/end times of every op,
// per-device busy and idle time, the activation-memory peak along the real timeline, and the
// critical path.
#include "ir/execution_graph.hpp"
#include "jobs/cancelled.hpp"

#include <cstdint>
#include <vector>

namespace parallax {

struct SimulationResult {
    std::vector<double> start_s, end_s; // per op
    double makespan_s = 0;
    std::vector<double> compute_busy_s; // per device
    std::vector<double> compute_first_s, compute_last_s; // first start / last end of pipeline passes per device
    std::vector<double> peak_activation_bytes; // per device, along the timeline
    std::vector<std::uint32_t> critical_path; // op ids, first to last
    double critical_compute_s = 0; // compute time on the critical path
};

// Throws Cancelled when `cancel` is cancelled while it runs (checked every few thousand events).
SimulationResult simulate(const ExecutionGraph& g, const CancelToken* cancel = nullptr);

} // namespace parallax

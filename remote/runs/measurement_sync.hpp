#pragma once
// What the store holds of one run's measurements, so that a poll writes only the steps and benchmarks it
// changed: a long run's poll then costs what its new log lines brought, not every step again.
#include "runs/measurements.hpp"
#include "store/run_record.hpp"

#include <cstddef>
#include <vector>

namespace parallax::remote {

class StoredMeasurements {
public:
    // The change from what was stored to `now`, remembering `now` as stored. The first delta (and the first
    // after reset()) replaces everything: what an earlier process stored may have been parsed differently.
    MeasurementDelta delta_to(const Measurements& now);
    // The stored measurements no longer match the log (it was replaced): the next delta replaces them.
    void reset();

private:
    std::vector<StepRecord> m_steps; // as stored, in the parser's order (first printed first)
    std::size_t m_benches = 0;
    bool m_synced = false;
};

} // namespace parallax::remote

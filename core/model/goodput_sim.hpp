#pragma once
// Monte Carlo of the checkpoint/restart process of goodput.hpp: Poisson interruptions while the job
// runs, a checkpoint every interval_s of useful work, the work since the last completed checkpoint
// lost, then the recovery. Checks the closed form (tests) and can draw its spread (GUI).
#include "model/goodput.hpp"

#include <cstdint>

namespace parallax {

struct SimulatedGoodput {
    TimeFractions time;
    long long interruptions = 0;
    double wall_s = 0; // simulated
};

// Simulates until at least `wall_s` of wall time has passed. Deterministic for a seed.
SimulatedGoodput simulate_goodput(const CheckpointProcess& p, double wall_s, std::uint64_t seed);

} // namespace parallax

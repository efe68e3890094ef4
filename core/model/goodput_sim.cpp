#include "model/goodput_sim.hpp"

#include <limits>
#include <random>

namespace parallax {

SimulatedGoodput simulate_goodput(const CheckpointProcess& p, double wall_s, std::uint64_t seed)
{
    SimulatedGoodput out;
    const double tau = p.interval_s + p.write_s;
    if (tau <= 0 || wall_s <= 0)
        return out;
    std::mt19937_64 rng(seed);
    std::exponential_distribution<double> next_interruption(p.interruptions_per_s > 0 ? p.interruptions_per_s : 1.0);
    const bool never = p.interruptions_per_s <= 0;
    double useful = 0, writes = 0, lost = 0, t = 0;
    long long n = 0;
    while (t < wall_s) {
        // Memoryless: the time to the next interruption restarts at every segment.
        const double x = never ? std::numeric_limits<double>::infinity() : next_interruption(rng);
        if (x >= tau) {
            useful += p.interval_s;
            writes += p.write_s;
            t += tau;
        } else {
            lost += x;
            t += x + p.recovery.total();
            ++n;
        }
    }
    const double k = static_cast<double>(n);
    const RecoveryCost& r = p.recovery;
    out.wall_s = t;
    out.interruptions = n;
    out.time.useful = useful / t;
    out.time.checkpoint_writes = writes / t;
    out.time.lost_work = lost / t;
    out.time.restart = k * r.restart_s / t;
    out.time.replacement = k * r.replacement_s / t;
    out.time.reload = k * r.reload_s / t;
    out.time.warmup = k * r.warmup_s / t;
    return out;
}

} // namespace parallax

#include "model/moe_load.hpp"

#include <algorithm>

namespace parallax {

MoeLoad moe_load(const ModelSpec& m, const TrainingSpec& t, int ep) noexcept
{
    MoeLoad r;
    if (!m.is_moe())
        return r;
    const MoeSpec& e = *m.moe;
    // The capacity factor caps each expert at cf x its balanced share; the rest is dropped (GShard).
    const double cap = e.capacity_factor ? *e.capacity_factor : 1e30;
    if (t.moe_expert_load.size() == static_cast<std::size_t>(e.experts)) {
        double sum = 0;
        for (double v : t.moe_expert_load)
            sum += v;
        if (sum <= 0)
            return r;
        const double mean = sum / e.experts;
        const int per_rank = std::max(1, e.experts / std::max(1, ep));
        double kept_total = 0, dropped = 0, busiest_rank = 0, hottest = 0;
        for (int rank = 0; rank * per_rank < e.experts; ++rank) {
            double rank_load = 0;
            for (int x = rank * per_rank; x < std::min(e.experts, (rank + 1) * per_rank); ++x) {
                const double load = t.moe_expert_load[x] / mean;
                hottest = std::max(hottest, load);
                const double kept = std::min(load, cap);
                dropped += load - kept;
                rank_load += kept;
            }
            kept_total += rank_load;
            busiest_rank = std::max(busiest_rank, rank_load);
        }
        const int ranks = (e.experts + per_rank - 1) / per_rank;
        const double mean_rank = kept_total / ranks;
        r.straggler_ratio = mean_rank > 0 ? std::max(1.0, busiest_rank / mean_rank) : 1;
        r.dropped_fraction = dropped / e.experts;
        r.hottest_expert_ratio = hottest;
        return r;
    }
    if (t.moe_imbalance > 1) {
        // A scalar skew: the busiest rank receives `imbalance` times its share; capped by capacity.
        r.straggler_ratio = std::min(t.moe_imbalance, cap);
        r.hottest_expert_ratio = t.moe_imbalance;
        r.dropped_fraction = std::max(0.0, t.moe_imbalance - cap) / std::max(1, ep);
    }
    return r;
}

} // namespace parallax

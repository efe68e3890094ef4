#include "ir/hetero_lowering.hpp"

#include <algorithm>
#include <cmath>

namespace parallax {

long long hetero_microbatches(const HeteroModel& h)
{
    return std::max(1LL, std::llround(h.effective_microbatches()));
}

LoweredPlan lower_heterogeneous(const HeteroModel& h, long long microbatches)
{
    const std::vector<HeteroStageSource> sources = h.stage_sources();
    const auto step_microbatches = static_cast<double>(hetero_microbatches(h));
    const auto crit = static_cast<std::size_t>(h.prediction().critical_stage);
    // The pacing stage runs its busy time over the lowered micro-batches; every other stage its slowest
    // replica's micro-batch (the pipeline's fill and drain, as the hetero model's formula has them), but
    // never slower than the pacing stage, which it keeps up with by sharing micro-batches among its replicas.
    const double pace_crit_s = sources[crit].busy_s / step_microbatches;
    std::vector<LoweringStage> stages;
    for (const HeteroStageSource& src : sources) {
        LoweringStage st;
        st.ctx = src.ctx;
        st.strategy = src.strategy;
        st.costs = src.costs;
        st.clock = src.clock;
        st.tail = src.tail;
        st.pp_link_across_nodes = src.sends_across_groups || src.costs->groups.pp_pair.nodes > 1;
        st.dp_link_across_nodes = src.reduces_across_groups || src.costs->groups.dp_dense.nodes > 1;
        // The sends keep their own time (one each way per micro-batch, as stage_timing_of counts them);
        // the passes make up the rest of the pace.
        const int stage = static_cast<int>(stages.size());
        const double sends_s = 2 * p2p_per_direction_s(*src.strategy, *src.costs, stage);
        const double pace_s = &src == &sources[crit] ? pace_crit_s : std::min(src.microbatch_s, pace_crit_s);
        const double passes_s = src.microbatch_s - sends_s;
        st.time_scale = passes_s > 0 ? std::max(0.0, pace_s - sends_s) / passes_s : 1.0;
        stages.push_back(st);
    }
    return lower_stages(
        *sources.front().strategy, stages, microbatches > 0 ? microbatches : static_cast<long long>(step_microbatches));
}

} // namespace parallax

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
        // Every lowered micro-batch takes the stage's share of its busy time; the sends keep their own
        // time (one each way per micro-batch, as stage_timing_of counts them), the passes make up the rest.
        const double sends_s = 2 * p2p_per_direction_s(*src.strategy, *src.costs);
        const double pace_s = src.busy_s / step_microbatches;
        const double passes_s = src.microbatch_s - sends_s;
        st.time_scale = passes_s > 0 ? std::max(0.0, pace_s - sends_s) / passes_s : 1.0;
        stages.push_back(st);
    }
    return lower_stages(*sources.front().strategy, stages,
        microbatches > 0 ? microbatches : static_cast<long long>(step_microbatches));
}

} // namespace parallax

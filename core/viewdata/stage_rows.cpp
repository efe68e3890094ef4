#include "viewdata/stage_rows.hpp"

#include <algorithm>
#include <cstdlib>

namespace parallax {

std::vector<StageRow> stage_rows(const Scenario& s, const HeteroPrediction& h)
{
    std::vector<StageRow> rows;
    if (!s.heterogeneous() || h.stages.size() != s.stages.size())
        return rows;
    const double pacing_busy_s = h.stages[static_cast<std::size_t>(h.critical_stage)].busy_s;
    int first = 0;
    for (const HeteroStageReport& st : h.stages) {
        StageRow row;
        row.stage = st.stage;
        row.first_layer = first;
        row.layers = st.layers;
        row.microbatch_s = st.microbatch_s;
        row.busy_s = st.busy_s;
        row.busy_share = pacing_busy_s > 0 ? st.busy_s / pacing_busy_s : 0;
        row.critical = st.stage == h.critical_stage;
        for (const HeteroReplicaReport& r : st.replicas) {
            StageReplicaCell cell { r.group, r.gpu, r.tp, r.microbatches, r.busy_s, r.peak_memory_bytes,
                r.capacity_bytes };
            row.fits = row.fits && cell.fits();
            if (cell.memory_bytes > row.memory_bytes) {
                row.memory_bytes = cell.memory_bytes;
                row.capacity_bytes = cell.capacity_bytes;
            }
            row.replicas.push_back(std::move(cell));
        }
        first += st.layers;
        rows.push_back(std::move(row));
    }
    return rows;
}

std::optional<Scenario> move_stage_layers(const Scenario& s, int from, int to, int count)
{
    const int stages = static_cast<int>(s.stages.size());
    if (from < 0 || from >= stages || to < 0 || to >= stages || std::abs(from - to) != 1 || count < 1)
        return std::nullopt;
    if (s.stages[static_cast<std::size_t>(from)].layers - count < 1)
        return std::nullopt;
    Scenario out = s;
    out.stages[static_cast<std::size_t>(from)].layers -= count;
    out.stages[static_cast<std::size_t>(to)].layers += count;
    return out;
}

std::optional<Scenario> with_replica_tp(const Scenario& s, int stage, int replica, int tp)
{
    if (stage < 0 || stage >= static_cast<int>(s.stages.size()) || tp < 1)
        return std::nullopt;
    const auto& replicas = s.stages[static_cast<std::size_t>(stage)].replicas;
    if (replica < 0 || replica >= static_cast<int>(replicas.size()))
        return std::nullopt;
    Scenario out = s;
    out.stages[static_cast<std::size_t>(stage)].replicas[static_cast<std::size_t>(replica)].tp = tp;
    if (stage == 0 && replica == 0)
        out.strategy.tp = tp; // strategy.tp repeats the first replica's (spec/scenario.hpp)
    return out;
}

std::vector<int> replica_tp_choices(const Scenario& s, const std::string& group)
{
    std::vector<int> out;
    const NodeGroup* g = s.cluster.group(group);
    const int most = g ? std::max(1, g->gpus_per_node) : 1;
    for (int tp = 1; tp <= most; tp *= 2)
        out.push_back(tp);
    return out;
}

} // namespace parallax

#include "viewdata/comm_companions.hpp"

#include <algorithm>

namespace parallax {

int comm_companions(const LoweredPlan& plan, std::uint32_t op, CommCompanion (&out)[kMaxCommCompanions])
{
    const ExecutionGraph& g = plan.graph;
    const IrOpType type = g.type(op);
    const int chunk = g.chunk(op);
    if (chunk < 0 || chunk >= static_cast<int>(plan.chunk_timing.size())
        || (type != IrOpType::forward && type != IrOpType::backward_input))
        return 0;
    const ChunkTiming& ct = plan.chunk_timing[static_cast<std::size_t>(chunk)];
    const double share = type == IrOpType::forward ? 1.0 / 3.0 : 2.0 / 3.0;
    const struct {
        OpStream stream;
        IrStream track;
        IrOpType type;
        const char* label;
    } comms[] = { { OpStream::tp, IrStream::tp, IrOpType::tp_comm, "TP" },
        { OpStream::cp, IrStream::cp, IrOpType::cp_comm, "CP" },
        { OpStream::ep, IrStream::ep, IrOpType::ep_comm, "EP" } };
    const double duration = g.duration_s(op);
    int n = 0;
    for (const auto& c : comms) {
        const double busy = ct.comm_busy_s[static_cast<int>(c.stream)] * share;
        if (busy <= 0)
            continue;
        CommCompanion& o = out[n++];
        o.type = c.type;
        o.stream = c.track;
        o.label = c.label;
        o.busy_s = std::min(busy, duration);
        o.exposed_s = std::clamp(ct.exposed_s[static_cast<int>(c.stream)] * share, 0.0, o.busy_s);
    }
    return n;
}

} // namespace parallax

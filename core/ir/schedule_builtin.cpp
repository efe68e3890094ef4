// The built-in schedules written as programs: device_program's passes in order, a full backward
// as BW where the schedule keeps dgrad and wgrad together, and the lowering's in-flight limits
// as WAITs.
#include "ir/schedule_program.hpp"

namespace parallax {

namespace {

ScheduleDirective pass_directive(const ScheduledPass& p)
{
    ScheduleDirective d;
    d.microbatch = p.microbatch;
    d.chunk = p.local_chunk;
    d.filler = p.filler;
    d.kind = p.kind == PassKind::forward     ? DirectiveKind::forward
        : p.kind == PassKind::backward_input ? DirectiveKind::backward_input
                                             : DirectiveKind::backward_weight;
    return d;
}

ScheduleDirective wait_for(PassKind k, long long mb, int chunk)
{
    return { DirectiveKind::wait, static_cast<std::int32_t>(mb), static_cast<std::int16_t>(chunk), k, false };
}

// The micro-batches a stage may hold before a forward waits (lowering.cpp's in-flight limits):
// ZB-H1 keeps 1F1B's p - s behind the deferred W; DualPipe p - s on the down pipeline's stage s and
// s + 1 on the up one's, behind the backward.
void add_in_flight_waits(Schedule schedule, int d, int pp, long long m, std::vector<ScheduleDirective>& out)
{
    std::vector<ScheduleDirective> with;
    with.reserve(out.size() * 2);
    const long long half = m / 2;
    for (const ScheduleDirective& x : out) {
        if (x.kind == DirectiveKind::forward) {
            if (schedule == Schedule::zb_h1 && x.microbatch >= pp - d)
                with.push_back(wait_for(PassKind::backward_weight, x.microbatch - (pp - d), x.chunk));
            if (schedule == Schedule::dualpipe) {
                const long long limit = x.chunk == 0 ? pp - d : d + 1;
                const long long base = x.chunk == 0 ? 0 : half;
                if (x.microbatch - base >= limit)
                    with.push_back(wait_for(PassKind::backward_input, x.microbatch - limit, x.chunk));
            }
        }
        with.push_back(x);
    }
    out = std::move(with);
}

} // namespace

ScheduleProgram builtin_schedule_program(Schedule schedule, int pp, int vpp, long long m)
{
    // Without a pipeline there is no bubble for deferred W passes to fill: the lowering runs ZB-H1
    // as plain 1F1B then.
    if (schedule == Schedule::zb_h1 && pp == 1)
        schedule = Schedule::one_f_one_b;
    const bool dual = schedule == Schedule::dualpipe;
    const bool split = schedule == Schedule::zb_h1 || dual;
    ScheduleProgram p;
    p.layout = dual ? ChunkLayout::dualpipe : ChunkLayout::interleaved;
    p.order = dual ? ProgramOrder::priority : ProgramOrder::in_order;
    p.stages.resize(static_cast<std::size_t>(pp));
    for (int d = 0; d < pp; ++d) {
        std::vector<ScheduleDirective>& out = p.stages[d];
        for (const ScheduledPass& pass : device_program(schedule, d, pp, dual ? 1 : vpp, m)) {
            ScheduleDirective x = pass_directive(pass);
            if (!split && x.kind == DirectiveKind::backward_weight && !out.empty()
                && out.back().kind == DirectiveKind::backward_input) {
                out.back().kind = DirectiveKind::backward_full;
                continue;
            }
            out.push_back(x);
        }
        add_in_flight_waits(schedule, d, pp, m, out);
    }
    check_schedule_program(p);
    return p;
}

} // namespace parallax

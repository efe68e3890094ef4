// The built-in schedules written as programs: device_program's passes in order, a full backward
// as BW where the schedule keeps dgrad and wgrad together, and the lowering's in-flight limits
// as WAITs.
#include "ir/schedule_program.hpp"

#include <algorithm>
#include <deque>

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

namespace {

// One DualPipe rank emitting its passes: per-direction counters, and the W passes the zero-bubble
// backwards leave for later, first in first out (WeightGradStore).
class DualPipeRank {
public:
    DualPipeRank(int rank, int pp, long long m, std::vector<ScheduleDirective>& out)
        : rank_(rank)
        , pp_(pp)
        , flip_(rank >= pp / 2)
        , half_(m / 2)
        , out_(out)
    {
    }
    // Phases are named from the rank's side: the second half of the ranks swaps them (dualpipe.py
    // `phase ^= self.is_in_second_half`). Each pass receives its input right before it and sends
    // its output right after it.
    void forward(int phase)
    {
        const ScheduleDirective f = next(DirectiveKind::forward, phase, next_f_);
        recv(f);
        out_.push_back(f);
        send(f);
    }
    void backward(int phase, bool zero_bubble)
    {
        const ScheduleDirective b
            = next(zero_bubble ? DirectiveKind::backward_input : DirectiveKind::backward_full, phase, next_b_);
        recv(b);
        out_.push_back(b);
        send(b);
        if (zero_bubble)
            weights_.push_back(b);
    }
    // A forward and a backward run as one overlapped pair (_forward_backward_chunk): both inputs
    // arrive before either starts.
    void forward_backward(int forward_phase, int backward_phase)
    {
        const ScheduleDirective f = next(DirectiveKind::forward, forward_phase, next_f_);
        const ScheduleDirective b = next(DirectiveKind::backward_full, backward_phase, next_b_);
        recv(f);
        recv(b);
        out_.push_back(f);
        out_.push_back(b);
        send(f);
        send(b);
    }
    void weight()
    {
        ScheduleDirective w = weights_.front();
        weights_.pop_front();
        w.kind = DirectiveKind::backward_weight;
        out_.push_back(w);
    }

private:
    ScheduleDirective next(DirectiveKind kind, int phase, long long (&counter)[2])
    {
        const int chunk = phase ^ static_cast<int>(flip_);
        return { kind, static_cast<std::int32_t>(chunk * half_ + counter[chunk]++), static_cast<std::int16_t>(chunk),
            PassKind::forward, false };
    }
    // The down pipeline (chunk 0) starts on rank 0, the up one (chunk 1) on the last rank.
    bool first_in_pipe(int chunk) const { return rank_ == (chunk == 0 ? 0 : pp_ - 1); }
    bool last_in_pipe(int chunk) const { return rank_ == (chunk == 0 ? pp_ - 1 : 0); }
    void comm(DirectiveKind kind, const ScheduleDirective& d)
    {
        const PassKind target = d.kind == DirectiveKind::forward ? PassKind::forward : PassKind::backward_input;
        out_.push_back({ kind, d.microbatch, d.chunk, target, false });
    }
    void recv(const ScheduleDirective& d)
    {
        if (d.kind == DirectiveKind::forward ? !first_in_pipe(d.chunk) : !last_in_pipe(d.chunk))
            comm(DirectiveKind::recv, d);
    }
    void send(const ScheduleDirective& d)
    {
        if (d.kind == DirectiveKind::forward ? !last_in_pipe(d.chunk) : !first_in_pipe(d.chunk))
            comm(DirectiveKind::send, d);
    }
    int rank_;
    int pp_;
    bool flip_;
    long long half_;
    long long next_f_[2] = {};
    long long next_b_[2] = {};
    std::deque<ScheduleDirective> weights_;
    std::vector<ScheduleDirective>& out_;
};

} // namespace

ScheduleProgram dualpipe_reference_program(int pp, long long m)
{
    ScheduleProgram p;
    p.layout = ChunkLayout::dualpipe;
    p.stages.resize(static_cast<std::size_t>(pp));
    const int half_ranks = pp / 2;
    const long long half_chunks = m / 2;
    for (int r = 0; r < pp; ++r) {
        DualPipeRank x(r, pp, m, p.stages[r]);
        const int hr = std::min(r, pp - 1 - r);
        for (int i = 0; i < (half_ranks - hr - 1) * 2; ++i) // step 1: nF0
            x.forward(0);
        for (int i = 0; i < hr + 1; ++i) { // step 2: nF0F1
            x.forward(0);
            x.forward(1);
        }
        for (int i = 0; i < half_ranks - hr - 1; ++i) { // step 3: nB1W1F1, zero bubble
            x.backward(1, true);
            x.weight();
            x.forward(1);
        }
        const bool middle = hr == half_ranks - 1;
        for (long long i = 0; i < half_chunks - pp + hr + 1; ++i) { // step 4: nF0B1F1B0
            if (i == 0 && middle) {
                x.forward(0); // the middle ranks do not overlap this first pair
                x.backward(1, false);
            } else {
                x.forward_backward(0, 1);
            }
            x.forward_backward(1, 0);
        }
        for (int i = 0; i < half_ranks - hr - 1; ++i) { // step 5: nB1F1B0
            x.backward(1, false);
            x.forward_backward(1, 0);
        }
        bool zero_bubble = false; // step 6: nB1B0, the second half zero bubble
        for (int i = 0; i < hr + 1; ++i) {
            if (i == (hr + 1) / 2 && hr % 2 == 1)
                zero_bubble = true;
            x.backward(1, zero_bubble);
            if (i == (hr + 1) / 2 && hr % 2 == 0)
                zero_bubble = true;
            x.backward(0, zero_bubble);
        }
        for (int i = 0; i < half_ranks - hr - 1; ++i) { // step 7: nWB0, zero bubble
            x.weight();
            x.backward(0, true);
        }
        for (int i = 0; i < hr + 1; ++i) // step 8: nW
            x.weight();
    }
    check_schedule_program(p);
    return p;
}

} // namespace parallax

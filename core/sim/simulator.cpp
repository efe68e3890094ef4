#include "sim/simulator.hpp"

#include <algorithm>
#include <deque>
#include <limits>
#include <queue>
#include <stdexcept>

namespace parallax {

namespace {

constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

struct Resource {
    std::vector<std::uint32_t> program; // program-ordered ops in order
    std::size_t next_program = 0;
    std::vector<std::uint32_t> ready_priority; // small sets: linear scan
    std::deque<std::uint32_t> ready_filler;
    std::deque<std::uint32_t> ready_fifo;
    bool busy = false;
    std::uint32_t last_op = kNone; // for the critical path
};

struct Event {
    double time;
    std::uint32_t op;
    std::uint32_t version; // stale when the op's finish time moved (link sharing changed)
    bool operator>(const Event& o) const { return time > o.time || (time == o.time && op > o.op); }
};

// Ops of several streams that overlap on one physical link share its bandwidth equally.
struct Link {
    std::vector<std::uint32_t> active;
    double last_update = 0;
};

} // namespace

SimulationResult simulate(const ExecutionGraph& g)
{
    const std::size_t n = g.size();
    SimulationResult r;
    r.start_s.assign(n, 0);
    r.end_s.assign(n, 0);
    const int devices = std::max(1, g.devices);
    r.compute_busy_s.assign(static_cast<std::size_t>(devices), 0);
    r.compute_first_s.assign(static_cast<std::size_t>(devices), std::numeric_limits<double>::infinity());
    r.compute_last_s.assign(static_cast<std::size_t>(devices), 0);
    r.peak_activation_bytes.assign(static_cast<std::size_t>(devices), 0);
    std::vector<double> live_activation(static_cast<std::size_t>(devices), 0);

    // Successors and in-degrees.
    std::vector<std::uint32_t> indeg(n, 0), succ_begin(n + 1, 0);
    for (std::uint32_t i = 0; i < n; ++i)
        for (std::uint32_t p : g.deps(i)) {
            ++indeg[i];
            ++succ_begin[p + 1];
        }
    for (std::size_t i = 0; i < n; ++i)
        succ_begin[i + 1] += succ_begin[i];
    std::vector<std::uint32_t> succ(succ_begin[n]);
    {
        std::vector<std::uint32_t> fill(succ_begin.begin(), succ_begin.end() - 1);
        for (std::uint32_t i = 0; i < n; ++i)
            for (std::uint32_t p : g.deps(i))
                succ[fill[p]++] = i;
    }

    auto resource_of = [&](std::uint32_t op) {
        return static_cast<std::size_t>(g.device(op)) * kIrStreamCount + static_cast<std::size_t>(g.stream(op));
    };
    std::vector<Resource> res(static_cast<std::size_t>(devices) * kIrStreamCount);
    std::vector<std::uint32_t> program_pos(n, kNone);
    for (std::uint32_t i = 0; i < n; ++i) {
        if (g.ordering(i) == IrOrdering::program) {
            Resource& rs = res[resource_of(i)];
            program_pos[i] = static_cast<std::uint32_t>(rs.program.size());
            rs.program.push_back(i);
        }
    }
    std::vector<char> ready(n, 0);
    std::vector<double> ready_time(n, 0);
    std::vector<std::uint32_t> gate(n, kNone); // the predecessor whose completion made the op ready
    std::vector<std::uint32_t> started_after(n, kNone); // what the op waited for (dependency or stream)
    std::priority_queue<Event, std::vector<Event>, std::greater<>> events;
    std::size_t finished = 0;
    std::vector<Link> links(static_cast<std::size_t>(devices) * kIrLinkCount);
    std::vector<double> remaining(n, 0);
    std::vector<std::uint32_t> version(n, 0);
    auto link_of = [&](std::uint32_t op) -> Link* {
        if (g.link(op) == IrLink::none)
            return nullptr;
        return &links[static_cast<std::size_t>(g.device(op)) * kIrLinkCount + static_cast<std::size_t>(g.link(op))];
    };
    // Advances the work of a link's active ops to `now` at the current share.
    auto advance = [&](Link& l, double now) {
        if (!l.active.empty()) {
            const double done = (now - l.last_update) / static_cast<double>(l.active.size());
            for (std::uint32_t a : l.active)
                remaining[a] = std::max(0.0, remaining[a] - done);
        }
        l.last_update = now;
    };
    auto reschedule = [&](Link& l, double now) {
        const double k = static_cast<double>(l.active.size());
        for (std::uint32_t a : l.active) {
            r.end_s[a] = now + remaining[a] * k;
            events.push({ r.end_s[a], a, ++version[a] });
        }
    };

    auto start_op = [&](std::uint32_t op, Resource& rs, double now) {
        rs.busy = true;
        r.start_s[op] = now;
        started_after[op] = (rs.last_op != kNone && r.end_s[rs.last_op] >= ready_time[op]) ? rs.last_op : gate[op];
        rs.last_op = op;
        if (Link* l = link_of(op)) {
            advance(*l, now);
            remaining[op] = g.duration_s(op);
            l->active.push_back(op);
            reschedule(*l, now);
        } else {
            r.end_s[op] = now + g.duration_s(op);
            events.push({ r.end_s[op], op, version[op] });
        }
    };
    auto try_start = [&](std::size_t ri, double now) {
        Resource& rs = res[ri];
        if (rs.busy)
            return;
        if (rs.next_program < rs.program.size()) {
            const std::uint32_t op = rs.program[rs.next_program];
            if (ready[op]) {
                ++rs.next_program;
                start_op(op, rs, now);
                return;
            }
        }
        if (!rs.ready_priority.empty()) {
            auto best = std::min_element(
                rs.ready_priority.begin(), rs.ready_priority.end(), [&](std::uint32_t a, std::uint32_t b) {
                    return g.priority(a) < g.priority(b) || (g.priority(a) == g.priority(b) && a < b);
                });
            const std::uint32_t op = *best;
            rs.ready_priority.erase(best);
            start_op(op, rs, now);
            return;
        }
        if (!rs.ready_filler.empty()) {
            const std::uint32_t op = rs.ready_filler.front();
            rs.ready_filler.pop_front();
            start_op(op, rs, now);
            return;
        }
        if (!rs.ready_fifo.empty()) {
            const std::uint32_t op = rs.ready_fifo.front();
            rs.ready_fifo.pop_front();
            start_op(op, rs, now);
        }
    };
    auto make_ready = [&](std::uint32_t op, double now) {
        ready[op] = 1;
        ready_time[op] = now;
        Resource& rs = res[resource_of(op)];
        switch (g.ordering(op)) {
        case IrOrdering::program:
            break; // picked up in program order
        case IrOrdering::priority:
            rs.ready_priority.push_back(op);
            break;
        case IrOrdering::filler:
            rs.ready_filler.push_back(op);
            break;
        case IrOrdering::fifo:
            rs.ready_fifo.push_back(op);
            break;
        }
        try_start(resource_of(op), now);
    };

    for (std::uint32_t i = 0; i < n; ++i)
        if (indeg[i] == 0)
            make_ready(i, 0.0);
    while (!events.empty()) {
        const Event e = events.top();
        events.pop();
        const std::uint32_t op = e.op;
        if (e.version != version[op])
            continue; // superseded: the op's share of its link changed
        if (Link* l = link_of(op)) {
            advance(*l, e.time);
            l->active.erase(std::find(l->active.begin(), l->active.end(), op));
            r.end_s[op] = e.time;
            reschedule(*l, e.time);
        }
        ++finished;
        const std::size_t ri = resource_of(op);
        res[ri].busy = false;
        const int d = g.device(op);
        const IrOpType t = g.type(op);
        if (t == IrOpType::forward || t == IrOpType::backward_input || t == IrOpType::backward_weight
            || t == IrOpType::recompute) {
            r.compute_busy_s[d] += g.duration_s(op);
            r.compute_first_s[d] = std::min(r.compute_first_s[d], r.start_s[op]);
            r.compute_last_s[d] = std::max(r.compute_last_s[d], r.end_s[op]);
        }
        if (g.activation_delta(op) != 0) {
            live_activation[d] += g.activation_delta(op);
            r.peak_activation_bytes[d] = std::max(r.peak_activation_bytes[d], live_activation[d]);
        }
        r.makespan_s = std::max(r.makespan_s, e.time);
        for (std::uint32_t k = succ_begin[op]; k < succ_begin[op + 1]; ++k) {
            const std::uint32_t s = succ[k];
            if (--indeg[s] == 0) {
                gate[s] = op;
                make_ready(s, e.time);
            }
        }
        try_start(ri, e.time);
    }
    if (finished != n)
        throw std::logic_error("execution graph has a cycle or an unreachable op (" + std::to_string(n - finished)
            + " of " + std::to_string(n) + " ops never ran)");

    // Critical path: walk back from the op that finished last through what each op waited for.
    std::uint32_t last = 0;
    for (std::uint32_t i = 0; i < n; ++i)
        if (r.end_s[i] > r.end_s[last])
            last = i;
    for (std::uint32_t op = n ? last : kNone; op != kNone; op = started_after[op]) {
        r.critical_path.push_back(op);
        if (is_compute(g.type(op)))
            r.critical_compute_s += g.duration_s(op);
        if (r.critical_path.size() > n)
            break;
    }
    std::reverse(r.critical_path.begin(), r.critical_path.end());
    for (int d = 0; d < devices; ++d)
        if (!(r.compute_first_s[d] < std::numeric_limits<double>::infinity()))
            r.compute_first_s[d] = 0;
    return r;
}

} // namespace parallax

#include "sim/simulator.hpp"

#include <algorithm>
#include <deque>
#include <limits>
#include <queue>
#include <stdexcept>

namespace parallax {

namespace {

constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
// A few thousand events take well under a millisecond: a cancelled simulation stops that soon.
constexpr std::uint32_t kEventsPerCancelCheck = 4096;

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

// One run of the event simulation over a graph: resources (a stream of a device) start their ready
// ops by their ordering; ops on a shared physical link split its bandwidth; a finished op makes its
// successors ready.
class EventSimulation {
public:
    explicit EventSimulation(const ExecutionGraph& g)
        : g_(g)
        , n_(g.size())
        , devices_(std::max(1, g.devices))
    {
        const auto devices = static_cast<std::size_t>(devices_);
        r_.start_s.assign(n_, 0);
        r_.end_s.assign(n_, 0);
        r_.compute_busy_s.assign(devices, 0);
        r_.compute_first_s.assign(devices, std::numeric_limits<double>::infinity());
        r_.compute_last_s.assign(devices, 0);
        r_.peak_activation_bytes.assign(devices, 0);
        live_activation_.assign(devices, 0);
        index_successors();
        res_.resize(devices * kIrStreamCount);
        for (std::uint32_t i = 0; i < n_; ++i)
            if (g.ordering(i) == IrOrdering::program)
                res_[resource_of(i)].program.push_back(i);
        ready_.assign(n_, 0);
        ready_time_.assign(n_, 0);
        gate_.assign(n_, kNone);
        started_after_.assign(n_, kNone);
        links_.resize(devices * kIrLinkCount);
        remaining_.assign(n_, 0);
        version_.assign(n_, 0);
    }

    SimulationResult run(const CancelToken* cancel) &&
    {
        for (std::uint32_t i = 0; i < n_; ++i)
            if (indeg_[i] == 0)
                make_ready(i, 0.0);
        std::uint32_t until_check = kEventsPerCancelCheck;
        while (!events_.empty()) {
            if (cancel && --until_check == 0) {
                throw_if_cancelled(*cancel);
                until_check = kEventsPerCancelCheck;
            }
            const Event e = events_.top();
            events_.pop();
            if (e.version != version_[e.op])
                continue; // superseded: the op's share of its link changed
            finish(e);
        }
        if (finished_ != n_)
            throw std::logic_error("execution graph has a cycle or an unreachable op (" + std::to_string(n_ - finished_)
                + " of " + std::to_string(n_) + " ops never ran)");
        trace_critical_path();
        for (int d = 0; d < devices_; ++d)
            if (!(r_.compute_first_s[d] < std::numeric_limits<double>::infinity()))
                r_.compute_first_s[d] = 0;
        return std::move(r_);
    }

private:
    // Successors and in-degrees.
    void index_successors()
    {
        indeg_.assign(n_, 0);
        succ_begin_.assign(n_ + 1, 0);
        for (std::uint32_t i = 0; i < n_; ++i)
            for (std::uint32_t p : g_.deps(i)) {
                ++indeg_[i];
                ++succ_begin_[p + 1];
            }
        for (std::size_t i = 0; i < n_; ++i)
            succ_begin_[i + 1] += succ_begin_[i];
        succ_.resize(succ_begin_[n_]);
        std::vector<std::uint32_t> fill(succ_begin_.begin(), succ_begin_.end() - 1);
        for (std::uint32_t i = 0; i < n_; ++i)
            for (std::uint32_t p : g_.deps(i))
                succ_[fill[p]++] = i;
    }

    std::size_t resource_of(std::uint32_t op) const
    {
        return static_cast<std::size_t>(g_.device(op)) * kIrStreamCount + static_cast<std::size_t>(g_.stream(op));
    }

    Link* link_of(std::uint32_t op)
    {
        if (g_.link(op) == IrLink::none)
            return nullptr;
        return &links_[static_cast<std::size_t>(g_.device(op)) * kIrLinkCount + static_cast<std::size_t>(g_.link(op))];
    }

    // Advances the work of a link's active ops to `now` at the current share.
    void advance(Link& l, double now)
    {
        if (!l.active.empty()) {
            const double done = (now - l.last_update) / static_cast<double>(l.active.size());
            for (std::uint32_t a : l.active)
                remaining_[a] = std::max(0.0, remaining_[a] - done);
        }
        l.last_update = now;
    }

    void reschedule(Link& l, double now)
    {
        const double k = static_cast<double>(l.active.size());
        for (std::uint32_t a : l.active) {
            r_.end_s[a] = now + remaining_[a] * k;
            events_.push({ r_.end_s[a], a, ++version_[a] });
        }
    }

    void start_op(std::uint32_t op, Resource& rs, double now)
    {
        rs.busy = true;
        r_.start_s[op] = now;
        started_after_[op] = (rs.last_op != kNone && r_.end_s[rs.last_op] >= ready_time_[op]) ? rs.last_op : gate_[op];
        rs.last_op = op;
        if (Link* l = link_of(op)) {
            advance(*l, now);
            remaining_[op] = g_.duration_s(op);
            l->active.push_back(op);
            reschedule(*l, now);
        } else {
            r_.end_s[op] = now + g_.duration_s(op);
            events_.push({ r_.end_s[op], op, version_[op] });
        }
    }

    // The next op of an idle resource: its program's next op when ready, else the ready op of
    // highest priority, else the oldest filler, else the oldest fifo op.
    void try_start(std::size_t ri, double now)
    {
        Resource& rs = res_[ri];
        if (rs.busy)
            return;
        if (rs.next_program < rs.program.size()) {
            const std::uint32_t op = rs.program[rs.next_program];
            if (ready_[op]) {
                ++rs.next_program;
                start_op(op, rs, now);
                return;
            }
        }
        if (!rs.ready_priority.empty()) {
            auto best = std::min_element(
                rs.ready_priority.begin(), rs.ready_priority.end(), [&](std::uint32_t a, std::uint32_t b) {
                    return g_.priority(a) < g_.priority(b) || (g_.priority(a) == g_.priority(b) && a < b);
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
    }

    void make_ready(std::uint32_t op, double now)
    {
        ready_[op] = 1;
        ready_time_[op] = now;
        Resource& rs = res_[resource_of(op)];
        switch (g_.ordering(op)) {
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
    }

    // Per-device compute times and live activations as an op finishes.
    void account(std::uint32_t op)
    {
        const int d = g_.device(op);
        const IrOpType t = g_.type(op);
        if (t == IrOpType::forward || t == IrOpType::backward_input || t == IrOpType::backward_weight
            || t == IrOpType::recompute) {
            r_.compute_busy_s[d] += g_.duration_s(op);
            r_.compute_first_s[d] = std::min(r_.compute_first_s[d], r_.start_s[op]);
            r_.compute_last_s[d] = std::max(r_.compute_last_s[d], r_.end_s[op]);
        }
        if (g_.activation_delta(op) != 0) {
            live_activation_[d] += g_.activation_delta(op);
            r_.peak_activation_bytes[d] = std::max(r_.peak_activation_bytes[d], live_activation_[d]);
        }
    }

    void finish(const Event& e)
    {
        const std::uint32_t op = e.op;
        if (Link* l = link_of(op)) {
            advance(*l, e.time);
            l->active.erase(std::find(l->active.begin(), l->active.end(), op));
            r_.end_s[op] = e.time;
            reschedule(*l, e.time);
        }
        ++finished_;
        const std::size_t ri = resource_of(op);
        res_[ri].busy = false;
        account(op);
        r_.makespan_s = std::max(r_.makespan_s, e.time);
        for (std::uint32_t k = succ_begin_[op]; k < succ_begin_[op + 1]; ++k) {
            const std::uint32_t s = succ_[k];
            if (--indeg_[s] == 0) {
                gate_[s] = op;
                make_ready(s, e.time);
            }
        }
        try_start(ri, e.time);
    }

    // Critical path: walk back from the op that finished last through what each op waited for.
    void trace_critical_path()
    {
        std::uint32_t last = 0;
        for (std::uint32_t i = 0; i < n_; ++i)
            if (r_.end_s[i] > r_.end_s[last])
                last = i;
        for (std::uint32_t op = n_ ? last : kNone; op != kNone; op = started_after_[op]) {
            r_.critical_path.push_back(op);
            if (is_compute(g_.type(op)))
                r_.critical_compute_s += g_.duration_s(op);
            if (r_.critical_path.size() > n_)
                break;
        }
        std::reverse(r_.critical_path.begin(), r_.critical_path.end());
    }

    const ExecutionGraph& g_;
    const std::size_t n_;
    const int devices_;
    SimulationResult r_;
    std::vector<double> live_activation_; // per device
    std::vector<std::uint32_t> indeg_, succ_begin_, succ_;
    std::vector<Resource> res_; // per (device, stream)
    std::vector<char> ready_;
    std::vector<double> ready_time_;
    std::vector<std::uint32_t> gate_; // the predecessor whose completion made the op ready
    std::vector<std::uint32_t> started_after_; // what the op waited for (dependency or stream)
    std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
    std::size_t finished_ = 0;
    std::vector<Link> links_; // per (device, physical link)
    std::vector<double> remaining_; // work left of a link op, seconds alone on the link
    std::vector<std::uint32_t> version_;
};

} // namespace

SimulationResult simulate(const ExecutionGraph& g, const CancelToken* cancel)
{
    return EventSimulation(g).run(cancel);
}

} // namespace parallax

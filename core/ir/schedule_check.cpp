// The checks a schedule program passes before anything is costed: every pass once, backward after
// forward, W after B, matching sends and receives, every micro-batch present, and no deadlock (a
// dependency-order run of the program must finish). The same run counts in-flight activations.
#include "ir/schedule_program.hpp"

#include <algorithm>
#include <deque>
#include <optional>
#include <tuple>

namespace parallax {

namespace {

[[noreturn]] void fail(const std::string& message)
{
    throw ScheduleProgramError(message);
}

// Where each (stage, chunk, micro-batch)'s directives sit in its stage's list (-1: not listed).
struct Slot {
    int f = -1, b = -1, w = -1, send_f = -1, send_b = -1, recv_f = -1, recv_b = -1;
};

std::string letter(PassKind k)
{
    return k == PassKind::forward ? "F" : k == PassKind::backward_input ? "B" : "W";
}

struct Place {
    int stage = 0;
    int chunk = 0;
};

// A dependency that is not met yet: step `step` of `stage` (-1: never scheduled), named `what`.
struct Dep {
    int stage = 0;
    int step = -1;
    ScheduleDirective what; // as the stage that runs it writes it
};

class ProgramChecker {
public:
    explicit ProgramChecker(ScheduleProgram& p)
        : p_(p)
        , pp_(static_cast<int>(p.stages.size()))
    {
    }

    void run()
    {
        measure();
        index();
        if (p_.explicit_comm)
            check_comm_pairs();
        check_order();
        if (p_.order == ProgramOrder::in_order)
            run_in_order();
        else
            run_by_priority();
        check_presence();
    }

private:
    static std::string at(int s, int i, const ScheduleDirective& d)
    {
        return "stage " + std::to_string(s) + ", step " + std::to_string(i) + " (" + directive_text(d) + ")";
    }
    std::string at(int s, int i) const { return at(s, i, p_.stages[s][i]); }
    static bool is_pass(DirectiveKind k)
    {
        return k == DirectiveKind::forward || k == DirectiveKind::backward_input || k == DirectiveKind::backward_weight
            || k == DirectiveKind::backward_full;
    }

    // Chunk and micro-batch counts, and which kind of backward the program writes.
    void measure()
    {
        int max_chunk = 0;
        long long max_mb = -1;
        bool split = false;
        for (const auto& stage : p_.stages)
            for (const ScheduleDirective& d : stage) {
                max_chunk = std::max<int>(max_chunk, d.chunk);
                max_mb = std::max<long long>(max_mb, d.microbatch);
                split |= d.kind == DirectiveKind::backward_input;
                p_.explicit_comm |= d.kind == DirectiveKind::send || d.kind == DirectiveKind::recv;
            }
        if (max_mb < 0)
            fail("the program runs no micro-batch");
        p_.split_backward = split;
        p_.chunks = max_chunk + 1;
        p_.microbatches = max_mb + 1;
        if (p_.layout == ChunkLayout::dualpipe && p_.chunks != 2)
            fail("layout dualpipe needs chunks 0 (down pipeline) and 1 (up pipeline) on every stage");
        if (p_.explicit_comm && p_.order == ProgramOrder::priority)
            fail("order priority infers sends and receives: leave SEND and RECV out");
        slots_.assign(static_cast<std::size_t>(pp_) * p_.chunks * p_.microbatches, Slot {});
    }

    Slot& slot(int s, int c, long long mb)
    {
        return slots_[(static_cast<std::size_t>(s) * p_.chunks + c) * p_.microbatches + mb];
    }

    std::optional<Place> prev_place(Place x) const
    {
        if (p_.layout == ChunkLayout::dualpipe) {
            const int s = x.chunk == 0 ? x.stage - 1 : x.stage + 1;
            return s < 0 || s >= pp_ ? std::nullopt : std::optional<Place>(Place { s, x.chunk });
        }
        const int k = x.chunk * pp_ + x.stage - 1;
        return k < 0 ? std::nullopt : std::optional<Place>(Place { k % pp_, k / pp_ });
    }
    std::optional<Place> next_place(Place x) const
    {
        if (p_.layout == ChunkLayout::dualpipe) {
            const int s = x.chunk == 0 ? x.stage + 1 : x.stage - 1;
            return s < 0 || s >= pp_ ? std::nullopt : std::optional<Place>(Place { s, x.chunk });
        }
        const int k = x.chunk * pp_ + x.stage + 1;
        return k >= pp_ * p_.chunks ? std::nullopt : std::optional<Place>(Place { k % pp_, k / pp_ });
    }

    void set_once(int& pos, int s, int i, const char* what)
    {
        if (pos >= 0)
            fail(at(s, i) + ": a second " + what + " (the first is step " + std::to_string(pos) + ")");
        pos = i;
    }

    void index()
    {
        for (int s = 0; s < pp_; ++s)
            for (int i = 0; i < static_cast<int>(p_.stages[s].size()); ++i) {
                const ScheduleDirective& d = p_.stages[s][i];
                Slot& x = slot(s, d.chunk, d.microbatch);
                switch (d.kind) {
                case DirectiveKind::forward:
                    set_once(x.f, s, i, "forward of this micro-batch chunk");
                    break;
                case DirectiveKind::backward_input:
                    set_once(x.b, s, i, "backward of this micro-batch chunk");
                    break;
                case DirectiveKind::backward_weight:
                    set_once(x.w, s, i, "weight pass of this micro-batch chunk");
                    break;
                case DirectiveKind::backward_full:
                    set_once(x.b, s, i, "backward of this micro-batch chunk");
                    x.w = i;
                    break;
                case DirectiveKind::send:
                    set_once(d.target == PassKind::forward ? x.send_f : x.send_b, s, i, "send of this payload");
                    break;
                case DirectiveKind::recv:
                    set_once(d.target == PassKind::forward ? x.recv_f : x.recv_b, s, i, "receive of this payload");
                    break;
                case DirectiveKind::all_to_all:
                case DirectiveKind::wait:
                    break;
                }
            }
    }

    // Local order: what a directive needs from its own stage must be listed before it.
    void check_order()
    {
        const bool in_order = p_.order == ProgramOrder::in_order;
        for (int s = 0; s < pp_; ++s)
            for (int i = 0; i < static_cast<int>(p_.stages[s].size()); ++i) {
                const ScheduleDirective& d = p_.stages[s][i];
                const Slot& x = slot(s, d.chunk, d.microbatch);
                const std::string ids = std::to_string(d.microbatch) + "." + std::to_string(d.chunk);
                auto need_before = [&](int pos, const std::string& what, const char* rule) {
                    if (pos < 0)
                        fail(at(s, i) + " needs " + what + ids + " on stage " + std::to_string(s)
                            + ", which is never scheduled");
                    if (pos > i && in_order)
                        fail(at(s, i) + " comes before " + what + ids + " (step " + std::to_string(pos) + "): " + rule);
                };
                switch (d.kind) {
                case DirectiveKind::backward_input:
                case DirectiveKind::backward_full:
                    need_before(x.f, "F", "a backward runs after its forward");
                    if (p_.explicit_comm && next_place({ s, d.chunk }))
                        need_before(x.recv_b, "RECV:B", "the output gradient is received before the backward");
                    break;
                case DirectiveKind::backward_weight:
                    need_before(x.b, "B", "the weight pass runs after its backward-input pass");
                    break;
                case DirectiveKind::forward:
                    if (p_.explicit_comm && prev_place({ s, d.chunk }))
                        need_before(x.recv_f, "RECV:F", "the input activations are received before the forward");
                    break;
                case DirectiveKind::send:
                    need_before(d.target == PassKind::forward ? x.f : x.b, d.target == PassKind::forward ? "F" : "B",
                        "a send follows the pass that produces its data");
                    break;
                case DirectiveKind::wait:
                    need_before(d.target == PassKind::forward      ? x.f
                            : d.target == PassKind::backward_input ? x.b
                                                                   : x.w,
                        letter(d.target), "a WAIT names a pass listed before it");
                    break;
                case DirectiveKind::recv:
                case DirectiveKind::all_to_all:
                    break;
                }
            }
    }

    // Every written send has its receive on the neighbouring stage and the other way round.
    void check_comm_pairs()
    {
        for (int s = 0; s < pp_; ++s)
            for (int i = 0; i < static_cast<int>(p_.stages[s].size()); ++i) {
                const ScheduleDirective& d = p_.stages[s][i];
                if (d.kind != DirectiveKind::send && d.kind != DirectiveKind::recv)
                    continue;
                const bool fwd = d.target == PassKind::forward;
                const bool sending = d.kind == DirectiveKind::send;
                // Activations flow to the next chunk, gradients to the previous one.
                const std::optional<Place> peer
                    = sending == fwd ? next_place({ s, d.chunk }) : prev_place({ s, d.chunk });
                if (!peer)
                    fail(at(s, i) + ": this chunk has no neighbour in that direction (first or last in its pipeline)");
                const Slot& y = slot(peer->stage, peer->chunk, d.microbatch);
                const int match = sending ? (fwd ? y.recv_f : y.recv_b) : (fwd ? y.send_f : y.send_b);
                if (match < 0) {
                    ScheduleDirective want = d;
                    want.kind = sending ? DirectiveKind::recv : DirectiveKind::send;
                    want.chunk = static_cast<std::int16_t>(peer->chunk);
                    fail(at(s, i) + " has no matching " + directive_text(want) + " on stage "
                        + std::to_string(peer->stage));
                }
            }
    }

    // What step i of stage s needs finished first (step -1: never scheduled).
    std::vector<Dep> deps(int s, int i)
    {
        std::vector<Dep> out;
        const ScheduleDirective& d = p_.stages[s][i];
        const Slot& x = slot(s, d.chunk, d.microbatch);
        auto local = [&](int pos, PassKind k) {
            const DirectiveKind kind = k == PassKind::forward ? DirectiveKind::forward
                : k == PassKind::backward_input               ? DirectiveKind::backward_input
                                                              : DirectiveKind::backward_weight;
            out.push_back({ s, pos, { kind, d.microbatch, d.chunk, k, false } });
        };
        auto remote = [&](std::optional<Place> q, DirectiveKind kind, PassKind target) {
            if (!q)
                return;
            const Slot& y = slot(q->stage, q->chunk, d.microbatch);
            const int pos = kind == DirectiveKind::send ? (target == PassKind::forward ? y.send_f : y.send_b)
                : target == PassKind::forward           ? y.f
                                                        : y.b;
            ScheduleDirective want { kind, d.microbatch, static_cast<std::int16_t>(q->chunk), target, false };
            if (kind != DirectiveKind::send)
                want.kind = target == PassKind::forward ? DirectiveKind::forward
                    : p_.split_backward                 ? DirectiveKind::backward_input
                                                        : DirectiveKind::backward_full;
            out.push_back({ q->stage, pos, want });
        };
        for (const int w : waits_[s][i])
            out.push_back({ s, w, p_.stages[s][w] });
        const Place here { s, d.chunk };
        switch (d.kind) {
        case DirectiveKind::forward:
            if (!p_.explicit_comm)
                remote(prev_place(here), DirectiveKind::forward, PassKind::forward);
            break;
        case DirectiveKind::backward_input:
        case DirectiveKind::backward_full:
            local(x.f, PassKind::forward);
            if (!p_.explicit_comm)
                remote(next_place(here), DirectiveKind::backward_input, PassKind::backward_input);
            break;
        case DirectiveKind::backward_weight:
            local(x.b, PassKind::backward_input);
            break;
        case DirectiveKind::recv:
            if (d.target == PassKind::forward)
                remote(prev_place(here), DirectiveKind::send, PassKind::forward);
            else
                remote(next_place(here), DirectiveKind::send, d.target);
            break;
        case DirectiveKind::wait:
            local(d.target == PassKind::forward ? x.f : d.target == PassKind::backward_input ? x.b : x.w, d.target);
            break;
        case DirectiveKind::send:
            local(d.target == PassKind::forward ? x.f : x.b, d.target);
            break;
        case DirectiveKind::all_to_all:
            break;
        }
        return out;
    }

    // The first dependency of step i on stage s that has not run yet, if any.
    std::optional<Dep> unmet(int s, int i)
    {
        for (Dep& dep : deps(s, i))
            if (dep.step < 0 || !done_[dep.stage][dep.step])
                return std::move(dep);
        return std::nullopt;
    }

    // WAIT directives hold the pass that follows them.
    void collect_waits()
    {
        done_.resize(static_cast<std::size_t>(pp_));
        waits_.resize(static_cast<std::size_t>(pp_));
        in_flight_.assign(static_cast<std::size_t>(pp_), 0);
        p_.peak_in_flight.assign(static_cast<std::size_t>(pp_), 0);
        for (int s = 0; s < pp_; ++s) {
            const auto n = p_.stages[s].size();
            done_[s].assign(n, false);
            waits_[s].assign(n, {});
            std::vector<int> pending;
            for (int i = 0; i < static_cast<int>(n); ++i) {
                const ScheduleDirective& d = p_.stages[s][i];
                if (d.kind == DirectiveKind::wait) {
                    const Slot& x = slot(s, d.chunk, d.microbatch);
                    pending.push_back(d.target == PassKind::forward ? x.f
                            : d.target == PassKind::backward_input  ? x.b
                                                                    : x.w);
                } else if (is_pass(d.kind) && p_.order == ProgramOrder::priority) {
                    waits_[s][i] = std::move(pending);
                    pending.clear();
                }
            }
        }
    }

    void execute(int s, int i)
    {
        done_[s][i] = true;
        const DirectiveKind k = p_.stages[s][i].kind;
        if (k == DirectiveKind::forward)
            p_.peak_in_flight[s] = std::max(p_.peak_in_flight[s], ++in_flight_[s]);
        else if (k == DirectiveKind::backward_input || k == DirectiveKind::backward_full)
            --in_flight_[s];
    }

    void run_in_order()
    {
        collect_waits();
        std::vector<int> next(static_cast<std::size_t>(pp_), 0);
        for (bool progress = true; progress;) {
            progress = false;
            for (int s = 0; s < pp_; ++s)
                while (next[s] < static_cast<int>(p_.stages[s].size()) && !unmet(s, next[s])) {
                    execute(s, next[s]++);
                    progress = true;
                }
        }
        for (int s = 0; s < pp_; ++s)
            if (next[s] < static_cast<int>(p_.stages[s].size()))
                report_stuck(s, next[s], [&](int t, int) { return next[t]; });
    }

    // DualPipe-style order, decided at run time. Readiness only grows, so whether the program can
    // finish does not depend on which ready pass runs first; running forwards first makes the peak
    // an upper bound on what any timing holds.
    void run_by_priority()
    {
        collect_waits();
        auto rank = [&](const ScheduleDirective& d) {
            const long long cls = d.kind == DirectiveKind::forward ? 0
                : d.kind == DirectiveKind::backward_weight         ? 2
                                                                   : 1;
            return cls << 40 | d.microbatch;
        };
        for (bool progress = true; progress;) {
            progress = false;
            for (int s = 0; s < pp_; ++s) {
                int best = -1;
                for (int i = 0; i < static_cast<int>(p_.stages[s].size()); ++i) {
                    const ScheduleDirective& d = p_.stages[s][i];
                    if (done_[s][i] || unmet(s, i))
                        continue;
                    if (!is_pass(d.kind)) {
                        done_[s][i] = true; // WAIT and A2A hold nothing themselves here
                        progress = true;
                        continue;
                    }
                    if (best < 0 || rank(d) < rank(p_.stages[s][best]))
                        best = i;
                }
                if (best >= 0) {
                    execute(s, best);
                    progress = true;
                }
            }
        }
        for (int s = 0; s < pp_; ++s)
            for (int i = 0; i < static_cast<int>(p_.stages[s].size()); ++i)
                if (!done_[s][i] && is_pass(p_.stages[s][i].kind))
                    report_stuck(s, i, [](int, int step) { return step; });
    }

    // Follows the unmet dependencies from a stuck step until one is never scheduled or a step
    // repeats (a cycle). `stuck_at(t, step)` is where stage t is held while `step` is waited for.
    template <class StuckAt> [[noreturn]] void report_stuck(int s, int i, StuckAt stuck_at)
    {
        std::string chain;
        std::vector<std::pair<int, int>> seen;
        for (;;) {
            seen.emplace_back(s, i);
            const std::optional<Dep> dep = unmet(s, i);
            if (!dep)
                fail("deadlock: " + chain + at(s, i) + " is never reached");
            const std::string head = at(s, i) + " waits for " + directive_text(dep->what) + " on "
                + (dep->stage == s ? "its own stage" : "stage " + std::to_string(dep->stage));
            if (dep->step < 0)
                fail(head + ", which is never scheduled"); // the chain up to here only waits on it
            if (dep->stage == s && p_.order == ProgramOrder::in_order)
                fail(chain + head + " (step " + std::to_string(dep->step) + "), which comes later in its program");
            chain += head + " (step " + std::to_string(dep->step) + "); ";
            const std::pair<int, int> next { dep->stage, stuck_at(dep->stage, dep->step) };
            if (std::find(seen.begin(), seen.end(), next) != seen.end())
                fail("deadlock: " + chain + "a cycle");
            std::tie(s, i) = next;
        }
    }

public:
    // List scheduling with durations (program_makespan_s).
    double makespan_s(const std::vector<std::vector<PassTimes>>& per_stage)
    {
        measure();
        index();
        collect_waits();
        finish_.resize(static_cast<std::size_t>(pp_));
        for (int s = 0; s < pp_; ++s)
            finish_[s].assign(p_.stages[s].size(), 0.0);
        free_s_.assign(static_cast<std::size_t>(pp_), 0.0);
        next_.assign(static_cast<std::size_t>(pp_), 0);
        fillers_.assign(static_cast<std::size_t>(pp_), {});
        for (int s = 0; s < pp_; ++s)
            for (int i = 0; i < static_cast<int>(p_.stages[s].size()); ++i)
                if (p_.stages[s][i].filler)
                    fillers_[s].push_back(i);
        double end_s = 0;
        for (;;) {
            int best_s = -1, best_i = -1;
            double best_t = 0;
            for (int s = 0; s < pp_; ++s) {
                double t = 0;
                const int i = p_.order == ProgramOrder::in_order ? next_in_order(s, t) : most_urgent(s, t);
                if (i >= 0 && (best_s < 0 || t < best_t)) {
                    best_s = s;
                    best_i = i;
                    best_t = t;
                }
            }
            if (best_s < 0)
                break;
            const ScheduleDirective& d = p_.stages[best_s][best_i];
            const double end = best_t + duration_s(d, per_stage[best_s][static_cast<std::size_t>(d.chunk)]);
            execute(best_s, best_i);
            finish_[best_s][best_i] = end;
            free_s_[best_s] = end;
            end_s = std::max(end_s, end);
            if (p_.order == ProgramOrder::in_order && best_i == next_[best_s])
                ++next_[best_s];
            else if (p_.order == ProgramOrder::in_order)
                fillers_[best_s].pop_front();
        }
        return end_s;
    }

private:
    static double duration_s(const ScheduleDirective& d, const PassTimes& t)
    {
        switch (d.kind) {
        case DirectiveKind::forward:
            return t.forward_s;
        case DirectiveKind::backward_input:
            return t.backward_input_s;
        case DirectiveKind::backward_weight:
            return t.weight_s;
        case DirectiveKind::backward_full:
            return t.backward_input_s + t.weight_s;
        default:
            return 0;
        }
    }

    // When step i could start on stage s (its dependencies done), or -1 when one is not.
    double ready_s(int s, int i)
    {
        double t = free_s_[s];
        for (const Dep& dep : deps(s, i)) {
            if (dep.step < 0 || !done_[dep.stage][dep.step])
                return -1;
            t = std::max(t, finish_[dep.stage][dep.step]);
        }
        return t;
    }

    // The stage's next listed directive, or a floating W (W~) that is ready earlier: it fills the
    // idle time as in the simulator. Fillers become ready in list order (after their B's, which run
    // in order), so the first pending one is the earliest.
    int next_in_order(int s, double& t)
    {
        const auto& list = p_.stages[s];
        int& i = next_[s];
        while (i < static_cast<int>(list.size()) && list[i].filler)
            ++i;
        const double listed = i < static_cast<int>(list.size()) ? ready_s(s, i) : -1;
        const double floating = fillers_[s].empty() ? -1 : ready_s(s, fillers_[s].front());
        if (floating >= 0 && (listed < 0 || floating < listed)) {
            t = floating;
            return fillers_[s].front();
        }
        t = listed;
        return listed < 0 ? -1 : i;
    }

    // At the earliest time a pass is ready on stage s, the most urgent of those ready then
    // (backward, forward, weight; the simulator's priorities).
    int most_urgent(int s, double& t)
    {
        t = -1;
        std::vector<std::pair<int, double>> ready;
        for (int i = 0; i < static_cast<int>(p_.stages[s].size()); ++i) {
            if (done_[s][i])
                continue;
            const double r = ready_s(s, i);
            if (r < 0)
                continue;
            ready.emplace_back(i, r);
            t = t < 0 ? r : std::min(t, r);
        }
        auto rank = [&](const ScheduleDirective& d) {
            const long long cls = d.kind == DirectiveKind::forward ? 1
                : d.kind == DirectiveKind::backward_weight         ? 2
                                                                   : 0;
            return cls << 40 | d.microbatch;
        };
        int best = -1;
        for (const auto& [i, r] : ready)
            if (r <= t && (best < 0 || rank(p_.stages[s][i]) < rank(p_.stages[s][best])))
                best = i;
        return best;
    }

    // Every stage runs every micro-batch of each of its chunks (DualPipe: of its direction).
    void check_presence()
    {
        for (long long mb = 0; mb < p_.microbatches; ++mb) {
            int only_chunk = -1;
            if (p_.layout == ChunkLayout::dualpipe) {
                only_chunk = slot(0, 0, mb).f >= 0 ? 0 : slot(0, 1, mb).f >= 0 ? 1 : -1;
                if (only_chunk < 0)
                    fail("micro-batch " + std::to_string(mb)
                        + " is missing: stage 0 runs no forward of it (micro-batches " + "are numbered 0.."
                        + std::to_string(p_.microbatches - 1) + ")");
            }
            for (int s = 0; s < pp_; ++s)
                for (int c = 0; c < p_.chunks; ++c) {
                    const Slot& x = slot(s, c, mb);
                    const std::string ids = std::to_string(mb) + "." + std::to_string(c);
                    const bool wanted = only_chunk < 0 || c == only_chunk;
                    if (!wanted && x.f >= 0)
                        fail(at(s, x.f) + ": micro-batch " + std::to_string(mb) + " runs the other pipeline (chunk "
                            + std::to_string(only_chunk) + ") on stage 0");
                    if (!wanted)
                        continue;
                    if (x.f < 0)
                        fail("micro-batch " + std::to_string(mb) + " is missing on stage " + std::to_string(s)
                            + ": no F" + ids
                            + " (every stage runs each micro-batch's forward of each of its chunks once)");
                    if (x.b < 0 || x.w < 0)
                        fail("stage " + std::to_string(s) + ": F" + ids + " has no " + (x.b < 0 ? "backward" : "W")
                            + ids);
                }
        }
    }

    ScheduleProgram& p_;
    const int pp_;
    std::vector<Slot> slots_;
    std::vector<std::vector<bool>> done_;
    std::vector<std::vector<std::vector<int>>> waits_;
    std::vector<long long> in_flight_;
    std::vector<std::vector<double>> finish_;
    std::vector<int> next_; // list schedule: each stage's next listed directive
    std::vector<std::deque<int>> fillers_; // list schedule: each stage's W~ not yet run
    std::vector<double> free_s_;
};

} // namespace

void check_schedule_program(ScheduleProgram& p)
{
    p.explicit_comm = false;
    ProgramChecker(p).run();
}

double program_makespan_s(const ScheduleProgram& p, const std::vector<std::vector<PassTimes>>& per_stage_chunk)
{
    ScheduleProgram copy = p;
    copy.explicit_comm = false;
    return ProgramChecker(copy).makespan_s(per_stage_chunk);
}

double program_makespan_s(const ScheduleProgram& p, const std::vector<PassTimes>& per_stage)
{
    std::vector<std::vector<PassTimes>> per_chunk;
    for (const PassTimes& t : per_stage)
        per_chunk.emplace_back(static_cast<std::size_t>(p.chunks), t);
    return program_makespan_s(p, per_chunk);
}

} // namespace parallax

#include "ir/lowering.hpp"

#include "ir/pipeline_schedule.hpp"
#include "spec/strategy_rules.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace parallax {

namespace {

constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

struct Index {
    int chunks = 0;
    long long m = 0;
    std::vector<std::uint32_t> f, r, b, w, send_f, send_b;
    std::vector<std::uint32_t> f_entry; // first op of a forward split into pieces (= f otherwise)
    void init(int c, long long mb)
    {
        chunks = c;
        m = mb;
        const std::size_t n = static_cast<std::size_t>(c) * static_cast<std::size_t>(mb);
        for (auto* v : { &f, &r, &b, &w, &send_f, &send_b, &f_entry })
            v->assign(n, kNone);
    }
    std::size_t at(int chunk, long long mb) const
    {
        return static_cast<std::size_t>(chunk) * static_cast<std::size_t>(m) + static_cast<std::size_t>(mb);
    }
};

IrLink link_of(const GroupPlacement& g)
{
    return g.nodes > 1 ? IrLink::network : IrLink::nvlink;
}

// The forward pass carries a third of a chunk's TP/CP/EP traffic and the backward-input two thirds,
// as comm_companions.hpp splits it.
constexpr double kForwardCommShare = 1.0 / 3.0;

// Power of every op (LoweredPlan::op_power_W): a pass draws its kernels' energy, the awake-idle power
// for the part of its duration that is exposed communication, and the communication power for its
// share of the chunk's collectives, spread over its duration; the power limiter keeps kernels and
// their collectives within the cap together.
std::vector<float> op_powers(const PlanContext& ctx, const LoweredPlan& plan)
{
    const ExecutionGraph& g = plan.graph;
    const PowerModel& pm = ctx.power;
    std::vector<float> w(g.size(), 0.0f);
    for (std::uint32_t i = 0; i < g.size(); ++i) {
        const int d = g.device(i);
        const double wait = plan.device_wait_W[d];
        const double x = plan.device_clock[d];
        const IrOpType t = g.type(i);
        const double dur = g.duration_s(i);
        if (g.stream(i) != IrStream::compute) {
            w[i] = t == IrOpType::barrier ? 0.0f : static_cast<float>(pm.comm_W);
            continue;
        }
        if (t == IrOpType::optimizer) {
            w[i] = static_cast<float>(pm.memory_bound_W(x));
            continue;
        }
        if (t == IrOpType::offload || dur <= 0 || g.chunk(i) < 0) {
            w[i] = static_cast<float>(wait);
            continue;
        }
        const ChunkPower& cp = plan.chunk_power[static_cast<std::size_t>(g.chunk(i))];
        const ChunkTiming& ct = plan.chunk_timing[static_cast<std::size_t>(g.chunk(i))];
        int pass = 0;
        double pass_s = 0, comm_s = 0;
        switch (t) {
        case IrOpType::forward:
            pass = static_cast<int>(OpPhase::forward);
            pass_s = ct.forward_s;
            comm_s = kForwardCommShare * cp.comm_busy_s;
            break;
        case IrOpType::backward_input:
            pass = static_cast<int>(OpPhase::backward_input);
            pass_s = ct.backward_input_s;
            comm_s = (1 - kForwardCommShare) * cp.comm_busy_s;
            break;
        case IrOpType::backward_weight:
            pass = static_cast<int>(OpPhase::backward_weight);
            pass_s = ct.weight_s;
            break;
        default:
            pass = static_cast<int>(OpPhase::recompute);
            pass_s = ct.recompute_s;
            break;
        }
        const PassEnergy& e = cp.pass[pass];
        if (pass_s <= 0) {
            w[i] = static_cast<float>(wait);
            continue;
        }
        // Pieces of a pass (bucketed backward, ZeRO-3 layers) share its power.
        const double kernels = e.energy_J + wait * std::max(0.0, pass_s - e.time_s);
        const double base = kernels / pass_s;
        const double with_comm = base + pm.comm_W * std::min(1.0, comm_s / pass_s);
        w[i] = static_cast<float>(std::min(std::max(pm.cap_W, base), with_comm));
    }
    return w;
}

} // namespace

LoweredPlan lower_plan(const PlanContext& ctx, const Strategy& s, double clock_ceiling)
{
    LoweredPlan plan;
    ExecutionGraph& g = plan.graph;
    EvaluationCache cache(ctx);
    StrategyCosts costs;
    compute_costs(ctx, s, cache, costs);
    const int pp = s.pp;
    const bool dual = s.schedule == Schedule::dualpipe;
    const int vpp = dual ? 1 : s.vpp;
    const long long m = microbatch_count(ctx.training, s);
    const int ir_chunks = dual ? 2 * pp : pp * vpp;
    g.devices = pp;
    g.chunks = ir_chunks;
    g.microbatches = m;

    // IR chunk -> device, model chunk, timing. DualPipe: chunk dir*pp + k is stage k of pipeline dir,
    // on device k (down) or pp-1-k (up); both pipelines hold the same layers.
    plan.chunk_timing.resize(static_cast<std::size_t>(ir_chunks));
    plan.chunk_device.resize(static_cast<std::size_t>(ir_chunks));
    plan.chunk_activation_bytes.resize(static_cast<std::size_t>(ir_chunks));
    plan.chunk_power.resize(static_cast<std::size_t>(ir_chunks));
    plan.device_clock.resize(static_cast<std::size_t>(pp));
    plan.device_wait_W.resize(static_cast<std::size_t>(pp));
    for (int d = 0; d < pp; ++d) {
        double x = stage_clock(ctx.power, ctx.training, pp, d);
        if (clock_ceiling > 0)
            x = std::min(x, clock_ceiling);
        plan.device_clock[d] = x;
        plan.device_wait_W[d] = ctx.power.wait_power(x);
    }
    auto model_chunk_of = [&](int ir) { return dual ? ir % pp : ir; };
    for (int c = 0; c < ir_chunks; ++c) {
        const int mc = model_chunk_of(c);
        plan.chunk_device[c] = dual ? (c < pp ? mc : pp - 1 - mc) : mc % pp;
        plan.chunk_timing[c] = chunk_timing(ctx, s, costs, mc);
        // The chunk's kernels at its device's clock, throttled to the power cap.
        plan.chunk_power[c] = chunk_power(ctx, costs, plan.chunk_timing[c], plan.device_clock[plan.chunk_device[c]]);
        apply_clock(plan.chunk_timing[c], plan.chunk_power[c]);
        const ChunkTiming& ct = plan.chunk_timing[c];
        plan.chunk_activation_bytes[c]
            = (ct.layers - ct.moe_layers) * costs.layer.activations.dense + ct.moe_layers * costs.layer.activations.moe;
    }
    // Pipeline position of an IR chunk: predecessor/successor chunks in the data flow.
    auto first_in_pipe = [&](int c) { return dual ? c % pp == 0 : c == 0; };
    auto last_in_pipe = [&](int c) { return dual ? c % pp == pp - 1 : c == ir_chunks - 1; };
    auto ir_chunk = [&](int device, int local) {
        if (dual)
            return local == 0 ? device : pp + (pp - 1 - device);
        return local * pp + device;
    };

    const double p2p = p2p_per_direction_s(s, costs);
    const IrLink pp_link = link_of(costs.groups.pp_pair);
    const IrLink dp_link = link_of(costs.groups.dp_dense);
    const IrOrdering compute_order = dual ? IrOrdering::priority : IrOrdering::program;
    // Without a pipeline there is no bubble for deferred W passes to fill: ZB-H1 is plain 1F1B then.
    const Schedule schedule = s.schedule == Schedule::zb_h1 && pp == 1 ? Schedule::one_f_one_b : s.schedule;
    const bool split_backward = schedule == Schedule::zb_h1 || dual;
    Index idx;
    idx.init(ir_chunks, m);
    std::vector<std::uint32_t> last_compute(static_cast<std::size_t>(pp), kNone);
    std::vector<std::vector<std::uint32_t>> device_program_ops(static_cast<std::size_t>(pp));

    // ZeRO-3 / FSDP per-pass gathers (prefetched one pass ahead when overlap_param_gather is on).
    std::vector<Zero3Traffic> z3(static_cast<std::size_t>(pp));
    std::vector<int> stage_layers(static_cast<std::size_t>(pp), 1);
    if (s.zero >= 3) {
        for (int d = 0; d < pp; ++d) {
            z3[d] = zero3_traffic(ctx, s, costs, d);
            stage_layers[d] = std::max(1, costs.layout->stage[d].layers);
        }
    }
    std::vector<std::uint32_t> zero3_rs;
    // Per IR chunk: the micro-batch that finishes last (DualPipe's up pipeline holds the second half).
    auto last_microbatch = [&](int c) { return dual && c < pp ? m / 2 - 1 : m - 1; };
    // Gradient buckets per chunk (Megatron's ~40M-parameter buckets, at most one per layer), and the
    // ops after which each is ready.
    std::vector<int> bucket_pieces(static_cast<std::size_t>(ir_chunks), 1);
    std::vector<std::vector<std::uint32_t>> bucket_ready(static_cast<std::size_t>(ir_chunks));
    if (s.overlap_grad_reduce && s.zero <= 2 && s.dp * s.cp > 1) {
        for (int c = 0; c < ir_chunks; ++c) {
            const StageTail tail = stage_tail(ctx, s, costs, plan.chunk_device[c]);
            const int device_layers = costs.layout->stage[plan.chunk_device[c]].layers;
            const double chunk_params = tail.params * plan.chunk_timing[c].layers / std::max(1, device_layers);
            const double bucket_params = tail.last_bucket_fraction * tail.params; // Megatron's bucket size
            const int buckets = static_cast<int>(std::ceil(chunk_params / std::max(1.0, bucket_params)));
            bucket_pieces[c] = std::clamp(buckets, 1, std::max(1, plan.chunk_timing[c].layers));
        }
    }

    // Pass 1: every device's program, in order, with its sends.
    for (int d = 0; d < pp; ++d) {
        const std::vector<ScheduledPass> program = device_program(schedule, d, pp, vpp, m);
        std::uint32_t pending_block = kNone;
        auto& ops_of_device = device_program_ops[d];
        auto add_compute = [&](IrOp op, double gather_layers) {
            op.device = static_cast<std::uint16_t>(d);
            op.stream = IrStream::compute;
            if (op.ordering != IrOrdering::filler)
                op.ordering = compute_order;
            const std::uint32_t id = g.add(op);
            if (pending_block != kNone && op.ordering != IrOrdering::filler) {
                g.add_dep(id, pending_block);
                pending_block = kNone;
            }
            if (s.zero >= 3 && (op.type == IrOpType::forward || op.type == IrOpType::backward_input)) {
                // Gather this chunk's parameters before the pass; with prefetch it waits only for the
                // pass two positions back (so it runs under the previous one).
                const ChunkTiming& ct = plan.chunk_timing[op.chunk];
                IrOp ga;
                ga.device = static_cast<std::uint16_t>(d);
                ga.type = IrOpType::zero3_gather;
                ga.stream = IrStream::dp_gather;
                ga.link = dp_link;
                ga.ordering = IrOrdering::fifo;
                ga.chunk = op.chunk;
                ga.microbatch = op.microbatch;
                (void)ct;
                ga.duration_s = static_cast<float>(z3[d].gather_s * gather_layers / stage_layers[d]);
                const std::uint32_t gid = g.add(ga);
                if (dual) {
                    // DualPipe's order is decided at run time: prefetch one micro-batch ahead per chunk.
                    const long long prev_mb = op.microbatch - 1;
                    const long long first_mb = op.chunk < pp ? 0 : m / 2;
                    if (prev_mb >= first_mb) {
                        const std::size_t prev = idx.at(op.chunk, prev_mb);
                        const std::uint32_t before = op.type == IrOpType::forward ? idx.f[prev] : idx.b[prev];
                        if (before != kNone)
                            g.add_dep(gid, before);
                    }
                } else {
                    const std::size_t back = s.overlap_param_gather ? 2 : 1;
                    if (ops_of_device.size() >= back)
                        g.add_dep(gid, ops_of_device[ops_of_device.size() - back]);
                }
                g.add_dep(id, gid);
            }
            ops_of_device.push_back(id);
            last_compute[d] = id;
            return id;
        };
        auto emit_backward_send = [&](int c, std::size_t at, const IrOp& op) {
            if (first_in_pipe(c) || p2p <= 0)
                return;
            IrOp send;
            send.device = static_cast<std::uint16_t>(d);
            send.type = IrOpType::pp_send;
            send.stream = IrStream::pp;
            send.link = pp_link;
            send.ordering = IrOrdering::fifo;
            send.chunk = op.chunk;
            send.microbatch = op.microbatch;
            send.duration_s = static_cast<float>(p2p);
            send.blocks_compute = true;
            idx.send_b[at] = g.add(send);
            pending_block = idx.send_b[at];
        };
        for (const ScheduledPass& pass : program) {
            const int c = ir_chunk(d, pass.local_chunk);
            const ChunkTiming& ct = plan.chunk_timing[c];
            const long long mb = pass.microbatch;
            const std::size_t at = idx.at(c, mb);
            const std::int32_t prio_base = static_cast<std::int32_t>(mb);
            IrOp op;
            op.chunk = static_cast<std::int16_t>(c);
            op.microbatch = static_cast<std::int32_t>(mb);
            switch (pass.kind) {
            case PassKind::forward: {
                op.type = IrOpType::forward;
                op.priority = 1 << 20 | prio_base;
                // ZeRO-3 / FSDP gathers each layer's parameters just before it runs: the forward is
                // emitted layer by layer so the gathers prefetch one layer ahead.
                const int pieces = s.zero >= 3 && !dual ? std::max(1, ct.layers) : 1;
                op.duration_s = static_cast<float>(ct.forward_s / pieces);
                for (int k = 0; k < pieces; ++k) {
                    op.activation_delta = k == 0 ? static_cast<float>(plan.chunk_activation_bytes[c]) : 0.0f;
                    const std::uint32_t id = add_compute(op, static_cast<double>(ct.layers) / pieces);
                    if (k == 0)
                        idx.f_entry[at] = id;
                    else
                        g.add_dep(id, idx.f[at]);
                    idx.f[at] = id;
                }
                if (!last_in_pipe(c) && p2p > 0) {
                    IrOp send;
                    send.device = static_cast<std::uint16_t>(d);
                    send.type = IrOpType::pp_send;
                    send.stream = IrStream::pp;
                    send.link = pp_link;
                    send.ordering = IrOrdering::fifo;
                    send.chunk = op.chunk;
                    send.microbatch = op.microbatch;
                    send.duration_s = static_cast<float>(p2p);
                    send.blocks_compute = true;
                    idx.send_f[at] = g.add(send);
                    pending_block = idx.send_f[at];
                }
                break;
            }
            case PassKind::backward_input: {
                if (ct.recompute_s > 0) {
                    IrOp r = op;
                    r.type = IrOpType::recompute;
                    r.duration_s = static_cast<float>(ct.recompute_s);
                    r.priority = prio_base;
                    idx.r[at] = add_compute(r, 0);
                }
                op.type = IrOpType::backward_input;
                op.duration_s = static_cast<float>(ct.backward_input_s);
                op.priority = prio_base;
                // Split-backward schedules free the activations with B (W keeps only its GEMM inputs,
                // small next to them); the others free them when the whole backward ends.
                if (split_backward)
                    op.activation_delta = -static_cast<float>(plan.chunk_activation_bytes[c]);
                const int pieces = s.zero >= 3 && !dual ? std::max(1, ct.layers)
                    : mb == last_microbatch(c) && !dual ? bucket_pieces[c]
                                                        : 1;
                if (pieces > 1) {
                    // Autograd walks the layers back (dgrad and wgrad per layer): the last micro-batch
                    // releases gradient buckets as it goes, so the DP reduction overlaps it; under
                    // ZeRO-3 every backward gathers and reduce-scatters layer by layer.
                    IrOp bp = op;
                    bp.duration_s = static_cast<float>(ct.backward_input_s / pieces);
                    IrOp wp = op;
                    wp.type = IrOpType::backward_weight;
                    wp.duration_s = static_cast<float>(ct.weight_s / pieces);
                    wp.priority = 2 << 20 | prio_base;
                    const double layers_per_piece = static_cast<double>(ct.layers) / pieces;
                    for (int k = 0; k < pieces; ++k) {
                        const std::uint32_t bid = add_compute(bp, layers_per_piece);
                        if (k == 0)
                            idx.b[at] = bid;
                        else
                            g.add_dep(bid, idx.w[at]);
                        wp.activation_delta
                            = k == pieces - 1 ? -static_cast<float>(plan.chunk_activation_bytes[c]) : 0.0f;
                        idx.w[at] = add_compute(wp, 0);
                        g.add_dep(idx.w[at], bid);
                        if (s.zero >= 3) {
                            IrOp rs;
                            rs.device = static_cast<std::uint16_t>(d);
                            rs.type = IrOpType::zero3_reduce_scatter;
                            rs.stream = IrStream::dp;
                            rs.link = dp_link;
                            rs.ordering = IrOrdering::fifo;
                            rs.chunk = op.chunk;
                            rs.microbatch = op.microbatch;
                            rs.duration_s
                                = static_cast<float>(z3[d].reduce_scatter_s * layers_per_piece / stage_layers[d]);
                            const std::uint32_t rid = g.add(rs);
                            g.add_dep(rid, idx.w[at]);
                            zero3_rs.push_back(rid);
                        } else {
                            bucket_ready[c].push_back(idx.w[at]);
                        }
                    }
                    emit_backward_send(c, at, op);
                    break;
                }
                idx.b[at] = add_compute(op, ct.layers);
                // Zero-bubble schedules send the input gradient right after B; the others (autograd runs
                // dgrad and wgrad layer by layer) only once the whole backward, W included, is done.
                if (split_backward)
                    emit_backward_send(c, at, op);
                break;
            }
            case PassKind::backward_weight: {
                if (idx.w[at] != kNone)
                    break; // emitted in pieces with the backward above
                op.type = IrOpType::backward_weight;
                op.duration_s = static_cast<float>(ct.weight_s);
                op.activation_delta = split_backward ? 0.0f : -static_cast<float>(plan.chunk_activation_bytes[c]);
                op.priority = 2 << 20 | prio_base;
                if (pass.filler)
                    op.ordering = IrOrdering::filler;
                idx.w[at] = add_compute(op, 0);
                if (!split_backward)
                    emit_backward_send(c, at, op);
                if (s.zero >= 3) {
                    IrOp rs;
                    rs.device = static_cast<std::uint16_t>(d);
                    rs.type = IrOpType::zero3_reduce_scatter;
                    rs.stream = IrStream::dp;
                    rs.link = dp_link;
                    rs.ordering = IrOrdering::fifo;
                    rs.chunk = op.chunk;
                    rs.microbatch = op.microbatch;
                    rs.duration_s = static_cast<float>(z3[d].reduce_scatter_s * ct.layers / stage_layers[d]);
                    const std::uint32_t rid = g.add(rs);
                    g.add_dep(rid, idx.w[at]);
                    zero3_rs.push_back(rid);
                }
                break;
            }
            }
        }
        if (pending_block != kNone)
            last_compute[d] = last_compute[d]; // a trailing send gates nothing; the barrier waits for it below
    }

    // Pass 2: data-flow edges between passes.
    for (int c = 0; c < ir_chunks; ++c) {
        for (long long mb = 0; mb < m; ++mb) {
            const std::size_t at = idx.at(c, mb);
            const std::uint32_t f = idx.f[at], r = idx.r[at], b = idx.b[at], w = idx.w[at];
            if (f == kNone)
                continue; // DualPipe: this pipeline does not carry this micro-batch
            if (!first_in_pipe(c)) {
                const std::size_t prev = idx.at(c - 1, mb);
                g.add_dep(idx.f_entry[at], idx.send_f[prev] != kNone ? idx.send_f[prev] : idx.f[prev]);
            }
            if (idx.send_f[at] != kNone)
                g.add_dep(idx.send_f[at], f);
            const std::uint32_t bwd_entry = r != kNone ? r : b;
            g.add_dep(bwd_entry, f);
            if (r != kNone)
                g.add_dep(b, r);
            if (!last_in_pipe(c)) {
                const std::size_t next = idx.at(c + 1, mb);
                const std::uint32_t grad_ready = split_backward ? idx.b[next] : idx.w[next];
                g.add_dep(bwd_entry, idx.send_b[next] != kNone ? idx.send_b[next] : grad_ready);
            }
            if (idx.send_b[at] != kNone)
                g.add_dep(idx.send_b[at], split_backward ? b : w);
            g.add_dep(w, b);
        }
    }
    if (schedule == Schedule::zb_h1) {
        // ZB-H1 keeps 1F1B's memory: a stage holds at most p - s micro-batches, so a forward waits for the
        // deferred W of the micro-batch p - s before it.
        for (int c = 0; c < ir_chunks; ++c) {
            const long long limit = pp - plan.chunk_device[c];
            for (long long mb = limit; mb < m; ++mb)
                g.add_dep(idx.f_entry[idx.at(c, mb)], idx.w[idx.at(c, mb - limit)]);
        }
    }
    if (dual) {
        // DualPipe keeps at most p - s micro-batches in flight on the down pipeline's stage s and s + 1
        // on the up pipeline's (PP + 1 per device, DualPipe README): a forward waits for the backward
        // that frees its slot.
        const long long half = m / 2;
        for (int c = 0; c < ir_chunks; ++c) {
            const int stage = c % pp;
            const long long limit = pp - stage;
            const long long base = c < pp ? 0 : half;
            for (long long i = limit; i < half; ++i)
                g.add_dep(idx.f_entry[idx.at(c, base + i)], idx.b[idx.at(c, base + i - limit)]);
        }
    }

    // The step's tail: gradient reduction per chunk after its last weight gradient, a barrier for the
    // global gradient norm, the optimizer step, and the distributed optimizer's parameter gather.
    IrOp barrier;
    barrier.type = IrOpType::barrier;
    barrier.stream = IrStream::sync;
    barrier.ordering = IrOrdering::fifo;
    const std::uint32_t bar = g.add(barrier);
    for (std::uint32_t rs : zero3_rs)
        g.add_dep(bar, rs);
    for (int d = 0; d < pp; ++d) {
        const StageTail tail = stage_tail(ctx, s, costs, d);
        g.add_dep(bar, last_compute[d]);
        if (tail.grad_reduce_s > 0) {
            int device_layers = 0;
            for (int c = 0; c < ir_chunks; ++c)
                if (plan.chunk_device[c] == d)
                    device_layers += plan.chunk_timing[c].layers;
            for (int c = 0; c < ir_chunks; ++c) {
                if (plan.chunk_device[c] != d)
                    continue;
                IrOp red;
                red.device = static_cast<std::uint16_t>(d);
                red.type = IrOpType::dp_reduce;
                red.stream = IrStream::dp;
                red.link = dp_link;
                red.ordering = IrOrdering::fifo;
                red.chunk = static_cast<std::int16_t>(c);
                const double chunk_reduce
                    = tail.grad_reduce_s * plan.chunk_timing[c].layers / std::max(1, device_layers);
                const std::vector<std::uint32_t>& ready_after = bucket_ready[c];
                const int buckets = ready_after.empty() ? 1 : static_cast<int>(ready_after.size());
                red.duration_s = static_cast<float>(chunk_reduce / buckets);
                for (int k = 0; k < buckets; ++k) {
                    const std::uint32_t id = g.add(red);
                    if (!s.overlap_grad_reduce)
                        g.add_dep(id, last_compute[d]);
                    else
                        g.add_dep(id, ready_after.empty() ? idx.w[idx.at(c, last_microbatch(c))] : ready_after[k]);
                    g.add_dep(bar, id);
                }
            }
        }
        // Trailing sends (the last backward's gradient to the previous stage) finish before the barrier.
        for (int c = 0; c < ir_chunks; ++c)
            if (plan.chunk_device[c] == d && idx.send_b[idx.at(c, last_microbatch(c))] != kNone)
                g.add_dep(bar, idx.send_b[idx.at(c, last_microbatch(c))]);
    }
    for (int d = 0; d < pp; ++d) {
        const StageTail tail = stage_tail(ctx, s, costs, d);
        IrOp opt;
        opt.device = static_cast<std::uint16_t>(d);
        opt.type = tail.offload_s > 0 ? IrOpType::offload : IrOpType::optimizer;
        opt.stream = IrStream::compute;
        opt.ordering = IrOrdering::fifo;
        opt.duration_s = static_cast<float>(tail.offload_s > 0 ? tail.offload_s : tail.optimizer_s);
        opt.priority = 3 << 20;
        const std::uint32_t o = g.add(opt);
        g.add_dep(o, bar);
        if (tail.param_gather_s > 0) {
            IrOp ga;
            ga.device = static_cast<std::uint16_t>(d);
            ga.type = IrOpType::param_gather;
            ga.stream = IrStream::dp_gather;
            ga.link = dp_link;
            ga.ordering = IrOrdering::fifo;
            // Overlapped with the next step's forward except the first bucket.
            ga.duration_s = static_cast<float>(
                s.overlap_param_gather ? tail.param_gather_s * tail.last_bucket_fraction : tail.param_gather_s);
            g.add_dep(g.add(ga), o);
        }
    }
    g.finalize();
    plan.op_power_W = op_powers(ctx, plan);
    return plan;
}

} // namespace parallax

#include "ir/lowering.hpp"

#include "ir/pipeline_schedule.hpp"
#include "ir/schedule_program.hpp"
#include "model/relayout.hpp"
#include "spec/strategy_rules.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>

namespace parallax {

namespace {

constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

struct Index {
    int chunks = 0;
    long long m = 0;
    std::vector<std::uint32_t> f, r, b, w, send_f, send_b;
    std::vector<std::uint32_t> f_entry; // first op of a forward split into pieces (= f otherwise)
    std::vector<std::uint32_t> b_entry; // first op of a backward-input split around a relayout (= b otherwise)
    void init(int c, long long mb)
    {
        chunks = c;
        m = mb;
        const std::size_t n = static_cast<std::size_t>(c) * static_cast<std::size_t>(mb);
        for (auto* v : { &f, &r, &b, &w, &send_f, &send_b, &f_entry, &b_entry })
            v->assign(n, kNone);
    }
    std::size_t at(int chunk, long long mb) const
    {
        return static_cast<std::size_t>(chunk) * static_cast<std::size_t>(m) + static_cast<std::size_t>(mb);
    }
};

// The forward pass carries a third of a chunk's TP/CP/EP traffic and the backward-input two thirds,
// as comm_companions.hpp splits it.
constexpr double kForwardCommShare = 1.0 / 3.0;

// Power of every op (LoweredPlan::op_power_W): a pass draws its kernels' energy, the awake-idle power
// for the part of its duration that is exposed communication, and the communication power for its
// share of the chunk's collectives, spread over its duration; the power limiter keeps kernels and
// their collectives within the cap together.
std::vector<float> op_powers(std::span<const LoweringStage> stages, const LoweredPlan& plan)
{
    const ExecutionGraph& g = plan.graph;
    std::vector<float> w(g.size(), 0.0f);
    for (std::uint32_t i = 0; i < g.size(); ++i) {
        const int d = g.device(i);
        const PowerModel& pm = stages[static_cast<std::size_t>(d)].ctx->power;
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

// Lowering one plan to its graph: the chunks' placement, timing and power; every device's program
// in order, with its sends and ZeRO-3 collectives; the data-flow edges between passes; and the
// step's tail. The order ops are added in is the graph's op order.
class PlanLowering {
public:
    // A plain plan: every stage costed by the plan's own context and strategy.
    PlanLowering(const PlanContext& ctx, const Strategy& s, double clock_ceiling, long long microbatches)
        : PlanLowering(s, microbatches > 0 ? microbatches : microbatch_count(ctx.training, s))
    {
        cache_ = std::make_unique<EvaluationCache>(ctx);
        compute_costs(ctx, s, *cache_, costs_);
        for (int d = 0; d < pp_; ++d) {
            LoweringStage st;
            st.ctx = &ctx;
            st.strategy = &s;
            st.costs = &costs_;
            st.clock = stage_clock(ctx.power, ctx.training, pp_, d);
            if (clock_ceiling > 0)
                st.clock = std::min(st.clock, clock_ceiling);
            st.tail = stage_tail(ctx, s, costs_, d);
            st.pp_link_across_nodes = costs_.groups.pp_pair.nodes > 1;
            st.dp_link_across_nodes = costs_.groups.dp_dense.nodes > 1;
            stages_.push_back(st);
        }
        prepare();
    }

    // Stages that differ (a heterogeneous plan): `s` holds what they share (schedule, ZeRO, overlap).
    PlanLowering(const Strategy& s, std::span<const LoweringStage> stages, long long microbatches)
        : PlanLowering(s, microbatches)
    {
        stages_.assign(stages.begin(), stages.end());
        prepare();
    }

    LoweredPlan lower() &&
    {
        for (int d = 0; d < pp_; ++d)
            emit_device_program(d);
        add_dataflow_edges();
        add_program_waits();
        if (schedule_ == Schedule::zb_h1)
            add_zb_h1_in_flight_limit();
        if (schedule_ == Schedule::dualpipe)
            add_dualpipe_in_flight_limit();
        emit_tail();
        plan_.graph.finalize();
        plan_.op_power_W = op_powers(stages_, plan_);
        return std::move(plan_);
    }

private:
    PlanLowering(const Strategy& s, long long microbatches)
        : s_(s)
        , pp_(s.pp)
        , program_(s.schedule == Schedule::custom ? s.program : nullptr)
        , dual_(runs_dualpipe(s))
        , vpp_(dual_         ? 1
                  : program_ ? program_->chunks
                             : s.vpp)
        // A program fixes its micro-batches: it is never lowered as a shorter window.
        , m_(program_ ? program_->microbatches : microbatches)
        , ir_chunks_(dual_ ? 2 * pp_ : pp_ * vpp_)
        , compute_order_((program_ ? program_->order == ProgramOrder::priority : dual_) ? IrOrdering::priority
                                                                                        : IrOrdering::program)
        // Without a pipeline there is no bubble for deferred W passes to fill: ZB-H1 is plain 1F1B then.
        , schedule_(s.schedule == Schedule::zb_h1 && pp_ == 1 ? Schedule::one_f_one_b : s.schedule)
        , split_backward_(program_ ? program_->split_backward : schedule_ == Schedule::zb_h1 || dual_)
    {
    }

    void prepare()
    {
        ExecutionGraph& g = plan_.graph;
        g.devices = pp_;
        g.chunks = ir_chunks_;
        g.microbatches = m_;
        place_chunks();
        for (const LoweringStage& st : stages_) {
            p2p_.push_back(p2p_per_direction_s(*st.strategy, *st.costs, static_cast<int>(p2p_.size())));
            pp_link_.push_back(st.pp_link_across_nodes ? IrLink::network : IrLink::nvlink);
            dp_link_.push_back(st.dp_link_across_nodes ? IrLink::network : IrLink::nvlink);
        }
        idx_.init(ir_chunks_, m_);
        last_compute_.assign(static_cast<std::size_t>(pp_), kNone);
        program_entry_.resize(static_cast<std::size_t>(pp_));
        if (program_) {
            find_program_last_microbatches();
            full_backward_.assign(idx_.f.size(), 0);
        }
        plan_zero3_gathers();
        plan_gradient_buckets();
    }

    // A device's program while it is emitted: the send the next compute op waits for, and its
    // compute ops so far.
    struct DeviceCursor {
        int d = 0;
        std::uint32_t pending_block = kNone;
        std::vector<std::uint32_t> ops;
    };

    // IR chunk -> device, model chunk, timing. DualPipe: chunk dir*pp + k is stage k of pipeline dir,
    // on device k (down) or pp-1-k (up); both pipelines hold the same layers.
    void place_chunks()
    {
        const auto chunks = static_cast<std::size_t>(ir_chunks_);
        plan_.chunk_timing.resize(chunks);
        plan_.chunk_device.resize(chunks);
        plan_.chunk_activation_bytes.resize(chunks);
        plan_.chunk_power.resize(chunks);
        relayout_.assign(chunks, ChunkRelayout {});
        plan_.device_clock.resize(static_cast<std::size_t>(pp_));
        plan_.device_wait_W.resize(static_cast<std::size_t>(pp_));
        for (int d = 0; d < pp_; ++d) {
            const LoweringStage& st = stages_[static_cast<std::size_t>(d)];
            plan_.device_clock[d] = st.clock;
            plan_.device_wait_W[d] = st.ctx->power.wait_power(st.clock);
        }
        for (int c = 0; c < ir_chunks_; ++c) {
            const int mc = dual_ ? c % pp_ : c;
            const int d = dual_ ? (c < pp_ ? mc : pp_ - 1 - mc) : mc % pp_;
            const LoweringStage& st = stages_[static_cast<std::size_t>(d)];
            plan_.chunk_device[c] = d;
            plan_.chunk_timing[c] = chunk_timing(*st.ctx, *st.strategy, *st.costs, mc);
            relayout_[c] = chunk_relayout(*st.ctx, *st.strategy, *st.costs, st.costs->layout->chunk[mc]);
            // The chunk's kernels at its device's clock, throttled to the power cap.
            plan_.chunk_power[c] = chunk_power(*st.ctx, *st.costs, plan_.chunk_timing[c], st.clock);
            apply_clock(plan_.chunk_timing[c], plan_.chunk_power[c]);
            if (st.time_scale != 1)
                scale_chunk(plan_.chunk_timing[c], plan_.chunk_power[c], st.time_scale);
            plan_.chunk_activation_bytes[c] = chunk_activation_bytes(st, plan_.chunk_timing[c]);
        }
    }

    // A stage that runs a share of the step other than one micro-batch per lowered micro-batch: its
    // passes (and their kernels' energy, so their power holds) stretch or shrink alike.
    static void scale_chunk(ChunkTiming& ct, ChunkPower& cp, double scale)
    {
        for (double* t : { &ct.forward_s, &ct.backward_input_s, &ct.weight_s, &ct.recompute_s, &ct.compute_s })
            *t *= scale;
        for (PassEnergy& e : cp.pass) {
            e.time_s *= scale;
            e.energy_J *= scale;
        }
        cp.comm_busy_s *= scale;
    }

    // Activations one micro-batch leaves in the chunk for its backward; a composite plan's layers each
    // under their range's recompute setting.
    static double chunk_activation_bytes(const LoweringStage& st, const ChunkTiming& ct)
    {
        const StrategyCosts& costs = *st.costs;
        if (!costs.ranges)
            return (ct.layers - ct.moe_layers) * costs.layer.activations.dense
                + ct.moe_layers * costs.layer.activations.moe;
        double bytes = 0;
        for (int l = ct.first_layer; l < ct.first_layer + ct.layers; ++l) {
            const LayerActivationBytes& a = costs.entry_of_layer(l).costs.activations;
            bytes += st.ctx->model.is_moe_layer(l) ? a.moe : a.dense;
        }
        return bytes;
    }

    // ZeRO-3 / FSDP per-pass gathers (prefetched one pass ahead when overlap_param_gather is on).
    void plan_zero3_gathers()
    {
        z3_.resize(static_cast<std::size_t>(pp_));
        stage_layers_.assign(static_cast<std::size_t>(pp_), 1);
        if (s_.zero < 3)
            return;
        for (int d = 0; d < pp_; ++d) {
            const LoweringStage& st = stages_[static_cast<std::size_t>(d)];
            z3_[d] = zero3_traffic(*st.ctx, *st.strategy, *st.costs, d);
            stage_layers_[d] = std::max(1, st.costs->layout->stage[d].layers);
        }
    }

    // Gradient buckets per chunk (Megatron's ~40M-parameter buckets, at most one per layer); the ops
    // after which each is ready are collected while the programs are emitted.
    void plan_gradient_buckets()
    {
        bucket_pieces_.assign(static_cast<std::size_t>(ir_chunks_), 1);
        bucket_ready_.resize(static_cast<std::size_t>(ir_chunks_));
        if (!(s_.overlap_grad_reduce && s_.zero <= 2))
            return;
        for (int c = 0; c < ir_chunks_; ++c) {
            const LoweringStage& st = stages_[static_cast<std::size_t>(plan_.chunk_device[c])];
            if (st.strategy->dp * st.strategy->cp <= 1)
                continue;
            const StageTail& tail = st.tail;
            const int device_layers = st.costs->layout->stage[plan_.chunk_device[c]].layers;
            const double chunk_params = tail.params * plan_.chunk_timing[c].layers / std::max(1, device_layers);
            const double bucket_params = tail.last_bucket_fraction * tail.params; // Megatron's bucket size
            const int buckets = static_cast<int>(std::ceil(chunk_params / std::max(1.0, bucket_params)));
            bucket_pieces_[c] = std::clamp(buckets, 1, std::max(1, plan_.chunk_timing[c].layers));
        }
    }

    // Whether this micro-batch chunk's input gradient leaves after B (split) or after W; a program
    // may write some backwards whole (BW) among split ones.
    bool split_at(std::size_t at) const
    {
        if (!split_backward_)
            return false;
        return full_backward_.empty() || full_backward_[at] == 0;
    }

    // Pipeline position of an IR chunk: predecessor/successor chunks in the data flow.
    bool first_in_pipe(int c) const { return dual_ ? c % pp_ == 0 : c == 0; }
    bool last_in_pipe(int c) const { return dual_ ? c % pp_ == pp_ - 1 : c == ir_chunks_ - 1; }
    int ir_chunk(int device, int local) const
    {
        if (dual_)
            return local == 0 ? device : pp_ + (pp_ - 1 - device);
        return local * pp_ + device;
    }
    // Per IR chunk: the micro-batch that finishes last (DualPipe's up pipeline holds the second half;
    // a program: the one whose backward it lists last).
    long long last_microbatch(int c) const
    {
        if (program_)
            return program_last_mb_[static_cast<std::size_t>(c)];
        return dual_ && c < pp_ ? m_ / 2 - 1 : m_ - 1;
    }
    void find_program_last_microbatches()
    {
        program_last_mb_.assign(static_cast<std::size_t>(ir_chunks_), m_ - 1);
        for (int d = 0; d < pp_; ++d)
            for (const ScheduleDirective& x : program_->stages[static_cast<std::size_t>(d)])
                if (x.kind == DirectiveKind::backward_input || x.kind == DirectiveKind::backward_full)
                    program_last_mb_[static_cast<std::size_t>(ir_chunk(d, x.chunk))] = x.microbatch;
    }

    // The point-to-point send of `op`'s activations (forward) or input gradient (backward) to the
    // neighbouring stage; it blocks the device's next compute op.
    IrOp make_pp_send(int d, const IrOp& op) const
    {
        IrOp send;
        send.device = static_cast<std::uint16_t>(d);
        send.type = IrOpType::pp_send;
        send.stream = IrStream::pp;
        send.link = pp_link_[static_cast<std::size_t>(d)];
        send.ordering = IrOrdering::fifo;
        send.chunk = op.chunk;
        send.microbatch = op.microbatch;
        send.duration_s = static_cast<float>(p2p_[static_cast<std::size_t>(d)]);
        send.blocks_compute = true;
        return send;
    }

    // ZeRO-3's reduce-scatter of `layers` layers' gradients once the weight gradient `after` is done.
    void add_zero3_reduce_scatter(int d, const IrOp& op, double layers, std::uint32_t after)
    {
        ExecutionGraph& g = plan_.graph;
        IrOp rs;
        rs.device = static_cast<std::uint16_t>(d);
        rs.type = IrOpType::zero3_reduce_scatter;
        rs.stream = IrStream::dp;
        rs.link = dp_link_[static_cast<std::size_t>(d)];
        rs.ordering = IrOrdering::fifo;
        rs.chunk = op.chunk;
        rs.microbatch = op.microbatch;
        rs.duration_s = static_cast<float>(z3_[d].reduce_scatter_s * layers / stage_layers_[d]);
        const std::uint32_t rid = g.add(rs);
        g.add_dep(rid, after);
        zero3_rs_.push_back(rid);
    }

    // Gather a chunk's parameters before the pass `id`; with prefetch it waits only for the pass two
    // positions back (so it runs under the previous one).
    void add_zero3_gather(const DeviceCursor& dev, const IrOp& op, double gather_layers, std::uint32_t id)
    {
        ExecutionGraph& g = plan_.graph;
        const int d = dev.d;
        IrOp ga;
        ga.device = static_cast<std::uint16_t>(d);
        ga.type = IrOpType::zero3_gather;
        ga.stream = IrStream::dp_gather;
        ga.link = dp_link_[static_cast<std::size_t>(d)];
        ga.ordering = IrOrdering::fifo;
        ga.chunk = op.chunk;
        ga.microbatch = op.microbatch;
        ga.duration_s = static_cast<float>(z3_[d].gather_s * gather_layers / stage_layers_[d]);
        const std::uint32_t gid = g.add(ga);
        if (dual_) {
            // DualPipe's order is decided at run time: prefetch one micro-batch ahead per chunk.
            const long long prev_mb = op.microbatch - 1;
            const long long first_mb = op.chunk < pp_ ? 0 : m_ / 2;
            if (prev_mb >= first_mb) {
                const std::size_t prev = idx_.at(op.chunk, prev_mb);
                const std::uint32_t before = op.type == IrOpType::forward ? idx_.f[prev] : idx_.b[prev];
                if (before != kNone)
                    g.add_dep(gid, before);
            }
        } else {
            const std::size_t back = s_.overlap_param_gather ? 2 : 1;
            if (dev.ops.size() >= back)
                g.add_dep(gid, dev.ops[dev.ops.size() - back]);
        }
        g.add_dep(id, gid);
    }

    std::uint32_t add_compute(DeviceCursor& dev, IrOp op, double gather_layers)
    {
        ExecutionGraph& g = plan_.graph;
        op.device = static_cast<std::uint16_t>(dev.d);
        op.stream = IrStream::compute;
        if (op.ordering != IrOrdering::filler)
            op.ordering = compute_order_;
        const std::uint32_t id = g.add(op);
        if (dev.pending_block != kNone && op.ordering != IrOrdering::filler) {
            g.add_dep(id, dev.pending_block);
            dev.pending_block = kNone;
        }
        if (s_.zero >= 3 && (op.type == IrOpType::forward || op.type == IrOpType::backward_input))
            add_zero3_gather(dev, op, gather_layers, id);
        dev.ops.push_back(id);
        last_compute_[dev.d] = id;
        return id;
    }

    void emit_backward_send(DeviceCursor& dev, int c, std::size_t at, const IrOp& op)
    {
        if (first_in_pipe(c) || p2p_[static_cast<std::size_t>(dev.d)] <= 0)
            return;
        idx_.send_b[at] = plan_.graph.add(make_pp_send(dev.d, op));
        dev.pending_block = idx_.send_b[at];
    }

    void emit_forward(DeviceCursor& dev, int c, std::size_t at, IrOp op)
    {
        const ChunkTiming& ct = plan_.chunk_timing[c];
        op.type = IrOpType::forward;
        op.priority = 1 << 20 | op.microbatch;
        // ZeRO-3 / FSDP gathers each layer's parameters just before it runs: the forward is
        // emitted layer by layer so the gathers prefetch one layer ahead.
        const int pieces = s_.zero >= 3 && !dual_ ? std::max(1, ct.layers) : 1;
        const ChunkRelayout& relay = relayout_[static_cast<std::size_t>(c)];
        if (pieces == 1 && relay.forward_s > 0) {
            emit_forward_around_relayout(dev, c, at, op);
            return;
        }
        op.duration_s = static_cast<float>(ct.forward_s / pieces);
        for (int k = 0; k < pieces; ++k) {
            op.activation_delta = k == 0 ? static_cast<float>(plan_.chunk_activation_bytes[c]) : 0.0f;
            const std::uint32_t id = add_compute(dev, op, static_cast<double>(ct.layers) / pieces);
            if (k == 0)
                idx_.f_entry[at] = id;
            else
                plan_.graph.add_dep(id, idx_.f[at]);
            idx_.f[at] = id;
        }
        if (!last_in_pipe(c) && p2p_[static_cast<std::size_t>(dev.d)] > 0) {
            idx_.send_f[at] = plan_.graph.add(make_pp_send(dev.d, op));
            dev.pending_block = idx_.send_f[at];
        }
    }

    // The collective that moves one micro-batch's activation (or its gradient) between two layer-range
    // layouts (model/relayout.hpp): the next layer waits for it.
    IrOp make_relayout(int d, const IrOp& op, double seconds) const
    {
        const ChunkRelayout& relay = relayout_[static_cast<std::size_t>(op.chunk)];
        IrOp r;
        r.device = static_cast<std::uint16_t>(d);
        r.type = relay.stream == kCpStream ? IrOpType::cp_comm : IrOpType::tp_comm;
        r.stream = relay.stream == kCpStream ? IrStream::cp : IrStream::tp;
        r.link = relay.across_nodes ? IrLink::network : IrLink::nvlink;
        r.ordering = IrOrdering::fifo;
        r.chunk = op.chunk;
        r.microbatch = op.microbatch;
        r.duration_s = static_cast<float>(seconds);
        r.blocks_compute = true;
        return r;
    }

    // The share of a chunk's layers before its first layout change (after it, going backward).
    double share_before_relayout(int c, bool backward) const
    {
        const ChunkTiming& ct = plan_.chunk_timing[static_cast<std::size_t>(c)];
        const int before = relayout_[static_cast<std::size_t>(c)].first_boundary - ct.first_layer;
        const double share = ct.layers > 0 ? static_cast<double>(before) / ct.layers : 0.5;
        return backward ? 1 - share : share;
    }

    // A forward whose layers change layout: the layers before the boundary, the relayout, the rest.
    void emit_forward_around_relayout(DeviceCursor& dev, int c, std::size_t at, IrOp op)
    {
        const ChunkTiming& ct = plan_.chunk_timing[c];
        const double relay_s = relayout_[static_cast<std::size_t>(c)].forward_s;
        const double compute_s = std::max(0.0, ct.forward_s - relay_s);
        const double first = share_before_relayout(c, false);
        op.duration_s = static_cast<float>(compute_s * first);
        op.activation_delta = static_cast<float>(plan_.chunk_activation_bytes[c]);
        idx_.f_entry[at] = add_compute(dev, op, ct.layers * first);
        const std::uint32_t relay = plan_.graph.add(make_relayout(dev.d, op, relay_s));
        plan_.graph.add_dep(relay, idx_.f_entry[at]);
        op.duration_s = static_cast<float>(compute_s * (1 - first));
        op.activation_delta = 0.0f;
        idx_.f[at] = add_compute(dev, op, ct.layers * (1 - first));
        plan_.graph.add_dep(idx_.f[at], relay);
        if (!last_in_pipe(c) && p2p_[static_cast<std::size_t>(dev.d)] > 0) {
            idx_.send_f[at] = plan_.graph.add(make_pp_send(dev.d, op));
            dev.pending_block = idx_.send_f[at];
        }
    }

    // A backward-input pass whose layers change layout: the layers after the boundary (walked first), the
    // relayout of the gradient, the layers before it. The pass's entry is its first piece.
    void emit_backward_around_relayout(DeviceCursor& dev, int c, std::size_t at, IrOp op)
    {
        const ChunkTiming& ct = plan_.chunk_timing[c];
        const double relay_s = relayout_[static_cast<std::size_t>(c)].backward_s;
        const double compute_s = std::max(0.0, ct.backward_input_s - relay_s);
        const double first = share_before_relayout(c, true);
        const float freed = op.activation_delta;
        op.duration_s = static_cast<float>(compute_s * first);
        op.activation_delta = 0.0f;
        idx_.b_entry[at] = add_compute(dev, op, ct.layers * first);
        const std::uint32_t relay = plan_.graph.add(make_relayout(dev.d, op, relay_s));
        plan_.graph.add_dep(relay, idx_.b_entry[at]);
        op.duration_s = static_cast<float>(compute_s * (1 - first));
        op.activation_delta = freed;
        idx_.b[at] = add_compute(dev, op, ct.layers * (1 - first));
        plan_.graph.add_dep(idx_.b[at], relay);
    }

    // Autograd walks the layers back (dgrad and wgrad per layer): the last micro-batch releases
    // gradient buckets as it goes, so the DP reduction overlaps it; under ZeRO-3 every backward
    // gathers and reduce-scatters layer by layer.
    void emit_backward_in_pieces(DeviceCursor& dev, int c, std::size_t at, const IrOp& op, int pieces)
    {
        const ChunkTiming& ct = plan_.chunk_timing[c];
        IrOp bp = op;
        const double relay_s = relayout_[static_cast<std::size_t>(c)].backward_s;
        bp.duration_s = static_cast<float>(std::max(0.0, ct.backward_input_s - relay_s) / pieces);
        // The gradient's relayout after the piece that reaches the layout boundary; the next piece waits.
        const int relay_after
            = relay_s > 0 ? std::clamp(static_cast<int>(share_before_relayout(c, true) * pieces), 0, pieces - 1) : -1;
        IrOp wp = op;
        wp.type = IrOpType::backward_weight;
        wp.duration_s = static_cast<float>(ct.weight_s / pieces);
        wp.priority = 2 << 20 | op.microbatch;
        const double layers_per_piece = static_cast<double>(ct.layers) / pieces;
        for (int k = 0; k < pieces; ++k) {
            const std::uint32_t bid = add_compute(dev, bp, layers_per_piece);
            if (k == 0)
                idx_.b[at] = bid;
            else
                plan_.graph.add_dep(bid, idx_.w[at]);
            if (k == relay_after) {
                dev.pending_block = plan_.graph.add(make_relayout(dev.d, bp, relay_s));
                plan_.graph.add_dep(dev.pending_block, bid);
            }
            wp.activation_delta = k == pieces - 1 ? -static_cast<float>(plan_.chunk_activation_bytes[c]) : 0.0f;
            idx_.w[at] = add_compute(dev, wp, 0);
            plan_.graph.add_dep(idx_.w[at], bid);
            if (s_.zero >= 3)
                add_zero3_reduce_scatter(dev.d, op, layers_per_piece, idx_.w[at]);
            else
                bucket_ready_[c].push_back(idx_.w[at]);
        }
        emit_backward_send(dev, c, at, op);
    }

    void emit_backward_input(DeviceCursor& dev, int c, std::size_t at, IrOp op)
    {
        const ChunkTiming& ct = plan_.chunk_timing[c];
        const long long mb = op.microbatch;
        if (ct.recompute_s > 0) {
            IrOp r = op;
            r.type = IrOpType::recompute;
            r.duration_s = static_cast<float>(ct.recompute_s);
            r.priority = op.microbatch;
            idx_.r[at] = add_compute(dev, r, 0);
        }
        op.type = IrOpType::backward_input;
        op.duration_s = static_cast<float>(ct.backward_input_s);
        op.priority = op.microbatch;
        // Split-backward schedules free the activations with B (W keeps only its GEMM inputs,
        // small next to them); the others free them when the whole backward ends.
        if (split_at(at))
            op.activation_delta = -static_cast<float>(plan_.chunk_activation_bytes[c]);
        const int pieces = s_.zero >= 3 && !dual_ ? std::max(1, ct.layers)
            : mb == last_microbatch(c) && !dual_  ? bucket_pieces_[c]
                                                  : 1;
        if (pieces > 1) {
            emit_backward_in_pieces(dev, c, at, op, pieces);
            return;
        }
        if (relayout_[static_cast<std::size_t>(c)].backward_s > 0)
            emit_backward_around_relayout(dev, c, at, op);
        else
            idx_.b[at] = add_compute(dev, op, ct.layers);
        // Zero-bubble schedules send the input gradient right after B; the others (autograd runs
        // dgrad and wgrad layer by layer) only once the whole backward, W included, is done.
        if (split_at(at))
            emit_backward_send(dev, c, at, op);
    }

    void emit_backward_weight(DeviceCursor& dev, int c, std::size_t at, IrOp op, bool filler)
    {
        if (idx_.w[at] != kNone)
            return; // emitted in pieces with the backward input
        const ChunkTiming& ct = plan_.chunk_timing[c];
        op.type = IrOpType::backward_weight;
        op.duration_s = static_cast<float>(ct.weight_s);
        op.activation_delta = split_at(at) ? 0.0f : -static_cast<float>(plan_.chunk_activation_bytes[c]);
        op.priority = 2 << 20 | op.microbatch;
        if (filler)
            op.ordering = IrOrdering::filler;
        idx_.w[at] = add_compute(dev, op, 0);
        if (!split_at(at))
            emit_backward_send(dev, c, at, op);
        if (s_.zero >= 3)
            add_zero3_reduce_scatter(dev.d, op, ct.layers, idx_.w[at]);
    }

    // A program's passes as ScheduledPass, each with the WAITs and RECVs written before it. Sends
    // follow their passes where the lowering always places them; all-to-alls are part of the
    // passes' durations.
    std::vector<ScheduledPass> program_passes(int d)
    {
        std::vector<ScheduledPass> out;
        std::vector<ScheduleDirective> waits;
        for (const ScheduleDirective& x : program_->stages[static_cast<std::size_t>(d)]) {
            const auto mb = x.microbatch;
            switch (x.kind) {
            case DirectiveKind::wait:
            case DirectiveKind::recv:
                waits.push_back(x);
                continue;
            case DirectiveKind::forward:
                out.push_back({ PassKind::forward, x.chunk, mb, false });
                break;
            case DirectiveKind::backward_input:
                out.push_back({ PassKind::backward_input, x.chunk, mb, false });
                break;
            case DirectiveKind::backward_weight:
                out.push_back({ PassKind::backward_weight, x.chunk, mb, x.filler });
                break;
            case DirectiveKind::backward_full:
                full_backward_[idx_.at(ir_chunk(d, x.chunk), mb)] = 1;
                out.push_back({ PassKind::backward_input, x.chunk, mb, false });
                out.push_back({ PassKind::backward_weight, x.chunk, mb, false });
                break;
            case DirectiveKind::send:
            case DirectiveKind::all_to_all:
                continue;
            }
            for (const ScheduleDirective& w : waits)
                program_waits_.push_back({ d, out.size() - (x.kind == DirectiveKind::backward_full ? 2 : 1), w });
            waits.clear();
        }
        return out;
    }

    // A WAIT holds the pass after it until the named pass of the same stage has finished; a RECV
    // until the data it names has arrived (the neighbour's send, or its pass when sends are free).
    void add_program_waits()
    {
        for (const ProgramWait& pw : program_waits_) {
            const std::uint32_t op = program_entry_[static_cast<std::size_t>(pw.device)][pw.pass];
            const int c = ir_chunk(pw.device, pw.wait.chunk);
            const std::size_t at = idx_.at(c, pw.wait.microbatch);
            std::uint32_t target = kNone;
            if (pw.wait.kind == DirectiveKind::recv && pw.wait.target == PassKind::forward) {
                const std::size_t prev = idx_.at(c - 1, pw.wait.microbatch);
                target = idx_.send_f[prev] != kNone ? idx_.send_f[prev] : idx_.f[prev];
            } else if (pw.wait.kind == DirectiveKind::recv) {
                const std::size_t next = idx_.at(c + 1, pw.wait.microbatch);
                target = idx_.send_b[next] != kNone ? idx_.send_b[next] : split_at(next) ? idx_.b[next] : idx_.w[next];
            } else {
                target = pw.wait.target == PassKind::forward     ? idx_.f[at]
                    : pw.wait.target == PassKind::backward_input ? idx_.b[at]
                                                                 : idx_.w[at];
            }
            plan_.graph.add_dep(op, target);
        }
    }

    // Pass 1: a device's program, in order, with its sends.
    void emit_device_program(int d)
    {
        DeviceCursor dev;
        dev.d = d;
        const std::vector<ScheduledPass> passes
            = program_ ? program_passes(d) : device_program(schedule_, d, pp_, vpp_, m_);
        std::vector<std::uint32_t>& entries = program_entry_[static_cast<std::size_t>(d)];
        for (const ScheduledPass& pass : passes) {
            const auto first_op = static_cast<std::uint32_t>(plan_.graph.size());
            const int c = ir_chunk(d, pass.local_chunk);
            const std::size_t at = idx_.at(c, pass.microbatch);
            IrOp op;
            op.chunk = static_cast<std::int16_t>(c);
            op.microbatch = static_cast<std::int32_t>(pass.microbatch);
            switch (pass.kind) {
            case PassKind::forward:
                emit_forward(dev, c, at, op);
                break;
            case PassKind::backward_input:
                emit_backward_input(dev, c, at, op);
                break;
            case PassKind::backward_weight:
                emit_backward_weight(dev, c, at, op, pass.filler);
                break;
            }
            // A W emitted in pieces with its B added nothing here: it is its own entry.
            entries.push_back(plan_.graph.size() > first_op ? first_op : idx_.w[at]);
        }
        // A trailing send gates nothing here; the barrier waits for it in the tail.
    }

    // Pass 2: data-flow edges between passes.
    void add_dataflow_edges()
    {
        ExecutionGraph& g = plan_.graph;
        for (int c = 0; c < ir_chunks_; ++c) {
            for (long long mb = 0; mb < m_; ++mb) {
                const std::size_t at = idx_.at(c, mb);
                const std::uint32_t f = idx_.f[at], r = idx_.r[at], b = idx_.b[at], w = idx_.w[at];
                if (f == kNone)
                    continue; // DualPipe: this pipeline does not carry this micro-batch
                if (!first_in_pipe(c)) {
                    const std::size_t prev = idx_.at(c - 1, mb);
                    g.add_dep(idx_.f_entry[at], idx_.send_f[prev] != kNone ? idx_.send_f[prev] : idx_.f[prev]);
                }
                if (idx_.send_f[at] != kNone)
                    g.add_dep(idx_.send_f[at], f);
                const std::uint32_t b_entry = idx_.b_entry[at] != kNone ? idx_.b_entry[at] : b;
                const std::uint32_t bwd_entry = r != kNone ? r : b_entry;
                g.add_dep(bwd_entry, f);
                if (r != kNone)
                    g.add_dep(b_entry, r);
                if (!last_in_pipe(c)) {
                    const std::size_t next = idx_.at(c + 1, mb);
                    const std::uint32_t grad_ready = split_at(next) ? idx_.b[next] : idx_.w[next];
                    g.add_dep(bwd_entry, idx_.send_b[next] != kNone ? idx_.send_b[next] : grad_ready);
                }
                if (idx_.send_b[at] != kNone)
                    g.add_dep(idx_.send_b[at], split_at(at) ? b : w);
                g.add_dep(w, b);
            }
        }
    }

    // ZB-H1 keeps 1F1B's memory: a stage holds at most p - s micro-batches, so a forward waits for the
    // deferred W of the micro-batch p - s before it.
    void add_zb_h1_in_flight_limit()
    {
        for (int c = 0; c < ir_chunks_; ++c) {
            const long long limit = pp_ - plan_.chunk_device[c];
            for (long long mb = limit; mb < m_; ++mb)
                plan_.graph.add_dep(idx_.f_entry[idx_.at(c, mb)], idx_.w[idx_.at(c, mb - limit)]);
        }
    }

    // DualPipe keeps at most p - s micro-batches in flight on the down pipeline's stage s and s + 1
    // on the up pipeline's (PP + 1 per device, DualPipe README): a forward waits for the backward
    // that frees its slot.
    void add_dualpipe_in_flight_limit()
    {
        const long long half = m_ / 2;
        for (int c = 0; c < ir_chunks_; ++c) {
            const int stage = c % pp_;
            const long long limit = pp_ - stage;
            const long long base = c < pp_ ? 0 : half;
            for (long long i = limit; i < half; ++i)
                plan_.graph.add_dep(idx_.f_entry[idx_.at(c, base + i)], idx_.b[idx_.at(c, base + i - limit)]);
        }
    }

    // The DP gradient reduction of device d's chunks, each after its last weight gradient (or its
    // buckets as they become ready), all before the barrier.
    void emit_grad_reductions(int d, const StageTail& tail, std::uint32_t bar)
    {
        ExecutionGraph& g = plan_.graph;
        int device_layers = 0;
        for (int c = 0; c < ir_chunks_; ++c)
            if (plan_.chunk_device[c] == d)
                device_layers += plan_.chunk_timing[c].layers;
        for (int c = 0; c < ir_chunks_; ++c) {
            if (plan_.chunk_device[c] != d)
                continue;
            IrOp red;
            red.device = static_cast<std::uint16_t>(d);
            red.type = IrOpType::dp_reduce;
            red.stream = IrStream::dp;
            red.link = dp_link_[static_cast<std::size_t>(d)];
            red.ordering = IrOrdering::fifo;
            red.chunk = static_cast<std::int16_t>(c);
            const double chunk_reduce = tail.grad_reduce_s * plan_.chunk_timing[c].layers / std::max(1, device_layers);
            const std::vector<std::uint32_t>& ready_after = bucket_ready_[c];
            const int buckets = ready_after.empty() ? 1 : static_cast<int>(ready_after.size());
            red.duration_s = static_cast<float>(chunk_reduce / buckets);
            for (int k = 0; k < buckets; ++k) {
                const std::uint32_t id = g.add(red);
                if (!s_.overlap_grad_reduce)
                    g.add_dep(id, last_compute_[d]);
                else
                    g.add_dep(id, ready_after.empty() ? idx_.w[idx_.at(c, last_microbatch(c))] : ready_after[k]);
                g.add_dep(bar, id);
            }
        }
    }

    // The optimizer step (or the offloaded one) after the barrier, and the distributed optimizer's
    // parameter gather after it.
    void emit_optimizer(int d, std::uint32_t bar)
    {
        ExecutionGraph& g = plan_.graph;
        const StageTail& tail = stages_[static_cast<std::size_t>(d)].tail;
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
            ga.link = dp_link_[static_cast<std::size_t>(d)];
            ga.ordering = IrOrdering::fifo;
            // Overlapped with the next step's forward except the first bucket.
            ga.duration_s = static_cast<float>(
                s_.overlap_param_gather ? tail.param_gather_s * tail.last_bucket_fraction : tail.param_gather_s);
            g.add_dep(g.add(ga), o);
        }
    }

    // The step's tail: gradient reduction per chunk after its last weight gradient, a barrier for the
    // global gradient norm, the optimizer step, and the distributed optimizer's parameter gather.
    void emit_tail()
    {
        ExecutionGraph& g = plan_.graph;
        IrOp barrier;
        barrier.type = IrOpType::barrier;
        barrier.stream = IrStream::sync;
        barrier.ordering = IrOrdering::fifo;
        const std::uint32_t bar = g.add(barrier);
        for (std::uint32_t rs : zero3_rs_)
            g.add_dep(bar, rs);
        for (int d = 0; d < pp_; ++d) {
            const StageTail& tail = stages_[static_cast<std::size_t>(d)].tail;
            g.add_dep(bar, last_compute_[d]);
            if (tail.grad_reduce_s > 0)
                emit_grad_reductions(d, tail, bar);
            // Trailing sends (the last backward's gradient to the previous stage) finish before the barrier.
            for (int c = 0; c < ir_chunks_; ++c)
                if (plan_.chunk_device[c] == d && idx_.send_b[idx_.at(c, last_microbatch(c))] != kNone)
                    g.add_dep(bar, idx_.send_b[idx_.at(c, last_microbatch(c))]);
        }
        for (int d = 0; d < pp_; ++d)
            emit_optimizer(d, bar);
    }

    struct ProgramWait {
        int device = 0;
        std::size_t pass = 0; // index into the device's passes
        ScheduleDirective wait;
    };

    const Strategy& s_;
    std::unique_ptr<EvaluationCache> cache_; // a plain plan's: costs_ points into it
    StrategyCosts costs_;
    std::vector<LoweringStage> stages_; // per device
    const int pp_;
    const ScheduleProgram* program_;
    const bool dual_;
    const int vpp_;
    const long long m_;
    const int ir_chunks_;
    const IrOrdering compute_order_;
    const Schedule schedule_;
    const bool split_backward_;
    std::vector<double> p2p_; // per device, per direction
    std::vector<IrLink> pp_link_, dp_link_; // per device
    LoweredPlan plan_;
    Index idx_;
    std::vector<std::uint32_t> last_compute_; // per device
    std::vector<std::vector<std::uint32_t>> program_entry_; // per device: each pass's first op
    std::vector<ChunkRelayout> relayout_; // per IR chunk: its layer-range relayouts (composite plans)
    std::vector<ProgramWait> program_waits_;
    std::vector<long long> program_last_mb_; // per IR chunk
    std::vector<char> full_backward_; // per micro-batch chunk of a program: written as BW
    std::vector<Zero3Traffic> z3_; // per device
    std::vector<int> stage_layers_; // per device
    std::vector<std::uint32_t> zero3_rs_;
    std::vector<int> bucket_pieces_; // per IR chunk
    std::vector<std::vector<std::uint32_t>> bucket_ready_; // per IR chunk
};

} // namespace

LoweredPlan lower_plan(const PlanContext& ctx, const Strategy& s, double clock_ceiling, long long microbatches)
{
    return PlanLowering(ctx, s, clock_ceiling, microbatches).lower();
}

LoweredPlan lower_stages(const Strategy& s, std::span<const LoweringStage> stages, long long microbatches)
{
    return PlanLowering(s, stages, microbatches).lower();
}

} // namespace parallax

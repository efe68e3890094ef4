#include "model/hetero_model.hpp"

#include "model/analytic_model.hpp"
#include "model/data_path.hpp"
#include "model/host_link.hpp"
#include "model/memory_model.hpp"
#include "model/plan_context.hpp"
#include "model/stage_power.hpp"
#include "model/strategy_costs.hpp"
#include "spec/hetero_label.hpp"
#include "spec/hetero_rules.hpp"
#include "spec/software_release.hpp"
#include "spec/units.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <queue>

namespace parallax {

namespace {

ClusterSpec group_cluster(const ClusterSpec& c, const NodeGroup& g)
{
    ClusterSpec out = c;
    out.groups.clear();
    out.name = c.name + "/" + g.name;
    out.gpu = g.gpu;
    out.gpus_per_node = g.gpus_per_node;
    out.intra_node = g.intra_node;
    out.inter_node = c.nic_of(g);
    return out;
}

// The stages' layers as the plain model's layout (one chunk per stage, each stage its own class).
PlanLayout explicit_layout(const ModelSpec& m, const std::vector<PipelineStageSpec>& stages)
{
    PlanLayout l;
    l.pp = static_cast<int>(stages.size());
    l.vpp = 1;
    int first = 0;
    for (int k = 0; k < l.pp; ++k) {
        ChunkInfo ci { first, stages[k].layers, moe_layers_in(m, first, stages[k].layers) };
        l.chunk.push_back(ci);
        StageInfo si;
        si.layers = si.param_layers = ci.layers;
        si.moe_layers = si.param_moe_layers = ci.moe_layers;
        si.has_embedding = k == 0;
        si.has_output = k == l.pp - 1;
        l.stage.push_back(si);
        l.classes.push_back({ k, 1 });
        l.class_of_stage.push_back(k);
        first += ci.layers;
    }
    return l;
}

struct ReplicaEval {
    int group = 0; // index into the group models
    Strategy strategy;
    StrategyCosts costs;
    StagePower power; // timing at the stage's clock, with its energy inputs
    StageTail tail;
    double clock = 1;
    long long microbatches = 0;
    MemoryBreakdown memory;
    double total_s() const { return power.timing.forward_s + power.timing.backward_s; }
};

// Whether two replicas run the same kernels on the same kind of node: then the plain model's
// placement-based costs hold between them.
bool alike(const Scenario& s, const StageReplica& a, const StageReplica& b)
{
    if (a.tp != b.tp)
        return false;
    const NodeGroup* ga = s.cluster.group(a.group);
    const NodeGroup* gb = s.cluster.group(b.group);
    if (ga == gb)
        return true;
    const FabricSpec na = s.cluster.nic_of(*ga);
    const FabricSpec nb = s.cluster.nic_of(*gb);
    return ga->gpu.name == gb->gpu.name && ga->gpus_per_node == gb->gpus_per_node
        && ga->intra_node.bw_Bps == gb->intra_node.bw_Bps && ga->intra_node.latency_s == gb->intra_node.latency_s
        && na.bw_Bps == nb.bw_Bps && na.latency_s == nb.latency_s;
}

// Ranks on different nodes, one per node, on no common rail: groups joined by inter_node only.
GroupPlacement across_nodes(long long size)
{
    return GroupPlacement { size, 1, size, false };
}

} // namespace

class HeteroEvaluation {
public:
    HeteroEvaluation(const Scenario& s, std::vector<HeteroGroupModel>& groups)
        : s_(s)
        , layout_(explicit_layout(s.model, s.stages))
        , p_(static_cast<int>(s.stages.size()))
        , n_(s.training.global_batch / s.strategy.micro_batch)
        , groups_(groups)
    {
    }

    // Valid after run(), while this evaluation lives.
    std::vector<HeteroStageSource> stage_sources() const;
    double effective_microbatches() const { return m_eff_; }

    HeteroPrediction run()
    {
        cost_replicas();
        add_cross_group_sends();
        time_replicas();
        split_microbatches();
        pipeline();
        tails();
        HeteroPrediction out;
        fill_prediction(out);
        fill_reports(out);
        return out;
    }

private:
    const PlanContext& ctx_of(const ReplicaEval& r) const { return *groups_[r.group].ctx; }
    int group_index(const std::string& name) const
    {
        for (std::size_t i = 0; i < groups_.size(); ++i)
            if (groups_[i].name == name)
                return static_cast<int>(i);
        return 0; // check_hetero_plan() guarantees every name exists
    }

    // The first replica of stage k on `group` with `tp` before replica r (r itself when none).
    int first_twin(int k, int r, int group, int tp) const
    {
        for (int q = 0; q < r; ++q)
            if (reps_[k][q].group == group && reps_[k][q].strategy.tp == tp)
                return q;
        return r;
    }

    // Replicas of a stage on the same group with the same TP (twins) cost the same: the first is costed,
    // the others copy it (a stage of a large group holds hundreds of them).
    void cost_replicas()
    {
        reps_.resize(s_.stages.size());
        twin_.resize(s_.stages.size());
        for (int k = 0; k < p_; ++k) {
            reps_[k].reserve(s_.stages[k].replicas.size());
            for (int r = 0; r < static_cast<int>(s_.stages[k].replicas.size()); ++r) {
                ReplicaEval e;
                const StageReplica& spec = s_.stages[k].replicas[r];
                const bool as_previous = r > 0 && spec == s_.stages[k].replicas[r - 1]; // replicas come in runs
                e.group = as_previous ? reps_[k][r - 1].group : group_index(spec.group);
                const int twin = as_previous ? twin_[k][r - 1] : first_twin(k, r, e.group, spec.tp);
                twin_[k].push_back(twin);
                if (twin < r) {
                    reps_[k].push_back(reps_[k][twin]);
                    continue;
                }
                e.strategy = replica_strategy(s_, k, r);
                HeteroGroupModel& gm = groups_[e.group];
                compute_costs(*gm.ctx, e.strategy, *gm.cache, e.costs);
                e.costs.layout = &layout_;
                reps_[k].push_back(e);
            }
        }
    }

    // One activation transfer from replica a to a neighbour b of another kind: the shards cross the
    // inter-node fabric from the side with fewer TP ranks (the relayout when TP differs: each of the
    // min(tp) ranks moves 1/min(tp) of the activation), and without sequence parallelism the receiver
    // all-gathers the split activation over its TP group as in the plain model.
    double cross_send_s(const ReplicaEval& a, const ReplicaEval& b) const
    {
        const PlanContext& ctx = ctx_of(b);
        const SoftwareTraits traits = software_traits(ctx.training.framework, ctx.training.software);
        const int tp = std::min(a.strategy.tp, b.strategy.tp);
        const bool sp = s_.strategy.sequence_parallel && tp > 1;
        const bool split = traits.p2p_scatter_gather || sp;
        const double activation = static_cast<double>(s_.strategy.micro_batch) * ctx.training.seq_len * ctx.model.hidden
            * activation_element_bytes(ctx.training.precision); // the stage output at the training dtype
        // The shards leave one node's NICs and enter the other's: the slower side paces them.
        const double shard = p2p_transfer_bytes(traits, activation, ctx.training.seq_len, tp, split, sp);
        double t = std::max(collective_time_s(ctx_of(a).network, Collective::send_recv, shard, across_nodes(2)),
            collective_time_s(ctx.network, Collective::send_recv, shard, across_nodes(2)));
        if (split && !sp)
            t += collective_time_s(ctx.network, Collective::all_gather, activation, b.costs.groups.tp);
        return t;
    }

    // One activation transfer between replica r of stage k and neighbouring stage nb: the slowest of nb's
    // replicas, each of another kind priced across the two nodes' NICs, alike ones as the plain model has it.
    double side_send_s(int k, int r, int nb, double own_s) const
    {
        const ReplicaEval& e = reps_[k][r];
        double t = 0;
        for (int q = 0; q < static_cast<int>(reps_[nb].size()); ++q)
            if (twin_[nb][q] == q)
                t = std::max(t,
                    alike(s_, s_.stages[k].replicas[r], s_.stages[nb].replicas[q]) ? own_s
                                                                                   : cross_send_s(e, reps_[nb][q]));
        return t;
    }

    // A replica's transfer cost from its neighbours on each side. An engine that blocks on each transfer in
    // turn (DeepSpeed: 4 per micro-batch in a middle stage) pays each side's; a batched exchange
    // (Megatron: the send and the receive of a step together) waits for the slower side.
    void add_cross_group_sends()
    {
        for (int k = 0; k < p_; ++k) {
            for (int r = 0; r < static_cast<int>(reps_[k].size()); ++r) {
                ReplicaEval& e = reps_[k][r];
                if (twin_[k][r] < r) {
                    e.costs.layer.p2p_s = reps_[k][twin_[k][r]].costs.layer.p2p_s;
                    continue;
                }
                const double own_s = e.costs.layer.p2p_s;
                double sum = 0, slowest = 0;
                int sides = 0;
                for (int nb : { k - 1, k + 1 }) {
                    if (nb < 0 || nb >= p_)
                        continue;
                    const double t = side_send_s(k, r, nb, own_s);
                    sum += t;
                    slowest = std::max(slowest, t);
                    ++sides;
                }
                if (sides > 0)
                    e.costs.layer.p2p_s = e.costs.layer.p2p_transfers > 2 ? sum / sides : slowest;
            }
        }
    }

    void time_replicas()
    {
        for (int k = 0; k < p_; ++k) {
            for (std::size_t r = 0; r < reps_[k].size(); ++r) {
                ReplicaEval& e = reps_[k][r];
                if (const int twin = twin_[k][r]; twin < static_cast<int>(r)) {
                    e.clock = reps_[k][static_cast<std::size_t>(twin)].clock;
                    e.power = reps_[k][static_cast<std::size_t>(twin)].power;
                    continue;
                }
                const PlanContext& ctx = ctx_of(e);
                e.clock = std::min(ctx.power.max_clock, stage_clock(ctx.power, ctx.training, p_, k));
                stage_timing_at(ctx, e.strategy, e.costs, k, e.clock, &e.power);
            }
        }
    }

    // The step's micro-batches over a stage's replicas in proportion to their speed, then one at a
    // time to whichever replica would finish it first (integer shares, the busiest as short as can be).
    // `count` micro-batches, each to the replica that would finish it first (the first such replica on a
    // tie), through a heap: a stage of a large group has hundreds of replicas.
    static void give_one_at_a_time(std::vector<ReplicaEval>& stage, long long count)
    {
        auto later = [&stage](std::size_t a, std::size_t b) {
            const double ta = static_cast<double>(stage[a].microbatches + 1) * stage[a].total_s();
            const double tb = static_cast<double>(stage[b].microbatches + 1) * stage[b].total_s();
            return ta != tb ? ta > tb : a > b;
        };
        std::priority_queue<std::size_t, std::vector<std::size_t>, decltype(later)> heap(later);
        for (std::size_t i = 0; i < stage.size(); ++i)
            heap.push(i);
        for (; count > 0; --count) {
            const std::size_t next = heap.top();
            heap.pop();
            ++stage[next].microbatches;
            heap.push(next);
        }
    }

    void split_microbatches()
    {
        if (s_.batch_split == BatchSplit::even) {
            split_evenly();
            return;
        }
        for (auto& stage : reps_) {
            double speed = 0;
            for (const ReplicaEval& e : stage)
                speed += 1 / e.total_s();
            long long given = 0;
            for (ReplicaEval& e : stage) {
                e.microbatches = std::max(1LL, static_cast<long long>(std::floor(n_ / e.total_s() / speed)));
                given += e.microbatches;
            }
            if (given < n_)
                give_one_at_a_time(stage, n_ - given);
            given = std::max(given, n_);
            for (; given > n_; --given) { // the floor of one each can overshoot only with many replicas
                auto busiest = std::max_element(stage.begin(), stage.end(),
                    [](const ReplicaEval& a, const ReplicaEval& b) { return a.microbatches < b.microbatches; });
                --busiest->microbatches;
            }
        }
    }

    // The same count for every replica, as a data-parallel sampler gives every rank batch / dp; a
    // remainder goes to the fastest replicas.
    void split_evenly()
    {
        for (auto& stage : reps_) {
            const auto replicas = static_cast<long long>(stage.size());
            std::vector<ReplicaEval*> fastest_first;
            for (ReplicaEval& e : stage) {
                e.microbatches = std::max(1LL, n_ / replicas);
                fastest_first.push_back(&e);
            }
            std::stable_sort(fastest_first.begin(), fastest_first.end(),
                [](const ReplicaEval* a, const ReplicaEval* b) { return a->total_s() < b->total_s(); });
            for (long long extra = 0; extra < n_ % replicas; ++extra)
                ++fastest_first[static_cast<std::size_t>(extra)]->microbatches;
        }
    }

    const ReplicaEval& slowest(int k) const
    {
        return *std::max_element(reps_[k].begin(), reps_[k].end(),
            [](const ReplicaEval& a, const ReplicaEval& b) { return a.total_s() < b.total_s(); });
    }
    double busy_s(int k) const
    {
        double busy = 0;
        for (const ReplicaEval& e : reps_[k])
            busy = std::max(busy, static_cast<double>(e.microbatches) * e.total_s());
        return busy;
    }

    // The schedule's formula over the uneven stages: the busiest stage runs its share back to back,
    // the others add their fill and drain (Alpa / Metis: (m-1) slowest + all stages, m = the busiest
    // stage's share in units of its micro-batch time).
    void pipeline()
    {
        double sum_all = 0, sum_weight = 0;
        for (int k = 0; k < p_; ++k) {
            const StageTiming& t = slowest(k).power.timing;
            sum_all += t.forward_s + t.backward_s;
            sum_weight += t.weight_grad_s;
            backward_avg_ += t.backward_s / p_;
            forward_avg_ += t.forward_s / p_;
            if (busy_s(k) > busy_) {
                busy_ = busy_s(k);
                crit_ = k;
            }
        }
        const ReplicaEval& c = slowest(crit_);
        m_eff_ = busy_ / c.total_s();
        pipe_ = schedule_pipeline_time(s_.strategy, m_eff_, p_, c.total_s(), c.power.timing, sum_all, sum_weight);
        bubble_ = std::max(0.0, pipe_ - busy_);
    }

    bool mixed(int k) const
    {
        const auto& replicas = s_.stages[k].replicas;
        for (const StageReplica& r : replicas)
            if (!alike(s_, replicas.front(), r))
                return true;
        return false;
    }

    bool one_tp(int k) const
    {
        for (const ReplicaEval& e : reps_[k])
            if (e.strategy.tp != reps_[k].front().strategy.tp)
                return false;
        return true;
    }

    // Replicas of one TP hold the same shards whatever their GPU: NCCL reduces them with its usual
    // rings, through each node's GPUs and across the nodes' NICs, paced by the slowest node's links.
    // A group's replicas are packed onto its own nodes (gpus_per_node / tp of them per node); the
    // fewest ranks per node of any group paces the ring.
    GroupPlacement same_shard_placement(int k) const
    {
        std::vector<long long> in_group(groups_.size(), 0);
        for (const ReplicaEval& e : reps_[k])
            ++in_group[static_cast<std::size_t>(e.group)];
        const long long size = static_cast<long long>(reps_[k].size());
        long long per_node = size;
        for (const ReplicaEval& e : reps_[k]) {
            const long long fit = std::max<long long>(1, ctx_of(e).cluster.gpus_per_node / e.strategy.tp);
            per_node = std::min({ per_node, in_group[static_cast<std::size_t>(e.group)], fit });
        }
        return GroupPlacement { size, per_node, (size + per_node - 1) / per_node, false };
    }

    // The stage's reduction over replicas on different kinds of node.
    StageTail mixed_tail(int k, const ReplicaEval& e) const
    {
        StageTail tail = stage_tail(ctx_of(e), e.strategy, e.costs, k);
        const ReplicaEval& narrow = *std::min_element(reps_[k].begin(), reps_[k].end(),
            [](const ReplicaEval& a, const ReplicaEval& b) { return a.strategy.tp < b.strategy.tp; });
        const PlanContext& ctx = ctx_of(narrow);
        const double params = stage_params(ctx, narrow.strategy, narrow.costs, k).total();
        const StateBytes state = state_bytes(ctx.training, narrow.strategy);
        // Replicas whose shards differ (another TP) cannot reduce with one NCCL ring over a node's rails:
        // every shard is exchanged over inter_node, and the replica with the fewest GPUs moves the most
        // bytes per GPU (its shard of the stage's gradients).
        const bool same = one_tp(k);
        const GroupPlacement group
            = same ? same_shard_placement(k) : across_nodes(static_cast<long long>(reps_[k].size()));
        // Paced by the slowest node's links, whichever replica it holds (twins share their group's links).
        const auto reduce = [&](Collective coll, double bytes) {
            double seconds = 0;
            for (std::size_t r = 0; r < reps_[k].size(); ++r)
                if (twin_[k][r] == static_cast<int>(r))
                    seconds = std::max(seconds, collective_time_s(ctx_of(reps_[k][r]).network, coll, bytes, group));
            return seconds;
        };
        tail.grad_reduce_s = 0;
        tail.param_gather_s = 0;
        if (e.strategy.zero <= 2) {
            const Collective coll = e.strategy.zero == 0 ? Collective::all_reduce : Collective::reduce_scatter;
            tail.grad_reduce_s = reduce(coll, params * grad_reduce_bytes_per_param(ctx.training, state));
            if (e.strategy.zero >= 1)
                tail.param_gather_s
                    = reduce(Collective::all_gather, params * gather_bytes_per_param(ctx.training.precision));
        }
        return tail;
    }

    // What the gradient reduction leaves exposed after the stage's last backward, as the plain model
    // has it for one chunk per stage (analytic_model.cpp: step_tail_time).
    double exposed_reduce_s(int k, const ReplicaEval& e) const
    {
        const StageTail& tail = e.tail;
        const double slack = k * backward_avg_;
        if (!e.strategy.overlap_grad_reduce)
            return std::max(0.0, tail.grad_reduce_s - slack);
        const double chunk = std::max(0.0, tail.grad_reduce_s - e.power.timing.backward_s);
        return std::max(std::max(0.0, chunk - slack), k == 0 ? tail.grad_reduce_s * tail.last_bucket_fraction : 0.0);
    }

    // The overlapped parameter all-gather lands bucket by bucket under the first micro-batch's forward
    // (as in the homogeneous model): what that forward and the wait for it cannot cover stays exposed.
    double exposed_gather_s(int k, const ReplicaEval& e) const
    {
        const StageTail& tail = e.tail;
        if (!e.strategy.overlap_param_gather)
            return tail.param_gather_s;
        const double uncovered = tail.param_gather_s - e.power.timing.forward_s - k * forward_avg_;
        return std::max(tail.param_gather_s * tail.last_bucket_fraction, uncovered);
    }

    void tails()
    {
        double exposed_gather = 0;
        for (int k = 0; k < p_; ++k) {
            const bool mix = mixed(k);
            for (std::size_t r = 0; r < reps_[k].size(); ++r) {
                ReplicaEval& e = reps_[k][r];
                const auto twin = static_cast<std::size_t>(twin_[k][r]);
                e.tail = twin < r ? reps_[k][twin].tail
                                  : (mix ? mixed_tail(k, e) : stage_tail(ctx_of(e), e.strategy, e.costs, k));
                dp_busy_ = std::max(dp_busy_, e.tail.grad_reduce_s + e.tail.param_gather_s);
                exposed_dp_ = std::max(exposed_dp_, exposed_reduce_s(k, e));
                exposed_gather = std::max(exposed_gather, exposed_gather_s(k, e));
                optimizer_s_ = std::max(optimizer_s_, e.tail.optimizer_s);
                offload_s_ = std::max(offload_s_, e.tail.offload_s);
            }
        }
        exposed_dp_ += exposed_gather;
    }

    void fill_prediction(HeteroPrediction& out);
    void fill_time(Prediction& p, const ReplicaEval& c) const;
    void fill_power(Prediction& p, double gpus) const;
    void fill_memory(Prediction& p);
    void check_host_memory(Prediction& p) const;
    void fill_reports(HeteroPrediction& out) const;

    const Scenario& s_;
    PlanLayout layout_;
    const int p_;
    const long long n_; // micro-batches per step over all replicas of a stage
    std::vector<HeteroGroupModel>& groups_;
    std::vector<std::vector<ReplicaEval>> reps_;
    std::vector<std::vector<int>> twin_; // twin_[k][r]: the first replica of stage k alike r (same group, TP)
    int crit_ = 0;
    double busy_ = 0, m_eff_ = 0, pipe_ = 0, bubble_ = 0, backward_avg_ = 0, forward_avg_ = 0;
    double dp_busy_ = 0, exposed_dp_ = 0, optimizer_s_ = 0, offload_s_ = 0, data_stall_s_ = 0;
};

void HeteroEvaluation::fill_prediction(HeteroPrediction& out)
{
    Prediction& p = out.prediction;
    const ReplicaEval& c = slowest(crit_);
    const PlanContext& cctx = ctx_of(c);
    const double gpu_step_s = pipe_ + exposed_dp_ + optimizer_s_ + offload_s_;
    data_stall_s_ = data_path_cost(cctx, c.strategy, gpu_step_s, offload_s_).stall_s;
    p.step_time_s = gpu_step_s + data_stall_s_;
    const double tokens = static_cast<double>(s_.training.global_batch) * static_cast<double>(s_.training.seq_len);
    p.tokens_per_s = tokens / p.step_time_s;
    double gpus = 0, peak_sum = 0, hw_flops = 0;
    for (int k = 0; k < p_; ++k) {
        std::vector<double> flops(reps_[k].size());
        for (std::size_t r = 0; r < reps_[k].size(); ++r) {
            const ReplicaEval& e = reps_[k][r];
            const auto twin = static_cast<std::size_t>(twin_[k][r]);
            flops[r] = twin < r ? flops[twin] : chunk_timing(ctx_of(e), e.strategy, e.costs, k).flops;
            gpus += e.strategy.tp;
            peak_sum += e.strategy.tp * ctx_of(e).cluster.gpu.peak(s_.training.precision);
            hw_flops += static_cast<double>(e.microbatches) * e.strategy.tp * flops[r];
        }
    }
    out.gpus_used = static_cast<long long>(gpus);
    const double peak = peak_sum / gpus; // the used GPUs' mean peak: MFU against the aggregate peak
    p.tflops_per_gpu = cctx.model_flops_per_token * p.tokens_per_s / gpus / units::kTFLOP;
    p.mfu = peak > 0 ? p.tflops_per_gpu * units::kTFLOP / peak : 0;
    p.hfu = peak > 0 ? hw_flops / gpus / p.step_time_s / peak : 0;
    p.bubble_fraction = bubble_ / p.step_time_s;
    p.microbatches = static_cast<long long>(std::llround(m_eff_));
    fill_time(p, c);
    fill_power(p, gpus);
    fill_memory(p);
    p.interval = prediction_interval(cctx.band, p.tokens_per_s, p.step_time_s, p.mfu);
    add_memory_interval(p.interval, cctx.memory_band, p.peak_memory_bytes);
    out.critical_stage = crit_;
}

// Breakdown along the pacing stage's slowest replica, as the plain model's fill_time_breakdown.
void HeteroEvaluation::fill_time(Prediction& p, const ReplicaEval& c) const
{
    const double m = m_eff_;
    const StageTiming& t = c.power.timing;
    TimeBreakdown& time = p.time;
    time.compute_s = m * t.compute_s;
    time.recompute_s = m * t.recompute_s;
    time.exposed_tp_s = m * t.exposed_s[kTpStream];
    time.exposed_cp_s = m * t.exposed_s[kCpStream];
    time.exposed_ep_s = m * t.exposed_s[kEpStream];
    time.exposed_pp_s = m * t.exposed_s[kPpStream];
    time.exposed_dp_s = exposed_dp_ + m * t.exposed_s[kDpStream];
    time.bubble_s = bubble_;
    time.optimizer_s = optimizer_s_;
    time.offload_s = offload_s_;
    time.data_stall_s = data_stall_s_;
    time.bubble_s += p.step_time_s - time.total();
    const ChunkTiming ct = chunk_timing(ctx_of(c), c.strategy, c.costs, crit_);
    CommBreakdown& comm = p.communication_s;
    comm.tp = m * ct.comm_busy_s[kTpStream];
    comm.cp = m * ct.comm_busy_s[kCpStream];
    comm.ep = m * ct.comm_busy_s[kEpStream];
    comm.pp = m * t.exposed_s[kPpStream];
    comm.dp = dp_busy_ + m * t.exposed_s[kDpStream];
    comm.exposed = time.exposed_tp_s + time.exposed_cp_s + time.exposed_ep_s + time.exposed_pp_s + time.exposed_dp_s;
}

// Energy per replica on its own GPU's power model, weighted by the GPUs it holds.
void HeteroEvaluation::fill_power(Prediction& p, double gpus) const
{
    PowerEstimate& pw = p.power;
    double energy = 0, kernel = 0, clock_MHz = 0;
    for (int k = 0; k < p_; ++k) {
        for (const ReplicaEval& e : reps_[k]) {
            const PowerModel& pm = ctx_of(e).power;
            StageEnergyInputs in;
            in.step_s = p.step_time_s;
            in.microbatches = static_cast<double>(e.microbatches);
            in.optimizer_s = e.tail.optimizer_s;
            in.dp_comm_s = e.tail.grad_reduce_s + e.tail.param_gather_s;
            in.clock = e.clock;
            energy += e.strategy.tp * stage_step_energy_J(pm, e.power, in);
            kernel += e.strategy.tp * e.power.kernel_s * static_cast<double>(e.microbatches);
            clock_MHz += e.strategy.tp * pm.clock_MHz(e.clock);
            pw.peak_W_per_gpu = std::max(pw.peak_W_per_gpu, e.power.peak_W);
            pw.idle_W = std::max(pw.idle_W, pm.idle_W);
            pw.cap_W = std::max(pw.cap_W, pm.cap_W);
        }
    }
    pw.energy_J_per_step_per_gpu = energy / gpus;
    pw.avg_W_per_gpu = pw.energy_J_per_step_per_gpu / p.step_time_s;
    pw.peak_W_per_gpu = std::max(pw.peak_W_per_gpu, pw.avg_W_per_gpu);
    pw.energy_J_per_step = energy;
    pw.energy_J_per_token = pw.avg_W_per_gpu * gpus / p.tokens_per_s;
    pw.clock_MHz = clock_MHz / gpus;
    pw.busy_fraction = std::min(1.0, kernel / gpus / p.step_time_s);
    pw.gpus = gpus;
    pw.cluster_avg_kW = energy / p.step_time_s / 1000;
}

// Memory per replica on its own GPU; the plan fits when every replica fits its own.
void HeteroEvaluation::fill_memory(Prediction& p)
{
    p.feasible = true;
    for (int k = 0; k < p_; ++k) {
        for (std::size_t r = 0; r < reps_[k].size(); ++r) {
            ReplicaEval& e = reps_[k][r];
            const PlanContext& ctx = ctx_of(e);
            const ReplicaEval& twin = reps_[k][static_cast<std::size_t>(twin_[k][r])];
            e.memory = &twin != &e && twin.microbatches == e.microbatches
                ? twin.memory
                : stage_memory(ctx, e.strategy, layout_, k, e.microbatches, e.costs.layer.activations);
            const double bytes = e.memory.total();
            if (bytes > p.peak_memory_bytes) {
                p.peak_memory_bytes = bytes;
                p.capacity_bytes = ctx.cluster.gpu.memory_bytes;
                p.memory = e.memory;
                p.peak_memory_stage = k;
            }
            if (bytes > ctx.cluster.gpu.memory_bytes && p.feasible) {
                p.feasible = false;
                char buf[256];
                std::snprintf(buf, sizeof buf,
                    "out of memory: stage %d replica %zu (group %s) needs %.1f GiB per GPU, the %s has %.1f GiB", k, r,
                    s_.stages[k].replicas[r].group.c_str(), bytes / units::kGiB, ctx.cluster.gpu.name.c_str(),
                    ctx.cluster.gpu.memory_bytes / units::kGiB);
                p.infeasible_reason = buf;
            }
        }
    }
    check_host_memory(p);
}

// Each group's nodes hold their own GPUs' offloads in their own host memory (host_link.hpp), counted as
// the plain model counts a node: its fullest GPU's host bytes times the node's GPUs that hold a replica.
// The prediction shows the group nearest its capacity; a GPU that does not fit is reported first.
void HeteroEvaluation::check_host_memory(Prediction& p) const
{
    std::vector<double> host_per_gpu(groups_.size(), 0.0);
    std::vector<long long> gpus_used(groups_.size(), 0);
    for (const std::vector<ReplicaEval>& stage : reps_)
        for (const ReplicaEval& e : stage) {
            const auto g = static_cast<std::size_t>(e.group);
            host_per_gpu[g] = std::max(host_per_gpu[g], e.memory.host);
            gpus_used[g] += e.strategy.tp;
        }
    double worst_share = -1;
    for (std::size_t g = 0; g < groups_.size(); ++g) {
        if (gpus_used[g] == 0)
            continue;
        const ClusterSpec& c = groups_[g].ctx->cluster;
        const double need = host_per_gpu[g] * static_cast<double>(std::min<long long>(c.gpus_per_node, gpus_used[g]));
        const double capacity = host_memory_per_node_bytes(c);
        if (need / capacity > worst_share) {
            worst_share = need / capacity;
            p.host_memory_bytes_per_node = need;
            p.host_capacity_bytes_per_node = capacity;
        }
        if (need > capacity && p.feasible) {
            p.feasible = false;
            char buf[320];
            std::snprintf(buf, sizeof buf,
                "out of host memory: the offloaded states and activations need %.0f GiB per node of group %s, a "
                "node of group %s (%s) has %.0f GiB (cluster.host_memory_GB)",
                need / units::kGiB, groups_[g].name.c_str(), groups_[g].name.c_str(), c.gpu.name.c_str(),
                capacity / units::kGiB);
            p.infeasible_reason = buf;
        }
    }
}

void HeteroEvaluation::fill_reports(HeteroPrediction& out) const
{
    Prediction& p = out.prediction;
    for (int k = 0; k < p_; ++k) {
        HeteroStageReport st;
        st.replicas.reserve(reps_[k].size());
        st.stage = k;
        st.layers = s_.stages[k].layers;
        st.microbatch_s = slowest(k).total_s();
        st.busy_s = busy_s(k);
        st.mixed = mixed(k);
        StageReport rep;
        rep.stage = k;
        rep.layers = st.layers;
        rep.has_embedding = k == 0;
        rep.has_output = k == p_ - 1;
        for (std::size_t r = 0; r < reps_[k].size(); ++r) {
            const ReplicaEval& e = reps_[k][r];
            const PlanContext& ctx = ctx_of(e);
            HeteroReplicaReport rr;
            rr.group = s_.stages[k].replicas[r].group;
            rr.gpu = ctx.cluster.gpu.name;
            rr.tp = e.strategy.tp;
            rr.microbatches = e.microbatches;
            rr.forward_s = e.power.timing.forward_s;
            rr.backward_s = e.power.timing.backward_s;
            rr.busy_s = static_cast<double>(e.microbatches) * e.total_s();
            rr.memory = e.memory;
            rr.peak_memory_bytes = e.memory.total();
            rr.capacity_bytes = ctx.cluster.gpu.memory_bytes;
            st.grad_sync_s = std::max(st.grad_sync_s, e.tail.grad_reduce_s + e.tail.param_gather_s);
            if (e.total_s() >= st.microbatch_s) { // the slowest replica speaks for the stage
                rep.forward_s = rr.forward_s;
                rep.backward_s = rr.backward_s;
                rep.clock_MHz = ctx.power.clock_MHz(e.clock);
                rep.in_flight_microbatches
                    = static_cast<int>(std::ceil(in_flight_microbatches(e.strategy, k, e.microbatches)));
            }
            if (rr.peak_memory_bytes > rep.memory.total())
                rep.memory = rr.memory;
            st.replicas.push_back(rr);
        }
        p.stages.push_back(rep);
        out.stages.push_back(std::move(st));
    }
    if (!p.feasible)
        p.warnings.push_back(p.infeasible_reason);
    long long idle = s_.cluster.total_gpus() - out.gpus_used;
    if (idle > 0)
        p.warnings.push_back(std::to_string(idle) + " of the cluster's GPUs hold no replica and stay idle");
    p.assumptions.push_back("fidelity: analytic, heterogeneous (each replica costed on its own GPU and TP; "
                            "the pipeline formula over the stages' busiest replicas)");
    p.assumptions.push_back(s_.batch_split == BatchSplit::even
            ? "micro-batches split evenly across a stage's replicas (strategy.batch_split)"
            : "micro-batches split across a stage's replicas in proportion to their speed");
    p.assumptions.push_back("sends and gradient reductions between GPU types or TP degrees cross the inter-node "
                            "fabric; no thermal limit or facility power for mixed clusters");
    p.assumptions.push_back("FLOPs counted as Megatron-LM reports them (causal attention in full, no recompute); "
                            "MFU against the used GPUs' mean peak");
}

std::vector<HeteroStageSource> HeteroEvaluation::stage_sources() const
{
    std::vector<HeteroStageSource> out;
    for (int k = 0; k < p_; ++k) {
        const ReplicaEval& pace = slowest(k);
        HeteroStageSource src;
        src.ctx = &ctx_of(pace);
        src.strategy = &pace.strategy;
        src.costs = &pace.costs;
        src.clock = pace.clock;
        src.microbatch_s = pace.total_s();
        src.busy_s = busy_s(k);
        src.tail = pace.tail;
        for (const ReplicaEval& e : reps_[k]) { // the stage's tail ends with its slowest replica's
            src.tail.grad_reduce_s = std::max(src.tail.grad_reduce_s, e.tail.grad_reduce_s);
            src.tail.param_gather_s = std::max(src.tail.param_gather_s, e.tail.param_gather_s);
            src.tail.optimizer_s = std::max(src.tail.optimizer_s, e.tail.optimizer_s);
            src.tail.offload_s = std::max(src.tail.offload_s, e.tail.offload_s);
            src.gpus += e.strategy.tp;
        }
        src.reduces_across_groups = mixed(k);
        for (int nb : { k - 1, k + 1 })
            if (nb >= 0 && nb < p_)
                for (const StageReplica& a : s_.stages[k].replicas)
                    for (const StageReplica& b : s_.stages[nb].replicas)
                        src.sends_across_groups = src.sends_across_groups || !alike(s_, a, b);
        std::vector<std::string> types;
        for (std::size_t r = 0; r < reps_[k].size(); ++r) {
            const StageReplica& rep = s_.stages[k].replicas[r];
            const std::string& gpu = ctx_of(reps_[k][r]).cluster.gpu.name;
            src.label += (r ? " + " : "") + gpu + " tp" + std::to_string(rep.tp);
            if (std::find(types.begin(), types.end(), gpu_short_name(gpu)) == types.end())
                types.push_back(gpu_short_name(gpu));
        }
        for (const std::string& type : types)
            src.gpu_types += (src.gpu_types.empty() ? "" : "+") + type;
        out.push_back(src);
    }
    return out;
}

HeteroEvaluator::HeteroEvaluator(const Scenario& s, const Calibration& cal)
{
    for (const NodeGroup& g : s.cluster.groups) {
        HeteroGroupModel gm;
        gm.name = g.name;
        gm.ctx = std::make_unique<PlanContext>(s.model, s.training, group_cluster(s.cluster, g), cal);
        gm.cache = std::make_unique<EvaluationCache>(*gm.ctx);
        groups_.push_back(std::move(gm));
    }
}

HeteroEvaluator::~HeteroEvaluator() = default;

HeteroPrediction HeteroEvaluator::predict(const Scenario& plan)
{
    HeteroEvaluation e(plan, groups_);
    return e.run();
}

HeteroPrediction predict_heterogeneous(const Scenario& s, const Calibration& cal)
{
    HeteroEvaluator evaluator(s, cal);
    return evaluator.predict(s);
}

HeteroModel::HeteroModel(const Scenario& s, const Calibration& cal)
    : m_scenario(std::make_unique<Scenario>(s))
    , m_evaluator(std::make_unique<HeteroEvaluator>(*m_scenario, cal))
    , m_eval(std::make_unique<HeteroEvaluation>(*m_scenario, m_evaluator->groups()))
    , m_prediction(m_eval->run())
{
}

HeteroModel::~HeteroModel() = default;
HeteroModel::HeteroModel(HeteroModel&&) noexcept = default;
HeteroModel& HeteroModel::operator=(HeteroModel&&) noexcept = default;

std::vector<HeteroStageSource> HeteroModel::stage_sources() const
{
    return m_eval->stage_sources();
}

double HeteroModel::effective_microbatches() const
{
    return m_eval->effective_microbatches();
}

} // namespace parallax

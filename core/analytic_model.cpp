#include "analytic_model.hpp"

#include "layer_ops.hpp"
#include "memory_model.hpp"
#include "model_math.hpp"
#include "stage_layout.hpp"
#include "strategy_rules.hpp"
#include "topology.hpp"
#include "units.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace parallax {

namespace {

constexpr int kTp = static_cast<int>(OpStream::tp);
constexpr int kCp = static_cast<int>(OpStream::cp);
constexpr int kEp = static_cast<int>(OpStream::ep);
constexpr int kPp = static_cast<int>(OpStream::pp);

// HBM bytes per locally-updated parameter in the optimizer step (fused multi-tensor kernels):
// Adam reads grad, master, m, v (4 x 4 B) and writes master, m, v (3 x 4 B) and the bf16 copy (2 B).
constexpr double kAdamStepBytesPerParam = 30;
// 8-bit Adam: fp32 grad in, 8-bit states and master extension in/out, bf16 copy out.
constexpr double kAdam8bitStepBytesPerParam = 13;
// SGD with momentum / Lion: grad, master, momentum in; master, momentum, bf16 copy out.
constexpr double kOneMomentStepBytesPerParam = 22;
// Gradient-norm for clipping reads every local gradient once (fp32).
constexpr double kGradNormBytesPerParam = 4;
// ZeRO-Offload: host<->device copies over PCIe (~80% of a PCIe 4 x16 link per GPU when all GPUs of
// a node copy at once, estimate) and the CPU Adam step (DeepSpeed CPU-Adam ~1 s per billion
// parameters per socket of ~32 cores; Ren et al. 2021 ZeRO-Offload, Table 2).
constexpr double kOffloadPcieBps = 20e9;
constexpr double kCpuAdamSecondsPerParam = 1.0e-9;
// ZeRO-3 / FSDP all-gather the bf16 working copy of the parameters.
constexpr double kGatherBytesPerParam = 2;
// Megatron's default gradient bucket: max(40M, 1M * dp) parameters (--ddp-bucket-size).
constexpr double kBucketParams = 40e6;
// Simple power model until the power issue refines it: tensor-core kernels draw ~90% of the dynamic
// range, communication-only phases ~35%, bubbles stay near idle (Zeus / Perseus measurements,
// estimate).
constexpr double kComputeActivity = 0.9;
constexpr double kCommActivity = 0.35;

struct Groups {
    GroupPlacement tp, cp, ep, etp, dp_dense, dp_expert, pp_pair;
};

Groups place(const PlanContext& ctx, const Strategy& s)
{
    const long long gpn = ctx.cluster.gpus_per_node;
    const LayoutSizes dense = LayoutSizes::dense(s);
    const LayoutSizes expert = LayoutSizes::expert(s);
    Groups g;
    g.tp = place_group(s.rank_order, dense, { ParallelDim::tp }, gpn);
    g.cp = place_group(s.rank_order, dense, { ParallelDim::cp }, gpn);
    g.dp_dense = place_group(s.rank_order, dense, { ParallelDim::dp, ParallelDim::cp }, gpn);
    g.ep = place_group(s.rank_order, expert, { ParallelDim::ep }, gpn);
    g.etp = place_group(s.rank_order, expert, { ParallelDim::tp }, gpn);
    g.dp_expert = place_group(s.rank_order, expert, { ParallelDim::dp }, gpn);
    g.pp_pair.size = s.pp > 1 ? 2 : 1;
    const bool same_node = pp_neighbours_share_node(s.rank_order, dense, gpn);
    g.pp_pair.per_node = same_node ? 2 : 1;
    g.pp_pair.nodes = same_node ? 1 : 2;
    g.pp_pair.same_rail = !same_node;
    return g;
}

int moe_layers_in(const ModelSpec& m, int first, int count)
{
    int n = 0;
    if (!m.is_moe())
        return 0;
    for (int l = first; l < first + count; ++l)
        n += m.is_moe_layer(l) ? 1 : 0;
    return n;
}

// Layer-level costs of a strategy: computed once per evaluation, reused for every stage.
struct StrategyCosts {
    Groups groups;
    LayerTotals dense, moe, embedding, output;
    double p2p_s = 0; // one activation transfer between neighbouring stages
    int p2p_transfers = 2; // blocking transfers per micro-batch per stage (fwd + bwd)
    LayerActivationBytes activations;
};

void compute_costs(const PlanContext& ctx, const Strategy& s, StrategyCosts& c) noexcept
{
    c.groups = place(ctx, s);
    LayerContext lc;
    lc.model = &ctx.model;
    lc.training = &ctx.training;
    lc.strategy = &s;
    lc.device = ctx.device;
    lc.network = ctx.network;
    lc.tp_group = c.groups.tp;
    lc.cp_group = c.groups.cp;
    lc.ep_group = c.groups.ep;
    lc.expert_tp_group = c.groups.etp;
    lc.traits = software_traits(ctx.training.framework);
    LayerOps ops;
    build_layer_ops(lc, false, ops);
    c.dense = summarize(ops);
    c.activations.dense = layer_activation_bytes(lc, false);
    if (ctx.model.is_moe()) {
        build_layer_ops(lc, true, ops);
        c.moe = summarize(ops);
        c.activations.moe = layer_activation_bytes(lc, true);
    }
    if (s.recompute == Recompute::full) {
        Strategy keep = s;
        keep.recompute = Recompute::selective;
        lc.strategy = &keep;
        c.activations.working = std::max(layer_activation_bytes(lc, false),
            ctx.model.is_moe() ? layer_activation_bytes(lc, true) : 0.0);
        lc.strategy = &s;
    }
    build_embedding_ops(lc, ops);
    c.embedding = summarize(ops);
    build_output_ops(lc, ops);
    c.output = summarize(ops);
    // Megatron sends the stage output split across TP ranks (sequence parallel, or the
    // scatter-gather optimisation of Narayanan et al. 2021 Sec. 4.1 without it).
    const bool split = lc.traits.p2p_scatter_gather || (s.sequence_parallel && s.tp > 1);
    const double p2p_bytes = static_cast<double>(s.micro_batch) * ctx.training.seq_len / s.cp * ctx.model.hidden * 2.0
        / (split ? s.tp : 1);
    c.p2p_transfers = lc.traits.p2p_blocking_transfers_per_microbatch;
    c.p2p_s = collective_time_s(ctx.network, Collective::send_recv, p2p_bytes, c.groups.pp_pair);
}

StageTiming timing_of(const PlanContext& ctx, const Strategy& s, const StrategyCosts& c, int stage) noexcept
{
    const ModelSpec& m = ctx.model;
    const StageLayout layout { m.layers, s.pp, s.vpp, s.first_stage_layers, s.last_stage_layers };
    LayerTotals t;
    auto add_chunk = [&](int chunk) {
        const int first = layout.chunk_first_layer(chunk);
        const int count = layout.chunk_layers(chunk);
        const int moe = moe_layers_in(m, first, count);
        t.add(c.dense, count - moe);
        if (moe > 0)
            t.add(c.moe, moe);
    };
    for (int v = 0; v < s.vpp; ++v)
        add_chunk(v * s.pp + stage);
    const bool first = stage == 0;
    const bool last = stage == s.pp - 1;
    if (first)
        t.add(c.embedding, 1);
    if (last)
        t.add(c.output, 1);
    StageTiming st;
    st.forward_s = t.fwd_time();
    st.backward_s = t.bwd_time();
    st.weight_grad_s = t.backward_weight_s;
    st.compute_s = t.forward_s + t.backward_input_s + t.backward_weight_s;
    st.recompute_s = t.recompute_s;
    for (int i = 0; i < kOpStreamCount; ++i)
        st.exposed_s[i] = t.comm_exposed_fwd_s[i] + t.comm_exposed_bwd_s[i];
    if (s.schedule == Schedule::dualpipe) {
        // DualPipe overlaps one micro-batch's all-to-all (and PP sends) with another's compute inside
        // each forward-backward pair (DeepSeek-V3 report Sec. 3.2.1).
        const double hidden = std::min(st.exposed_s[kEp], st.compute_s);
        st.exposed_s[kEp] -= hidden;
        st.backward_s -= hidden;
    }
    if (s.pp > 1 && s.schedule != Schedule::dualpipe) {
        // Each chunk exchanges activations with its neighbours once per micro-batch in each direction:
        // Megatron pairs the send and the receive in one batched exchange (2 blocking transfers per
        // micro-batch), DeepSpeed's engine issues them separately (4); v times as many when interleaved.
        // DualPipe overlaps its sends with the paired chunk's compute.
        const double per_direction = c.p2p_s * s.vpp * c.p2p_transfers / 2.0;
        st.forward_s += per_direction;
        st.backward_s += per_direction;
        st.exposed_s[kPp] += 2 * per_direction;
    }
    return st;
}

double optimizer_bytes_per_param(Optimizer o)
{
    switch (o) {
    case Optimizer::adam:
        return kAdamStepBytesPerParam;
    case Optimizer::adam8bit:
        return kAdam8bitStepBytesPerParam;
    case Optimizer::sgd:
    case Optimizer::lion:
        return kOneMomentStepBytesPerParam;
    }
    return kAdamStepBytesPerParam;
}

} // namespace

StageTiming AnalyticModel::stage_timing(const Strategy& s, int stage) const noexcept
{
    StrategyCosts c;
    compute_costs(m_ctx, s, c);
    return timing_of(m_ctx, s, c, stage);
}

void AnalyticModel::evaluate(const Strategy& s, AnalyticResult& r) const noexcept
{
    const PlanContext& ctx = m_ctx;
    r = AnalyticResult {};
    StrategyCosts c;
    compute_costs(ctx, s, c);
    const long long mb_count = microbatch_count(ctx.training, s);
    const double m = static_cast<double>(mb_count);
    r.microbatches = mb_count;
    const int p = s.pp;
    const StateBytes state = state_bytes(ctx.training, s);
    const double dense_shard = static_cast<double>(s.dp) * s.cp;
    const double expert_shard
        = std::max(1.0, static_cast<double>(s.tp) * s.cp * s.dp / (static_cast<double>(s.effective_expert_tp()) * s.ep));

    // Pipeline: per-stage micro-batch times, then the schedule's formula.
    double t_max = 0, sum_all = 0;
    int crit = 0;
    StageTiming crit_t;
    double backward_avg = 0;
    for (int st = 0; st < p; ++st) {
        StageTiming t = timing_of(ctx, s, c, st);
        if (s.zero >= 3) {
            // FSDP / ZeRO-3 gathers each unit's (layer's) parameters for the forward and again for the
            // backward, and reduce-scatters its gradients, every micro-batch (Rajbhandari et al. 2020,
            // Sec. 5: 1.5x the DP volume). One collective per unit, so the ring latency counts per layer.
            // With prefetching (FSDP, DeepSpeed >= 2022) they hide under compute except the first unit.
            const StageParams sp = stage_params(ctx, s, st);
            const StageLayout layout { ctx.model.layers, s.pp, s.vpp, s.first_stage_layers, s.last_stage_layers };
            const double units = std::max(1, layout.stage_layers(st));
            auto per_unit = [&](Collective coll, double bytes_per_param) {
                return units
                    * (collective_time_s(ctx.network, coll, sp.dense / units * bytes_per_param, c.groups.dp_dense)
                        + collective_time_s(ctx.network, coll, sp.expert / units * bytes_per_param, c.groups.dp_expert));
            };
            const double ag = per_unit(Collective::all_gather, kGatherBytesPerParam);
            const double rs = per_unit(Collective::reduce_scatter, state.gradients);
            double exp_f, exp_b;
            if (s.overlap_param_gather) {
                exp_f = std::max(ag / units, ag - t.forward_s);
                exp_b = std::max(ag / units, ag + rs - t.backward_s);
            } else {
                exp_f = ag;
                exp_b = ag + rs;
            }
            t.forward_s += exp_f;
            t.backward_s += exp_b;
            t.exposed_s[static_cast<int>(OpStream::dp)] += exp_f + exp_b;
        }
        const double total = t.forward_s + t.backward_s;
        sum_all += total;
        backward_avg += t.backward_s / p;
        if (total > t_max) {
            t_max = total;
            crit = st;
            crit_t = t;
        }
    }
    r.critical_stage = crit;
    double pipe = 0;
    switch (s.schedule) {
    case Schedule::gpipe:
    case Schedule::one_f_one_b:
        // Alpa / Metis: (m-1) * slowest + sum of all stages; (m+p-1)(t_f+t_b) when even.
        pipe = (m - 1) * t_max + sum_all;
        break;
    case Schedule::interleaved:
        // Narayanan et al. 2021 Sec. 2.2.2: bubble (p-1)(t_f+t_b)/v.
        pipe = (m - 1.0 / s.vpp) * t_max + sum_all / s.vpp;
        break;
    case Schedule::zb_h1:
        // Qi et al. 2024 (zero bubble), DualPipe README table: (p-1)(F+B-2W).
        pipe = m * t_max + (p - 1) * std::max(0.0, t_max - 2 * crit_t.weight_grad_s);
        break;
    case Schedule::dualpipe:
        // DualPipe README: (p/2-1)(F&B + B - 3W), F&B the overlapped forward-backward pair.
        pipe = m * t_max + (p / 2.0 - 1) * std::max(0.0, crit_t.forward_s + 2 * crit_t.backward_s - 3 * crit_t.weight_grad_s);
        break;
    }
    const double bubble = std::max(0.0, pipe - m * t_max);

    // Data-parallel gradient reduction and the optimizer step, per stage; the slowest sets the tail.
    double exposed_dp = 0, dp_busy = 0, optimizer_s = 0, offload_s = 0, exposed_gather = 0;
    const double b_avg = backward_avg;
    for (int st = 0; st < p; ++st) {
        const StageParams sp = stage_params(ctx, s, st);
        double grad_s = 0, gather_s = 0;
        if (s.zero <= 2) {
            const Collective coll = s.zero == 0 ? Collective::all_reduce : Collective::reduce_scatter;
            grad_s = collective_time_s(ctx.network, coll, sp.dense * state.gradients, c.groups.dp_dense)
                + collective_time_s(ctx.network, coll, sp.expert * state.gradients, c.groups.dp_expert);
            if (s.zero >= 1)
                gather_s = collective_time_s(ctx.network, Collective::all_gather, sp.dense * state.weights, c.groups.dp_dense)
                    + collective_time_s(ctx.network, Collective::all_gather, sp.expert * state.weights, c.groups.dp_expert);
        }
        dp_busy = std::max(dp_busy, grad_s + gather_s);
        // Stage st finishes its last backward about st backward-times before stage 0 (1F1B cool-down).
        const double slack = st * b_avg;
        double exposed;
        const double params = std::max(1.0, sp.total());
        const double last_bucket = grad_s * std::min(1.0, kBucketParams / params);
        if (s.overlap_grad_reduce) {
            const StageTiming t = st == crit ? crit_t : timing_of(ctx, s, c, st);
            exposed = std::max(std::max(0.0, grad_s - t.backward_s - slack), st == 0 ? last_bucket : 0.0);
        } else {
            exposed = std::max(0.0, grad_s - slack);
        }
        exposed_dp = std::max(exposed_dp, exposed);
        const double gather_exposed = s.overlap_param_gather ? gather_s * std::min(1.0, kBucketParams / params) : gather_s;
        exposed_gather = std::max(exposed_gather, gather_exposed);
        // Optimizer step on the locally owned shard.
        const double local = s.zero >= 1 ? sp.dense / dense_shard + sp.expert / expert_shard : sp.total();
        const double grads_local = s.zero >= 2 ? local : sp.total();
        if (s.offload_optimizer) {
            const double copy = local * (state.gradients + state.weights) / kOffloadPcieBps;
            offload_s = std::max(offload_s, copy + local * kCpuAdamSecondsPerParam);
        } else {
            const double bytes = local * optimizer_bytes_per_param(s.optimizer) + grads_local * kGradNormBytesPerParam;
            optimizer_s = std::max(optimizer_s, memory_bound_time_s(ctx.device, bytes));
        }
    }
    exposed_dp += exposed_gather;

    r.step_time_s = pipe + exposed_dp + optimizer_s + offload_s;
    const double tokens = static_cast<double>(ctx.training.global_batch) * static_cast<double>(ctx.training.seq_len);
    r.tokens_per_s = tokens / r.step_time_s;
    const double gpus = static_cast<double>(s.total_gpus());
    const double peak = ctx.cluster.gpu.peak(ctx.training.precision);
    r.tflops_per_gpu = ctx.model_flops_per_token * r.tokens_per_s / gpus / units::kTFLOP;
    r.mfu = peak > 0 ? r.tflops_per_gpu * units::kTFLOP / peak : 0;
    // Hardware FLOPs: executed work incl. recompute, averaged over stages.
    {
        const double dense_layers = ctx.model.layers - ctx.model.moe_layer_count();
        const double per_mb = c.dense.flops * dense_layers + c.moe.flops * ctx.model.moe_layer_count() + c.embedding.flops
            + c.output.flops;
        const double per_gpu_step = per_mb * m / p;
        r.hfu = peak > 0 ? per_gpu_step / r.step_time_s / peak : 0;
    }
    r.bubble_fraction = bubble / r.step_time_s;

    // Breakdown along the critical stage.
    r.time.compute_s = m * crit_t.compute_s;
    r.time.recompute_s = m * crit_t.recompute_s;
    r.time.exposed_tp_s = m * crit_t.exposed_s[kTp];
    r.time.exposed_cp_s = m * crit_t.exposed_s[kCp];
    r.time.exposed_ep_s = m * crit_t.exposed_s[kEp];
    r.time.exposed_pp_s = m * crit_t.exposed_s[kPp];
    r.time.exposed_dp_s = exposed_dp + m * crit_t.exposed_s[static_cast<int>(OpStream::dp)];
    r.time.bubble_s = bubble;
    r.time.optimizer_s = optimizer_s;
    r.time.offload_s = offload_s;
    // Whatever the per-part sums miss (rounding of the pipeline formula) is attributed to the bubble.
    r.time.bubble_s += r.step_time_s - r.time.total();

    // Communication busy time per group per step (critical stage).
    {
        LayerTotals crit_totals;
        const StageLayout layout { ctx.model.layers, s.pp, s.vpp, s.first_stage_layers, s.last_stage_layers };
        for (int v = 0; v < s.vpp; ++v) {
            const int chunk = v * s.pp + crit;
            const int first = layout.chunk_first_layer(chunk);
            const int count = layout.chunk_layers(chunk);
            const int moe = moe_layers_in(ctx.model, first, count);
            crit_totals.add(c.dense, count - moe);
            crit_totals.add(c.moe, moe);
        }
        r.communication_s.tp = m * crit_totals.comm_busy_s[kTp];
        r.communication_s.cp = m * crit_totals.comm_busy_s[kCp];
        r.communication_s.ep = m * crit_totals.comm_busy_s[kEp];
        r.communication_s.pp = m * crit_t.exposed_s[kPp];
        r.communication_s.dp = dp_busy;
        r.communication_s.exposed = r.time.exposed_tp_s + r.time.exposed_cp_s + r.time.exposed_ep_s
            + r.time.exposed_pp_s + r.time.exposed_dp_s;
    }

    // Memory: the stage with the highest peak.
    for (int st = 0; st < p; ++st) {
        const MemoryBreakdown mem = stage_memory(ctx, s, st, mb_count, c.activations);
        if (mem.total() > r.peak_memory_bytes) {
            r.peak_memory_bytes = mem.total();
            r.memory = mem;
            r.peak_memory_stage = st;
        }
    }
    r.feasible = r.peak_memory_bytes <= ctx.cluster.gpu.memory_bytes;

    // Power: idle plus the dynamic range weighted by what the GPU is doing.
    const GpuSpec& gpu = ctx.cluster.gpu;
    const double busy = std::min(1.0, (r.time.compute_s + r.time.recompute_s + r.time.optimizer_s) / r.step_time_s);
    const double comm = std::min(1.0 - busy, r.communication_s.exposed / r.step_time_s);
    r.power.avg_W_per_gpu = gpu.idle_W + (gpu.tdp_W - gpu.idle_W) * (kComputeActivity * busy + kCommActivity * comm);
    r.power.peak_W_per_gpu = gpu.idle_W + (gpu.tdp_W - gpu.idle_W) * kComputeActivity;
    r.power.energy_J_per_token = r.power.avg_W_per_gpu * gpus / r.tokens_per_s;
}

Prediction AnalyticModel::predict(const Strategy& s) const
{
    const PlanContext& ctx = m_ctx;
    AnalyticResult r;
    evaluate(s, r);
    Prediction p;
    p.fidelity = Fidelity::analytic;
    p.feasible = r.feasible;
    p.step_time_s = r.step_time_s;
    p.tokens_per_s = r.tokens_per_s;
    p.tflops_per_gpu = r.tflops_per_gpu;
    p.mfu = r.mfu;
    p.hfu = r.hfu;
    p.bubble_fraction = r.bubble_fraction;
    p.peak_memory_bytes = r.peak_memory_bytes;
    p.capacity_bytes = ctx.cluster.gpu.memory_bytes;
    p.memory = r.memory;
    p.peak_memory_stage = r.peak_memory_stage;
    p.communication_s = r.communication_s;
    p.time = r.time;
    p.power = r.power;
    p.microbatches = r.microbatches;
    if (!r.feasible) {
        char buf[256];
        std::snprintf(buf, sizeof buf, "out of memory: stage %d needs %.1f GiB per GPU, the %s has %.1f GiB",
            r.peak_memory_stage, r.peak_memory_bytes / units::kGiB, ctx.cluster.gpu.name.c_str(),
            ctx.cluster.gpu.memory_bytes / units::kGiB);
        p.infeasible_reason = buf;
    }
    StrategyCosts c;
    compute_costs(ctx, s, c);
    const StageLayout layout { ctx.model.layers, s.pp, s.vpp, s.first_stage_layers, s.last_stage_layers };
    for (int st = 0; st < s.pp; ++st) {
        StageReport rep;
        rep.stage = st;
        rep.layers = layout.stage_layers(st);
        rep.has_embedding = st == 0;
        rep.has_output = st == s.pp - 1;
        rep.in_flight_microbatches = static_cast<int>(std::ceil(in_flight_microbatches(s, st, r.microbatches)));
        const StageTiming t = timing_of(ctx, s, c, st);
        rep.forward_s = t.forward_s;
        rep.backward_s = t.backward_s;
        rep.memory = stage_memory(ctx, s, st, r.microbatches, c.activations);
        p.stages.push_back(rep);
    }
    const PlanInputs in { ctx.model, ctx.training, ctx.cluster.gpu, ctx.cluster.total_gpus() };
    p.warnings = strategy_warnings(in, s);
    if (!r.feasible)
        p.warnings.push_back(p.infeasible_reason);
    p.assumptions.push_back("fidelity: analytic (closed-form pipeline formula over per-op costs)");
    p.assumptions.push_back("calibration: none (datasheet peaks x named per-generation efficiencies for "
        + std::string(to_string(ctx.cluster.gpu.architecture)) + ")");
    p.assumptions.push_back(std::string("attention: ") + (ctx.training.flash_attention ? "fused (flash)" : "unfused"));
    p.assumptions.push_back(std::string("DP gradient reduction ") + (s.overlap_grad_reduce ? "overlapped with backward" : "after backward"));
    if (s.tp_comm_overlap)
        p.assumptions.push_back("TP communication overlapped with GEMMs (Transformer Engine userbuffers)");
    p.assumptions.push_back("FLOPs counted as Megatron-LM reports them (causal attention in full, no recompute)");
    return p;
}

} // namespace parallax

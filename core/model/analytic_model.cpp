#include "model/analytic_model.hpp"

#include "ir/schedule_program.hpp"
#include "model/data_path.hpp"
#include "model/host_link.hpp"

#include "model/layer_ops.hpp"
#include "model/memory_model.hpp"
#include "model/model_math.hpp"
#include "model/moe_load.hpp"
#include "model/param_offload.hpp"
#include "model/stage_power.hpp"
#include "model/strategy_costs.hpp"
#include "spec/strategy_rules.hpp"
#include "spec/units.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace parallax {

namespace {

// Per-micro-batch stage timing at clock x (power curves applied) including the ZeRO-3 gathers that do
// not hide under compute; `power` gets the stage's energy inputs.
StageTiming timing_with_zero3(const PlanContext& ctx, const Strategy& s, const StrategyCosts& c, int stage, double x,
    StagePower* power = nullptr) noexcept
{
    StagePower sp = stage_power(ctx, s, c, stage, x);
    StageTiming t = sp.timing;
    if (s.zero >= 3) {
        // FSDP / ZeRO-3 gathers each unit's (layer's) parameters for the forward and again for the
        // backward, and reduce-scatters its gradients, every micro-batch (Rajbhandari et al. 2020, Sec. 5:
        // 1.5x the DP volume). With prefetching (FSDP, DeepSpeed >= 2022) they hide under compute except
        // the first unit.
        const Zero3Traffic z = zero3_traffic(ctx, s, c, stage);
        double exp_f, exp_b;
        if (s.overlap_param_gather) {
            exp_f = std::max(z.gather_s / z.units, z.gather_s - t.forward_s);
            exp_b = std::max(z.gather_s / z.units, z.gather_s + z.reduce_scatter_s - t.backward_s);
        } else {
            exp_f = z.gather_s;
            exp_b = z.gather_s + z.reduce_scatter_s;
        }
        t.exposed_s[kDpStream] += exp_f + exp_b;
        if (s.offload_params) {
            const ParamFetchTime h = param_offload_exposed(z, host_param_traffic(ctx, s, c, stage), t, exp_f, exp_b);
            t.host_copy_s += h.forward_s + h.backward_s;
            exp_f += h.forward_s;
            exp_b += h.backward_s;
        }
        t.forward_s += exp_f;
        t.backward_s += exp_b;
        sp.comm_busy_s += 2 * z.gather_s + z.reduce_scatter_s;
    }
    if (power) {
        *power = sp;
        power->timing = t;
    }
    return t;
}

// Stage timings and tails of one evaluation, kept so the pipeline, the DP tail and the power pass do not
// recompute them: a few slots on the stack (allocation-free); beyond them they are recomputed.
class StageMemo {
public:
    StageMemo(const PlanContext& ctx, const Strategy& s, const StrategyCosts& c)
        : m_ctx(ctx)
        , m_s(s)
        , m_c(c)
    {
    }
    void reset() { m_n = 0; }
    const StagePower& power(int stage, double x)
    {
        for (int i = 0; i < m_n; ++i)
            if (m_stage[i] == stage && m_clock[i] == x)
                return m_power[i];
        StagePower& out = m_n < kSlots ? m_power[m_n] : m_spill;
        timing_with_zero3(m_ctx, m_s, m_c, stage, x, &out);
        if (m_n < kSlots) {
            m_stage[m_n] = stage;
            m_clock[m_n] = x;
            ++m_n;
        }
        return out;
    }
    const StageTail& tail(int stage)
    {
        for (int i = 0; i < m_tails; ++i)
            if (m_tail_stage[i] == stage)
                return m_tail[i];
        StageTail& out = m_tails < kSlots ? m_tail[m_tails] : m_tail_spill;
        out = stage_tail(m_ctx, m_s, m_c, stage);
        if (m_tails < kSlots)
            m_tail_stage[m_tails++] = stage;
        return out;
    }

private:
    static constexpr int kSlots = 8;
    const PlanContext& m_ctx;
    const Strategy& m_s;
    const StrategyCosts& m_c;
    int m_n = 0, m_tails = 0;
    int m_stage[kSlots] = {}, m_tail_stage[kSlots] = {};
    double m_clock[kSlots] = {};
    StagePower m_power[kSlots];
    StagePower m_spill;
    StageTail m_tail[kSlots];
    StageTail m_tail_spill;
};

// The stages the pipeline formula visits: one representative per class when every stage runs at the
// same clock, every stage when the clocks differ.
template <class F> void for_each_stage_unit(const PlanLayout& layout, bool per_stage, F f)
{
    if (per_stage) {
        for (int st = 0; st < layout.pp; ++st)
            f(st, 1);
        return;
    }
    for (const StageClass& k : layout.classes)
        f(k.first_stage, k.count);
}

// The power cap is reported when it lengthens some stage's kernels by more than this (a few
// HBM-heavy GEMMs touch TDP at the nominal clock and lose a few hundredths of a percent).
constexpr double kCapNoticeable = 0.005;

// Thermal limit: bisection steps on the clock ceiling (1e-4 of the clock range).
constexpr int kThermalBisectionSteps = 14;

} // namespace

StageTiming AnalyticModel::stage_timing(const Strategy& s, int stage) const noexcept
{
    EvaluationCache cache(m_ctx);
    StrategyCosts c;
    compute_costs(m_ctx, s, cache, c);
    return timing_with_zero3(m_ctx, s, c, stage, stage_clock(m_ctx.power, m_ctx.training, s.pp, stage));
}

void AnalyticModel::evaluate(const Strategy& s, AnalyticResult& r) const
{
    EvaluationCache cache(m_ctx);
    evaluate(s, r, cache);
}

namespace {

// A node's GPUs share its host memory; each is counted at the largest stage's offload (an upper bound
// when a node holds GPUs of several stages).
double host_bytes_per_node(const ClusterSpec& c, const Strategy& s, double per_gpu)
{
    return per_gpu * static_cast<double>(std::min<long long>(c.gpus_per_node, s.total_gpus()));
}

// The stage with the highest memory peak (the earliest of each class holds the most in flight).
struct PeakStage {
    MemoryBreakdown memory;
    double bytes = 0;
    int stage = 0;
    double host_bytes_per_gpu = 0; // the most any stage's GPU keeps in host memory
};

PeakStage peak_stage(const PlanContext& ctx, const Strategy& s, EvaluationCache& cache, long long microbatches)
{
    const PlanLayout& layout = cache.layout(s);
    const LayerActivationBytes& act = cache.activations(s);
    // A composite plan: the activations of each distinct layer setting (layer_ranges.hpp); unused otherwise.
    std::array<LayerActivationBytes, kMaxLayerSettings> by_variant {};
    LayerVariants variants;
    if (s.layers) {
        variants = LayerVariants::of(*s.layers, plain_layer_setting(ctx, s), ctx.model.layers);
        for (int v = 0; v < variants.count; ++v)
            by_variant[v]
                = cache.activations(strategy_of_setting(s, variants.setting[v]), variants.setting[v].precision);
    }
    const CompositeLayers composite { &variants, by_variant.data() };
    PeakStage peak;
    for (const StageClass& k : layout.classes) {
        const MemoryBreakdown mem
            = stage_memory(ctx, s, layout, k.first_stage, microbatches, act, s.layers ? &composite : nullptr);
        peak.host_bytes_per_gpu = std::max(peak.host_bytes_per_gpu, mem.host);
        if (mem.total() > peak.bytes) {
            peak.bytes = mem.total();
            peak.memory = mem;
            peak.stage = k.first_stage;
        }
    }
    return peak;
}

} // namespace

void AnalyticModel::evaluate_memory(const Strategy& s, AnalyticResult& r, EvaluationCache& cache) const
{
    r = AnalyticResult {};
    r.microbatches = microbatch_count(m_ctx.training, s);
    const PeakStage peak = peak_stage(m_ctx, s, cache, r.microbatches);
    r.peak_memory_bytes = peak.bytes;
    r.memory = peak.memory;
    r.peak_memory_stage = peak.stage;
    r.host_memory_bytes_per_node = host_bytes_per_node(m_ctx.cluster, s, peak.host_bytes_per_gpu);
    r.feasible = r.peak_memory_bytes <= m_ctx.cluster.gpu.memory_bytes
        && r.host_memory_bytes_per_node <= host_memory_per_node_bytes(m_ctx.cluster);
}

double AnalyticModel::peak_memory_bytes(const Strategy& s, EvaluationCache& cache) const
{
    return peak_stage(m_ctx, s, cache, microbatch_count(m_ctx.training, s)).bytes;
}

namespace {

// The pipeline at one clock ceiling: per-stage micro-batch times and the schedule's formula over them.
struct PipelineTime {
    double pipe = 0; // the pipeline's part of the step
    double bubble = 0;
    double t_max = 0; // the slowest stage's forward + backward per micro-batch
    double backward_avg = 0; // backward per micro-batch, averaged over the stages
    double forward_avg = 0; // forward per micro-batch, averaged over the stages
    int crit = 0; // the slowest stage
    StageTiming crit_t;
};

// The step after the pipeline: DP gradient reduction and parameter gather, optimizer, offload.
struct StepTailTime {
    double exposed_dp = 0; // reduction and gather not hidden under the backward
    double dp_busy = 0;
    double optimizer_s = 0;
    double offload_s = 0;
};

// The schedule's pipeline time from the stages' sums and the slowest stage.
double schedule_time(const Strategy& s, double m, int p, const PipelineTime& pt, double sum_all, double sum_weight)
{
    const double t_max = pt.t_max;
    const StageTiming& crit_t = pt.crit_t;
    switch (s.schedule) {
    case Schedule::gpipe:
    case Schedule::one_f_one_b:
        // Alpa / Metis: (m-1) * slowest + sum of all stages; (m+p-1)(t_f+t_b) when even.
        return (m - 1) * t_max + sum_all;
    case Schedule::interleaved:
        // Narayanan et al. 2021 Sec. 2.2.2: bubble (p-1)(t_f+t_b)/v.
        return (m - 1.0 / s.vpp) * t_max + sum_all / s.vpp;
    case Schedule::zb_h1:
        // Zero-bubble H1 as Parallax schedules it (W passes fill idle time under 1F1B's memory bound):
        // the W passes leave the bubble, (p-1)(F + B_input). The hand-tuned schedule of Qi et al. 2024
        // reaches (p-1)(F + B_input - W) (DualPipe README: (p-1)(F+B-2W), B the whole backward).
        // With uneven stages: (m-1) * slowest + the others' F + B_input + the slowest's W.
        return (m - 1) * t_max + (sum_all - sum_weight) + crit_t.weight_grad_s;
    case Schedule::dualpipe:
        // DualPipe README: (p/2-1)(F&B + B - 3W), F&B the overlapped forward-backward pair.
        return m * t_max
            + (p / 2.0 - 1) * std::max(0.0, crit_t.forward_s + 2 * crit_t.backward_s - 3 * crit_t.weight_grad_s);
    case Schedule::custom:
        // Only when the program does not fit the plan (a variant with another pp): 1F1B's formula.
        return (m - 1) * t_max + sum_all;
    }
    return 0;
}

// Everything of one evaluation that depends on the clocks, at a clock ceiling (the thermal limit's;
// above every stage's clock when cool). Allocation-free: the stage memo lives on the stack.
class ClockedEvaluation {
public:
    ClockedEvaluation(const PlanContext& ctx, const Strategy& s, const StrategyCosts& c, AnalyticResult& r)
        : ctx_(ctx)
        , pm_(ctx.power)
        , s_(s)
        , c_(c)
        , layout_(*c.layout)
        , r_(r)
        , m_(static_cast<double>(r.microbatches))
        , p_(s.pp)
        , per_stage_(!uniform_stage_clocks(ctx.training, s.pp))
        , tokens_(static_cast<double>(ctx.training.global_batch) * static_cast<double>(ctx.training.seq_len))
        , gpus_(static_cast<double>(s.total_gpus()))
        , peak_(plan_peak_flops(ctx, c))
        , memo_(ctx, s, c)
    {
    }

    // Time and power into the result at `ceiling`; returns the hottest stage's average power.
    double run(double ceiling)
    {
        ceiling_ = ceiling;
        memo_.reset();
        const PipelineTime pt = pipeline_time();
        const StepTailTime tail = step_tail_time(pt);
        fill_throughput(pt, tail);
        fill_time_breakdown(pt, tail);
        fill_communication(pt, tail);
        return fill_power();
    }

private:
    double clock_of(int stage) const { return std::min(ceiling_, stage_clock(pm_, ctx_.training, p_, stage)); }

    bool program_fits() const
    {
        return s_.schedule == Schedule::custom && s_.program && static_cast<int>(s_.program->stages.size()) == p_;
    }

    // A schedule program: its list-scheduled critical path over each stage's pass times (a chunk of
    // an interleaved stage is 1/chunks of it; a DualPipe chunk is the whole stage).
    double program_time()
    {
        const ScheduleProgram& prog = *s_.program;
        const bool dual = prog.layout == ChunkLayout::dualpipe;
        const double k = dual ? 1.0 : prog.chunks;
        auto pass_times = [&](int st) {
            const StageTiming& t = memo_.power(st, clock_of(st)).timing;
            return PassTimes { t.forward_s / k, (t.backward_s - t.weight_grad_s) / k, t.weight_grad_s / k };
        };
        std::vector<std::vector<PassTimes>> per_chunk(static_cast<std::size_t>(p_));
        for (int st = 0; st < p_; ++st) {
            per_chunk[st].assign(static_cast<std::size_t>(prog.chunks), pass_times(st));
            if (dual)
                per_chunk[st][1] = pass_times(p_ - 1 - st); // the up pipeline's stage on this device
        }
        return program_makespan_s(prog, per_chunk);
    }

    // Pipeline: per-stage micro-batch times, then the schedule's formula.
    PipelineTime pipeline_time()
    {
        PipelineTime pt;
        double sum_all = 0, sum_weight = 0;
        // Stages with identical chunks (and clocks) cost the same: one representative per class.
        for_each_stage_unit(layout_, per_stage_, [&](int st, int count) {
            const StageTiming& t = memo_.power(st, clock_of(st)).timing;
            const double total = t.forward_s + t.backward_s;
            sum_all += count * total;
            sum_weight += count * t.weight_grad_s;
            pt.backward_avg += count * t.backward_s / p_;
            pt.forward_avg += count * t.forward_s / p_;
            if (total > pt.t_max) {
                pt.t_max = total;
                pt.crit = st;
                pt.crit_t = t;
            }
        });
        r_.critical_stage = pt.crit;
        pt.pipe = program_fits() ? program_time() : schedule_time(s_, m_, p_, pt, sum_all, sum_weight);
        pt.bubble = std::max(0.0, pt.pipe - m_ * pt.t_max);
        return pt;
    }

    // The gradient reduction left after a stage's last backward. Each model chunk reduces its gradients
    // once its last micro-batch's backward is done (Megatron's DDP, one bucket group per chunk); under
    // the interleaved schedule the last micro-batch group runs backward through the chunks in turn, so
    // chunk c finishes c x pp chunk-backwards before chunk 0, and the reductions queue on the DP link:
    // what is left is max over k of ((k+1) g - k pp b) - b, g one chunk's reduction, b one chunk's
    // backward (Narayanan et al. 2021, Sec. 2.2.2, the interleaved schedule's order). One chunk: g - b.
    // The parameter all-gather after the optimizer step mirrors it on the next step's first forward
    // (chunk 0 is needed first, chunk c after c x pp chunk-forwards): the same formula with b a forward.
    double chunked_dp_exposed_s(double dp_comm_s, double stage_pass_s) const
    {
        const int chunks = std::max(1, s_.vpp);
        const double g = dp_comm_s / chunks;
        const double b = stage_pass_s / chunks;
        double queued = 0;
        for (int k = 0; k < chunks; ++k)
            queued = std::max(queued, (k + 1) * g - k * static_cast<double>(p_) * b);
        return std::max(0.0, queued - b);
    }

    // A stage's timing at its clock; the critical stage's is the pipeline's own. A copy: the memo may reuse
    // its spill slot on the next call.
    StageTiming stage_timing(const PipelineTime& pt, int st)
    {
        return st == pt.crit ? pt.crit_t : memo_.power(st, clock_of(st)).timing;
    }

    // Offloaded gradients under accumulation: every micro-batch but the last moves its partition down and the
    // running sum up (host_link.hpp), hidden behind that micro-batch's backward as far as it lasts.
    double accumulate_copies_exposed_s(const PipelineTime& pt, int st, const StageTail& tail)
    {
        if (tail.accumulate_copy_s <= 0 || m_ <= 1)
            return 0;
        return (m_ - 1) * std::max(0.0, tail.accumulate_copy_s - stage_timing(pt, st).backward_s);
    }

    // Data-parallel gradient reduction and the optimizer step, per stage; the slowest sets the tail.
    StepTailTime step_tail_time(const PipelineTime& pt)
    {
        StepTailTime out;
        double exposed_gather = 0;
        for (const StageClass& k : layout_.classes) {
            // Within a class the earliest stage has the least slack: it sets the class's exposure.
            const int st = k.first_stage;
            const StageTail& tail = memo_.tail(st);
            out.dp_busy = std::max(out.dp_busy, tail.grad_reduce_s + tail.param_gather_s);
            // Stage st finishes its last backward about st backward-times before stage 0 (1F1B cool-down).
            const double slack = st * pt.backward_avg;
            double exposed;
            if (s_.overlap_grad_reduce) {
                const StageTiming t = stage_timing(pt, st);
                exposed = std::max(std::max(0.0, chunked_dp_exposed_s(tail.grad_reduce_s, t.backward_s) - slack),
                    st == 0 ? tail.grad_reduce_s * tail.last_bucket_fraction : 0.0);
            } else {
                exposed = std::max(0.0, tail.grad_reduce_s - slack);
            }
            out.exposed_dp = std::max(out.exposed_dp, exposed);
            // Megatron's overlapped gather (`overlap_param_gather`) starts after the optimizer step and each
            // bucket must land before the first micro-batch's forward reaches its layers: what the stage's
            // first forward (and, on later stages, the wait for it) cannot cover stays exposed, at least the
            // first bucket.
            const double gather_exposed = s_.overlap_param_gather
                ? std::max(tail.param_gather_s * tail.last_bucket_fraction,
                    chunked_dp_exposed_s(tail.param_gather_s, stage_timing(pt, st).forward_s) - st * pt.forward_avg)
                : tail.param_gather_s;
            exposed_gather = std::max(exposed_gather, gather_exposed);
            out.optimizer_s = std::max(out.optimizer_s, tail.optimizer_s);
            out.offload_s = std::max(out.offload_s, tail.offload_s + accumulate_copies_exposed_s(pt, st, tail));
        }
        out.exposed_dp += exposed_gather;
        return out;
    }

    void fill_throughput(const PipelineTime& pt, const StepTailTime& tail)
    {
        AnalyticResult& r = r_;
        const double gpu_step_s = pt.pipe + tail.exposed_dp + tail.optimizer_s + tail.offload_s;
        data_stall_s_ = data_path_cost(ctx_, s_, gpu_step_s, tail.offload_s).stall_s;
        r.step_time_s = gpu_step_s + data_stall_s_;
        r.tokens_per_s = tokens_ / r.step_time_s;
        r.tflops_per_gpu = ctx_.model_flops_per_token * r.tokens_per_s / gpus_ / units::kTFLOP;
        r.mfu = peak_ > 0 ? r.tflops_per_gpu * units::kTFLOP / peak_ : 0;
        // Hardware FLOPs: executed work incl. recompute, averaged over stages.
        const double moe_layers = ctx_.model.moe_layer_count();
        const double dense_layers = ctx_.model.layers - moe_layers;
        const double per_mb = c_.ranges ? composite_flops_per_microbatch()
                                        : c_.layer.dense.flops * dense_layers + c_.layer.moe.flops * moe_layers
                + c_.layer.embedding.flops + c_.layer.output.flops;
        r.hfu = peak_ > 0 ? per_mb * m_ / p_ / r.step_time_s / peak_ : 0;
        r.bubble_fraction = pt.bubble / r.step_time_s;
    }

    // A composite plan's executed FLOPs of one micro-batch through the model: each layer under its
    // range's settings.
    double composite_flops_per_microbatch() const
    {
        const LayerMix mix = layer_mix(ctx_.model, c_, 0, ctx_.model.layers);
        double flops = 0;
        for (int v = 0; v < c_.variants.count; ++v) {
            const LayerCosts& e = c_.by_variant[v]->costs;
            flops += e.dense.flops * mix.dense[v] + e.moe.flops * mix.moe[v];
        }
        return flops + c_.entry_of_layer(0).costs.embedding.flops
            + c_.entry_of_layer(ctx_.model.layers - 1).costs.output.flops;
    }

    // Breakdown along the critical stage.
    void fill_time_breakdown(const PipelineTime& pt, const StepTailTime& tail)
    {
        const double m = m_;
        const StageTiming& crit_t = pt.crit_t;
        TimeBreakdown& time = r_.time;
        time = TimeBreakdown {};
        time.compute_s = m * crit_t.compute_s;
        time.recompute_s = m * crit_t.recompute_s;
        time.exposed_tp_s = m * crit_t.exposed_s[kTpStream];
        time.exposed_cp_s = m * crit_t.exposed_s[kCpStream];
        time.exposed_ep_s = m * crit_t.exposed_s[kEpStream];
        time.exposed_pp_s = m * crit_t.exposed_s[kPpStream];
        time.exposed_dp_s = tail.exposed_dp + m * crit_t.exposed_s[kDpStream];
        time.bubble_s = pt.bubble;
        time.optimizer_s = tail.optimizer_s;
        time.offload_s = tail.offload_s;
        time.data_stall_s = data_stall_s_;
        time.host_copy_s = m * crit_t.host_copy_s;
        // Whatever the per-part sums miss (rounding of the pipeline formula) is attributed to the bubble.
        time.bubble_s += r_.step_time_s - time.total();
    }

    // Communication busy time per group per step (critical stage).
    void fill_communication(const PipelineTime& pt, const StepTailTime& tail)
    {
        const double m = m_;
        double busy[kOpStreamCount] = {};
        for (int v = 0; v < s_.vpp; ++v) {
            const ChunkTiming ct = chunk_timing(ctx_, s_, c_, v * s_.pp + pt.crit);
            for (int i = 0; i < kOpStreamCount; ++i)
                busy[i] += ct.comm_busy_s[i];
        }
        const TimeBreakdown& time = r_.time;
        CommBreakdown& comm = r_.communication_s;
        comm = CommBreakdown {};
        comm.tp = m * busy[kTpStream];
        comm.cp = m * busy[kCpStream];
        comm.ep = m * busy[kEpStream];
        comm.pp = m * pt.crit_t.exposed_s[kPpStream];
        comm.dp = tail.dp_busy + m * pt.crit_t.exposed_s[kDpStream];
        comm.exposed
            = time.exposed_tp_s + time.exposed_cp_s + time.exposed_ep_s + time.exposed_pp_s + time.exposed_dp_s;
    }

    // Power: each stage's kernels at their clocks (capped), the awake-idle power while it waits,
    // communication on top (power_model.hpp). Every stage has the same number of GPUs. Returns the
    // hottest stage's average power.
    double fill_power()
    {
        const AnalyticResult& r = r_;
        const double m = m_;
        PowerEstimate& pw = r_.power;
        pw = PowerEstimate {};
        double energy_sum = 0, kernel_sum = 0, clock_sum = 0, peak_sum = 0;
        double hottest_avg_W = 0;
        for_each_stage_unit(layout_, per_stage_, [&](int st, int count) {
            const double x = clock_of(st);
            const StagePower& sp = memo_.power(st, x);
            const StageTail& tail = memo_.tail(st);
            StageEnergyInputs in;
            in.step_s = r.step_time_s;
            in.microbatches = m;
            in.optimizer_s = tail.optimizer_s;
            in.dp_comm_s = tail.grad_reduce_s + tail.param_gather_s;
            in.clock = x;
            const double e = stage_step_energy_J(pm_, sp, in);
            energy_sum += count * e;
            kernel_sum += count * sp.kernel_s * m;
            clock_sum += count * x;
            hottest_avg_W = std::max(hottest_avg_W, e / r.step_time_s);
            pw.peak_W_per_gpu = std::max(pw.peak_W_per_gpu, sp.peak_W);
            peak_sum += count * std::max(sp.peak_W, e / r.step_time_s);
            if (sp.kernel_s > 0)
                pw.cap_slowdown = std::max(pw.cap_slowdown, sp.throttle_s / (sp.kernel_s - sp.throttle_s));
        });
        pw.energy_J_per_step_per_gpu = energy_sum / p_;
        pw.avg_W_per_gpu = pw.energy_J_per_step_per_gpu / r.step_time_s;
        pw.peak_W_per_gpu = std::max(pw.peak_W_per_gpu, pw.avg_W_per_gpu);
        pw.energy_J_per_step = pw.energy_J_per_step_per_gpu * gpus_;
        pw.energy_J_per_token = pw.avg_W_per_gpu * gpus_ / r.tokens_per_s;
        pw.idle_W = pm_.idle_W;
        pw.cap_W = pm_.cap_W;
        pw.clock_MHz = pm_.clock_MHz(clock_sum / p_);
        pw.busy_fraction = std::min(1.0, kernel_sum / p_ / r.step_time_s);
        pw.thermal_limit_W = pm_.thermal_limit_W();
        pw.power_capped = pw.cap_slowdown > kCapNoticeable;
        fill_facility_power(pw, peak_sum);
        return hottest_avg_W;
    }

    // Per node, per rack and for the cluster, node overheads included.
    void fill_facility_power(PowerEstimate& pw, double peak_sum) const
    {
        const double gpus = gpus_;
        const double gpn = std::min(gpus, static_cast<double>(std::max(1, ctx_.cluster.gpus_per_node)));
        pw.gpus = gpus;
        pw.nodes = std::ceil(gpus / gpn);
        pw.node_overhead_W = ctx_.node_overhead_W;
        pw.avg_W_per_node = gpn * pw.avg_W_per_gpu + ctx_.node_overhead_W;
        pw.peak_W_per_node = gpn * pw.peak_W_per_gpu + ctx_.node_overhead_W;
        pw.nodes_per_rack = std::min(pw.nodes, static_cast<double>(nodes_per_rack(ctx_.cluster)));
        pw.racks = std::ceil(pw.nodes / pw.nodes_per_rack);
        pw.rack_avg_kW = pw.nodes_per_rack * pw.avg_W_per_node / 1000;
        pw.rack_peak_kW = pw.nodes_per_rack * pw.peak_W_per_node / 1000;
        pw.cluster_avg_kW = (pw.avg_W_per_gpu * gpus + ctx_.node_overhead_W * pw.nodes) / 1000;
        pw.cluster_peak_kW = (peak_sum / p_ * gpus + ctx_.node_overhead_W * pw.nodes) / 1000;
        // A rack of the hottest nodes, never more than the cluster it is part of.
        pw.rack_avg_kW = std::min(pw.rack_avg_kW, pw.cluster_avg_kW);
        pw.rack_peak_kW = std::min(pw.rack_peak_kW, pw.cluster_peak_kW);
    }

    const PlanContext& ctx_;
    const PowerModel& pm_;
    const Strategy& s_;
    const StrategyCosts& c_;
    const PlanLayout& layout_;
    AnalyticResult& r_;
    const double m_; // micro-batches
    const int p_;
    const bool per_stage_; // stage clocks differ: every stage is visited
    const double tokens_; // per step
    double data_stall_s_ = 0; // the loader's share of the step (fill_throughput)
    const double gpus_;
    const double peak_; // FLOP/s per GPU at the matmuls' precision (plan_peak_flops)
    StageMemo memo_;
    double ceiling_ = 0;
};

} // namespace

void AnalyticModel::evaluate(const Strategy& s, AnalyticResult& r, EvaluationCache& cache) const
{
    evaluate_memory(s, r, cache);
    const PowerModel& pm = m_ctx.power;
    StrategyCosts c;
    compute_costs(m_ctx, s, cache, c);
    // Everything below depends on the clocks; memory above does not.
    ClockedEvaluation at(m_ctx, s, c, r);
    const double top = pm.max_clock;
    double hottest_avg_W = at.run(top);
    if (hottest_avg_W > r.power.thermal_limit_W * (1 + 1e-9) && r.power.thermal_limit_W > pm.idle_W) {
        // Thermal slowdown: the firmware lowers the clock until the hottest GPU's sustained power holds
        // it at its max operating temperature. Bisect the clock ceiling that meets the limit.
        double lo = pm.min_clock, hi = top;
        for (int i = 0; i < kThermalBisectionSteps; ++i) {
            const double mid = 0.5 * (lo + hi);
            hottest_avg_W = at.run(mid);
            (hottest_avg_W > r.power.thermal_limit_W ? hi : lo) = mid;
        }
        at.run(lo);
        r.power.thermal_clock = lo;
    }
}

namespace {

// The prediction's headline numbers, straight from the analytic result.
Prediction prediction_of(const PlanContext& ctx, const AnalyticResult& r)
{
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
    p.host_memory_bytes_per_node = r.host_memory_bytes_per_node;
    p.host_capacity_bytes_per_node = host_memory_per_node_bytes(ctx.cluster);
    p.memory = r.memory;
    p.peak_memory_stage = r.peak_memory_stage;
    p.communication_s = r.communication_s;
    p.time = r.time;
    p.power = r.power;
    p.microbatches = r.microbatches;
    p.interval = prediction_interval(ctx.band, p.tokens_per_s, p.step_time_s, p.mfu);
    add_memory_interval(p.interval, ctx.memory_band, p.peak_memory_bytes);
    if (!r.feasible && r.peak_memory_bytes <= ctx.cluster.gpu.memory_bytes) {
        char buf[256];
        std::snprintf(buf, sizeof buf,
            "out of host memory: the offloaded states and activations need %.0f GiB per node, a node of %s has "
            "%.0f GiB (cluster.host_memory_GB)",
            p.host_memory_bytes_per_node / units::kGiB,
            ctx.cluster.name.empty() ? "this cluster" : ctx.cluster.name.c_str(),
            p.host_capacity_bytes_per_node / units::kGiB);
        p.infeasible_reason = buf;
    } else if (!r.feasible) {
        char buf[256];
        std::snprintf(buf, sizeof buf, "out of memory: stage %d needs %.1f GiB per GPU, the %s has %.1f GiB",
            r.peak_memory_stage, r.peak_memory_bytes / units::kGiB, ctx.cluster.gpu.name.c_str(),
            ctx.cluster.gpu.memory_bytes / units::kGiB);
        p.infeasible_reason = buf;
    }
    return p;
}

// One pipeline stage's times, memory, clock and power at the evaluated (possibly thermal) clock.
StageReport stage_report(
    const PlanContext& ctx, const Strategy& s, const StrategyCosts& c, const AnalyticResult& r, int st)
{
    const PlanLayout& layout = *c.layout;
    StageReport rep;
    rep.stage = st;
    rep.layers = layout.stage[st].layers;
    rep.has_embedding = st == 0;
    rep.has_output = st == s.pp - 1;
    rep.in_flight_microbatches = static_cast<int>(std::ceil(in_flight_microbatches(s, st, r.microbatches)));
    double x = stage_clock(ctx.power, ctx.training, s.pp, st);
    if (r.power.thermal_clock > 0)
        x = std::min(x, r.power.thermal_clock);
    StagePower sp;
    const StageTiming t = timing_with_zero3(ctx, s, c, st, x, &sp);
    rep.forward_s = t.forward_s;
    rep.backward_s = t.backward_s;
    const auto by_variant = activations_by_variant(c);
    const CompositeLayers composite { &c.variants, by_variant.data() };
    rep.memory = stage_memory(ctx, s, layout, st, r.microbatches, c.layer.activations, c.ranges ? &composite : nullptr);
    rep.clock_MHz = ctx.power.clock_MHz(x);
    const StageTail tail = stage_tail(ctx, s, c, st);
    StageEnergyInputs in;
    in.step_s = r.step_time_s;
    in.microbatches = static_cast<double>(r.microbatches);
    in.optimizer_s = tail.optimizer_s;
    in.dp_comm_s = tail.grad_reduce_s + tail.param_gather_s;
    in.clock = x;
    rep.avg_W = stage_step_energy_J(ctx.power, sp, in) / r.step_time_s;
    rep.peak_W = std::max(sp.peak_W, rep.avg_W);
    return rep;
}

// Checkpoint size, and the MoE routing's imbalance and dropped tokens.
void add_checkpoint_and_moe_load(const PlanContext& ctx, const Strategy& s, Prediction& p)
{
    // Checkpoint: bf16 weights plus the optimizer's states (master weights and moments).
    const StateBytes sb = state_bytes(ctx.training, s);
    p.checkpoint_bytes = total_params(ctx.model) * (checkpoint_weight_bytes(ctx.training) + sb.optimizer);
    const MoeLoad load = moe_load(ctx.model, ctx.training, s.ep);
    p.moe_dropped_fraction = load.dropped_fraction;
    if (load.straggler_ratio > 1)
        p.warnings.push_back("MoE load imbalance: the busiest EP rank gets "
            + std::to_string(load.straggler_ratio).substr(0, 4)
            + "x its share of tokens and sets the pace of every MoE layer");
    if (load.dropped_fraction > 0)
        p.warnings.push_back("the capacity factor drops " + std::to_string(100 * load.dropped_fraction).substr(0, 4)
            + "% of the token-expert assignments");
}

void add_model_assumptions(const PlanContext& ctx, const Strategy& s, Prediction& p)
{
    p.assumptions.push_back("fidelity: analytic (closed-form pipeline formula over per-op costs)");
    p.assumptions.push_back(ctx.calibration.is_identity()
            ? "calibration: none (datasheet peaks x named per-generation efficiencies for "
                + std::string(to_string(ctx.cluster.gpu.architecture)) + ")"
            : "calibration: " + ctx.calibration.name + " (" + ctx.calibration.source + ")");
    if (!ctx.calibration_note.empty())
        p.warnings.push_back(ctx.calibration_note);
    p.assumptions.push_back("framework: " + std::string(to_string(ctx.training.framework)));
    p.assumptions.push_back(std::string("attention: ")
        + (ctx.training.flash_attention && !is_full_precision(ctx.training.precision) ? "fused (flash)" : "unfused"));
    p.assumptions.push_back(std::string("DP gradient reduction ")
        + (s.overlap_grad_reduce ? "overlapped with backward" : "after backward"));
    if (s.tp_comm_overlap)
        p.assumptions.push_back("TP communication overlapped with GEMMs (Transformer Engine userbuffers)");
}

// The power model's settings, and warnings when the power cap or the thermal limit slows the step.
void add_power_notes(const PlanContext& ctx, const Strategy& s, const AnalyticResult& r, Prediction& p)
{
    const PowerModel& pm = ctx.power;
    auto watts = [](double w) { return std::to_string(static_cast<long long>(std::lround(w))) + " W"; };
    std::string clock = pm.nominal_MHz > 0
        ? std::to_string(static_cast<long long>(std::lround(r.power.clock_MHz))) + " MHz"
        : std::to_string(static_cast<long long>(std::lround(100 * r.power.clock_MHz))) + "%";
    if (!uniform_stage_clocks(ctx.training, s.pp))
        clock += " (mean of the per-stage clocks)";
    p.assumptions.push_back("power: kernels at " + clock + ", capped at " + watts(pm.cap_W) + "; idle "
        + watts(pm.idle_W) + ", awake-idle " + watts(pm.wait_W) + " in bubbles and waits; node overhead "
        + watts(ctx.node_overhead_W) + " (power_model.hpp)");
    if (r.power.power_capped) {
        char pct[32];
        std::snprintf(pct, sizeof pct, "%.1f%%", 100 * r.power.cap_slowdown);
        p.warnings.push_back("the " + watts(pm.cap_W) + " power cap throttles the most power-hungry kernels: +"
            + std::string(pct) + " kernel time on the most affected stage");
    }
    if (r.power.thermal_clock > 0)
        p.warnings.push_back("thermal limit: at " + std::to_string(static_cast<int>(std::lround(pm.inlet_C)))
            + " C inlet the cooling sustains " + watts(r.power.thermal_limit_W) + " per GPU; the clock falls to "
            + std::to_string(static_cast<int>(std::lround(100 * r.power.thermal_clock))) + "% of nominal");
}

// Long context: how much context parallelism would make the plan fit (same GPUs, DP traded for CP).
std::optional<std::string> context_parallel_hint(const AnalyticModel& model, const Strategy& s, const PlanInputs& in)
{
    for (int k = 2; k <= 64; k *= 2) {
        if (s.dp % k != 0)
            break;
        Strategy t = s;
        t.cp = s.cp * k;
        t.dp = s.dp / k;
        if (check_strategy(in, t) != Rule::ok)
            continue;
        AnalyticResult alt;
        model.evaluate(t, alt);
        if (alt.feasible)
            return "context parallelism " + std::to_string(t.cp) + " (DP " + std::to_string(t.dp)
                + ") would fit this sequence length in memory";
    }
    return std::nullopt;
}

} // namespace

StageTiming stage_timing_at(
    const PlanContext& ctx, const Strategy& s, const StrategyCosts& c, int stage, double x, StagePower* power) noexcept
{
    return timing_with_zero3(ctx, s, c, stage, x, power);
}

double schedule_pipeline_time(const Strategy& s, double m, int p, double t_max, const StageTiming& crit_t,
    double sum_all, double sum_weight) noexcept
{
    PipelineTime pt;
    pt.t_max = t_max;
    pt.crit_t = crit_t;
    return schedule_time(s, m, p, pt, sum_all, sum_weight);
}

Prediction AnalyticModel::predict(const Strategy& s) const
{
    const PlanContext& ctx = m_ctx;
    AnalyticResult r;
    evaluate(s, r);
    Prediction p = prediction_of(ctx, r);
    EvaluationCache cache(ctx);
    StrategyCosts c;
    compute_costs(ctx, s, cache, c);
    for (int st = 0; st < s.pp; ++st)
        p.stages.push_back(stage_report(ctx, s, c, r, st));
    const PlanInputs in { ctx.model, ctx.training, ctx.cluster.gpu, ctx.cluster.total_gpus() };
    p.warnings = strategy_warnings(in, s);
    if (!r.feasible)
        p.warnings.push_back(p.infeasible_reason);
    add_checkpoint_and_moe_load(ctx, s, p);
    if (!r.feasible)
        if (auto hint = context_parallel_hint(*this, s, in))
            p.warnings.push_back(*hint);
    add_model_assumptions(ctx, s, p);
    if (s.schedule == Schedule::custom)
        p.assumptions.push_back("schedule program: pipeline time from its critical path (a list schedule of its "
                                "passes at each stage's pass times, sends free, W~ filling idle time); --fidelity "
                                "simulated runs it in the event simulator");
    add_power_notes(ctx, s, r, p);
    p.assumptions.push_back("FLOPs counted as Megatron-LM reports them (causal attention in full, no recompute)");
    return p;
}

} // namespace parallax

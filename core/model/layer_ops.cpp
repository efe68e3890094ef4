#include "model/layer_ops.hpp"

#include "model/model_math.hpp"

#include <algorithm>
#include <cmath>

namespace parallax {

const char* to_string(OpKind k)
{
    switch (k) {
    case OpKind::norm:
        return "norm";
    case OpKind::qkv_proj:
        return "qkv";
    case OpKind::attention:
        return "attention";
    case OpKind::out_proj:
        return "out_proj";
    case OpKind::residual:
        return "residual";
    case OpKind::mlp_up:
        return "mlp_up";
    case OpKind::activation:
        return "activation";
    case OpKind::mlp_down:
        return "mlp_down";
    case OpKind::router:
        return "router";
    case OpKind::expert_up:
        return "expert_up";
    case OpKind::expert_down:
        return "expert_down";
    case OpKind::fp8_cast:
        return "fp8_cast";
    case OpKind::embedding:
        return "embedding";
    case OpKind::logits:
        return "logits";
    case OpKind::loss:
        return "loss";
    case OpKind::tp_comm:
        return "tp_comm";
    case OpKind::cp_comm:
        return "cp_comm";
    case OpKind::ep_dispatch:
        return "ep_dispatch";
    case OpKind::ep_combine:
        return "ep_combine";
    case OpKind::expert_host:
        return "expert_host";
    case OpKind::tp_relayout:
        return "tp_relayout";
    case OpKind::cp_merge:
        return "cp_merge";
    case OpKind::rope:
        return "rope";
    case OpKind::expert_bias:
        return "expert_bias";
    case OpKind::host_wait:
        return "host_wait";
    }
    return "?";
}

double LayerTotals::exposed_fwd() const
{
    double t = 0;
    for (double v : comm_exposed_fwd_s)
        t += v;
    return t;
}

double LayerTotals::exposed_bwd() const
{
    double t = 0;
    for (double v : comm_exposed_bwd_s)
        t += v;
    return t;
}

void LayerTotals::add(const LayerTotals& o, double times)
{
    forward_s += o.forward_s * times;
    backward_input_s += o.backward_input_s * times;
    backward_weight_s += o.backward_weight_s * times;
    recompute_s += o.recompute_s * times;
    for (int i = 0; i < kOpStreamCount; ++i) {
        comm_busy_s[i] += o.comm_busy_s[i] * times;
        comm_exposed_fwd_s[i] += o.comm_exposed_fwd_s[i] * times;
        comm_exposed_bwd_s[i] += o.comm_exposed_bwd_s[i] * times;
    }
    flops += o.flops * times;
    recompute_flops += o.recompute_flops * times;
}

namespace {

// Activation element bytes come from the training precision (Shapes::act): bf16/fp16 activations are
// 2 bytes, fp32 ones 4 (element_bytes). The elementwise per-element traffic below is for 2-byte
// activations; Shapes::ew scales it to the actual element size.
constexpr double kHalfActivationBytes = 2.0;
constexpr double kMaskBytes = 1.0; // dropout masks are bytes (Korthikanti et al. 2022, Sec. 4.1)
constexpr double kFp32Bytes = 4.0;
// Elementwise HBM traffic per element in bytes, forward (read inputs + write output), as the fused
// Megatron / Transformer Engine kernels do it.
constexpr double kNormBytesPerElement = 4.0; // read x, write y (bf16)
constexpr double kResidualBytesPerElement = 6.0; // read x and residual, write the sum
constexpr double kDropoutExtraBytesPerElement = 1.0; // write the mask
constexpr double kGeluBytesPerElement = 4.0; // read, write
constexpr double kSwigluBytesPerElement = 3.0; // per input element: read gate and up, write half as many
// Backward elementwise kernels read the saved input and the incoming gradient and write a gradient:
// about twice the forward traffic.
constexpr double kBackwardTrafficFactor = 2.0;
// Megatron-core's unfused rotary embedding (_apply_rotary_pos_emb_bshd, rope_utils.py) on a bf16 element of
// Q or K, forward: t*cos (r2 w2), -x2 of rotate_half (r1 w1), its cat (r2 w2), *sin (r2 w2), the add (r4 w2)
// and the cat with the (empty) pass-through part (r2 w2). Backward: the two products' gradients (r2 w2
// each), the neg's (r1 w1), chunk's cat (r2 w2) and their sum (r4 w2).
constexpr double kUnfusedRopeFwdBytesPerElement = 24;
constexpr double kUnfusedRopeBwdBytesPerElement = 20;
// Megatron-core's eager expert FC2 bias (TEGroupedMLP._apply_bias: t + b * p per expert with fp32 routing
// probabilities, concatenated, cast back), bytes per element of the routed rows x hidden. Forward: b * p
// writes fp32 (4), the add reads bf16 and fp32 and writes fp32 (10), the concatenation copies fp32 (8), the
// cast reads fp32 and writes bf16 (6). Backward: the cast's gradient to fp32 (6), the add's to bf16 for t
// (6), and the bias's and the probabilities' gradients, each a product and a reduction in fp32 (12 + 12).
constexpr double kEagerExpertBiasFwdBytesPerElement = 28;
constexpr double kEagerExpertBiasBwdBytesPerElement = 36;
// MoE token permutation (gather rows into expert order and back): read + write per element.
constexpr double kPermuteBytesPerElement = 4.0;
// Expert GEMMs per local expert: forward FC1 and FC2; backward their dgrad and wgrad.
constexpr double kExpertGemmsForward = 2;
constexpr double kExpertGemmsBackwardPerForward = 2;
// Kernels the host issues per forward expert GEMM: the GEMM, and in fp8 the quantisation of its two
// operands. Per-tensor current scaling runs three kernels per operand (amax, scale, cast-transpose:
// Transformer Engine Float8CurrentScaling); delayed, MX and blockwise scaling one fused quantise
// kernel each; torchao rowwise two (row amax, cast).
double launches_per_expert_gemm(bool fp8, Fp8Scaling scaling)
{
    if (!fp8)
        return 1;
    switch (scaling) {
    case Fp8Scaling::tensorwise:
        return 1 + 2 * 3;
    case Fp8Scaling::rowwise:
        return 1 + 2 * 2;
    case Fp8Scaling::delayed:
    case Fp8Scaling::mxfp8:
    case Fp8Scaling::blockwise:
        return 1 + 2 * 1;
    }
    return 1;
}

// Host time of each quantisation kernel a grouped GEMM issues from C++ beside it: a bare back-to-back
// kernel launch, ~3.8 us (NVIDIA developer blog "Getting Started with CUDA Graphs", 2019), not the
// ~20 us of a module call.
constexpr double kQuantiseLaunchHostSeconds = 3.8e-6;

// Host time to issue one micro-batch's forward expert GEMMs of a rank: per local expert, each GEMM and its
// quantisation kernels, these at a module call's cost each or, issued from C++, a bare launch's.
double expert_host_s(const LayerContext& c, bool fp8)
{
    const double quantisations = launches_per_expert_gemm(fp8, c.training->fp8_scaling) - 1;
    const double quantise_s
        = c.traits.expert_quantise_in_cpp ? kQuantiseLaunchHostSeconds : c.traits.expert_gemm_host_s;
    const double local_experts = static_cast<double>(c.model->moe->experts) / c.strategy->ep;
    return local_experts * kExpertGemmsForward * (c.traits.expert_gemm_host_s + quantisations * quantise_s);
}
// HBM bytes per element a quantisation moves besides the cast itself (read 2, write 1) and its
// transposed or column-wise copy: current scaling's separate amax pass reads the input once more
// (torchao rowwise likewise per row); MX and blockwise recipes write one scale per 32 or 128 elements
// for each of the two copies.
double fp8_scaling_extra_bytes_per_element(Fp8Scaling scaling)
{
    switch (scaling) {
    case Fp8Scaling::tensorwise:
    case Fp8Scaling::rowwise:
        return 2.0;
    case Fp8Scaling::mxfp8:
        return 2.0 / 32;
    case Fp8Scaling::blockwise:
        return 2.0 / 128;
    case Fp8Scaling::delayed:
        return 0.0;
    }
    return 0.0;
}

// Cross-node copies of a token routed to k experts spread uniformly over g nodes, relative to sending
// every token-expert pair: a DeepEP-style dispatcher sends a token once per destination node,
// (g-1)(1-(1-1/g)^k) copies instead of k(g-1)/g (DeepSeek-V3 report Sec. 3.2.2; DeepEP README).
double node_dedup_ratio(double nodes, double top_k)
{
    if (nodes <= 1 || top_k <= 1)
        return 1.0;
    return nodes * (1.0 - std::pow(1.0 - 1.0 / nodes, top_k)) / top_k;
}
// The transposed fp8 copy Transformer Engine's cast_transpose (and torchao's float8 casts) write next
// to the row-major one: one more byte per element (TE transformer_engine/common/transpose).
constexpr double kFp8TransposedCopyBytes = 1.0;

// Passes over the s x s score matrix (reads plus writes, in elements) of the unfused attention's
// elementwise kernels, the two batched GEMMs aside. Megatron's fused scale-mask-softmax kernel takes
// 16-bit scores only (FusedScaleMaskSoftmax.is_kernel_available: input_in_float16): forward read and
// write once, backward about twice the forward's time (kBackwardTrafficFactor; backward 0 below). With fp32 scores it
// falls back to PyTorch ops (forward_torch_softmax): masked_fill_ in place (read, write), then softmax (read, write:
// rows of 2,048 fp32 fit the shared-memory kernel, cunn_SoftMaxForwardSmem). Backward: softmax's reads
// the output and its gradient twice, once for the row sum and once to write the input gradient
// (cunn_SoftMaxBackward, aten/src/ATen/native/cuda/SoftMax.cu): 5 passes; the masked_fill_'s autograd
// reaches through CopySlices, because the fill is in place on a view of the baddbmm output
// (attention_scores = matmul_result.view(...)): copy the gradient into a fresh base, clone the view's
// slice, zero its masked entries, copy the result back: 8 passes (torch/csrc/autograd/functions/
// tensor.cpp, CopySlices::apply; megatron/model/fused_softmax.py and utils.py attention_mask_func).
struct ScorePasses {
    double forward, backward; // backward 0: kBackwardTrafficFactor times the forward's time
    double hbm_efficiency; // of the datasheet bandwidth; 0: the generation's streaming efficiency
};

// PyTorch's masked_fill_ (a broadcast [1, 1, s, s] mask: TensorIterator's non-vectorised path) and its
// row softmax kernels stream at 0.54-0.71 of the datasheet bandwidth forward and 0.59-0.65 backward where
// Sailor's artifact profiles them op by op in fp32 at micro-batch 4 and sequence 2,048 on GH200, A100-40GB,
// RTX 3090 and Titan RTX (Aceso profiler, eth-easl/sailor@cf2c8e3 sailor/Planner/baselines/Aceso/profiler/
// <gpu>/profiled-data-fp32/OPT-350_mbs4_tp1_algo0.csv, enc-attention-softmax: Megatron's scale multiply,
// masked_fill_ and softmax, 6 passes forward and 9 backward), against 0.7-0.9 for the batched GEMMs and
// the dropout kernel on the same tensor in the same files.
constexpr double kTorchScoreKernelHbmEfficiency = 0.6;

ScorePasses score_passes(bool full_precision)
{
    constexpr ScorePasses kFused { 2, 0, 0 };
    constexpr ScorePasses kTorchFp32 { 2 + 2, 5 + 8, kTorchScoreKernelHbmEfficiency };
    return full_precision ? kTorchFp32 : kFused;
}

double score_pass_time_s(const ComputeDevice& dev, const ScorePasses& passes, double bytes)
{
    if (passes.hbm_efficiency <= 0)
        return memory_bound_time_s(dev, bytes);
    return bytes / (dev.gpu->memory_bw_Bps * passes.hbm_efficiency * dev.kernel_scale) + dev.gen->kernel_overhead_s;
}

struct Shapes {
    double b, seq, cp, t, tokens, tokens_ew, h, q, kv, vdim, heads_local;
    bool sp, flash, dropout, gated, fp8;
    Precision p;
    double act; // bytes of one activation element: bf16/fp16 (and fp8 training's bf16 activations) 2, fp32 4
    double ew; // elementwise traffic relative to 2-byte activations
};

Shapes shapes_of(const LayerContext& c)
{
    const ModelSpec& m = *c.model;
    const Strategy& s = *c.strategy;
    Shapes x {};
    x.b = s.micro_batch;
    x.seq = static_cast<double>(c.training->seq_len);
    x.cp = s.cp;
    x.t = s.tp;
    x.tokens = x.b * x.seq / x.cp;
    x.sp = s.sequence_parallel && s.tp > 1;
    x.tokens_ew = x.sp ? x.tokens / x.t : x.tokens;
    x.h = static_cast<double>(m.hidden);
    x.q = query_dim(m);
    x.kv = kv_dim(m);
    x.vdim = attention_value_dim(m);
    x.heads_local = static_cast<double>(m.heads) / x.t;
    // Without a fused kernel for learned sinks the framework runs the unfused attention (TE < 2.8:
    // Megatron-Bridge GPTOSSProvider falls back to Megatron-core's local attention).
    // FlashAttention kernels take fp16/bf16 only (flash-attn README; PyTorch's flash SDPA backend): fp32
    // training runs the unfused attention whatever flash_attention says.
    x.flash = c.training->flash_attention && (!m.attention_sinks || c.traits.fused_attention_sinks)
        && !is_full_precision(c.training->precision);
    x.dropout = m.has_dropout();
    x.gated = m.ffn_act == FfnActivation::swiglu;
    x.p = c.training->precision;
    x.fp8 = x.p == Precision::fp8 || x.p == Precision::fp4;
    x.act = activation_element_bytes(x.p);
    x.ew = x.act / kHalfActivationBytes;
    return x;
}

struct AttentionCost {
    double fwd_s = 0, bwd_s = 0, fwd_flops = 0, bwd_flops = 0, bytes = 0;
};

class Builder {
public:
    Builder(const LayerContext& c, LayerOps& out)
        : m_c(c)
        , m_out(out)
        , m_x(shapes_of(c))
    {
    }

    const Shapes& x() const { return m_x; }
    const LayerContext& ctx() const { return m_c; }
    LayerOps& out() { return m_out; }

    int gemm(OpKind k, OpPhase ph, double M, double N, double K, double batch = 1, bool entry = false)
    {
        // Megatron/NeMo's fp8 recipes keep the output layer (logits) in bf16; the transformer layers'
        // GEMMs run in fp8 (Transformer Engine fp8_autocast covers the layers only).
        const bool low_precision = m_x.fp8 && k != OpKind::logits;
        const Precision p = low_precision ? m_x.p : (m_x.fp8 ? Precision::bf16 : m_x.p);
        if (low_precision && ph != OpPhase::backward_weight) {
            // Transformer Engine casts the GEMM's activation input (the output gradient for the
            // data-gradient GEMM) to fp8, read bf16 and write fp8, with a transposed fp8 copy for the
            // weight-gradient GEMM (TE's fused cast-transpose; Hopper's fp8 tensor cores take K-major
            // operands only).
            mem(OpKind::fp8_cast, ph,
                batch * M * K
                    * (m_c.device.gen->fp8_cast_bytes_per_element + kFp8TransposedCopyBytes
                        + fp8_scaling_extra_bytes_per_element(m_c.training->fp8_scaling)));
        }
        LayerOp o;
        o.kind = k;
        o.phase = ph;
        o.stream = OpStream::compute;
        o.flops = 2 * M * N * K * batch;
        // Expert GEMMs: one kernel per local expert (TE GroupedLinear); others one kernel for the batch.
        const bool per_expert = k == OpKind::expert_up || k == OpKind::expert_down;
        o.time_s = per_expert ? per_expert_gemm_time_s(m_c.device, M, N, K, p, batch)
                              : gemm_time_s(m_c.device, M, N, K, p, batch);
        o.bytes = batch * (element_bytes(p) * (M * K + K * N) + m_x.act * M * N);
        o.column_parallel_entry = entry;
        o.m = static_cast<float>(M);
        o.n = static_cast<float>(N);
        o.k = static_cast<float>(K);
        o.batch = static_cast<float>(batch);
        return m_out.add(o);
    }

    int mem(OpKind k, OpPhase ph, double bytes)
    {
        if (k == OpKind::norm || k == OpKind::residual || k == OpKind::activation)
            bytes *= m_c.traits.elementwise_traffic_factor; // unfused frameworks move more bytes
        LayerOp o;
        o.kind = k;
        o.phase = ph;
        o.stream = OpStream::compute;
        o.bytes = bytes;
        o.time_s = memory_bound_time_s(m_c.device, bytes);
        return m_out.add(o);
    }

    // The forward ops [begin, count) just emitted are submodule `m` (at most two pieces per module, the
    // layer's two norms): what Megatron's selective recomputation by module copies into the recompute phase.
    struct Span {
        int begin = 0, end = 0;
    };
    struct Spans {
        std::array<Span, 2> piece {};
        int count = 0;
    };
    void span(RecomputeModule m, OpPhase ph, int begin)
    {
        Spans& s = m_spans[static_cast<int>(m)];
        if (ph == OpPhase::forward && s.count < static_cast<int>(s.piece.size()))
            s.piece[s.count++] = { begin, m_out.count };
    }
    const Spans& spans(RecomputeModule m) const { return m_spans[static_cast<int>(m)]; }

    int compute(OpKind k, OpPhase ph, double seconds, double flops, double bytes)
    {
        LayerOp o;
        o.kind = k;
        o.phase = ph;
        o.stream = OpStream::compute;
        o.time_s = seconds;
        o.flops = flops;
        o.bytes = bytes;
        return m_out.add(o);
    }

    // `repeat` identical transfers back to back (ring steps).
    const GroupPlacement& placement(CommGroup g) const
    {
        switch (g) {
        case CommGroup::cp:
            return m_c.cp_group;
        case CommGroup::ep:
            return m_c.ep_group;
        case CommGroup::expert_tp:
            return m_c.expert_tp_group;
        default:
            return m_c.tp_group;
        }
    }

    int comm(OpKind k, OpPhase ph, OpStream st, Collective coll, double bytes, CommGroup group, int overlaps,
        double repeat = 1)
    {
        const GroupPlacement& g = placement(group);
        if (g.size <= 1 || bytes <= 0 || repeat <= 0)
            return -1;
        LayerOp o;
        o.kind = k;
        o.phase = ph;
        o.stream = st;
        o.collective = coll;
        o.group = group;
        o.bytes = bytes * repeat;
        o.time_s = collective_time_s(m_c.network, coll, bytes, g) * repeat;
        o.overlaps = static_cast<short>(overlaps);
        return m_out.add(o);
    }

    AttentionCost attention() const
    {
        const ModelSpec& m = *m_c.model;
        const ComputeDevice& dev = m_c.device;
        const double qk_hd = m_x.q / m.heads;
        const double v_hd = m_x.vdim / m.heads;
        const double batch_heads = m_x.b * m_x.heads_local;
        const double q_len = m_x.seq / m_x.cp;
        const double kv_len = m_x.seq;
        AttentionCost a;
        if (m_x.flash) {
            a.fwd_s = flash_attention_fwd_s(dev, batch_heads, q_len, kv_len, qk_hd, v_hd, true, &a.fwd_flops);
            a.bwd_s = flash_attention_bwd_s(dev, batch_heads, q_len, kv_len, qk_hd, v_hd, true, &a.bwd_flops);
            // Sliding-window layers: the op list stands for every layer of its kind, so it carries the
            // layers' average, windowed layers at the banded kernel's cost (GPT-OSS: half the layers).
            const double windowed = m.windowed_layer_fraction();
            if (windowed > 0 && m_x.cp <= 1) {
                const double w = static_cast<double>(m.sliding_window);
                double wf = 0, wb = 0;
                const double fs = flash_attention_windowed_fwd_s(dev, batch_heads, q_len, w, qk_hd, v_hd, &wf);
                const double bs = flash_attention_windowed_bwd_s(dev, batch_heads, q_len, w, qk_hd, v_hd, &wb);
                a.fwd_s = (1 - windowed) * a.fwd_s + windowed * fs;
                a.bwd_s = (1 - windowed) * a.bwd_s + windowed * bs;
                a.fwd_flops = (1 - windowed) * a.fwd_flops + windowed * wf;
                a.bwd_flops = (1 - windowed) * a.bwd_flops + windowed * wb;
            }
            return a;
        }
        // Unfused attention (Megatron before flash attention): QK^T and PV as batched GEMMs over the
        // full score matrix, plus scale-mask-softmax and dropout on it.
        const Precision p = is_full_precision(m_x.p) ? m_x.p : dev.half_precision();
        const double scores = batch_heads * q_len * kv_len;
        const double qk = gemm_time_s(dev, q_len, kv_len, qk_hd, p, batch_heads);
        const double pv = gemm_time_s(dev, q_len, v_hd, kv_len, p, batch_heads);
        const ScorePasses passes = score_passes(is_full_precision(m_x.p));
        const double softmax_bytes = scores * passes.forward * m_x.act;
        const double dropout_bytes = m_x.dropout ? scores * (2 * m_x.act + kMaskBytes) : 0;
        const double dropout_s = m_x.dropout ? memory_bound_time_s(dev, dropout_bytes) : 0;
        a.fwd_flops = 2 * scores * (qk_hd + v_hd);
        const double ew = score_pass_time_s(dev, passes, softmax_bytes) + dropout_s;
        a.fwd_s = qk + pv + ew;
        a.bytes = softmax_bytes + dropout_bytes;
        // dP = dO V^T, dV = P^T dO, dQ = dS K, dK = dS^T Q, and the softmax/mask/dropout backward.
        const double bwd_gemm = gemm_time_s(dev, q_len, kv_len, v_hd, p, batch_heads)
            + gemm_time_s(dev, kv_len, v_hd, q_len, p, batch_heads)
            + gemm_time_s(dev, q_len, qk_hd, kv_len, p, batch_heads)
            + gemm_time_s(dev, kv_len, qk_hd, q_len, p, batch_heads);
        a.bwd_flops = 2 * a.fwd_flops;
        a.bwd_s = passes.backward > 0 ? bwd_gemm + score_pass_time_s(dev, passes, scores * passes.backward * m_x.act)
                + kBackwardTrafficFactor * dropout_s
                                      : bwd_gemm + kBackwardTrafficFactor * ew;
        return a;
    }

private:
    const LayerContext& m_c;
    LayerOps& m_out;
    Shapes m_x;
    std::array<Spans, kRecomputeModuleCount> m_spans {};
};

// Fraction of a GEMM that hides the TP collective it is decomposed with: the GEMM runs in tp pieces
// as the shards arrive (all-gather) or leave (reduce-scatter), and the first (last) piece has no
// transfer left to hide (Wang et al. 2023, "Overlap Communication with Dependent Computation via
// Decomposition in Large Deep Learning Models", ASPLOS; TE userbuffers' ring exchange).
double decomposed_overlap_fraction(double tp)
{
    return tp > 1 ? (tp - 1) / tp : 0.0;
}

void overlap_with(Builder& b, int comm, int op, double fraction)
{
    if (comm < 0 || op < 0)
        return;
    LayerOp& c = b.out().op[comm];
    c.overlaps = static_cast<short>(op);
    c.overlap_fraction = static_cast<float>(fraction);
}

// DTensor's re-layout around a sequence-parallel collective that is not fused into a matmul: one read
// and one write of the activation (SoftwareTraits::tp_relayout_copies).
void tp_relayout(Builder& b, OpPhase ph, double bytes)
{
    if (b.ctx().traits.tp_relayout_copies && b.x().sp)
        b.mem(OpKind::tp_relayout, ph, 2 * bytes);
}

double tp_activation_bytes(const Shapes& x)
{
    return x.tokens * x.h * x.act;
}

// Tensor-parallel collectives around a block (Megatron's f/g operators): with sequence parallelism
// an all-gather before the first GEMM and a reduce-scatter after the last; without it an all-reduce
// after the last (the backward all-reduce of f is emitted by the backward pass). tp_entry returns the
// all-gather; tp_entry_gemm ties it to the column-parallel GEMM that consumes it.
int tp_entry(Builder& b, OpPhase ph, CommGroup g)
{
    const Shapes& x = b.x();
    if (!x.sp)
        return -1;
    return b.comm(OpKind::tp_comm, ph, OpStream::tp, Collective::all_gather, tp_activation_bytes(x), g, -1);
}

void tp_entry_gemm(Builder& b, OpPhase ph, int gather, int gemm)
{
    if (gather < 0)
        return;
    if (b.ctx().strategy->tp_comm_overlap)
        overlap_with(b, gather, gemm, decomposed_overlap_fraction(b.x().t));
    else
        tp_relayout(b, ph, tp_activation_bytes(b.x()));
}

void tp_exit(Builder& b, OpPhase ph, int gemm, CommGroup g)
{
    const Shapes& x = b.x();
    const bool overlap = b.ctx().strategy->tp_comm_overlap;
    const int c = b.comm(OpKind::tp_comm, ph, OpStream::tp, x.sp ? Collective::reduce_scatter : Collective::all_reduce,
        tp_activation_bytes(x), g, -1);
    if (c < 0)
        return;
    if (overlap)
        overlap_with(b, c, gemm, decomposed_overlap_fraction(x.t));
    else
        tp_relayout(b, ph, tp_activation_bytes(x));
}

// Elements of this rank's queries (micro-batch x local sequence x local query width), and the bytes of
// its K/V chunk as the ring passes it on: at the K/V head count, or expanded to the query heads where
// the framework repeats K/V before the attention kernel (torchtitan's repeat_kv).
double cp_query_elements(const Shapes& x)
{
    return x.b * (x.seq / x.cp) * x.q / x.t;
}

double cp_kv_chunk_bytes(const Shapes& x, const SoftwareTraits& t)
{
    return x.b * (x.seq / x.cp) * 2 * (t.cp_kv_at_query_heads ? x.q : x.kv) / x.t * x.act;
}

void emit_attention_core(Builder& b, OpPhase ph)
{
    const Shapes& x = b.x();
    const LayerContext& c = b.ctx();
    const Strategy& s = *c.strategy;
    if (s.cp > 1 && s.cp_kind == CpKind::all_to_all)
        b.comm(OpKind::cp_comm, ph, OpStream::cp, Collective::all_to_all, x.tokens * (x.q + 2 * x.kv) / x.t * x.act,
            CommGroup::cp, -1);
    const AttentionCost a = b.attention();
    const int att = b.compute(OpKind::attention, ph, a.fwd_s, a.fwd_flops, a.bytes);
    if (s.cp > 1 && s.cp_kind == CpKind::ring) {
        const double chunk = cp_kv_chunk_bytes(x, c.traits);
        if (c.traits.cp_kv_all_gather) {
            // PyTorch's ring attention (torch.distributed.tensor.experimental._attention, rotate method
            // ALL_GATHER by default): one all-gather of every rank's K/V, waited for after the first
            // (diagonal) step, which is all it can hide behind; traced into a compiled graph, waited for
            // before it (SoftwareTraits::cp_comm_waited_at_issue).
            const int ag
                = b.comm(OpKind::cp_comm, ph, OpStream::cp, Collective::all_gather, chunk * x.cp, CommGroup::cp, -1);
            if (!c.traits.cp_comm_waited_at_issue)
                overlap_with(b, ag, att, 1.0 / x.cp);
        } else {
            // Ring attention: cp-1 steps, each passing this rank's K and V chunk on while the current
            // chunk's attention runs (Megatron / Transformer Engine context parallelism).
            b.comm(OpKind::cp_comm, ph, OpStream::cp, Collective::send_recv, chunk, CommGroup::cp, att, x.cp - 1);
        }
        // Each of the cp-1 later steps rescales the running output by the new log-sum-exp.
        b.mem(OpKind::cp_merge, ph, (x.cp - 1) * cp_query_elements(x) * c.traits.cp_merge_fwd_bytes_per_query);
    }
    if (s.cp > 1 && s.cp_kind == CpKind::all_to_all)
        b.comm(OpKind::cp_comm, ph, OpStream::cp, Collective::all_to_all, x.tokens * x.vdim / x.t * x.act,
            CommGroup::cp, -1);
}

void emit_attention_block(Builder& b, OpPhase ph)
{
    const Shapes& x = b.x();
    const LayerContext& c = b.ctx();
    const ModelSpec& m = *c.model;
    const int norm = b.out().count;
    b.mem(OpKind::norm, ph, x.tokens_ew * x.h * kNormBytesPerElement * x.ew);
    b.span(RecomputeModule::layernorm, ph, norm);
    const int gather = tp_entry(b, ph, CommGroup::tp);
    const int first_gemm = b.out().count + (x.fp8 ? 1 : 0); // the next GEMM (after its fp8 cast)
    if (m.mla) {
        // MLA (DeepSeek-V2 Sec. 2.1): the down-projections are replicated across TP ranks, the
        // up-projections split by heads.
        const MlaSpec& a = *m.mla;
        const double heads = m.heads;
        if (a.q_lora_rank > 0) {
            b.gemm(OpKind::qkv_proj, ph, x.tokens, a.q_lora_rank, x.h, 1, true);
            const int q_up = b.out().count;
            b.gemm(
                OpKind::qkv_proj, ph, x.tokens, heads * (a.qk_nope_head_dim + a.qk_rope_head_dim) / x.t, a.q_lora_rank);
            b.span(RecomputeModule::mla_up_proj, ph, q_up);
        } else {
            b.gemm(OpKind::qkv_proj, ph, x.tokens, x.q / x.t, x.h, 1, true);
        }
        b.gemm(OpKind::qkv_proj, ph, x.tokens, a.kv_lora_rank + a.qk_rope_head_dim, x.h);
        const int kv_up = b.out().count;
        b.gemm(OpKind::qkv_proj, ph, x.tokens, heads * (a.qk_nope_head_dim + a.v_head_dim) / x.t, a.kv_lora_rank);
        b.span(RecomputeModule::mla_up_proj, ph, kv_up);
    } else {
        b.gemm(OpKind::qkv_proj, ph, x.tokens, (x.q + 2 * x.kv) / x.t, x.h, 1, true);
    }
    tp_entry_gemm(b, ph, gather, first_gemm);
    // RoPE on this rank's Q and K heads; the fused kernel's pass (and MLA's) is not costed.
    if (m.yarn_rope && !m.mla && c.traits.unfused_yarn_rope)
        b.mem(OpKind::rope, ph, x.tokens * (x.q + x.kv) / x.t * kUnfusedRopeFwdBytesPerElement * x.ew);
    emit_attention_core(b, ph);
    const int out = b.gemm(OpKind::out_proj, ph, x.tokens, x.h, x.vdim / x.t);
    tp_exit(b, ph, out, CommGroup::tp);
    b.mem(OpKind::residual, ph,
        x.tokens_ew * x.h * (kResidualBytesPerElement * x.ew + (x.dropout ? kDropoutExtraBytesPerElement : 0)));
}

void emit_dense_mlp(Builder& b, OpPhase ph, double ffn)
{
    const Shapes& x = b.x();
    const double f = ffn / x.t;
    const int gather = tp_entry(b, ph, CommGroup::tp);
    const int up = b.gemm(OpKind::mlp_up, ph, x.tokens, f * (x.gated ? 2 : 1), x.h, 1, true);
    tp_entry_gemm(b, ph, gather, up);
    b.mem(OpKind::activation, ph, x.tokens * f * (x.gated ? 2 * kSwigluBytesPerElement : kGeluBytesPerElement) * x.ew);
    const int down = b.gemm(OpKind::mlp_down, ph, x.tokens, x.h, f);
    tp_exit(b, ph, down, CommGroup::tp);
}

// Megatron-core's all-to-all dispatcher receives the tokens grouped by source rank and regroups them
// by local expert before the grouped GEMM, and back before the combine (MoEAlltoAllTokenDispatcher,
// sort_chunks_by_idxs, when EP > 1 and a rank holds more than one expert): one more read and write of
// every received row each way. DeepEP / HybridEP write the rows in expert order as they arrive.
bool alltoall_chunk_sort(const LayerContext& c, bool deepep)
{
    const MoeSpec& e = *c.model->moe;
    return !deepep && c.strategy->ep > 1 && e.experts > c.strategy->ep;
}

// GPU time of the ops of one phase emitted so far.
double phase_time_s(const LayerOps& ops, OpPhase ph)
{
    double t = 0;
    for (int i = 0; i < ops.count; ++i)
        if (ops.op[i].phase == ph)
            t += ops.op[i].time_s;
    return t;
}

// Tile-level overlap of an expert all-to-all with the grouped GEMM that consumes (or produces) its tokens
// (Comet, Zhang et al. MLSys 2025; Flux's moe_ag_scatter / moe_gather_rs kernels): the GEMM's row tiles are
// scheduled by source rank, the rank's own tokens first, so the other EP ranks' pieces arrive (leave)
// under the tiles before them; as the TP tile overlap, (ep-1)/ep of the GEMM covers the transfer.
void ep_tile_overlap(Builder& b, int comm, int gemm)
{
    if (b.ctx().strategy->ep_tile_overlap)
        overlap_with(b, comm, gemm, decomposed_overlap_fraction(b.ctx().strategy->ep));
}

void emit_mlp_block(Builder& b, OpPhase ph, bool moe)
{
    const Shapes& x = b.x();
    const LayerContext& c = b.ctx();
    const ModelSpec& m = *c.model;
    const Strategy& s = *c.strategy;
    const int norm = b.out().count;
    b.mem(OpKind::norm, ph, x.tokens_ew * x.h * kNormBytesPerElement * x.ew);
    b.span(RecomputeModule::layernorm, ph, norm);
    const int block = b.out().count;
    if (!moe) {
        emit_dense_mlp(b, ph, static_cast<double>(m.ffn_hidden));
        b.span(RecomputeModule::mlp, ph, block);
    } else {
        const MoeSpec& e = *m.moe;
        // With SP the MoE input is already split over the TP ranks (Megatron-core token dispatcher).
        const double tokens = x.tokens_ew;
        const double etp = s.effective_expert_tp();
        b.gemm(OpKind::router, ph, tokens, e.experts, x.h);
        b.mem(OpKind::router, ph, tokens * e.experts * 3 * kFp32Bytes); // softmax + top-k in fp32
        // Token-expert assignments this rank sends; the busiest rank also receives `straggler` times its
        // share, and every rank waits for it at the combine.
        const double routed = tokens * e.top_k;
        const double straggler = c.moe_straggler;
        const bool deepep = c.training->moe_dispatcher == MoeDispatcher::deepep;
        const Collective a2a = deepep ? Collective::all_to_all_rdma : Collective::all_to_all;
        const double a2a_scale = straggler * (deepep ? node_dedup_ratio(c.ep_group.nodes, e.top_k) : 1.0);
        b.mem(OpKind::ep_dispatch, ph, routed * x.h * kPermuteBytesPerElement * x.ew);
        const int dispatch
            = b.comm(OpKind::ep_dispatch, ph, OpStream::ep, a2a, routed * a2a_scale * x.h * x.act, CommGroup::ep, -1);
        const bool chunk_sort = alltoall_chunk_sort(c, deepep);
        if (chunk_sort)
            b.mem(OpKind::ep_dispatch, ph, routed * straggler * x.h * kPermuteBytesPerElement * x.ew);
        if (etp > 1)
            b.comm(OpKind::tp_comm, ph, OpStream::tp, Collective::all_gather, routed * x.h * x.act * etp,
                CommGroup::expert_tp, -1);
        // Balanced routing: each local expert sees routed*ep/experts rows (x etp after the gather).
        const double local_experts = static_cast<double>(e.experts) / s.ep;
        const double rows = routed * straggler * s.ep / e.experts * etp;
        const double fe = static_cast<double>(e.expert_ffn_hidden) / etp;
        const int up = b.gemm(OpKind::expert_up, ph, rows, fe * (x.gated ? 2 : 1), x.h, local_experts);
        ep_tile_overlap(b, dispatch, up);
        const int act = b.out().count;
        b.mem(OpKind::activation, ph,
            rows * local_experts * fe * (x.gated ? 2 * kSwigluBytesPerElement : kGeluBytesPerElement) * x.ew);
        b.span(RecomputeModule::moe_act, ph, act);
        const int down = b.gemm(OpKind::expert_down, ph, rows, x.h, fe, local_experts);
        // Whole-iteration graphs run the experts through Transformer Engine's op fuser (the recipes that
        // capture them set use_transformer_engine_op_fuser), which fuses the bias.
        if (m.expert_bias && c.traits.eager_expert_bias && c.training->cuda_graphs != CudaGraphs::full_iteration)
            b.mem(OpKind::expert_bias, ph, rows * local_experts * x.h * kEagerExpertBiasFwdBytesPerElement * x.ew);
        // Dropless routing copies the token counts to the host before the expert GEMMs can be sized, so
        // the host issues the per-expert kernels while the GPU waits; with a capacity factor the shapes
        // are static and the host runs ahead, exposing only what the layer's GPU work so far does not
        // cover. Captured whole-iteration CUDA graphs (sync-free MoE) issue nothing at run time.
        const double host = c.training->cuda_graphs == CudaGraphs::full_iteration ? 0.0 : expert_host_s(c, x.fp8);
        if (host > 0) {
            const double waited = e.capacity_factor ? std::max(0.0, host - phase_time_s(b.out(), ph)) : host;
            if (waited > 0)
                b.compute(OpKind::expert_host, ph, waited, 0, 0);
        }
        if (etp > 1)
            b.comm(OpKind::tp_comm, ph, OpStream::tp, Collective::reduce_scatter, routed * x.h * x.act * etp,
                CommGroup::expert_tp, -1);
        if (chunk_sort)
            b.mem(OpKind::ep_combine, ph, routed * straggler * x.h * kPermuteBytesPerElement * x.ew);
        const int combine
            = b.comm(OpKind::ep_combine, ph, OpStream::ep, a2a, routed * a2a_scale * x.h * x.act, CommGroup::ep, -1);
        ep_tile_overlap(b, combine, down);
        b.mem(OpKind::ep_combine, ph, routed * x.h * kPermuteBytesPerElement * x.ew);
        if (e.shared_experts > 0) {
            const int shared = b.out().count;
            emit_dense_mlp(b, ph, static_cast<double>(e.shared_experts) * static_cast<double>(e.expert_ffn_hidden));
            b.span(RecomputeModule::shared_experts, ph, shared);
        }
        b.span(RecomputeModule::moe, ph, block);
    }
    b.mem(OpKind::residual, ph,
        x.tokens_ew * x.h * (kResidualBytesPerElement * x.ew + (x.dropout ? kDropoutExtraBytesPerElement : 0)));
}

// The backward of the forward ops [begin, end), in reverse order: each GEMM becomes dgrad (B) then
// wgrad (W); attention its backward; memory-bound ops about twice their traffic; collectives their
// transposes. Megatron overlaps the input-gradient all-reduce (reduce-scatter with SP) of a
// column-parallel GEMM with that GEMM's weight gradient.
// The backward of a forward op list, walked in reverse: what each forward op costs backwards, and the
// collectives that wait for the GEMM or attention backward they hide under.
class BackwardEmitter {
public:
    explicit BackwardEmitter(Builder& b)
        : b_(b)
        , x_(b.x())
        , c_(b.ctx())
        , s_(*c_.strategy)
    {
    }

    void emit(const LayerOp& f)
    {
        switch (f.kind) {
        case OpKind::tp_comm:
            tp_comm(f);
            break; // a forward all-reduce's backward is the identity
        case OpKind::tp_relayout:
            break; // emitted with the backward collectives
        case OpKind::cp_comm:
            cp_comm(f);
            break;
        case OpKind::attention:
            attention();
            break;
        case OpKind::fp8_cast:
            break; // the data-gradient GEMM casts its own input, the output gradient
        case OpKind::qkv_proj:
        case OpKind::out_proj:
        case OpKind::mlp_up:
        case OpKind::mlp_down:
        case OpKind::expert_up:
        case OpKind::expert_down:
        case OpKind::logits:
            gemm(f);
            break;
        default:
            memory_bound(f);
            break;
        }
    }

private:
    bool tp_hidden_under_wgrad() const
    {
        return c_.traits.tp_backward_overlap || (s_.tp_comm_overlap && c_.traits.tp_overlap_backward);
    }

    void tp_comm(const LayerOp& f)
    {
        const CommGroup g = f.group;
        if (f.collective == Collective::all_gather) {
            // SP entry: reduce-scatter the input gradient. Megatron runs it under the weight-gradient
            // GEMM (an independent GEMM, nothing decomposed); PyTorch's async TP cannot fuse it (the
            // input gradient is a sum of several matmuls, not one matmul).
            const bool hide = tp_hidden_under_wgrad();
            const int rs = b_.comm(OpKind::tp_comm, OpPhase::backward_input, OpStream::tp, Collective::reduce_scatter,
                f.bytes, g, hide ? last_wgrad_ : -1);
            if (rs >= 0 && !hide)
                tp_relayout(b_, OpPhase::backward_input, f.bytes);
        } else if (f.collective == Collective::reduce_scatter) {
            // SP exit: all-gather the output gradient, decomposed with the data-gradient GEMM that
            // consumes it when TP overlap covers the backward.
            const int ag = b_.comm(
                OpKind::tp_comm, OpPhase::backward_input, OpStream::tp, Collective::all_gather, f.bytes, g, -1);
            if (ag >= 0 && s_.tp_comm_overlap && c_.traits.tp_overlap_backward)
                pending_gather_ = ag;
            else if (ag >= 0)
                tp_relayout(b_, OpPhase::backward_input, f.bytes);
        }
    }

    void cp_comm(const LayerOp& f)
    {
        if (f.collective == Collective::send_recv) {
            // Ring CP passes K/V and their gradients: twice the forward volume per step, overlapped
            // with the attention backward.
            const double steps = x_.cp - 1;
            pending_cp_[pending_cps_++] = { b_.comm(OpKind::cp_comm, OpPhase::backward_input, OpStream::cp,
                                                Collective::send_recv, 2 * f.bytes / steps, CommGroup::cp, -1, steps),
                1.0 };
        } else if (f.collective == Collective::all_gather) {
            pytorch_ring_backward_comm(f);
        } else {
            b_.comm(OpKind::cp_comm, OpPhase::backward_input, OpStream::cp, Collective::all_to_all, f.bytes,
                CommGroup::cp, -1);
        }
    }

    // PyTorch's ring attention backward (_templated_ring_attention_backward): K/V all-gathered again
    // (hidden by the first step only), and the fp32 K/V gradients (convert_to_f32) passed on after every
    // one of the cp steps (dkv_rotater, ALL_TO_ALL): each pass under the next step's backward but the
    // last, which the function waits for before it returns. Waited at issue, nothing hides any of them.
    void pytorch_ring_backward_comm(const LayerOp& f)
    {
        const double steps = x_.cp;
        const double grad_bytes = f.bytes / steps * kFp32Bytes / x_.act;
        const int gather = b_.comm(
            OpKind::cp_comm, OpPhase::backward_input, OpStream::cp, Collective::all_gather, f.bytes, CommGroup::cp, -1);
        if (c_.traits.cp_comm_waited_at_issue) {
            b_.comm(OpKind::cp_comm, OpPhase::backward_input, OpStream::cp, Collective::send_recv, grad_bytes,
                CommGroup::cp, -1, steps);
            return;
        }
        pending_cp_[pending_cps_++] = { gather, 1.0 / steps };
        pending_cp_[pending_cps_++] = { b_.comm(OpKind::cp_comm, OpPhase::backward_input, OpStream::cp,
                                            Collective::send_recv, grad_bytes, CommGroup::cp, -1, steps - 1),
            (steps - 1) / steps };
        b_.comm(OpKind::cp_comm, OpPhase::backward_input, OpStream::cp, Collective::send_recv, grad_bytes,
            CommGroup::cp, -1);
    }

    void attention()
    {
        const AttentionCost a = b_.attention();
        const int att = b_.compute(OpKind::attention, OpPhase::backward_input, a.bwd_s, a.bwd_flops, 2 * a.bytes);
        for (int k = 0; k < pending_cps_; ++k)
            overlap_with(b_, pending_cp_[k].comm, att, pending_cp_[k].fraction);
        pending_cps_ = 0;
    }

    void gemm(const LayerOp& f)
    {
        // dX[m x k] = dY[m x n] W^T[n x k]; dW[k x n] = X^T[k x m] dY[m x n].
        // (In fp8 the data-gradient GEMM quantises the output gradient first, see Builder::gemm.)
        const int dgrad = b_.gemm(f.kind, OpPhase::backward_input, f.m, f.k, f.n, f.batch);
        if (f.kind == OpKind::expert_down && pending_ep_ >= 0) {
            ep_tile_overlap(b_, pending_ep_, dgrad);
            pending_ep_ = -1;
        }
        if (f.kind == OpKind::expert_up)
            last_expert_up_dgrad_ = dgrad;
        if (pending_gather_ >= 0) {
            overlap_with(b_, pending_gather_, dgrad, decomposed_overlap_fraction(x_.t));
            pending_gather_ = -1;
        }
        last_wgrad_ = b_.gemm(f.kind, OpPhase::backward_weight, f.k, f.n, f.m, f.batch);
        if (f.column_parallel_entry && !x_.sp && s_.tp > 1 && f.kind != OpKind::expert_up)
            b_.comm(OpKind::tp_comm, OpPhase::backward_input, OpStream::tp, Collective::all_reduce,
                x_.tokens * x_.h * x_.act, CommGroup::tp, tp_hidden_under_wgrad() ? last_wgrad_ : -1);
    }

    // The other ops: memory-bound kernels, the expert host, MoE dispatch and combine.
    void memory_bound(const LayerOp& f)
    {
        const SoftwareTraits& t = c_.traits;
        switch (f.kind) {
        case OpKind::expert_host:
            b_.compute(OpKind::expert_host, OpPhase::backward_input, kExpertGemmsBackwardPerForward * f.time_s, 0, 0);
            break;
        case OpKind::rope:
            b_.mem(OpKind::rope, OpPhase::backward_input,
                f.bytes * kUnfusedRopeBwdBytesPerElement / kUnfusedRopeFwdBytesPerElement);
            break;
        case OpKind::expert_bias:
            b_.mem(OpKind::expert_bias, OpPhase::backward_input,
                f.bytes * kEagerExpertBiasBwdBytesPerElement / kEagerExpertBiasFwdBytesPerElement);
            break;
        case OpKind::cp_merge:
            // Each later step accumulates the query and K/V gradients of its block.
            b_.mem(OpKind::cp_merge, OpPhase::backward_input,
                (x_.cp - 1)
                    * (cp_query_elements(x_) * t.cp_merge_bwd_bytes_per_query
                        + cp_kv_chunk_bytes(x_, t) / x_.act * t.cp_merge_bwd_bytes_per_kv));
            break;
        case OpKind::ep_dispatch:
        case OpKind::ep_combine:
            if (f.stream == OpStream::ep) {
                const int c = b_.comm(f.kind == OpKind::ep_dispatch ? OpKind::ep_combine : OpKind::ep_dispatch,
                    OpPhase::backward_input, OpStream::ep, f.collective, f.bytes, CommGroup::ep, -1);
                // Tile overlap: the output gradients' dispatch feeds the down projection's data gradient,
                // the input gradients' combine leaves the up projection's as its tiles finish.
                if (s_.ep_tile_overlap && f.kind == OpKind::ep_combine)
                    pending_ep_ = c;
                else if (s_.ep_tile_overlap && last_expert_up_dgrad_ >= 0)
                    ep_tile_overlap(b_, c, last_expert_up_dgrad_);
            } else
                b_.mem(f.kind, OpPhase::backward_input, f.bytes);
            break;
        case OpKind::loss:
            b_.mem(OpKind::loss, OpPhase::backward_input,
                f.bytes * (t.loss_bwd_bytes_per_logit / t.loss_fwd_bytes_per_logit));
            break;
        case OpKind::embedding:
            // Scatter-add of the gradient rows into the fp32 embedding gradient.
            b_.mem(OpKind::embedding, OpPhase::backward_input, f.bytes * (kFp32Bytes + x_.act) / x_.act);
            break;
        case OpKind::norm:
        case OpKind::residual:
        case OpKind::activation:
            // f.bytes already carries the framework's traffic factor; mem() applies it once more.
            b_.mem(f.kind, OpPhase::backward_input, f.bytes * kBackwardTrafficFactor / t.elementwise_traffic_factor);
            break;
        case OpKind::router:
            if (f.flops > 0) // the router GEMM: small, dgrad + wgrad
                b_.compute(OpKind::router, OpPhase::backward_input, 2 * f.time_s, 2 * f.flops, 2 * f.bytes);
            else
                b_.mem(OpKind::router, OpPhase::backward_input, f.bytes);
            break;
        default:
            break;
        }
    }

    struct PendingComm {
        int comm = -1;
        double fraction = 1;
    };

    Builder& b_;
    const Shapes& x_;
    const LayerContext& c_;
    const Strategy& s_;
    int last_wgrad_ = -1;
    int pending_gather_ = -1; // backward all-gather waiting for the data-gradient GEMM it feeds
    int pending_ep_ = -1; // the output gradients' dispatch waiting for the expert GEMM it feeds (tile overlap)
    int last_expert_up_dgrad_ = -1;
    PendingComm pending_cp_[2]; // context-parallel exchanges waiting for the attention backward
    int pending_cps_ = 0;
};

void emit_backward(Builder& b, int begin, int end)
{
    BackwardEmitter backward(b);
    const LayerOps& ops = b.out();
    for (int i = end - 1; i >= begin; --i) {
        const LayerOp f = ops.op[i]; // a copy: emitting appends to ops.op
        if (f.phase == OpPhase::forward)
            backward.emit(f);
    }
}

// torchtitan's op-level selective checkpointing keeps every matmul output except every second one
// (counted per layer: q, k, v, o, w1, w3, w2 for SwiGLU) and recomputes all pointwise ops. Its save
// list holds matmuls, attention and reduce-scatters but no all-gather
// (torchtitan/distributed/activation_checkpoint.py, _save_list): with sequence parallelism the
// all-gathered inputs of the column-parallel blocks are gathered again.
void emit_every_other_matmul_recompute(Builder& b, int begin, int end)
{
    LayerOps& ops = b.out();
    const Shapes& x = b.x();
    int mm = 0;
    auto recompute_if_even = [&](OpKind kind, double M, double N, double K, double batch) {
        ++mm;
        if (mm % 2 == 0)
            b.gemm(kind, OpPhase::recompute, M, N, K, batch);
    };
    for (int i = begin; i < end; ++i) {
        const LayerOp f = ops.op[i];
        if (f.phase != OpPhase::forward)
            continue;
        switch (f.kind) {
        case OpKind::qkv_proj:
            if (f.k == static_cast<float>(x.h) && f.n == static_cast<float>((x.q + 2 * x.kv) / x.t)) {
                recompute_if_even(f.kind, f.m, x.q / x.t, f.k, f.batch); // q
                recompute_if_even(f.kind, f.m, x.kv / x.t, f.k, f.batch); // k
                recompute_if_even(f.kind, f.m, x.kv / x.t, f.k, f.batch); // v
            } else {
                recompute_if_even(f.kind, f.m, f.n, f.k, f.batch);
            }
            break;
        case OpKind::mlp_up:
        case OpKind::expert_up:
            if (x.gated) {
                recompute_if_even(f.kind, f.m, f.n / 2, f.k, f.batch); // w1 (gate)
                recompute_if_even(f.kind, f.m, f.n / 2, f.k, f.batch); // w3 (up)
            } else {
                recompute_if_even(f.kind, f.m, f.n, f.k, f.batch);
            }
            break;
        case OpKind::out_proj:
        case OpKind::mlp_down:
        case OpKind::expert_down:
        case OpKind::router:
            if (f.m > 0)
                recompute_if_even(f.kind, f.m, f.n, f.k, f.batch);
            break;
        case OpKind::norm:
        case OpKind::residual:
        case OpKind::activation:
            b.mem(f.kind, OpPhase::recompute, f.bytes / b.ctx().traits.elementwise_traffic_factor);
            break;
        case OpKind::tp_comm:
            if (f.collective == Collective::all_gather && f.stream == OpStream::tp) {
                if (b.comm(
                        OpKind::tp_comm, OpPhase::recompute, OpStream::tp, Collective::all_gather, f.bytes, f.group, -1)
                    >= 0)
                    tp_relayout(b, OpPhase::recompute, f.bytes);
            }
            break;
        default:
            break;
        }
    }
}

// Re-runs the forward ops [begin, end) with phase `recompute` (full recomputation). The recomputed
// forward runs inside the backward pass: where TP overlap covers only the forward (PyTorch's async TP
// pass on the compiled forward graph), its collectives run in line again, with their re-layout copies.
void emit_recompute(Builder& b, int begin, int end)
{
    LayerOps& ops = b.out();
    const int start = ops.count;
    const bool keep_tp_overlap = b.ctx().traits.tp_overlap_backward;
    double relayout_bytes = 0;
    for (int i = begin; i < end; ++i) {
        LayerOp r = ops.op[i];
        r.phase = OpPhase::recompute;
        if (r.kind == OpKind::tp_comm && r.overlaps >= 0 && !keep_tp_overlap) {
            r.overlaps = -1;
            relayout_bytes += r.bytes;
        } else if (r.overlaps >= begin && r.overlaps < end) {
            r.overlaps = static_cast<short>(start + (r.overlaps - begin)); // same relative position
        } else if (r.overlaps >= 0) {
            r.overlaps = -1; // what it hid under is not re-run
        }
        ops.add(r);
    }
    if (relayout_bytes > 0)
        tp_relayout(b, OpPhase::recompute, relayout_bytes);
}

// Megatron's selective recomputation re-runs the forward of the submodules strategy.recompute_modules names
// before the backward (TransformerConfig.recompute_modules; by default the core attention, Korthikanti et
// al. 2022): copies of their forward ops. A recomputed MoE block carries its activation and shared experts.
void emit_module_recompute(Builder& b)
{
    const Strategy& s = *b.ctx().strategy;
    for (int i = 0; i < kRecomputeModuleCount; ++i) {
        const auto m = static_cast<RecomputeModule>(i);
        if (!s.recomputes(m))
            continue;
        if (m == RecomputeModule::core_attn) {
            emit_attention_core(b, OpPhase::recompute);
            continue;
        }
        if ((m == RecomputeModule::moe_act || m == RecomputeModule::shared_experts)
            && s.recomputes(RecomputeModule::moe))
            continue;
        const Builder::Spans& spans = b.spans(m);
        for (int k = 0; k < spans.count; ++k)
            emit_recompute(b, spans.piece[k].begin, spans.piece[k].end);
    }
}

} // namespace

namespace {

// A host-bound eager stack: a compute kernel takes at least the host's time to issue it, since the GPU's
// queue runs dry when kernels are shorter than their issue time (PyTorch eager dispatch; the
// kernel_host_s of software_stack.hpp).
void apply_host_issue_floor(const LayerContext& ctx, LayerOps& ops) noexcept
{
    const double host_s = ctx.traits.kernel_host_s;
    if (host_s <= 0)
        return;
    for (int i = 0; i < ops.count; ++i)
        if (ops.op[i].stream == OpStream::compute)
            ops.op[i].time_s = std::max(ops.op[i].time_s, host_s);
}

// An eager layer's host issues its ops one by one (SoftwareTraits::layer_host_ops_*): a pass whose GPU work,
// exposed communication included, is shorter than the host's time to issue it waits for the host. The
// wait is one op at the end of the pass; full recomputation repeats the forward's host ops.
void apply_layer_host_budget(const LayerContext& ctx, bool moe_layer, LayerOps& ops) noexcept
{
    const SoftwareTraits& t = ctx.traits;
    if (t.layer_host_op_s <= 0 || moe_layer)
        return;
    const LayerTotals gpu = summarize(ops);
    const double recompute_ops = ctx.strategy->recompute == Recompute::full ? t.layer_host_ops_fwd : 0;
    const struct {
        OpPhase phase;
        double host_s, gpu_s;
    } passes[] = {
        { OpPhase::forward, t.layer_host_ops_fwd * t.layer_host_op_s, gpu.forward_s + gpu.exposed_fwd() },
        { OpPhase::recompute, recompute_ops * t.layer_host_op_s, gpu.recompute_s },
        { OpPhase::backward_input, t.layer_host_ops_bwd * t.layer_host_op_s,
            gpu.backward_input_s + gpu.backward_weight_s + gpu.exposed_bwd() },
    };
    for (const auto& p : passes) {
        if (p.host_s <= p.gpu_s)
            continue;
        LayerOp o;
        o.kind = OpKind::host_wait;
        o.phase = p.phase;
        o.stream = OpStream::compute;
        o.time_s = p.host_s - p.gpu_s;
        ops.add(o);
    }
}

} // namespace

void build_layer_ops(const LayerContext& ctx, bool moe_layer, LayerOps& out) noexcept
{
    out.count = 0;
    Builder b(ctx, out);
    emit_attention_block(b, OpPhase::forward);
    emit_mlp_block(b, OpPhase::forward, moe_layer);
    const int fwd_end = out.count;
    switch (ctx.strategy->recompute) {
    case Recompute::full:
        emit_recompute(b, 0, fwd_end);
        break;
    case Recompute::selective:
        if (ctx.traits.selective == SelectivePolicy::every_other_matmul) {
            emit_every_other_matmul_recompute(b, 0, fwd_end);
        } else {
            emit_module_recompute(b);
        }
        break;
    case Recompute::none:
        break;
    }
    emit_backward(b, 0, fwd_end);
    apply_host_issue_floor(ctx, out);
    apply_layer_host_budget(ctx, moe_layer, out);
}

void build_embedding_ops(const LayerContext& ctx, LayerOps& out) noexcept
{
    out.count = 0;
    Builder b(ctx, out);
    const Shapes& x = b.x();
    b.mem(OpKind::embedding, OpPhase::forward, x.tokens * x.h * 2 * x.act); // gather rows, write
    // Vocab-parallel embedding: each TP rank holds a slice of the table; the partial rows are summed.
    if (b.comm(OpKind::tp_comm, OpPhase::forward, OpStream::tp,
            x.sp ? Collective::reduce_scatter : Collective::all_reduce, tp_activation_bytes(x), CommGroup::tp, -1)
        >= 0)
        tp_relayout(b, OpPhase::forward, tp_activation_bytes(x));
    const int fwd_end = out.count;
    emit_backward(b, 0, fwd_end);
    apply_host_issue_floor(ctx, out);
}

void build_output_ops(const LayerContext& ctx, LayerOps& out) noexcept
{
    out.count = 0;
    Builder b(ctx, out);
    const Shapes& x = b.x();
    const double vocab_local = static_cast<double>(ctx.model->vocab) / x.t;
    b.mem(OpKind::norm, OpPhase::forward, x.tokens_ew * x.h * kNormBytesPerElement * x.ew);
    // The output layer is a plain column-parallel linear (Megatron-core's ColumnParallelLinear): its
    // all-gather is never decomposed with the GEMM.
    if (tp_entry(b, OpPhase::forward, CommGroup::tp) >= 0)
        tp_relayout(b, OpPhase::forward, tp_activation_bytes(x));
    b.gemm(OpKind::logits, OpPhase::forward, x.tokens, vocab_local, x.h, 1, true);
    b.mem(OpKind::loss, OpPhase::forward, x.tokens * vocab_local * ctx.traits.loss_fwd_bytes_per_logit);
    const int fwd_end = out.count;
    emit_backward(b, 0, fwd_end);
    apply_host_issue_floor(ctx, out);
}

LayerTotals summarize(const LayerOps& ops) noexcept
{
    LayerTotals t;
    for (int i = 0; i < ops.count; ++i) {
        const LayerOp& o = ops.op[i];
        if (o.stream == OpStream::compute) {
            switch (o.phase) {
            case OpPhase::forward:
                t.forward_s += o.time_s;
                break;
            case OpPhase::backward_input:
                t.backward_input_s += o.time_s;
                break;
            case OpPhase::backward_weight:
                t.backward_weight_s += o.time_s;
                break;
            case OpPhase::recompute:
                t.recompute_s += o.time_s;
                t.recompute_flops += o.flops;
                break;
            }
            t.flops += o.flops;
            continue;
        }
        const int st = static_cast<int>(o.stream);
        t.comm_busy_s[st] += o.time_s;
        double exposed = o.time_s;
        if (o.overlaps >= 0 && o.overlaps < ops.count)
            exposed = std::max(0.0, o.time_s - o.overlap_fraction * ops.op[o.overlaps].time_s);
        if (o.phase == OpPhase::forward)
            t.comm_exposed_fwd_s[st] += exposed;
        else
            t.comm_exposed_bwd_s[st] += exposed;
    }
    return t;
}

namespace {

// What one layer's saved tensors take, both as the tensors themselves and as the pinned host blocks
// an offload copies them into. PyTorch's caching host allocator hands out each pinned block at the next
// power of two of the request ("to improve reuse", aten/src/ATen/core/CachingHostAllocator.h,
// allocate: c10::llvm::PowerOf2Ceil), and Transformer Engine's offload allocates one pinned CPU
// tensor per saved tensor (cpu_offload.py, torch.empty(..., pin_memory=True)).
class SavedTensors {
public:
    void add(double bytes, int count = 1) noexcept
    {
        if (bytes <= 0)
            return;
        bytes_.device += count * bytes;
        bytes_.pinned_host += count * std::exp2(std::ceil(std::log2(bytes)));
    }
    LayerSavedBytes bytes() const noexcept { return bytes_; }

private:
    LayerSavedBytes bytes_;
};

// torchtitan's op-level selective checkpointing keeps the block input, the outputs of every second
// matmul (q, v, w1, w2 of q, k, v, o, w1, w3, w2 for SwiGLU), the fused attention's output and
// log-sum-exp, and recomputes the rest (torchtitan/models/llama3/parallelize.py, _save_list and the
// "mm" counter): the same matmuls emit_every_other_matmul_recompute re-runs are the ones not kept.
void every_other_matmul_saved(const LayerContext& ctx, const Shapes& x, bool moe_layer, SavedTensors& saved)
{
    const ModelSpec& m = *ctx.model;
    const Strategy& s = *ctx.strategy;
    double outputs[16];
    int n = 0;
    const double t = x.tokens; // matmul outputs are per rank before SP's reduce-scatter
    outputs[n++] = t * x.q / x.t;
    outputs[n++] = t * x.kv / x.t;
    outputs[n++] = t * x.kv / x.t;
    outputs[n++] = t * x.h; // o
    auto mlp = [&](double rows, double ffn_local) {
        if (x.gated) {
            outputs[n++] = rows * ffn_local; // w1
            outputs[n++] = rows * ffn_local; // w3
        } else {
            outputs[n++] = rows * ffn_local;
        }
        outputs[n++] = rows * x.h; // w2
    };
    if (!moe_layer) {
        mlp(t, static_cast<double>(m.ffn_hidden) / x.t);
    } else {
        const MoeSpec& e = *m.moe;
        const double etp = s.effective_expert_tp();
        const double routed_rows = x.tokens_ew * e.top_k * etp * ctx.moe_straggler;
        outputs[n++] = x.tokens_ew * e.experts; // router logits
        mlp(routed_rows, static_cast<double>(e.expert_ffn_hidden) / etp);
        if (e.shared_experts > 0)
            mlp(t, static_cast<double>(e.shared_experts) * e.expert_ffn_hidden / x.t);
    }
    saved.add(x.act * x.tokens_ew * x.h); // block input
    saved.add(t * x.vdim / x.t * x.act); // attention output
    saved.add(x.b * x.heads_local * (x.seq / x.cp) * kFp32Bytes); // log-sum-exp
    for (int i = 0; i < n; i += 2) // the 1st, 3rd, ... matmul outputs are kept
        saved.add(x.act * outputs[i]);
}

// Korthikanti et al. 2022 Table 2 generalised to GQA, SwiGLU, flash attention, CP and MoE, tensor by tensor.
void layer_saved_tensors(const LayerContext& ctx, bool moe_layer, SavedTensors& saved) noexcept
{
    const Shapes x = shapes_of(ctx);
    const ModelSpec& m = *ctx.model;
    const Strategy& s = *ctx.strategy;
    const double rep = x.tokens_ew * x.h; // elements of a [tokens, h] tensor after SP
    if (s.recompute == Recompute::full) {
        saved.add(x.act * rep); // only the layer input is checkpointed
        return;
    }
    if (s.recompute == Recompute::selective && ctx.traits.selective == SelectivePolicy::every_other_matmul) {
        every_other_matmul_saved(ctx, x, moe_layer, saved);
        return;
    }
    const double mask = x.dropout ? kMaskBytes : 0;
    // Inputs saved for the weight-gradient GEMMs: Transformer Engine / torchao keep the fp8-cast copy
    // (1 byte) when the GEMMs run in fp8 (TE fp8 autocast saves the quantised inputs for backward).
    const double gin = x.fp8 ? element_bytes(Precision::fp8) : x.act;
    // A recomputed submodule's output is freed after its consumer read it (Megatron's
    // CheckpointWithoutOutput): in 16-bit that is the tensor the next GEMM saved; in fp8 the GEMM keeps
    // its own quantised copy, which stays.
    const double gin_if_recomputed = x.fp8 ? gin : 0.0;
    const double norm_out = s.recomputes(RecomputeModule::layernorm) ? gin_if_recomputed : gin;
    // Attention block (Korthikanti et al. 2022, Sec. 4.1): norm input, QKV input, Q/K/V, the attention
    // output (= out-projection input), the dropout mask.
    saved.add(x.act * rep);
    saved.add(norm_out * rep);
    if (m.mla && s.recomputes(RecomputeModule::mla_up_proj)) {
        // Q, K and V are re-projected from the kept latents (and the RoPE part of K).
        const MlaSpec& a = *m.mla;
        saved.add(x.act * x.tokens * (a.q_lora_rank + a.kv_lora_rank + a.qk_rope_head_dim));
    } else {
        saved.add(x.act * x.tokens * x.q / x.t);
        saved.add(x.act * x.tokens * x.kv / x.t, 2);
    }
    saved.add(gin * x.tokens * x.vdim / x.t);
    saved.add(mask * rep);
    const double scores = x.b * x.heads_local * (x.seq / x.cp) * x.seq;
    if (!x.flash && s.recompute == Recompute::none) {
        saved.add(scores * x.act); // 5as/h term: softmax output, dropout mask and output
        if (x.dropout) {
            saved.add(scores * kMaskBytes);
            saved.add(scores * x.act);
        }
    } else if (x.flash)
        saved.add(x.b * x.heads_local * (x.seq / x.cp) * kFp32Bytes); // softmax statistics (log-sum-exp)
    // MLP block: norm input, FC1 input, activation input(s), FC2 input, dropout mask. A recomputed MLP,
    // MoE block or shared expert keeps only its input (the norm's output, counted as the FC1 input).
    saved.add(x.act * rep);
    saved.add(norm_out * rep);
    saved.add(mask * rep);
    auto mlp_acts = [&](double tokens, double ffn_local, bool act_recomputed) {
        saved.add(tokens * ffn_local * x.act, x.gated ? 2 : 1);
        saved.add(tokens * ffn_local * (act_recomputed ? gin_if_recomputed : gin));
    };
    if (!moe_layer) {
        if (!s.recomputes(RecomputeModule::mlp))
            mlp_acts(x.tokens, static_cast<double>(m.ffn_hidden) / x.t, false);
    } else if (!s.recomputes(RecomputeModule::moe)) {
        const MoeSpec& e = *m.moe;
        const double etp = s.effective_expert_tp();
        const double routed_rows = x.tokens_ew * e.top_k * etp * ctx.moe_straggler;
        saved.add(gin * routed_rows * x.h); // dispatched expert inputs
        mlp_acts(routed_rows, static_cast<double>(e.expert_ffn_hidden) / etp, s.recomputes(RecomputeModule::moe_act));
        saved.add(x.tokens_ew * e.experts * kFp32Bytes); // router probabilities
        if (e.shared_experts > 0 && !s.recomputes(RecomputeModule::shared_experts))
            mlp_acts(x.tokens, static_cast<double>(e.shared_experts) * e.expert_ffn_hidden / x.t, false);
    }
}

} // namespace

LayerSavedBytes layer_saved_bytes(const LayerContext& ctx, bool moe_layer) noexcept
{
    SavedTensors saved;
    layer_saved_tensors(ctx, moe_layer, saved);
    return saved.bytes();
}

double layer_activation_bytes(const LayerContext& ctx, bool moe_layer) noexcept
{
    return layer_saved_bytes(ctx, moe_layer).device;
}

} // namespace parallax

// The framework mechanisms of the layer model, each against a hand-worked number: TP overlap by
// decomposition (PyTorch async TP: forward only; Transformer Engine: both passes), DTensor's re-layout
// copies, torchtitan's selective recompute re-gathering sequence-parallel inputs, cross-entropy traffic,
// and the published-run rules that fill unstated settings from the frameworks' recipes.
#include "calibration/published_runs.hpp"
#include "io/preset_catalog.hpp"
#include "model/analytic_model.hpp"
#include "model/collective_model.hpp"
#include "model/compute_model.hpp"
#include "model/layer_ops.hpp"
#include "model/plan_context.hpp"
#include "model/strategy_costs.hpp"
#include "spec/software_release.hpp"

#include "../support/published_row.hpp"
#include "../support/test_layers.hpp"
#include "../support/test_plans.hpp"

#include <QTest>

#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>

using namespace parallax;

namespace {

bool near(double got, double want, double rel)
{
    return std::fabs(got - want) <= rel * std::fabs(want);
}

// The cases of one of the repository's validation files (validation/NAME), with the rows it skipped.
std::vector<ValidationCase> read_validation_file(const std::string& name, std::vector<SkippedRow>& skipped)
{
    std::ifstream in(std::string(PARALLAX_SOURCE_DIR) + "/validation/" + name);
    std::stringstream ss;
    ss << in.rdbuf();
    return read_published_runs(nlohmann::json::parse(ss.str()), name, PresetCatalog::standard(), skipped);
}

// Llama 3 8B with TP 8 and sequence parallelism on one H100 node, 12 sequences of 8192 tokens per
// micro-batch (torchtitan's async-TP benchmark shape).
struct Layer {
    ModelSpec model = test::model("llama3-8b");
    TrainingSpec training;
    ClusterSpec cluster = test::cluster("H100-SXM5-80GB", 1, 8, "nvlink4-nvswitch", "ib-ndr");
    Strategy strategy;
    LayerOps ops;

    Layer(Framework f, bool overlap, Recompute rc, int tp = 8)
    {
        training.seq_len = 8192;
        training.global_batch = 12;
        training.framework = f;
        strategy.tp = tp;
        strategy.dp = 8 / tp;
        strategy.sequence_parallel = tp > 1;
        strategy.micro_batch = 12;
        strategy.tp_comm_overlap = overlap;
        strategy.recompute = rc;
        build_layer_ops(context(), false, ops);
    }

    LayerContext context() const { return test::layer_context(model, training, strategy, cluster); }

    double activation_bytes() const { return 12.0 * 8192 * 4096 * 2; } // [tokens, hidden] in bf16

    int count(OpKind k, OpPhase ph) const
    {
        int n = 0;
        for (int i = 0; i < ops.count; ++i)
            n += ops.op[i].kind == k && ops.op[i].phase == ph ? 1 : 0;
        return n;
    }
};

// GPT-OSS-120B on one B200 node, one 4096-token sequence per micro-batch, EP 8 (16 local experts).
struct GptOssLayer {
    ModelSpec model = test::model("gpt-oss-120b");
    TrainingSpec training;
    ClusterSpec cluster = test::cluster("B200", 1, 8, "nvlink5-nvswitch", "ib-ndr");
    Strategy strategy;
    SoftwareTraits traits = software_traits(Framework::megatron);

    GptOssLayer()
    {
        training.seq_len = 4096;
        training.global_batch = 8;
        training.precision = Precision::bf16;
        strategy.dp = 8;
        strategy.ep = 8;
        strategy.micro_batch = 1;
    }

    LayerContext context() const
    {
        LayerContext lc = test::layer_context(model, training, strategy, cluster);
        lc.ep_group = place_group(strategy.rank_order, LayoutSizes::dense(strategy), { ParallelDim::dp }, 8);
        lc.traits = traits;
        return lc;
    }

    const LayerOp* first(const LayerOps& ops, OpKind k, OpPhase ph) const
    {
        for (int i = 0; i < ops.count; ++i)
            if (ops.op[i].kind == k && ops.op[i].phase == ph)
                return &ops.op[i];
        return nullptr;
    }
};

// One layer of Llama 3 8B at CP 4 and 131072 tokens on one H100 node, built for framework f.
LayerOps ring_layer(Framework f)
{
    Layer l(f, false, Recompute::none, 1);
    l.training.seq_len = 131072;
    l.strategy.micro_batch = 1;
    l.strategy.cp = 4;
    l.strategy.dp = 2;
    LayerContext lc = l.context();
    lc.cp_group = place_group(l.strategy.rank_order, LayoutSizes::dense(l.strategy), { ParallelDim::cp }, 8);
    build_layer_ops(lc, false, l.ops);
    return l.ops;
}

} // namespace

class TestMechanisms : public QObject {
    Q_OBJECT

private slots:
    // PyTorch's micro-pipeline TP fuses the forward's all-gather -> matmul and matmul -> reduce-scatter;
    // the backward's collectives stay in line. A collective decomposed with its GEMM into tp pieces hides
    // behind (tp-1)/tp of it: exposed = max(0, t_comm - 7/8 t_gemm) at TP 8.
    void async_tp_overlaps_the_forward_only()
    {
        const Layer l(Framework::torchtitan_compile, true, Recompute::none);
        int forward = 0, backward = 0;
        double exposed_fwd = 0;
        for (int i = 0; i < l.ops.count; ++i) {
            const LayerOp& o = l.ops.op[i];
            if (o.kind != OpKind::tp_comm)
                continue;
            if (o.phase == OpPhase::forward) {
                ++forward;
                QVERIFY(o.overlaps >= 0);
                const LayerOp& g = l.ops.op[o.overlaps];
                QVERIFY(g.phase == OpPhase::forward && g.flops > 0); // a GEMM of the same pass
                QVERIFY(near(o.overlap_fraction, 7.0 / 8.0, 1e-6));
                exposed_fwd += std::max(0.0, o.time_s - 7.0 / 8.0 * g.time_s);
            } else {
                ++backward;
                QCOMPARE(o.overlaps, static_cast<short>(-1));
            }
        }
        QCOMPARE(forward, 4); // two all-gathers, two reduce-scatters
        QCOMPARE(backward, 4);
        const LayerTotals t = summarize(l.ops);
        QVERIFY(near(t.comm_exposed_fwd_s[kTpStream], exposed_fwd, 1e-9));
        // The 805 MB all-gather before the Q/K/V GEMM (98304 x 768 x 4096) outlasts 7/8 of it.
        QVERIFY(exposed_fwd > 0);
        const Layer vanilla(Framework::torchtitan_compile, false, Recompute::none);
        QVERIFY(summarize(vanilla.ops).exposed_fwd() > t.exposed_fwd());
        QVERIFY(near(summarize(vanilla.ops).exposed_bwd(), t.exposed_bwd(), 1e-9));
    }

    // Transformer Engine's userbuffers overlap the backward too: the output-gradient all-gather hides
    // behind the data-gradient GEMM that consumes it (not behind itself).
    void te_overlap_ties_the_backward_gather_to_its_dgrad()
    {
        const Layer l(Framework::megatron, true, Recompute::none);
        int gathers = 0;
        for (int i = 0; i < l.ops.count; ++i) {
            const LayerOp& o = l.ops.op[i];
            if (o.kind != OpKind::tp_comm || o.phase != OpPhase::backward_input
                || o.collective != Collective::all_gather)
                continue;
            ++gathers;
            QVERIFY(o.overlaps >= 0 && o.overlaps != i);
            const LayerOp& g = l.ops.op[o.overlaps];
            QVERIFY(g.phase == OpPhase::backward_input && g.flops > 0);
            QVERIFY(g.kind == OpKind::out_proj || g.kind == OpKind::mlp_down); // the row-parallel GEMMs
            QVERIFY(near(o.overlap_fraction, 7.0 / 8.0, 1e-6));
        }
        QCOMPARE(gathers, 2);
    }

    // DTensor gathers and scatters [batch, seq, hidden] on dim 1 through a dim-0 collective plus chunk +
    // cat: one read and one write of the activation (2 x 805 MB) per collective that is not fused.
    void dtensor_relayout_copies()
    {
        const Layer titan(Framework::torchtitan_compile, false, Recompute::none);
        QCOMPARE(titan.count(OpKind::tp_relayout, OpPhase::forward), 4);
        QCOMPARE(titan.count(OpKind::tp_relayout, OpPhase::backward_input), 4);
        for (int i = 0; i < titan.ops.count; ++i)
            if (titan.ops.op[i].kind == OpKind::tp_relayout) {
                QVERIFY(near(titan.ops.op[i].bytes, 2 * titan.activation_bytes(), 1e-9));
                const ComputeDevice dev = ComputeDevice::of(titan.cluster.gpu);
                QVERIFY(near(titan.ops.op[i].time_s, memory_bound_time_s(dev, 2 * titan.activation_bytes()), 1e-9));
            }
        // Fused collectives need no re-layout (async TP restrides the shard instead).
        const Layer fused(Framework::torchtitan_compile, true, Recompute::none);
        QCOMPARE(fused.count(OpKind::tp_relayout, OpPhase::forward), 0);
        const Layer megatron(Framework::megatron, false, Recompute::none);
        QCOMPARE(megatron.count(OpKind::tp_relayout, OpPhase::forward), 0);
        QCOMPARE(megatron.count(OpKind::tp_relayout, OpPhase::backward_input), 0);
    }

    // torchtitan's op-level SAC saves matmul, attention and reduce-scatter outputs, not all-gathers:
    // with SP both gathered block inputs are gathered again before the backward; without TP none are.
    void selective_recompute_regathers_sp_inputs()
    {
        const Layer sac(Framework::torchtitan_compile, false, Recompute::selective);
        int regathers = 0;
        for (int i = 0; i < sac.ops.count; ++i) {
            const LayerOp& o = sac.ops.op[i];
            if (o.kind == OpKind::tp_comm && o.phase == OpPhase::recompute) {
                QVERIFY(o.collective == Collective::all_gather);
                QVERIFY(near(o.bytes, sac.activation_bytes(), 1e-9));
                ++regathers;
            }
        }
        QCOMPARE(regathers, 2);
        QCOMPARE(sac.count(OpKind::tp_relayout, OpPhase::recompute), 2);
        const Layer no_tp(Framework::torchtitan_compile, false, Recompute::selective, 1);
        QCOMPARE(no_tp.count(OpKind::tp_comm, OpPhase::recompute), 0);
        // Full recompute in torchtitan replays the forward's collectives in line even under async TP.
        const Layer full(Framework::torchtitan_compile, true, Recompute::full);
        for (int i = 0; i < full.ops.count; ++i)
            if (full.ops.op[i].kind == OpKind::tp_comm && full.ops.op[i].phase == OpPhase::recompute)
                QCOMPARE(full.ops.op[i].overlaps, static_cast<short>(-1));
    }

    // PyTorch's ring attention (torchtitan CP 4, 131072 tokens): K/V, repeated to the 32 query heads,
    // all-gathered once (4 x 32768 x 2 x 4096 x 2 B = 2.1 GB); the backward gathers again and passes the
    // fp32 K/V gradients on after each of the 4 steps (4 x 1.07 GB). Eager, the gathers hide behind the
    // first of the 4 steps, 3 gradient passes behind the next step's backward and the 4th is waited for
    // at the end; each of the 3 later steps merges in eager fp32 (50 B per query element; backward 12 B
    // per query, 30 B per K/V element). Compiled (torchtitan's default), every collective is waited for
    // where it is issued: 2.1 GB x 3/4 over 360 GB/s of NVLink = 4.5 ms per gather and 4 x 1.07 GB /
    // 360 GB/s = 11.9 ms of gradient passes exposed per layer, while Inductor fuses the merges (10 B per
    // element). Transformer Engine passes GQA-width K/V chunks step by step, fused merges.
    void ring_attention_exchanges_and_merges()
    {
        const double local = 131072.0 / 4, query = local * 4096, kv = local * 2 * 4096;
        for (Framework f : { Framework::torchtitan, Framework::torchtitan_compile }) {
            const bool compiled = f == Framework::torchtitan_compile;
            const LayerOps ops = ring_layer(f);
            const double merge = compiled ? 10.0 : 50.0, merge_q = compiled ? 10.0 : 12.0;
            const double merge_kv = compiled ? 10.0 : 30.0;
            int gathers = 0, hidden_passes = 0, exposed_passes = 0, merges = 0;
            double exposed_s = 0;
            for (int i = 0; i < ops.count; ++i) {
                const LayerOp& o = ops.op[i];
                if (o.kind == OpKind::cp_comm && o.collective == Collective::all_gather) {
                    ++gathers;
                    QVERIFY(near(o.bytes, 4 * kv * 2, 1e-9));
                    if (compiled) {
                        QCOMPARE(o.overlaps, static_cast<short>(-1));
                        QVERIFY2(
                            near(o.time_s, 0.75 * 4 * kv * 2 / 360e9, 0.01), qPrintable(QString::number(o.time_s)));
                        exposed_s += o.time_s;
                    } else {
                        QVERIFY(near(o.overlap_fraction, 0.25, 1e-6));
                        QCOMPARE(ops.op[o.overlaps].kind, OpKind::attention);
                        QCOMPARE(ops.op[o.overlaps].phase, o.phase);
                    }
                }
                if (o.kind == OpKind::cp_comm && o.collective == Collective::send_recv) {
                    QVERIFY(o.phase == OpPhase::backward_input);
                    if (o.overlaps >= 0) {
                        ++hidden_passes;
                        QVERIFY(near(o.bytes, 3 * kv * 4, 1e-9)); // 3 steps of fp32 gradients
                        QVERIFY(near(o.overlap_fraction, 0.75, 1e-6));
                    } else {
                        ++exposed_passes;
                        QVERIFY(near(o.bytes, (compiled ? 4 : 1) * kv * 4, 1e-9));
                        exposed_s += o.time_s;
                    }
                }
                if (o.kind == OpKind::cp_merge) {
                    ++merges;
                    const double want
                        = o.phase == OpPhase::forward ? 3 * query * merge : 3 * (query * merge_q + kv * merge_kv);
                    QVERIFY2(near(o.bytes, want, 1e-9), qPrintable(QString::number(o.bytes / want)));
                }
            }
            QCOMPARE(gathers, 2); // forward and backward
            QCOMPARE(hidden_passes, compiled ? 0 : 1);
            QCOMPARE(exposed_passes, 1);
            QCOMPARE(merges, 2);
            if (compiled) // 2 x 4.5 ms of gathers + 11.9 ms of gradient passes, latencies aside
                QVERIFY2(near(exposed_s, 2 * 0.75 * 4 * kv * 2 / 360e9 + 4 * kv * 4 / 360e9, 0.01),
                    qPrintable(QString::number(exposed_s)));
        }
        Layer l(Framework::megatron, false, Recompute::none, 1);
        l.training.seq_len = 131072;
        l.strategy.micro_batch = 1;
        l.strategy.cp = 4;
        l.strategy.dp = 2;
        LayerContext lc = l.context();
        lc.cp_group = place_group(l.strategy.rank_order, LayoutSizes::dense(l.strategy), { ParallelDim::cp }, 8);
        build_layer_ops(lc, false, l.ops);
        for (int i = 0; i < l.ops.count; ++i) {
            const LayerOp& o = l.ops.op[i];
            if (o.kind == OpKind::cp_comm && o.phase == OpPhase::forward) {
                QCOMPARE(o.collective, Collective::send_recv);
                QVERIFY(near(o.bytes, 3 * local * 2 * 1024 * 2, 1e-9)); // 3 steps of the GQA-width chunk
            }
        }
    }

    // Pipeline sends without sequence parallelism: Megatron's scatter-gather and DeepSpeed's partitioned
    // tensors both send 1/tp of the activation and all-gather it over NVLink on arrival; DeepSpeed's
    // engine blocks on 4 separate transfers per micro-batch, Megatron batches them in 2.
    void pipeline_sends_are_split_and_regathered()
    {
        const ModelSpec m = test::gpt(96, 12288, 96);
        const ClusterSpec c = test::cluster("A100-SXM4-80GB", 4, 8, "nvlink3-nvswitch", "ib-hdr");
        for (Framework f : { Framework::megatron, Framework::megatron_deepspeed }) {
            TrainingSpec t;
            t.seq_len = 2048;
            t.global_batch = 16;
            t.framework = f;
            const PlanContext ctx(m, t, c, no_calibration());
            Strategy s;
            s.tp = 8;
            s.pp = 4;
            s.micro_batch = 1;
            const Groups g = place_groups(ctx, s);
            const LayerCosts costs = compute_layer_costs(ctx, s, g);
            const double activation = 2048.0 * 12288 * 2;
            const double want = collective_time_s(ctx.network, Collective::send_recv, activation / 8, g.pp_pair)
                + collective_time_s(ctx.network, Collective::all_gather, activation, g.tp);
            QVERIFY(near(costs.p2p_s, want, 1e-9));
            QCOMPARE(costs.p2p_transfers, f == Framework::megatron ? 2 : 4);
        }
    }

    // DeepSpeed before 0.5.4 sends every TP rank the whole activation gradient and, with each stage
    // output, GPT2ModelPipe's fp16 [1, 1, s, s] mask: the average transfer is half a split activation
    // plus the mask, and half a whole gradient. Newer releases split both and send no mask.
    void old_deepspeed_sends_whole_gradients_and_the_mask()
    {
        const ModelSpec m = test::gpt(24, 1024, 16);
        const ClusterSpec c = test::cluster("V100-SXM2-16GB", 4, 4, "nvlink2", "ib-hdr");
        TrainingSpec t;
        t.seq_len = 1024;
        t.global_batch = 32;
        t.precision = Precision::fp16;
        t.framework = Framework::megatron_deepspeed;
        Strategy s;
        s.tp = 4;
        s.pp = 4;
        s.micro_batch = 2;
        const double activation = 2.0 * 1024 * 1024 * 2;
        const double mask = 1024.0 * 1024 * 2;
        for (const char* id : { "deepspeed-0.3", "deepspeed-0.5.4" }) {
            t.software = find_software_release(id);
            QVERIFY(t.software);
            const PlanContext ctx(m, t, c, no_calibration());
            const Groups g = place_groups(ctx, s);
            const LayerCosts costs = compute_layer_costs(ctx, s, g);
            const bool old = std::string_view(id) == "deepspeed-0.3";
            const double bytes = old ? (activation / 4 + mask + activation) / 2 : activation / 4;
            const double want = collective_time_s(ctx.network, Collective::send_recv, bytes, g.pp_pair)
                + collective_time_s(ctx.network, Collective::all_gather, activation, g.tp);
            QVERIFY2(near(costs.p2p_s, want, 1e-9), id);
            QCOMPARE(costs.p2p_transfers, 4);
        }
        // Without a release the newest catalogued one applies: split gradients, no mask.
        QCOMPARE(newest_software_release(Framework::megatron_deepspeed)->id, std::string_view("deepspeed-0.5.4"));
        QCOMPARE(software_release_at(Framework::megatron_deepspeed, 2021, 3)->id, std::string_view("deepspeed-0.3"));
        const SoftwareTraits newest = software_traits(Framework::megatron_deepspeed, nullptr);
        QVERIFY(newest.p2p_grad_scatter_gather);
        QCOMPARE(newest.p2p_mask_bytes_per_position_pair, 0.0);
        // The 0.3-era stack issues each eager op slower (AMP's GPT-2 layer profile: ~60 us per op) than
        // the newer one Sailor profiled (~37 us); frameworks without a host floor keep none.
        const SoftwareTraits old
            = software_traits(Framework::megatron_deepspeed, find_software_release("deepspeed-0.3"));
        QCOMPARE(old.layer_host_op_s, 60e-6);
        QCOMPARE(newest.layer_host_op_s, 37e-6);
        QCOMPARE(old.layer_host_ops_fwd, newest.layer_host_ops_fwd);
        QCOMPARE(software_traits(Framework::megatron, nullptr).layer_host_op_s, 0.0);
    }

    // DeepSpeed accumulates each micro-batch's weight gradients in a pass of its own (fp16 autograd:
    // 6 B per parameter; bf16 into fp32 copies: 10 B); Megatron inside the weight-gradient GEMM.
    void deepspeed_accumulates_gradients_in_a_separate_pass()
    {
        const ModelSpec m = test::gpt(96, 12288, 96);
        const ClusterSpec cl = test::cluster("A100-SXM4-80GB", 4, 8, "nvlink3-nvswitch", "ib-hdr");
        for (Precision p : { Precision::fp16, Precision::bf16 }) {
            double weight[2] = {};
            double params = 0;
            for (int i = 0; i < 2; ++i) {
                TrainingSpec t;
                t.seq_len = 2048;
                t.global_batch = 16;
                t.precision = p;
                t.framework = i == 0 ? Framework::megatron : Framework::megatron_deepspeed;
                const PlanContext ctx(m, t, cl, no_calibration());
                Strategy s;
                s.tp = 8;
                s.pp = 4;
                EvaluationCache cache(ctx);
                StrategyCosts c;
                compute_costs(ctx, s, cache, c);
                weight[i] = chunk_timing(ctx, s, c, 1).weight_s; // a middle stage: 24 layers
                params = stage_params(ctx, s, c, 1).total();
            }
            const ComputeDevice dev = ComputeDevice::of(cl.gpu);
            const double bytes = p == Precision::bf16 ? 10.0 : 6.0;
            QVERIFY(near(weight[1] - weight[0], memory_bound_time_s(dev, params * bytes), 1e-6));
        }
    }

    // Cross-entropy bytes per logit: Megatron on an fp32 copy of the logits 38 forward, 14 backward;
    // torchtitan's eager F.cross_entropy on pred.float() 22 and 26.
    void cross_entropy_bytes_per_framework()
    {
        for (const auto& [framework, fwd, bwd] :
            { std::tuple { Framework::megatron, 38.0, 14.0 }, std::tuple { Framework::torchtitan, 22.0, 26.0 } }) {
            const Layer l(framework, false, Recompute::none);
            LayerOps out;
            build_output_ops(l.context(), out);
            const double logits = 12.0 * 8192 * (128256.0 / 8);
            int losses = 0;
            for (int i = 0; i < out.count; ++i) {
                const LayerOp& o = out.op[i];
                if (o.kind != OpKind::loss)
                    continue;
                ++losses;
                QVERIFY(near(o.bytes, logits * (o.phase == OpPhase::forward ? fwd : bwd), 1e-9));
            }
            QCOMPARE(losses, 2);
        }
    }

    // Unstated settings of published rows follow the frameworks' own recipes.
    // GPT-OSS: 64 heads of head_dim 64 (4096 wide) on a 2880-wide residual stream: QKV, the output
    // projection and the attention core are sized by head_dim, not hidden/heads = 45.
    void gpt_oss_attention_uses_head_dim_64()
    {
        GptOssLayer g;
        QCOMPARE(g.model.head_dim(), 64LL);
        LayerOps ops;
        build_layer_ops(g.context(), true, ops);
        const LayerOp* qkv = g.first(ops, OpKind::qkv_proj, OpPhase::forward);
        const LayerOp* out = g.first(ops, OpKind::out_proj, OpPhase::forward);
        const LayerOp* att = g.first(ops, OpKind::attention, OpPhase::forward);
        QVERIFY(qkv && out && att);
        QCOMPARE(static_cast<double>(qkv->n), 64.0 * 64 + 2 * 8 * 64); // q + k + v = 4096 + 1024
        QCOMPARE(static_cast<double>(qkv->k), 2880.0);
        QCOMPARE(static_cast<double>(out->k), 4096.0);
        QCOMPARE(static_cast<double>(out->n), 2880.0);
        // Attention FLOPs, forward: half the layers full causal, 2*b*h*(s^2/2)*(64+64); half windowed,
        // 2*b*h*pairs*(64+64) with pairs = 128*129/2 + (4096-128)*128 (HF layer_types, window 128).
        const double s = 4096, h = 64, d = 64;
        const double causal = 2 * h * (s * s / 2) * (d + d);
        const double pairs = 128.0 * 129 / 2 + (s - 128) * 128;
        QCOMPARE(windowed_attention_pairs(s, 128), pairs);
        const double windowed = 2 * h * pairs * (d + d);
        QVERIFY(near(att->flops, 0.5 * causal + 0.5 * windowed, 1e-9));
    }

    // A 128-token window over 4096 tokens: each 128-query block touches ceil((128+127)/128) = 2 key
    // blocks, so the kernel computes 4096*256 pairs for 520,384 useful ones; it still costs far less
    // than full causal attention, but more per useful FLOP.
    void sliding_window_attention_costs_its_band()
    {
        QCOMPARE(windowed_attention_executed_pairs(4096, 128), 4096.0 * 256);
        QCOMPARE(windowed_attention_executed_pairs(100, 128), 100.0 * 100); // shorter than the window
        GptOssLayer g;
        const ComputeDevice dev = ComputeDevice::of(g.cluster.gpu);
        double full_flops = 0, band_flops = 0;
        const double full = flash_attention_fwd_s(dev, 64, 4096, 4096, 64, 64, true, &full_flops);
        const double band = flash_attention_windowed_fwd_s(dev, 64, 4096, 128, 64, 64, &band_flops);
        QVERIFY(band < 0.5 * full);
        QVERIFY(band / band_flops > full / full_flops);
        double bwd_flops = 0;
        flash_attention_windowed_bwd_s(dev, 64, 4096, 128, 64, 64, &bwd_flops);
        QVERIFY(near(bwd_flops, 2.5 * band_flops, 1e-12)); // FlashAttention backward: 5 matmuls vs 2
    }

    // The attention forward computes one exponential per score on the special-function unit, 16 per
    // clock and SM on Hopper and Blackwell, against 4,096 and 8,192 dense bf16 tensor FLOPs per clock
    // and SM (FlashAttention-4, Sec. 2): with 4*d FLOPs per score, head dim 128 balances the two on
    // Blackwell, so at head dim 64 a B200 forward takes as long per score as at 128 (GPT-OSS), while on
    // Hopper head dim 64 is the balance point and keeps its FLOP-bound time (0.5 / 0.9 of head dim 128's,
    // 0.9 the head-dim tile factor). The backward (5 matmuls per exp) stays FLOP-bound on both.
    void attention_forward_is_exp_bound_below_the_balance_head_dim()
    {
        const ComputeDevice b200 = ComputeDevice::of(test::gpu("B200"));
        const ComputeDevice h100 = ComputeDevice::of(test::gpu("H100-SXM5-80GB"));
        auto fwd = [](const ComputeDevice& d, double hd) {
            return flash_attention_fwd_s(d, 64, 4096, 4096, hd, hd, true) - d.gen->kernel_overhead_s;
        };
        auto bwd = [](const ComputeDevice& d, double hd) {
            return flash_attention_bwd_s(d, 64, 4096, 4096, hd, hd, true) - 2 * d.gen->kernel_overhead_s;
        };
        const double tile_factor_64 = (64.0 / 80) * (144.0 / 128);
        QVERIFY(near(fwd(b200, 64), fwd(b200, 128), 1e-9));
        QVERIFY(near(fwd(h100, 64) / fwd(h100, 128), 0.5 / tile_factor_64, 1e-9));
        QVERIFY(near(bwd(b200, 64) / bwd(b200, 128), 0.5 / tile_factor_64, 1e-9));
        // The sliding-window forward pays the same floor per executed score.
        double flops = 0;
        const double band64 = flash_attention_windowed_fwd_s(b200, 64, 4096, 128, 64, 64, &flops);
        const double band128 = flash_attention_windowed_fwd_s(b200, 64, 4096, 128, 128, 128, &flops);
        QVERIFY(near(band64, band128, 1e-9));
    }

    // GPT-OSS's YaRN rotary embeddings: Megatron-Bridge keeps apply_rope_fusion only for
    // position_embedding_type "rope" (fusions.validate_rope_fusion_compatibility), so Megatron-core applies
    // them op by op to Q and K: 4096 tokens x (4096 + 512) bf16 elements, 24 B each forward and 20 B
    // backward. A plain-RoPE model, and a framework without the rule, cost no RoPE pass.
    void yarn_rope_runs_unfused_in_megatron()
    {
        auto rope_bytes = [](const GptOssLayer& g, OpPhase ph) {
            LayerOps ops;
            build_layer_ops(g.context(), true, ops);
            double bytes = 0;
            for (int i = 0; i < ops.count; ++i)
                if (ops.op[i].kind == OpKind::rope && ops.op[i].phase == ph)
                    bytes += ops.op[i].bytes;
            return bytes;
        };
        GptOssLayer megatron;
        QVERIFY(megatron.model.yarn_rope);
        const double elements = 4096.0 * (4096 + 512);
        QCOMPARE(rope_bytes(megatron, OpPhase::forward), elements * 24);
        QCOMPARE(rope_bytes(megatron, OpPhase::backward_input), elements * 20);
        GptOssLayer plain_rope;
        plain_rope.model.yarn_rope = false;
        QCOMPARE(rope_bytes(plain_rope, OpPhase::forward), 0.0);
        GptOssLayer torchtitan;
        torchtitan.traits = software_traits(Framework::torchtitan);
        QCOMPARE(rope_bytes(torchtitan, OpPhase::forward), 0.0);
    }

    // Learned sinks without a fused kernel (TE < 2.8): the unfused attention materialises the scores,
    // b*h*s*s of them, and keeps them for the backward.
    void attention_sinks_without_fused_kernel_fall_back_to_unfused()
    {
        GptOssLayer fused;
        GptOssLayer unfused;
        unfused.traits.fused_attention_sinks = false;
        LayerOps a, b;
        build_layer_ops(fused.context(), true, a);
        build_layer_ops(unfused.context(), true, b);
        const LayerOp* fa = fused.first(a, OpKind::attention, OpPhase::forward);
        const LayerOp* ua = unfused.first(b, OpKind::attention, OpPhase::forward);
        QVERIFY(fa && ua);
        QCOMPARE(fa->bytes, 0.0);
        const double scores = 64.0 * 4096 * 4096;
        QVERIFY(near(ua->bytes, scores * 2 * 2, 1e-9)); // softmax read + write in bf16, no dropout
        QVERIFY(ua->time_s > 2 * fa->time_s);
        const double saved
            = layer_activation_bytes(unfused.context(), true) - layer_activation_bytes(fused.context(), true);
        QVERIFY(near(saved, scores * 2 - 64.0 * 4096 * 4, 1e-9)); // bf16 scores instead of fp32 LSE
        // A model without sinks keeps the fused kernel whatever the stack.
        unfused.model.attention_sinks = false;
        LayerOps c;
        build_layer_ops(unfused.context(), true, c);
        QCOMPARE(unfused.first(c, OpKind::attention, OpPhase::forward)->time_s, fa->time_s);
    }

    // Megatron-core's all-to-all dispatcher regroups the received rows by local expert after the
    // dispatch and back before the combine (MoEAlltoAllTokenDispatcher.sort_chunks_by_idxs, EP > 1 and
    // more than one local expert): GPT-OSS at EP 8 holds 16 experts, so besides the permute and the
    // un-permute of 4096 tokens x top-4 x 2880 (read + write, bf16) the forward moves the same bytes
    // twice more. DeepEP/HybridEP write the rows in expert order; one expert per rank needs no regroup.
    void alltoall_dispatcher_regroups_rows_by_expert()
    {
        auto passes = [](const GptOssLayer& g, double* bytes) {
            LayerOps ops;
            build_layer_ops(g.context(), true, ops);
            int n = 0;
            for (int i = 0; i < ops.count; ++i) {
                const LayerOp& o = ops.op[i];
                if (o.phase == OpPhase::forward && o.stream == OpStream::compute
                    && (o.kind == OpKind::ep_dispatch || o.kind == OpKind::ep_combine)) {
                    ++n;
                    *bytes = o.bytes;
                }
            }
            return n;
        };
        const double row_pass = 4096.0 * 4 * 2880 * (2 + 2);
        GptOssLayer alltoall;
        double bytes = 0;
        QCOMPARE(passes(alltoall, &bytes), 4);
        QCOMPARE(bytes, row_pass);
        GptOssLayer deepep;
        deepep.training.moe_dispatcher = MoeDispatcher::deepep;
        QCOMPARE(passes(deepep, &bytes), 2);
        GptOssLayer one_expert_per_rank;
        one_expert_per_rank.model.moe->experts = 8;
        QCOMPARE(passes(one_expert_per_rank, &bytes), 2);
    }

    // Transformer Engine's GroupedLinear issues one cuBLAS GEMM per local expert: 16 experts of
    // Qwen3-30B-A3B's width (FC1 N = 2*768) at 2048 rows each cost more per FLOP than the same FLOPs
    // in one GEMM, by their own tiles and waves and 15 more kernel launches and tails.
    void small_expert_grouped_gemm_is_slower_per_flop()
    {
        const ComputeDevice dev = ComputeDevice::of(test::gpu("B200"));
        const double grouped = per_expert_gemm_time_s(dev, 2048, 1536, 2048, Precision::fp8, 16);
        const double one = gemm_time_s(dev, 16 * 2048, 1536, 2048, Precision::fp8, 1);
        QVERIFY(grouped > one);
        QVERIFY(near(
            grouped - gemm_time_s(dev, 2048, 1536, 2048, Precision::fp8, 16), 15 * dev.gen->kernel_overhead_s, 1e-9));
        // A single expert is a plain GEMM.
        QCOMPARE(per_expert_gemm_time_s(dev, 2048, 1536, 2048, Precision::fp8, 1),
            gemm_time_s(dev, 2048, 1536, 2048, Precision::fp8, 1));
    }

    // A framework release picks its kernels: NeMo 24.03's Transformer Engine ran FlashAttention-2 on
    // Hopper, later containers cuDNN's fused attention; the newest release is the default, and an
    // explicit training.attention_kernel wins over the release.
    void release_selects_the_attention_kernel()
    {
        TrainingSpec t;
        t.seq_len = 131072;
        t.global_batch = 8;
        const ClusterSpec cl = test::cluster("H100-SXM5-80GB", 1, 8, "nvlink4-nvswitch", "ib-ndr");
        const ModelSpec m = test::model("llama3-8b");
        Strategy s;
        s.tp = 8;
        s.dp = 1;
        s.sequence_parallel = true;
        s.recompute = Recompute::full;
        auto step_s = [&](const TrainingSpec& training) {
            const PlanContext ctx(m, training, cl, no_calibration());
            return AnalyticModel(ctx).predict(s).step_time_s;
        };
        const double newest = step_s(t);
        t.software = find_software_release("nemo-24.03");
        QVERIFY(t.software);
        QCOMPARE(PlanContext(m, t, cl, no_calibration()).device.attention_kernel, AttentionKernel::flash2);
        const double old = step_s(t);
        QVERIFY2(old > 1.3 * newest, "128K tokens are mostly attention: FlashAttention-2 is much slower");
        t.software = find_software_release("nemo-26.02");
        QCOMPARE(step_s(t), newest);
        t.software = find_software_release("nemo-24.03");
        t.attention_kernel = AttentionKernel::best;
        QCOMPARE(step_s(t), newest);
        // Fused attention sinks arrived with Transformer Engine 2.8 (the 25.11 container).
        QVERIFY(!software_traits(Framework::megatron, find_software_release("nemo-25.09")).fused_attention_sinks);
        QVERIFY(software_traits(Framework::megatron, find_software_release("nemo-25.11")).fused_attention_sinks);
        QVERIFY(software_traits(Framework::megatron, nullptr).fused_attention_sinks);
    }

    // The fp8 recipe: per-tensor current scaling runs amax, scale and cast kernels per GEMM operand, so
    // a dropless MoE layer (host-issued per-expert GEMMs) waits longer on the host than with MXFP8's one
    // fused quantise kernel; its separate amax pass also reads each quantised input once more.
    void fp8_recipe_sets_quantisation_kernels_and_traffic()
    {
        GptOssLayer layer;
        layer.training.precision = Precision::fp8;
        auto host_and_cast = [&](Fp8Scaling scaling) {
            layer.training.fp8_scaling = scaling;
            LayerOps ops;
            build_layer_ops(layer.context(), true, ops);
            const LayerOp* host = layer.first(ops, OpKind::expert_host, OpPhase::forward);
            const LayerOp* cast = layer.first(ops, OpKind::fp8_cast, OpPhase::forward);
            return std::pair { host ? host->time_s : 0.0, cast ? cast->bytes : 0.0 };
        };
        const auto [mx_host, mx_cast] = host_and_cast(Fp8Scaling::mxfp8);
        const auto [cs_host, cs_cast] = host_and_cast(Fp8Scaling::tensorwise);
        const auto [dl_host, dl_cast] = host_and_cast(Fp8Scaling::delayed);
        // 16 local experts x 2 GEMMs x (GEMM + 2 quantisations) x 20 us of host work per kernel.
        QVERIFY(near(mx_host, 16 * 2 * 3 * 20e-6, 1e-9));
        QVERIFY(near(cs_host, 16 * 2 * 7 * 20e-6, 1e-9));
        QCOMPARE(dl_host, mx_host);
        // Cast, transposed copy and scales: 3 + 1 + 2/32 bytes; current scaling's amax pass adds 2.
        QVERIFY(near(cs_cast / dl_cast, 6.0 / 4.0, 1e-9));
        QVERIFY(near(mx_cast / dl_cast, (4.0 + 2.0 / 32) / 4.0, 1e-9));
        // A capacity factor lets the host run ahead: it waits only for what the layer's GPU work so far
        // does not cover.
        layer.model.moe->capacity_factor = 1.0;
        const auto [cap_host, cap_cast] = host_and_cast(Fp8Scaling::tensorwise);
        QVERIFY(cap_host < cs_host);
        QCOMPARE(cap_cast, cs_cast);
    }

    // A run on a container the catalogue lacks is costed with the release before it.
    void uncatalogued_release_maps_to_the_one_before()
    {
        QCOMPARE(software_release_at(Framework::megatron, 2026, 4)->id, std::string_view("nemo-26.02.01"));
        QCOMPARE(software_release_at(Framework::megatron, 2026, 2)->id, std::string_view("nemo-26.02"));
        QCOMPARE(software_release_at(Framework::megatron, 2024, 5)->id, std::string_view("nemo-24.03"));
        QCOMPARE(software_release_at(Framework::megatron, 2025, 11)->id, std::string_view("nemo-25.11"));
        QCOMPARE(software_release_at(Framework::megatron, 2023, 1)->id, std::string_view("nemo-24.03"));
        QVERIFY(!software_release_at(Framework::torchtitan, 2025, 1));
        QCOMPARE(newest_software_release(Framework::megatron)->id, std::string_view("nemo-26.02.01"));
    }

    // NeMo's long-sequence table names its container; its batch comes from the same page's B200 table.
    void long_sequence_rows_take_their_container()
    {
        std::vector<SkippedRow> skipped;
        const std::vector<ValidationCase> cases
            = read_validation_file("published-moe-and-long-context-runs.json", skipped);
        int longseq = 0, bridge = 0;
        for (const ValidationCase& c : cases) {
            const TrainingSpec& t = c.scenario.training;
            if (c.source_group == "nemolongseq2403") {
                QVERIFY2(t.software && t.software->id == "nemo-24.03", c.id.c_str());
                QCOMPARE(t.global_batch * t.seq_len, 4LL * 1024 * 1024);
                ++longseq;
            }
            if (c.source_group == "mbridge2511") {
                QVERIFY2(t.software && t.software->id == "nemo-25.11", c.id.c_str());
                ++bridge;
            }
            // The precision column names the fp8 recipe.
            if (c.id.find("mxfp8") != std::string::npos || c.id.find("fp8-mx") != std::string::npos)
                QCOMPARE(t.fp8_scaling, Fp8Scaling::mxfp8);
            if (c.id.find("fp8-cs") != std::string::npos)
                QCOMPARE(t.fp8_scaling, Fp8Scaling::tensorwise);
            if (c.source_group == "nemolongseq2403")
                QCOMPARE(t.fp8_scaling, Fp8Scaling::delayed);
            if (c.id == "deepseekv3_2048h800_production")
                QCOMPARE(t.fp8_scaling, Fp8Scaling::blockwise);
        }
        QCOMPARE(longseq, 9);
        QVERIFY(bridge >= 10);
    }

    void published_rows_follow_the_recipes()
    {
        std::vector<SkippedRow> skipped;
        const std::vector<ValidationCase> cases = read_validation_file("published-runs.json", skipped);
        int nemo = 0, llama3 = 0;
        for (const ValidationCase& c : cases) {
            const Strategy& s = c.scenario.strategy;
            if (c.source_group == "nemo2407" && c.id.find("gpt3") == std::string::npos) {
                // NeMo 24.07 launcher recipes: activations_checkpoint_granularity null.
                QVERIFY2(s.recompute == Recompute::none, c.id.c_str());
                QVERIFY(!c.recompute_unstated);
                ++nemo;
            }
            if (c.source_group == "llama3") {
                // Paper Sec. 3.3.2: interleaved, first and last stage one layer short; 126 layers on 16
                // stages as 4 chunks of 2 layers per rank with 7 layers on the end stages.
                QCOMPARE(s.schedule, Schedule::interleaved);
                QCOMPARE(s.vpp, 4);
                QCOMPARE(s.first_stage_layers, 7);
                QCOMPARE(s.last_stage_layers, 7);
                QCOMPARE(s.first_stage_layers + s.last_stage_layers + (s.pp - 2) * 8, c.scenario.model.layers);
                if (c.scenario.training.seq_len <= 8192)
                    QVERIFY(s.recompute == Recompute::none);
                ++llama3;
            }
        }
        QVERIFY(nemo >= 10);
        QCOMPARE(llama3, 3);
    }

    // Dropless experts wait for the host to issue their GEMMs. Up to NeMo 26.02 each fp8 quantisation kernel
    // around an expert GEMM costs a module call (per-tensor current scaling: 1 GEMM + 2 x 3 kernels at 20 us);
    // from 26.02.01 Transformer Engine issues them from C++ at a bare launch (3.8 us) each.
    void expert_quantisation_host_cost_follows_the_release()
    {
        const ModelSpec m = test::model("qwen3-30b-a3b");
        TrainingSpec t;
        t.seq_len = 4096;
        t.global_batch = 16;
        t.precision = Precision::fp8;
        t.fp8_scaling = Fp8Scaling::tensorwise;
        const ClusterSpec c = test::cluster("H100-SXM5-80GB", 2, 8, "nvlink4-nvswitch", "ib-ndr");
        Strategy s;
        s.dp = 16;
        s.ep = 16;
        const auto host_fwd = [&](const char* release) {
            LayerContext lc = test::layer_context(m, t, s, c);
            lc.traits = software_traits(Framework::megatron, find_software_release(release));
            LayerOps ops;
            build_layer_ops(lc, true, ops);
            double sum = 0;
            for (int i = 0; i < ops.count; ++i)
                if (ops.op[i].kind == OpKind::expert_host && ops.op[i].phase == OpPhase::forward)
                    sum += ops.op[i].time_s;
            return sum;
        };
        const double local_experts = 128.0 / 16;
        QVERIFY(near(host_fwd("nemo-26.02"), local_experts * 2 * 20e-6 * 7, 1e-9));
        QVERIFY(near(host_fwd("nemo-26.02.01"), local_experts * 2 * (20e-6 + 6 * 3.8e-6), 1e-9));
        // Captured whole iterations issue nothing at run time.
        t.cuda_graphs = CudaGraphs::full_iteration;
        QCOMPARE(host_fwd("nemo-26.02"), 0.0);
    }

    // Megatron-Bridge's Llama 3.1 405B on GB200 runs PP 16 x VP 8 = 128 chunks over 126 layers: the recipe
    // counts the embedding and the loss as a layer each. Read as the nearest layout Parallax expresses.
    void embedding_and_loss_take_a_pipeline_slot()
    {
        std::vector<SkippedRow> skipped;
        const std::vector<ValidationCase> cases
            = read_validation_file("published-moe-and-long-context-runs.json", skipped);
        for (const SkippedRow& row : skipped)
            QVERIFY2(row.reason.find("pipeline chunks") == std::string::npos, row.id.c_str());
        int shifted = 0;
        for (const ValidationCase& c : cases) {
            const Strategy& s = c.scenario.strategy;
            if (c.id.find("gb200_llama3.1-405b") == std::string::npos || s.pp != 16 || s.first_stage_layers == 0)
                continue;
            QCOMPARE(s.vpp, 4);
            QCOMPARE(s.first_stage_layers, 7);
            QCOMPARE(s.last_stage_layers, 7);
            QCOMPARE(s.first_stage_layers + s.last_stage_layers + (s.pp - 2) * 2 * s.vpp, c.scenario.model.layers);
            ++shifted;
        }
        QVERIFY(shifted >= 9);
    }

    // A Megatron-Bridge MoE row that does not say how its recipe ran the experts gets what that container's
    // Blackwell recipes do; whatever a row states wins, and other GPUs and containers keep the defaults.
    void megatron_bridge_moe_rows_take_their_containers_recipe()
    {
        const auto row = [](const char* container, const char* system, int gpus_per_node, const char* gpu,
                             const char* precision, const char* extra) {
            return nlohmann::json::parse(std::string(R"({"id": "t", "year": 2026,
                "source": "NVIDIA-NeMo/Megatron-Bridge docs/performance-summary.md, )")
                + container + " NeMo container, " + system + R"( row",
                "model": {"name": "Qwen3-30B-A3B", "n_layers": 48, "hidden_size": 2048, "n_heads": 32,
                    "n_kv_heads": 4, "vocab_size": 151936, "n_experts": 128, "top_k": 8, "expert_ffn_size": 768,
                    "seq_len": 4096},
                "hardware": {"gpu_type": ")"
                + gpu + R"(", "gpus_per_node": )" + std::to_string(gpus_per_node) + R"(, "n_gpus": 8},
                "strategy": {"tp": 1, "pp": 1, "cp": 1, "ep": 8, "micro_batch_size": 4, "global_batch_size": 512,
                    "distributed_optimizer": true, "precision": ")"
                + precision + "\"" + extra + R"(},
                "result": {"tokens_per_sec_per_gpu": 40000}})");
        };
        const auto read = [](const nlohmann::json& r) { return test::published_row_scenario(r); };
        const char* rack = "GB200 NVL72 (B200-class GPU)";
        const Scenario full = read(row("26.06", "DGX-GB200", 72, rack, "mxfp8", ""));
        QCOMPARE(full.training.moe_dispatcher, MoeDispatcher::deepep);
        QCOMPARE(full.training.cuda_graphs, CudaGraphs::full_iteration);
        QVERIFY(full.strategy.ep_overlap);
        const Scenario layers = read(row("26.04", "DGX-GB200", 72, rack, "mxfp8", ""));
        QCOMPARE(layers.training.cuda_graphs, CudaGraphs::layers);
        QVERIFY(!layers.strategy.ep_overlap);
        const Scenario bf16 = read(row("26.06", "DGX-GB200", 72, rack, "bf16", ""));
        QCOMPARE(bf16.training.cuda_graphs, CudaGraphs::layers);
        // An 8-GPU DGX B200 dispatches through HybridEP too, without graphs.
        const Scenario dgx = read(row("26.06", "DGX-B200", 8, "B200 (DGX B200)", "mxfp8", ""));
        QCOMPARE(dgx.training.moe_dispatcher, MoeDispatcher::deepep);
        QCOMPARE(dgx.training.cuda_graphs, CudaGraphs::none);
        // Stated settings win; Hopper rows and containers before 25.11 keep the defaults.
        const Scenario stated = read(row("26.06", "DGX-GB200", 72, rack, "mxfp8",
            R"(, "moe_dispatcher": "alltoall", "cuda_graphs": "none", "ep_overlap": false)"));
        QCOMPARE(stated.training.moe_dispatcher, MoeDispatcher::all_to_all);
        QCOMPARE(stated.training.cuda_graphs, CudaGraphs::none);
        QVERIFY(!stated.strategy.ep_overlap);
        const Scenario hopper = read(row("26.06", "DGX-H100", 8, "H100-SXM5-80GB", "fp8", ""));
        QCOMPARE(hopper.training.moe_dispatcher, MoeDispatcher::all_to_all);
        const Scenario old = read(row("25.09", "DGX-GB200", 72, rack, "mxfp8", ""));
        QCOMPARE(old.training.moe_dispatcher, MoeDispatcher::all_to_all);
        QCOMPARE(old.training.cuda_graphs, CudaGraphs::none);
    }

    // torchtitan's async-TP benchmarks (docs/async_tp.md of pytorch/torchtitan, June 2025; Grand Teton H100s
    // at their 500 W default limit, torch.compile, bf16): Llama 3.1 8B on 64 H100, FSDP 8 x TP 8, per-op SAC,
    // local batch 12: 4,378 -> 4,809.4 tokens/s (1.10x); Llama 3.1 70B on 256 H100, FSDP 32 x TP 8, full AC,
    // local batch 16: 597.3 -> 652.4 (1.09x). The end-to-end speed-up of the fused overlap must come out
    // within 5 percentage points of each, and the throughputs within 10%.
    void async_tp_speedup_matches_the_published_benchmarks()
    {
        struct Case {
            const char* model;
            int nodes;
            int dp;
            int local_batch;
            Recompute recompute;
            double vanilla, async; // tokens/s per GPU
        };
        const Case cases[] = { { "llama3.1-8b", 8, 8, 12, Recompute::selective, 4378.0, 4809.4 },
            { "llama3.1-70b", 32, 32, 16, Recompute::full, 597.3, 652.4 } };
        for (const Case& c : cases) {
            TrainingSpec t;
            t.framework = Framework::torchtitan_compile;
            t.seq_len = 8192;
            t.global_batch = static_cast<long long>(c.local_batch) * c.dp;
            t.power_cap_W = 500;
            const PlanContext ctx(
                test::model(c.model), t, test::cluster("H100-SXM5-80GB", c.nodes, 8, "nvlink4-nvswitch", "ib-ndr"));
            Strategy s;
            s.tp = 8;
            s.dp = c.dp;
            s.zero = 3;
            s.sequence_parallel = true;
            s.micro_batch = c.local_batch;
            s.recompute = c.recompute;
            const Prediction vanilla = AnalyticModel(ctx).predict(s);
            s.tp_comm_overlap = true;
            const Prediction async = AnalyticModel(ctx).predict(s);
            QVERIFY(vanilla.feasible && async.feasible);
            const double gpus = 8.0 * c.nodes;
            const double speedup = vanilla.step_time_s / async.step_time_s - 1;
            const double published = c.async / c.vanilla - 1;
            QVERIFY2(std::fabs(speedup - published) < 0.05,
                qPrintable(QStringLiteral("%1: %2 vs %3").arg(QLatin1String(c.model)).arg(speedup).arg(published)));
            QVERIFY(near(vanilla.tokens_per_s / gpus, c.vanilla, 0.10));
            QVERIFY(near(async.tokens_per_s / gpus, c.async, 0.10));
        }
    }

    // Tile-level overlap of the expert all-to-alls with the grouped GEMMs (Comet): with EP 8 the rank's own
    // eighth of the rows computes while the other seven arrive, so each all-to-all hides under 7/8 of its
    // GEMM: dispatch under the up projection, combine under the down projection in the forward; in the
    // backward the output gradients' dispatch under the down projection's data gradient and the input
    // gradients' combine under the up projection's. Exposed EP time per pass: sum of max(0, a2a - 7/8 GEMM).
    void ep_tile_overlap_hides_the_all_to_all_under_the_grouped_gemms()
    {
        GptOssLayer plain, fused;
        fused.strategy.ep_tile_overlap = true;
        LayerOps a, b;
        build_layer_ops(plain.context(), true, a);
        build_layer_ops(fused.context(), true, b);
        const LayerTotals ta = summarize(a), tb = summarize(b);
        auto time_of = [&](OpKind k, OpPhase ph, int nth) {
            int seen = 0;
            for (int i = 0; i < b.count; ++i)
                if (b.op[i].kind == k && b.op[i].phase == ph && seen++ == nth)
                    return b.op[i].time_s;
            return -1.0;
        };
        const double f = 7.0 / 8.0;
        const OpPhase fw = OpPhase::forward, bw = OpPhase::backward_input;
        const double dispatch = time_of(OpKind::ep_dispatch, fw, 1); // after the permutation copy
        const double combine = time_of(OpKind::ep_combine, fw, 1); // after the regrouping by expert
        const double up = time_of(OpKind::expert_up, fw, 0), down = time_of(OpKind::expert_down, fw, 0);
        QVERIFY(dispatch > 0 && combine > 0 && up > 0 && down > 0);
        const double want_fwd = std::max(0.0, dispatch - f * up) + std::max(0.0, combine - f * down);
        QVERIFY2(near(tb.comm_exposed_fwd_s[kEpStream], want_fwd, 1e-9),
            qPrintable(QStringLiteral("%1 vs %2").arg(tb.comm_exposed_fwd_s[kEpStream]).arg(want_fwd)));
        QVERIFY(near(ta.comm_exposed_fwd_s[kEpStream], dispatch + combine, 1e-9));
        // Backward: the same transfers, now under the data-gradient GEMMs.
        const double up_dgrad = time_of(OpKind::expert_up, bw, 0), down_dgrad = time_of(OpKind::expert_down, bw, 0);
        const double want_bwd = std::max(0.0, combine - f * down_dgrad) + std::max(0.0, dispatch - f * up_dgrad);
        QVERIFY(near(tb.comm_exposed_bwd_s[kEpStream], want_bwd, 1e-9));
        QVERIFY(tb.comm_exposed_bwd_s[kEpStream] < ta.comm_exposed_bwd_s[kEpStream]);
        // The busy time on the link does not change: only where it runs.
        QVERIFY(near(tb.comm_busy_s[kEpStream], ta.comm_busy_s[kEpStream], 1e-12));
    }

    // Megatron's overlapped parameter gather (distributed optimizer, `overlap_param_gather`) starts the first
    // bucket's all-gather before the next step's forward and each further one as the forward reaches the
    // bucket before it: only the first micro-batch's forward hides it. A gather longer than that forward
    // shows its excess (at least one bucket); a long forward leaves only the first bucket; without the
    // overlap all of it is exposed.
    void parameter_gather_hides_only_under_the_first_forward()
    {
        const ModelSpec m = test::gpt(32, 4096, 32);
        struct Outcome {
            double exposed_gather_s, gather_s, first_bucket_s, forward_s;
        };
        const auto run = [&](int micro_batch, int seq, bool overlap) {
            TrainingSpec t;
            t.seq_len = seq;
            t.global_batch = 64 * micro_batch * 4;
            const PlanContext ctx(
                m, t, test::cluster("H100-SXM5-80GB", 64, 8, "nvlink4-nvswitch", "ib-hdr"), no_calibration());
            Strategy s;
            s.dp = 64;
            s.zero = 1;
            s.micro_batch = micro_batch;
            s.overlap_grad_reduce = false; // the whole reduction exposed: what is left over is the gather's
            s.overlap_param_gather = overlap;
            EvaluationCache cache(ctx);
            StrategyCosts c;
            compute_costs(ctx, s, cache, c);
            const StageTail tail = stage_tail(ctx, s, c, 0);
            const Prediction p = AnalyticModel(ctx).predict(s);
            return Outcome { p.time.exposed_dp_s - tail.grad_reduce_s, tail.param_gather_s,
                tail.param_gather_s * tail.last_bucket_fraction, stage_timing_at(ctx, s, c, 0, 1.0).forward_s };
        };
        const Outcome short_fwd = run(1, 1024, true);
        QVERIFY2(short_fwd.forward_s < 0.5 * short_fwd.gather_s, std::to_string(short_fwd.forward_s).c_str());
        QVERIFY(short_fwd.exposed_gather_s > short_fwd.first_bucket_s);
        QVERIFY2(near(short_fwd.exposed_gather_s, short_fwd.gather_s - short_fwd.forward_s, 0.05),
            std::to_string(short_fwd.exposed_gather_s).c_str());
        const Outcome long_fwd = run(16, 4096, true);
        QVERIFY(long_fwd.forward_s > long_fwd.gather_s);
        QVERIFY(near(long_fwd.exposed_gather_s, long_fwd.first_bucket_s, 1e-6));
        const Outcome not_overlapped = run(1, 1024, false);
        QVERIFY(near(not_overlapped.exposed_gather_s, not_overlapped.gather_s, 1e-6));
    }

    // Megatron-Core sizes its gradient buckets max(40M, 1M x DP) parameters
    // (megatron/core/distributed/distributed_data_parallel.py), so at DP 192 (GPT-3 175B on 12,288 A100,
    // TP 8 x PP 8, MegaScale's largest run) the first stage's last bucket, which cannot overlap the
    // backward, holds 192M parameters; at DP 4 the 40M floor holds. Other engines keep a fixed bucket.
    void gradient_bucket_grows_with_data_parallel_size()
    {
        const ModelSpec m = test::gpt(96, 12288, 96);
        for (int dp : { 4, 192 }) {
            for (Framework f : { Framework::megatron, Framework::torchtitan }) {
                TrainingSpec t;
                t.seq_len = 2048;
                t.global_batch = 6144;
                t.framework = f;
                const PlanContext ctx(
                    m, t, test::cluster("A100-SXM4-80GB", 8 * dp, 8, "nvlink3-nvswitch", "ib-hdr"), no_calibration());
                Strategy s;
                s.tp = 8;
                s.pp = 8;
                s.dp = dp;
                s.zero = 1;
                s.overlap_grad_reduce = true;
                EvaluationCache cache(ctx);
                StrategyCosts c;
                compute_costs(ctx, s, cache, c);
                const StageTail tail = stage_tail(ctx, s, c, 0);
                const double bucket = f == Framework::megatron && dp == 192 ? 192e6 : 40e6;
                QVERIFY(near(tail.last_bucket_fraction, bucket / tail.params, 1e-9));
            }
        }
    }

    // DeepSpeed's "fp32_allreduce" casts each 16-bit gradient bucket to fp32 before the all-reduce
    // (runtime/engine.py allreduce_bucket): twice the bytes on the wire, and an fp32 copy of the flat bucket
    // beside it. Megatron already reduces its fp32 main gradients: the switch changes nothing there.
    void fp32_gradient_reduction_moves_four_bytes_per_parameter()
    {
        const ModelSpec m = test::gpt(24, 1024, 16);
        const ClusterSpec cluster = test::cluster("V100-SXM2-16GB", 16, 4, "nvlink2", "ib-hdr");
        Strategy s;
        s.dp = 16;
        s.micro_batch = 8; // enough activations that the backward, not the optimizer step, sets the peak
        struct Outcome {
            double reduce_s, expected_s, params, peak_bytes;
        };
        const auto run = [&](Framework f, bool fp32_reduce) {
            TrainingSpec t;
            t.precision = Precision::fp16;
            t.seq_len = 1024;
            t.global_batch = 128;
            t.framework = f;
            t.grad_reduce_in_fp32 = fp32_reduce;
            const PlanContext ctx(m, t, cluster, no_calibration());
            EvaluationCache cache(ctx);
            StrategyCosts c;
            compute_costs(ctx, s, cache, c);
            const StageTail tail = stage_tail(ctx, s, c, 0);
            const double bytes_per_param = f == Framework::megatron || fp32_reduce ? 4.0 : 2.0;
            const double expected = collective_time_s(
                ctx.network, Collective::all_reduce, tail.params * bytes_per_param, c.groups.dp_dense);
            return Outcome { tail.grad_reduce_s, expected, tail.params, AnalyticModel(ctx).predict(s).memory.total() };
        };
        const Outcome half = run(Framework::megatron_deepspeed, false);
        const Outcome full = run(Framework::megatron_deepspeed, true);
        QVERIFY(near(half.reduce_s, half.expected_s, 1e-9));
        QVERIFY(near(full.reduce_s, full.expected_s, 1e-9));
        QVERIFY(full.reduce_s > 1.8 * half.reduce_s);
        // The whole model fits one 5e8-element bucket: its fp32 copy adds 4 bytes per parameter.
        QVERIFY(near(full.peak_bytes - half.peak_bytes, 4.0 * full.params, 1e-6));
        const Outcome megatron = run(Framework::megatron, false);
        const Outcome megatron_fp32 = run(Framework::megatron, true);
        QVERIFY(near(megatron.reduce_s, megatron.expected_s, 1e-9));
        QVERIFY(near(megatron.reduce_s, megatron_fp32.reduce_s, 1e-12));
        QVERIFY(near(megatron.peak_bytes, megatron_fp32.peak_bytes, 1e-12));
    }

    // GPT-OSS's experts carry biases. Megatron-core adds the FC2 bias outside the grouped GEMM, expert by
    // expert, as eager PyTorch ops with the fp32 routing probabilities (TEGroupedMLP._apply_bias): 28 bytes
    // per routed element forward, 36 backward. torchtitan and the op-fused whole-iteration graphs do not.
    void expert_bias_is_added_op_by_op_in_megatron()
    {
        static const ClusterSpec c = test::cluster("B200", 8, 8, "nvlink5-nvswitch", "ib-ndr");
        const ModelSpec m = test::model("gpt-oss-120b");
        QVERIFY(m.expert_bias);
        TrainingSpec t;
        t.seq_len = 4096;
        Strategy s;
        s.ep = 8;
        s.dp = 8;
        s.micro_batch = 4;
        const auto bias_bytes = [&](const ModelSpec& model, const TrainingSpec& tr, Framework f, OpPhase ph) {
            LayerContext lc = test::layer_context(model, tr, s, c);
            lc.traits = software_traits(f);
            LayerOps ops;
            build_layer_ops(lc, true, ops);
            double bytes = 0;
            for (int i = 0; i < ops.count; ++i)
                if (ops.op[i].kind == OpKind::expert_bias && ops.op[i].phase == ph)
                    bytes += ops.op[i].bytes;
            return bytes;
        };
        // 4 sequences of 4,096 tokens, each sent to 4 experts: the rank's 16 experts receive as many rows.
        const double routed = 4.0 * 4096 * m.moe->top_k * static_cast<double>(m.hidden);
        QVERIFY(near(bias_bytes(m, t, Framework::megatron, OpPhase::forward), 28 * routed, 1e-9));
        QVERIFY(near(bias_bytes(m, t, Framework::megatron, OpPhase::backward_input), 36 * routed, 1e-9));
        QCOMPARE(bias_bytes(m, t, Framework::torchtitan, OpPhase::forward), 0.0);
        TrainingSpec graphed = t;
        graphed.cuda_graphs = CudaGraphs::full_iteration;
        QCOMPARE(bias_bytes(m, graphed, Framework::megatron, OpPhase::forward), 0.0);
        ModelSpec plain = m;
        plain.expert_bias = false;
        QCOMPARE(bias_bytes(plain, t, Framework::megatron, OpPhase::forward), 0.0);
    }

    // Megatron's selective recomputation by module (TransformerConfig.recompute_modules): the named
    // submodules' forward ops run again before the backward, and their outputs are not kept. In 16-bit the
    // norms' outputs (the QKV and router inputs) and the experts' activation output (the FC2 input) go;
    // MLA's up-projections keep the latents instead of Q, K and V. The published rows of GPT-OSS and
    // DeepSeek-V3 carry their recipes' modules.
    void recompute_modules_rerun_and_free_their_submodules()
    {
        static const ClusterSpec c = test::cluster("H100-SXM5-80GB", 8, 8, "nvlink4-nvswitch", "ib-ndr");
        const ModelSpec m = test::model("gpt-oss-120b");
        TrainingSpec t;
        t.seq_len = 4096;
        Strategy s;
        s.ep = 8;
        s.dp = 8;
        s.micro_batch = 1;
        const auto phase_s = [](const LayerOps& ops, OpPhase ph, OpKind k) {
            double sum = 0;
            for (int i = 0; i < ops.count; ++i)
                if (ops.op[i].phase == ph && ops.op[i].kind == k && ops.op[i].stream == OpStream::compute)
                    sum += ops.op[i].time_s;
            return sum;
        };
        const auto run = [&](Recompute r, unsigned char modules, LayerOps& ops) {
            s.recompute = r;
            s.recompute_modules = modules;
            const LayerContext lc = test::layer_context(m, t, s, c);
            build_layer_ops(lc, true, ops);
            return layer_activation_bytes(lc, true);
        };
        LayerOps none, attn, norm_act;
        const double kept_none = run(Recompute::none, kDefaultRecomputeModules, none);
        const double kept_attn = run(Recompute::selective, kDefaultRecomputeModules, attn);
        const double kept_norm_act = run(Recompute::selective,
            recompute_module_bit(RecomputeModule::layernorm) | recompute_module_bit(RecomputeModule::moe_act),
            norm_act);
        QVERIFY(!norm_act.overflowed);
        // The default module list is the core attention, as before modules existed.
        QVERIFY(phase_s(attn, OpPhase::recompute, OpKind::attention) > 0);
        QVERIFY(near(phase_s(attn, OpPhase::recompute, OpKind::attention),
            phase_s(attn, OpPhase::forward, OpKind::attention), 1e-12));
        // layernorm + moe_act: exactly the two norms and the experts' activation again, nothing else.
        QCOMPARE(phase_s(norm_act, OpPhase::recompute, OpKind::attention), 0.0);
        QVERIFY(near(phase_s(norm_act, OpPhase::recompute, OpKind::norm),
            phase_s(norm_act, OpPhase::forward, OpKind::norm), 1e-12));
        QVERIFY(near(phase_s(norm_act, OpPhase::recompute, OpKind::activation),
            phase_s(norm_act, OpPhase::forward, OpKind::activation), 1e-12));
        QVERIFY(phase_s(norm_act, OpPhase::recompute, OpKind::expert_up) == 0);
        // Freed: two [tokens, h] norm outputs and the routed rows' activation output, in bf16.
        const double tokens = 4096, h = m.hidden, rows = tokens * m.moe->top_k;
        const double freed = 2 * (2 * tokens * h) + 2 * rows * static_cast<double>(m.moe->expert_ffn_hidden);
        QVERIFY2(near(kept_none - kept_norm_act, freed, 1e-9), qPrintable(QString::number(kept_none - kept_norm_act)));
        QVERIFY(near(kept_attn, kept_none, 1e-12)); // flash attention keeps no scores to free
        // The whole MoE block: everything inside it again, its activation not twice.
        LayerOps moe;
        const double kept_moe = run(Recompute::selective,
            recompute_module_bit(RecomputeModule::moe) | recompute_module_bit(RecomputeModule::moe_act), moe);
        QVERIFY(near(phase_s(moe, OpPhase::recompute, OpKind::expert_up),
            phase_s(moe, OpPhase::forward, OpKind::expert_up), 1e-12));
        QVERIFY(near(phase_s(moe, OpPhase::recompute, OpKind::activation),
            phase_s(moe, OpPhase::forward, OpKind::activation), 1e-12));
        QVERIFY(kept_moe < kept_norm_act);
        // One evaluation cache tells plans apart by their modules (a search shares it across plans).
        {
            TrainingSpec tc = t;
            tc.global_batch = 64;
            const PlanContext ctx(m, tc, c, no_calibration());
            EvaluationCache cache(ctx);
            StrategyCosts first, second;
            s.recompute = Recompute::selective;
            s.recompute_modules = kDefaultRecomputeModules;
            compute_costs(ctx, s, cache, first);
            const std::size_t entries = cache.layer_entries();
            s.recompute_modules = recompute_module_bit(RecomputeModule::layernorm);
            compute_costs(ctx, s, cache, second);
            QVERIFY(cache.layer_entries() > entries);
        }

        // MLA's up-projections: two more GEMMs before the backward, the latents kept instead of Q, K, V.
        const ModelSpec ds = test::model("deepseek-v3");
        Strategy d;
        d.ep = 8;
        d.dp = 8;
        d.recompute = Recompute::selective;
        d.recompute_modules = recompute_module_bit(RecomputeModule::mla_up_proj);
        const LayerContext dl = test::layer_context(ds, t, d, c);
        LayerOps up;
        build_layer_ops(dl, true, up);
        int regemms = 0;
        for (int i = 0; i < up.count; ++i)
            regemms += up.op[i].phase == OpPhase::recompute && up.op[i].kind == OpKind::qkv_proj;
        QCOMPARE(regemms, 2);
        const double with_up = layer_activation_bytes(dl, true);
        d.recompute = Recompute::none;
        const double without = layer_activation_bytes(test::layer_context(ds, t, d, c), true);
        const MlaSpec& a = *ds.mla;
        // Q, K and V as the model keeps them: each heads x (nope + rope) wide, in bf16.
        const double qkv = 2 * tokens * 3.0 * ds.heads * (a.qk_nope_head_dim + a.qk_rope_head_dim);
        const double latents = 2 * tokens * (a.q_lora_rank + a.kv_lora_rank + a.qk_rope_head_dim);
        QVERIFY2(near(without - with_up, qkv - latents, 1e-9),
            qPrintable(QString::number((without - with_up) / (qkv - latents))));

        std::vector<SkippedRow> skipped;
        int gpt_oss = 0;
        for (const ValidationCase& v : read_validation_file("published-moe-and-long-context-runs.json", skipped)) {
            if (v.model_name != "GPT-OSS-120B" || v.id.find("_bf16") == std::string::npos
                || v.id.find("mbridge2511") == 0)
                continue;
            const Strategy& vs = v.scenario.strategy;
            if (vs.recompute != Recompute::selective)
                continue; // the GB300 and B300 recipes capture CUDA graphs instead
            ++gpt_oss;
            QVERIFY2(vs.recomputes(RecomputeModule::layernorm) && vs.recomputes(RecomputeModule::moe_act)
                    && !vs.recomputes(RecomputeModule::core_attn),
                v.id.c_str());
        }
        QVERIFY(gpt_oss >= 8);
    }

    // Megatron's gradient buffers take the parameters' dtype when fp32 reduction is off
    // (param_and_grad_buffer.py), as every Megatron-Bridge performance recipe runs: 2 bytes per local
    // parameter less memory and half the reduce-scatter's bytes. The published rows from those tables
    // say so.
    void megatron_bf16_gradient_buffers_halve_memory_and_reduction()
    {
        const ModelSpec m = test::gpt(24, 2048, 16);
        const ClusterSpec cluster = test::cluster("H100-SXM5-80GB", 16, 8, "nvlink4-nvswitch", "ib-ndr");
        Strategy s;
        s.dp = 16;
        s.zero = 1;
        s.micro_batch = 2;
        struct Outcome {
            double reduce_s, params, gradient_bytes;
        };
        const auto run = [&](bool bf16) {
            TrainingSpec t;
            t.seq_len = 2048;
            t.global_batch = 64;
            t.grad_reduce_in_bf16 = bf16;
            const PlanContext ctx(m, t, cluster, no_calibration());
            EvaluationCache cache(ctx);
            StrategyCosts c;
            compute_costs(ctx, s, cache, c);
            const StageTail tail = stage_tail(ctx, s, c, 0);
            return Outcome { tail.grad_reduce_s, tail.params, AnalyticModel(ctx).predict(s).memory.gradients };
        };
        const Outcome fp32 = run(false);
        const Outcome bf16 = run(true);
        QVERIFY(near(fp32.gradient_bytes, 4.0 * fp32.params, 1e-9));
        QVERIFY(near(bf16.gradient_bytes, 2.0 * bf16.params, 1e-9));
        QVERIFY(bf16.reduce_s < 0.6 * fp32.reduce_s);
        QVERIFY(bf16.reduce_s > 0.4 * fp32.reduce_s);
        std::vector<SkippedRow> skipped;
        const std::vector<ValidationCase> rows
            = read_validation_file("published-moe-and-long-context-runs.json", skipped);
        int bridge = 0;
        for (const ValidationCase& c : rows) {
            if (c.source_group.rfind("mbridge", 0) != 0)
                continue;
            ++bridge;
            QVERIFY2(c.scenario.training.grad_reduce_in_bf16, c.id.c_str());
        }
        QVERIFY(bridge > 100);
    }

    // Volta has no bf16 tensor cores: attention and other 16-bit kernels run at its fp16 rate (once they
    // divided by a bf16 peak of 0, and every V100 plan came out with no compute time and no power).
    void volta_runs_sixteen_bit_kernels_at_its_fp16_rate()
    {
        TrainingSpec t;
        t.precision = Precision::fp16;
        t.seq_len = 1024;
        t.global_batch = 8;
        const PlanContext ctx(test::gpt(4, 2048, 16), t, test::cluster("V100-SXM2-32GB", 1, 8, "nvlink2", "ib-hdr"));
        Strategy s;
        s.dp = 8;
        const Prediction p = AnalyticModel(ctx).predict(s);
        QVERIFY(p.feasible);
        QVERIFY(p.time.compute_s > 0);
        QVERIFY(p.mfu > 0.2 && p.mfu < 0.85);
        QVERIFY(std::isfinite(p.power.avg_W_per_gpu) && p.power.avg_W_per_gpu > 0);
    }

    // Megatron-DeepSpeed's eager layers issue one kernel per op from Python (~20 us of host work each,
    // the order NVIDIA measures for a TE GEMM's issue, arXiv 2603.07685): a kernel shorter than that
    // leaves the GPU waiting. At 128 tokens every op of Llama 3 8B's layer is that short on an H100.
    void eager_kernels_wait_on_the_host()
    {
        QCOMPARE(software_traits(Framework::megatron_deepspeed).kernel_host_s, 20e-6);
        QCOMPARE(software_traits(Framework::megatron).kernel_host_s, 0.0);
        Layer l(Framework::megatron_deepspeed, false, Recompute::none);
        l.training.seq_len = 128;
        l.strategy.micro_batch = 1;
        LayerContext floored = l.context();
        floored.traits.layer_host_op_s = 0; // the per-op floor alone (the layer's host budget: next test)
        LayerContext free_running = floored;
        free_running.traits.kernel_host_s = 0;
        LayerOps with_host, without_host;
        build_layer_ops(floored, false, with_host);
        build_layer_ops(free_running, false, without_host);
        QCOMPARE(with_host.count, without_host.count);
        double want_fwd = 0;
        int below = 0;
        for (int i = 0; i < with_host.count; ++i) {
            const LayerOp& a = with_host.op[i];
            const LayerOp& b = without_host.op[i];
            if (a.stream != OpStream::compute) {
                QCOMPARE(a.time_s, b.time_s); // transfers are not issued per kernel
                continue;
            }
            QCOMPARE(a.time_s, std::max(b.time_s, 20e-6));
            below += b.time_s < 20e-6 ? 1 : 0;
            if (a.phase == OpPhase::forward)
                want_fwd += a.time_s;
        }
        QVERIFY(below > 0);
        QVERIFY(near(summarize(with_host).forward_s, want_fwd, 1e-12));
        QVERIFY(summarize(with_host).forward_s > summarize(without_host).forward_s);
    }

    // A Megatron-DeepSpeed layer issues 31 host ops forward and 50 backward (software_stack.cpp counts them
    // in Sailor's OPT layer), ~37 us each: OPT-350M's layer at TP 4 on a GH200 (tf32, no flash, one
    // sequence of 2,048) runs ~0.45 ms of GPU work forward and ~0.8 ms backward, so both passes take the
    // host's 31 x 37 = 1.147 ms and 50 x 37 = 1.85 ms; at micro-batch 8 the GPU work is longer and no pass waits.
    void eager_layer_waits_for_its_host_ops()
    {
        const SoftwareTraits t = software_traits(Framework::megatron_deepspeed);
        QCOMPARE(t.layer_host_ops_fwd, 31.0);
        QCOMPARE(t.layer_host_ops_bwd, 50.0);
        QCOMPARE(t.layer_host_op_s, 37e-6);
        QCOMPARE(software_traits(Framework::megatron).layer_host_op_s, 0.0);
        test::SailorOptLayer layer;
        auto ops_at = [&](int micro_batch) {
            layer.strategy.micro_batch = micro_batch;
            return layer.ops();
        };
        auto waits = [](const LayerOps& ops) {
            int n = 0;
            for (int i = 0; i < ops.count; ++i)
                n += ops.op[i].kind == OpKind::host_wait ? 1 : 0;
            return n;
        };
        const LayerOps one = ops_at(1);
        QCOMPARE(waits(one), 2);
        const LayerTotals t1 = summarize(one);
        QVERIFY(near(t1.fwd_time(), 31 * 37e-6, 1e-9));
        QVERIFY(near(t1.bwd_time(), 50 * 37e-6, 1e-9));
        const LayerOps eight = ops_at(8);
        QCOMPARE(waits(eight), 0);
        QVERIFY(summarize(eight).fwd_time() > 31 * 37e-6);
    }
};

QTEST_APPLESS_MAIN(TestMechanisms)
#include "tst_mechanisms.moc"

// Every formula of the cost model against a hand-worked or published number.
#include "model/analytic_model.hpp"
#include "model/collective_model.hpp"
#include "model/compute_model.hpp"
#include "model/layer_ops.hpp"
#include "model/memory_model.hpp"
#include "model/model_math.hpp"
#include "model/moe_load.hpp"
#include "model/strategy_costs.hpp"
#include "model/topology.hpp"
#include "spec/units.hpp"

#include "../support/test_layers.hpp"
#include "../support/test_plans.hpp"

#include <QTest>

#include <cmath>

using namespace parallax;

namespace {

// Per-layer activation bytes for one micro-batch with the given switches (Korthikanti's setting:
// fp16 activations, 1-byte dropout masks, no flash attention).
double activation_bytes(const ModelSpec& m, long long seq, int micro_batch, int tp, bool sp, Recompute rc, bool flash)
{
    static const ClusterSpec c = test::cluster("A100-SXM4-80GB", 1, 8, "nvlink3-nvswitch", "ib-hdr");
    TrainingSpec t;
    t.seq_len = seq;
    t.global_batch = micro_batch;
    t.precision = Precision::fp16;
    t.flash_attention = flash;
    Strategy s;
    s.tp = tp;
    s.sequence_parallel = sp;
    s.recompute = rc;
    s.micro_batch = micro_batch;
    LayerContext lc;
    lc.model = &m;
    lc.training = &t;
    lc.strategy = &s;
    lc.device = ComputeDevice::of(c.gpu);
    return layer_activation_bytes(lc, false);
}

bool near(double got, double want, double rel)
{
    return std::fabs(got - want) <= rel * std::fabs(want);
}

} // namespace

class TestFormulas : public QObject {
    Q_OBJECT
private slots:
    void activation_memory_table2_data()
    {
        QTest::addColumn<int>("tp");
        QTest::addColumn<bool>("sp");
        QTest::addColumn<int>("recompute");
        QTest::addColumn<double>("expected_coefficient"); // of s*b*h
        // GPT-3 175B: h = 12288, a = 96, s = 2048 -> 5as/h = 80 (Korthikanti Sec. 4.2).
        const double t = 8, as_h = 80;
        QTest::newRow("tp only") << 8 << false << int(Recompute::none) << (10 + 24 / t + as_h / t);
        QTest::newRow("tp + sp") << 8 << true << int(Recompute::none) << (34 + as_h) / t;
        QTest::newRow("tp + selective") << 8 << false << int(Recompute::selective) << (10 + 24 / t);
        QTest::newRow("tp + sp + selective") << 8 << true << int(Recompute::selective) << 34 / t;
        QTest::newRow("full recompute") << 8 << false << int(Recompute::full) << 2.0;
        QTest::newRow("no parallelism") << 1 << false << int(Recompute::none) << (34 + as_h);
    }
    void activation_memory_table2()
    {
        QFETCH(int, tp);
        QFETCH(bool, sp);
        QFETCH(int, recompute);
        QFETCH(double, expected_coefficient);
        const ModelSpec m = test::gpt(96, 12288, 96);
        const double sbh = 2048.0 * 1 * 12288;
        const double got = activation_bytes(m, 2048, 1, tp, sp, static_cast<Recompute>(recompute), false);
        QVERIFY2(near(got, expected_coefficient * sbh, 1e-3),
            qPrintable(QStringLiteral("got %1 sbh, want %2 sbh").arg(got / sbh).arg(expected_coefficient)));
    }

    // Korthikanti et al. 2022, Fig. 1 (transcribed by Calculon): first-stage activations per GPU of the
    // Table 3 configurations, within 5%.
    void activation_memory_figure1_data()
    {
        QTest::addColumn<int>("layers");
        QTest::addColumn<int>("hidden");
        QTest::addColumn<int>("heads");
        QTest::addColumn<int>("pp");
        QTest::addColumn<int>("vpp");
        QTest::addColumn<int>("micro_batch");
        QTest::addColumn<double>("tp_only_GiB");
        QTest::addColumn<double>("seq_sel_GiB");
        QTest::newRow("22B") << 48 << 6144 << 64 << 1 << 1 << 4 << 59.25 << 9.5625;
        QTest::newRow("175B") << 96 << 12288 << 96 << 8 << 3 << 1 << 66.84375 << 12.3515625;
        QTest::newRow("530B") << 105 << 20480 << 128 << 35 << 3 << 1 << 114.0234375 << 23.076171875;
        QTest::newRow("1T") << 128 << 25600 << 160 << 64 << 1 << 1 << 131.25 << 26.5625;
    }
    void activation_memory_figure1()
    {
        QFETCH(int, layers);
        QFETCH(int, hidden);
        QFETCH(int, heads);
        QFETCH(int, pp);
        QFETCH(int, vpp);
        QFETCH(int, micro_batch);
        QFETCH(double, tp_only_GiB);
        QFETCH(double, seq_sel_GiB);
        const ModelSpec m = test::gpt(layers, hidden, heads);
        const double per_layer_tp = activation_bytes(m, 2048, micro_batch, 8, false, Recompute::none, false);
        const double per_layer_ss = activation_bytes(m, 2048, micro_batch, 8, true, Recompute::selective, false);
        // First stage: L/p layers x the in-flight micro-batches of the (interleaved) 1F1B schedule =
        // L layers x (1 + (p-1)/(p v)) (Korthikanti eq. 5 and the interleaving factor).
        Strategy s;
        s.pp = pp;
        s.vpp = vpp;
        s.schedule = vpp > 1 ? Schedule::interleaved : Schedule::one_f_one_b;
        const double in_flight = in_flight_microbatches(s, 0, 1000);
        const double stage_layers = static_cast<double>(layers) / pp;
        const double interleave_factor = vpp > 1 ? 1 + (pp - 1.0) / (pp * vpp) : 1.0;
        QVERIFY(near(in_flight * stage_layers, layers * interleave_factor, 0.02));
        QVERIFY2(near(per_layer_tp * stage_layers * in_flight / units::kGiB, tp_only_GiB, 0.05),
            qPrintable(QString::number(per_layer_tp * stage_layers * in_flight / units::kGiB)));
        QVERIFY2(near(per_layer_ss * stage_layers * in_flight / units::kGiB, seq_sel_GiB, 0.05),
            qPrintable(QString::number(per_layer_ss * stage_layers * in_flight / units::kGiB)));
    }

    // Megatron's theoretical_memory_usage.py: 18 bytes per parameter without the distributed
    // optimizer, 6 + 12/d with it; Korthikanti Fig. 1: 45.56 GiB of parameters+optimizer for 22B on TP 8.
    void model_state_bytes()
    {
        TrainingSpec t;
        t.precision = Precision::bf16;
        Strategy s;
        const StateBytes b = state_bytes(t, s);
        QCOMPARE(b.weights + b.gradients + b.optimizer, 18.0);
        const ModelSpec m = test::gpt(48, 6144, 64);
        const double per_gpu = total_params(m) / 8 * 18 / units::kGiB;
        QVERIFY2(near(per_gpu, 45.5625, 0.05), qPrintable(QString::number(per_gpu)));
        // DeepSpeed / ZeRO paper convention: 16-bit gradients, 16 bytes per parameter.
        t.framework = Framework::megatron_deepspeed;
        const StateBytes z = state_bytes(t, s);
        QCOMPARE(z.weights + z.gradients + z.optimizer, 16.0);
    }

    // Model-state bytes per parameter through the whole memory model (one GPU holding the whole model,
    // or a DP group sharding it), for each optimizer option, against the published figures.
    void optimizer_bytes_per_parameter_data()
    {
        QTest::addColumn<int>("optimizer");
        QTest::addColumn<int>("framework");
        QTest::addColumn<bool>("release");
        QTest::addColumn<int>("dp");
        QTest::addColumn<double>("expected");
        const int adam = int(Optimizer::adam), adam8 = int(Optimizer::adam8bit), sgd = int(Optimizer::sgd);
        const int meg = int(Framework::megatron), ds = int(Framework::megatron_deepspeed);
        // ZeRO paper Sec. 3.1 (mixed-precision Adam: 2 + 2 + 12).
        QTest::newRow("AdamW fp32 states, 16-bit gradients") << adam << ds << false << 1 << 16.0;
        // Megatron-LM theoretical_memory_usage.py: fp32 main gradients, 18; distributed optimizer 6 + 12/d.
        QTest::newRow("AdamW, Megatron fp32 main gradients") << adam << meg << false << 1 << 18.0;
        QTest::newRow("AdamW, Megatron distributed optimizer d=8") << adam << meg << false << 8 << 6 + 12.0 / 8;
        // FlashOptim (Gonzalez Ortiz et al. 2025, abstract): AdamW from 16 to 7 bytes, 5 with gradient release.
        QTest::newRow("8-bit AdamW, compact master weights") << adam8 << meg << false << 1 << 7.0;
        QTest::newRow("8-bit AdamW with gradient release") << adam8 << meg << true << 1 << 5.0;
        QTest::newRow("8-bit AdamW sharded d=8") << adam8 << meg << false << 8 << 4 + 3.0 / 8;
        // SGD with momentum / Lion: fp32 master + one fp32 moment, Megatron's fp32 gradients.
        QTest::newRow("SGD with momentum") << sgd << meg << false << 1 << 14.0;
    }
    void optimizer_bytes_per_parameter()
    {
        QFETCH(int, optimizer);
        QFETCH(int, framework);
        QFETCH(bool, release);
        QFETCH(int, dp);
        QFETCH(double, expected);
        TrainingSpec t;
        t.precision = Precision::bf16;
        t.seq_len = 1024;
        t.global_batch = dp;
        t.framework = static_cast<Framework>(framework);
        const PlanContext ctx(
            test::gpt(4, 1024, 16), t, test::cluster("H100-SXM5-80GB", 1, 8, "nvlink4-nvswitch", "ib-ndr"));
        Strategy s;
        s.dp = dp;
        s.zero = dp > 1 ? 1 : 0;
        s.optimizer = static_cast<Optimizer>(optimizer);
        s.gradient_release = release;
        EvaluationCache cache(ctx);
        StrategyCosts c;
        compute_costs(ctx, s, cache, c);
        const MemoryBreakdown mem = stage_memory(ctx, s, *c.layout, 0, 1, c.layer.activations);
        const double per_param = (mem.weights + mem.gradients + mem.optimizer) / total_params(ctx.model);
        QVERIFY2(near(per_param, expected, 1e-9), qPrintable(QString::number(per_param)));
    }

    // Checkpoints hold the bf16 weights and the optimizer states: 2 + 12 bytes per parameter with fp32
    // AdamW; FlashOptim's 8-bit states "cut model checkpoint sizes by more than half" (2 + 3).
    void checkpoint_size()
    {
        TrainingSpec t;
        t.seq_len = 1024;
        t.global_batch = 8;
        const PlanContext ctx(
            test::gpt(4, 1024, 16), t, test::cluster("H100-SXM5-80GB", 1, 8, "nvlink4-nvswitch", "ib-ndr"));
        const AnalyticModel model(ctx);
        Strategy s;
        s.dp = 8;
        s.zero = 1;
        const double params = total_params(ctx.model);
        const Prediction fp32 = model.predict(s);
        QVERIFY(near(fp32.checkpoint_bytes, 14 * params, 1e-9));
        s.optimizer = Optimizer::adam8bit;
        const Prediction compact = model.predict(s);
        QVERIFY(near(compact.checkpoint_bytes, 5 * params, 1e-9));
        QVERIFY(compact.checkpoint_bytes < 0.5 * fp32.checkpoint_bytes);
    }

    // torchtitan's op-level selective checkpointing (every second matmul output kept) by hand, for one
    // Llama 3 8B layer and one 8192-token sequence: the block input, the attention output and its fp32
    // log-sum-exp, and the outputs of q, v, w1 and w2 (of q, k, v, o, w1, w3, w2), all bf16.
    void torchtitan_selective_activations()
    {
        static const ClusterSpec c = test::cluster("H100-SXM5-80GB", 1, 8, "nvlink4-nvswitch", "ib-ndr");
        const ModelSpec m = test::model("llama3-8b");
        TrainingSpec t;
        t.seq_len = 8192;
        t.framework = Framework::torchtitan;
        Strategy s;
        s.recompute = Recompute::selective;
        LayerContext lc;
        lc.model = &m;
        lc.training = &t;
        lc.strategy = &s;
        lc.device = ComputeDevice::of(c.gpu);
        lc.traits = software_traits(Framework::torchtitan);
        const double tok = 8192, h = 4096, q = 4096, kv = 1024, f = 14336, heads = 32;
        const double expected = tok * (2 * h + 2 * q) + heads * tok * 4 + 2 * tok * (q + kv + f + h);
        QVERIFY2(near(layer_activation_bytes(lc, false), expected, 1e-12),
            qPrintable(QString::number(layer_activation_bytes(lc, false) / expected)));
        // Megatron's selective recompute (attention core only) keeps far more: 34 bytes per token and
        // hidden element for a GPT layer, here the SwiGLU equivalent.
        lc.traits = software_traits(Framework::megatron);
        QVERIFY(layer_activation_bytes(lc, false) > 1.5 * expected);
    }

    // moe_load.cpp by hand: 16 experts on 4 EP ranks, expert 0 gets 4x the others' tokens.
    void moe_load_histogram()
    {
        ModelSpec m = test::model("mixtral-8x7b");
        m.moe->experts = 16;
        TrainingSpec t;
        t.moe_expert_load = { 4, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 };
        // mean load 19/16; rank 0 holds (4+3)/(19/16) = 5.895 of a 4-expert mean of 4.
        MoeLoad l = moe_load(m, t, 4);
        QVERIFY(near(l.straggler_ratio, 7 * 16.0 / 19 / 4, 1e-12));
        QVERIFY(near(l.hottest_expert_ratio, 4 * 16.0 / 19, 1e-12));
        QCOMPARE(l.dropped_fraction, 0.0);
        // Capacity factor 2: expert 0 keeps 2 of its 3.368 mean loads, 1.368/16 of all assignments dropped.
        m.moe->capacity_factor = 2.0;
        l = moe_load(m, t, 4);
        const double hot = 4 * 16.0 / 19, other = 16.0 / 19;
        QVERIFY(near(l.dropped_fraction, (hot - 2) / 16, 1e-12));
        QVERIFY(near(l.straggler_ratio, (2 + 3 * other) / ((16 - (hot - 2)) / 4), 1e-12));
        // A scalar skew: the busiest rank gets 1.5x; balanced when unset.
        m.moe->capacity_factor.reset();
        t.moe_expert_load.clear();
        t.moe_imbalance = 1.5;
        QCOMPARE(moe_load(m, t, 4).straggler_ratio, 1.5);
        t.moe_imbalance = 1;
        QCOMPARE(moe_load(m, t, 4).straggler_ratio, 1.0);
    }

    // The MoE layer's ops: node-deduplicated dispatch volume, the host-bound expert loop of dropless
    // routing, and an op list that fits its fixed capacity in the heaviest configuration.
    void moe_layer_ops()
    {
        static const ClusterSpec c = test::cluster("H100-SXM5-80GB", 16, 8, "nvlink4-nvswitch", "ib-ndr");
        const ModelSpec m = test::model("deepseek-v3");
        TrainingSpec t;
        t.seq_len = 4096;
        t.precision = Precision::fp8;
        Strategy s;
        s.tp = 2;
        s.ep = 64;
        s.expert_tp = 1;
        s.sequence_parallel = true;
        s.recompute = Recompute::full;
        LayerContext lc = test::layer_context(m, t, s, c);
        lc.tp_group = { 2, 2, 1, true };
        lc.ep_group = { 64, 8, 8, false };
        auto find = [](const LayerOps& ops, OpKind k, OpPhase ph, OpStream st = OpStream::compute) -> const LayerOp* {
            for (int i = 0; i < ops.count; ++i)
                if (ops.op[i].kind == k && ops.op[i].phase == ph && ops.op[i].stream == st)
                    return &ops.op[i];
            return nullptr;
        };
        LayerOps a2a;
        build_layer_ops(lc, true, a2a);
        QVERIFY2(!a2a.overflowed && a2a.count < LayerOps::kCapacity, qPrintable(QString::number(a2a.count)));
        qInfo("DeepSeek-V3 MoE layer, fp8, SP, full recompute: %d ops", a2a.count);
        t.moe_dispatcher = MoeDispatcher::deepep;
        LayerOps dedup;
        build_layer_ops(lc, true, dedup);
        const LayerOp* d0 = find(a2a, OpKind::ep_dispatch, OpPhase::forward, OpStream::ep);
        const LayerOp* d1 = find(dedup, OpKind::ep_dispatch, OpPhase::forward, OpStream::ep);
        QVERIFY(d0 && d1);
        // 8 experts over 8 nodes: 8 (1 - (7/8)^8) / 8 = 0.6564 of the pairs cross as distinct copies.
        QVERIFY(near(d1->bytes / d0->bytes, 8 * (1 - std::pow(7.0 / 8, 8)) / 8, 1e-9));
        QCOMPARE(d1->collective, Collective::all_to_all_rdma);
        QVERIFY(d1->time_s < d0->time_s);
        // 256/64 = 4 local experts x 2 GEMMs x 7 kernels (the GEMM; amax, scale and cast for each of its
        // two operands under per-tensor current scaling) x 20 us issued while the GPU waits.
        const LayerOp* host = find(dedup, OpKind::expert_host, OpPhase::forward);
        QVERIFY(host);
        QVERIFY(near(host->time_s, 4 * 2 * 7 * 20e-6, 1e-9));
        const LayerOp* host_b = find(dedup, OpKind::expert_host, OpPhase::backward_input);
        QVERIFY(host_b && near(host_b->time_s, 2 * host->time_s, 1e-9));
        // Sync-free whole-iteration CUDA graphs and one-kernel grouped GEMMs (torchtitan) issue nothing.
        t.cuda_graphs = CudaGraphs::full_iteration;
        LayerOps graphed;
        build_layer_ops(lc, true, graphed);
        QVERIFY(!find(graphed, OpKind::expert_host, OpPhase::forward));
        t.cuda_graphs = CudaGraphs::none;
        lc.traits = software_traits(Framework::torchtitan);
        LayerOps titan;
        build_layer_ops(lc, true, titan);
        QVERIFY(!find(titan, OpKind::expert_host, OpPhase::forward));
    }

    // Batch-level EP overlap hides the all-to-all under the other micro-batch's compute: never slower,
    // never a negative exposure, and the same result DualPipe gets for its pairs.
    void ep_overlap()
    {
        TrainingSpec t;
        t.seq_len = 4096;
        t.global_batch = 512;
        const PlanContext ctx(
            test::model("mixtral-8x7b"), t, test::cluster("H100-SXM5-80GB", 8, 8, "nvlink4-nvswitch", "ib-ndr"));
        const AnalyticModel model(ctx);
        Strategy s;
        s.tp = 1;
        s.pp = 4;
        s.dp = 16;
        s.ep = 8;
        s.vpp = 2;
        s.schedule = Schedule::interleaved;
        s.zero = 1;
        s.recompute = Recompute::full;
        const Prediction plain = model.predict(s);
        s.ep_overlap = true;
        const Prediction hidden = model.predict(s);
        QVERIFY(plain.time.exposed_ep_s > 0);
        QVERIFY(hidden.time.exposed_ep_s >= 0);
        QVERIFY(hidden.time.exposed_ep_s < 0.5 * plain.time.exposed_ep_s);
        QVERIFY(hidden.step_time_s < plain.step_time_s);
        const double saved = plain.step_time_s - hidden.step_time_s;
        const double unexposed = plain.time.exposed_ep_s - hidden.time.exposed_ep_s;
        QVERIFY2(saved > 0.9 * unexposed && saved < 1.1 * unexposed,
            qPrintable(QStringLiteral("%1 vs %2").arg(saved).arg(unexposed)));
    }

    // Narayanan et al. 2021 eq. 3 equals the Megatron-style count for a GPT with MHA and f = 4h.
    void flops_per_token()
    {
        const ModelSpec m = test::gpt(96, 12288, 96);
        const double meg = megatron_flops_per_token(m, 2048);
        const double nar = narayanan_flops_per_token(m, 2048, false);
        QVERIFY(near(meg, nar, 1e-9));
        // With full recompute: 96 instead of 72, and V/(16Lh) instead of V/(12Lh).
        const double h = 12288, L = 96, V = 51200, s = 2048;
        QVERIFY(near(
            narayanan_flops_per_token(m, 2048, true), 96 * L * h * h * (1 + s / (6 * h) + V / (16 * L * h)), 1e-12));
        // 6N rule of thumb: within 3% of the exact count for GPT-3 (attention adds s/6h = 2.8%).
        QVERIFY(near(meg, 6 * total_params(m) * (1 + s / (6 * h)), 0.01));
    }

    void parameter_counts()
    {
        QVERIFY(near(total_params(test::model("gpt3-175b")), 174.6e9, 0.01));
        QVERIFY(near(total_params(test::model("llama3-70b")), 70.55e9, 0.01));
        QVERIFY(near(total_params(test::model("llama3.1-405b")), 405.8e9, 0.01));
        // DeepSeek-V3: 671B total, 37B activated per token (report Sec. 2), without the MTP module.
        const ModelSpec ds = test::model("deepseek-v3");
        QVERIFY(near(total_params(ds), 671e9, 0.01));
        QVERIFY2(near(active_params(ds), 37e9, 0.05), qPrintable(QString::number(active_params(ds) / 1e9)));
        // Llama 4 (Meta's model card): Scout 109B and Maverick 400B in total, 17B active in both; one routed
        // expert and the shared one per token, Maverick's experts in every other layer.
        for (const auto& [name, total_B] : { std::pair { "llama4-scout", 109.0 }, { "llama4-maverick", 400.0 } }) {
            const ModelSpec m = test::model(name);
            QVERIFY2(near(total_params(m), total_B * 1e9, 0.02), qPrintable(QString::number(total_params(m) / 1e9)));
            QVERIFY2(near(active_params(m), 17e9, 0.05), qPrintable(QString::number(active_params(m) / 1e9)));
        }
    }

    // nccl-tests bus bandwidth: a large all-reduce inside a DGX H100 runs at ~the NVLink bus bandwidth.
    void collectives_bus_bandwidth()
    {
        const ClusterSpec c = test::cluster("H100-SXM5-80GB", 4, 8, "nvlink4-nvswitch", "ib-ndr");
        const NetworkModel net = NetworkModel::of(c);
        GroupPlacement node;
        node.size = 8;
        node.per_node = 8;
        node.nodes = 1;
        const double bytes = 4.0 * units::kGiB;
        const double t = collective_time_s(net, Collective::all_reduce, bytes, node);
        const double busbw = bytes / t * 2 * 7 / 8;
        QVERIFY2(near(busbw, net.intra_bw_Bps, 0.01), qPrintable(QString::number(busbw / 1e9)));
        // Reduce-scatter moves half the bytes of an all-reduce.
        QVERIFY(near(collective_time_s(net, Collective::reduce_scatter, bytes, node), t / 2, 0.01));
        // Across nodes with one GPU per node, the NIC is the bottleneck: 2(n-1)/n * S / B_nic.
        GroupPlacement rail;
        rail.size = 4;
        rail.per_node = 1;
        rail.nodes = 4;
        rail.same_rail = true;
        const double t2 = collective_time_s(net, Collective::all_reduce, bytes, rail);
        QVERIFY(near(t2, 2 * 3.0 / 4 * bytes / net.inter_bw_Bps + 6 * net.inter_latency_s, 0.01));
        // Small messages: the tree's logarithmic latency wins over the ring's linear one.
        GroupPlacement wide;
        wide.size = 1024;
        wide.per_node = 1;
        wide.nodes = 1024;
        const double small = collective_time_s(net, Collective::all_reduce, 1024, wide);
        QVERIFY(small < 2 * 1023 * net.inter_latency_s / 10);
    }

    // Ethernet without RDMA: NCCL's socket transport moves ~18.4 Gb/s per node (NVIDIA/nccl#209, AWS
    // p3dn), shared by the node's GPUs, whatever the NIC; below that the line rate (x 0.92) binds.
    void tcp_sockets_cap_what_a_node_moves()
    {
        ClusterSpec c = test::cluster("T4", 4, 4, "pcie4", "ib-hdr");
        c.inter_node.kind = FabricKind::tcp;
        c.inter_node.bw_Bps = 50e9 / 8 / 4; // g4dn.12xlarge: 50 Gb/s shared by 4 GPUs
        QVERIFY(near(NetworkModel::of(c).inter_bw_Bps, 18.4e9 / 8 / 4, 1e-12));
        c.inter_node.bw_Bps = 10e9 / 8 / 4; // p3.8xlarge: 10 Gb/s
        QVERIFY(near(NetworkModel::of(c).inter_bw_Bps, 0.92 * 10e9 / 8 / 4, 1e-12));
        FabricKind k = FabricKind::unspecified;
        QVERIFY(fabric_kind_from_string("tcp", k) && k == FabricKind::tcp);
        QCOMPARE(to_string(FabricKind::tcp), std::string_view("tcp"));
    }

    void group_placement()
    {
        Strategy s;
        s.tp = 8;
        s.dp = 4;
        s.pp = 2;
        const LayoutSizes sizes = LayoutSizes::dense(s);
        const GroupPlacement tp = place_group(s.rank_order, sizes, { ParallelDim::tp }, 8);
        QCOMPARE(tp.per_node, 8LL);
        QCOMPARE(tp.nodes, 1LL);
        const GroupPlacement dp = place_group(s.rank_order, sizes, { ParallelDim::dp }, 8);
        QCOMPARE(dp.per_node, 1LL);
        QCOMPARE(dp.nodes, 4LL);
        QVERIFY(dp.same_rail);
        QVERIFY(!pp_neighbours_share_node(s.rank_order, sizes, 8));
        // With pp innermost, pipeline neighbours share a node and TP spans nodes.
        RankOrder pp_first;
        QVERIFY(!rank_order_from_string("pp-tp-cp-ep-dp", pp_first).has_value());
        s.rank_order = pp_first;
        QVERIFY(pp_neighbours_share_node(s.rank_order, sizes, 8));
        const GroupPlacement tp2 = place_group(s.rank_order, sizes, { ParallelDim::tp }, 8);
        QCOMPARE(tp2.per_node, 4LL);
        QCOMPARE(tp2.nodes, 2LL);
    }

    // GEMM efficiency follows its shape: skinny or tiny GEMMs are slower per FLOP.
    void gemm_shape_efficiency()
    {
        const GpuSpec h100 = test::gpu("H100-SXM5-80GB");
        const ComputeDevice dev = ComputeDevice::of(h100);
        const double big = gemm_efficiency(dev, 8192, 8192, 8192, Precision::bf16);
        const double skinny = gemm_efficiency(dev, 64, 8192, 8192, Precision::bf16);
        const double short_k = gemm_efficiency(dev, 8192, 8192, 128, Precision::bf16);
        QVERIFY(big > 0.65 && big < 0.8);
        QVERIFY(skinny < 0.6 * big);
        QVERIFY(short_k < 0.6 * big);
        // A tiny GEMM is memory-bound: its time follows bytes / bandwidth.
        const double t = gemm_time_s(dev, 1, 8192, 8192, Precision::bf16);
        const double bytes = 2.0 * (8192 + 8192.0 * 8192 + 8192);
        QVERIFY(t >= bytes / h100.memory_bw_Bps);
    }

    // Korthikanti et al. 2022 Table 4: one 22B layer (TP 8, micro-batch 4, A100) forward 7.7 ms,
    // backward 11.9 ms without recompute; full recompute adds a forward (27.2 ms total).
    void layer_timing_table4()
    {
        const ModelSpec m = test::gpt(48, 6144, 64);
        TrainingSpec t;
        t.seq_len = 2048;
        t.global_batch = 4;
        t.precision = Precision::fp16;
        t.flash_attention = false;
        const ClusterSpec c = test::cluster("A100-SXM4-80GB", 1, 8, "nvlink3-nvswitch", "ib-hdr");
        const PlanContext ctx(m, t, c, no_calibration());
        Strategy s;
        s.tp = 8;
        s.micro_batch = 4;
        s.overlap_grad_reduce = false;
        const Groups groups = place_groups(ctx, s);
        LayerCosts costs = compute_layer_costs(ctx, s, groups);
        const double fwd_ms = costs.dense.fwd_time() * 1e3;
        const double bwd_ms = costs.dense.bwd_time() * 1e3;
        QVERIFY2(near(fwd_ms, 7.7, 0.15), qPrintable(QString::number(fwd_ms)));
        QVERIFY2(near(bwd_ms, 11.9, 0.15), qPrintable(QString::number(bwd_ms)));
        s.recompute = Recompute::full;
        costs = compute_layer_costs(ctx, s, groups);
        const double total_ms = (costs.dense.fwd_time() + costs.dense.bwd_time()) * 1e3;
        QVERIFY2(near(total_ms, 27.2, 0.15), qPrintable(QString::number(total_ms)));
    }
};

QTEST_APPLESS_MAIN(TestFormulas)
#include "tst_formulas.moc"

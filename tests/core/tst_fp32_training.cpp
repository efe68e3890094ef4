// Pure fp32 training (no --fp16/--bf16, as Sailor's runs train), each quantity against a hand-worked
// number: the model states (4 + 4 + 8 B/param with Adam), the activations (every stored element 4 B
// instead of 2, dropout masks still 1 B), GEMMs at the fp32 peak, elementwise and TP traffic doubled,
// the MFU against the fp32 peak, finite power; and the scenario reader's precision rule.
#include "io/preset_catalog.hpp"
#include "io/scenario_io.hpp"
#include "model/analytic_model.hpp"
#include "model/collective_model.hpp"
#include "model/compute_model.hpp"
#include "model/layer_ops.hpp"
#include "model/memory_model.hpp"
#include "model/model_math.hpp"
#include "model/plan_context.hpp"
#include "model/strategy_costs.hpp"
#include "spec/input_error.hpp"
#include "spec/strategy_rules.hpp"
#include "spec/units.hpp"

#include "../support/test_layers.hpp"
#include "../support/test_plans.hpp"

#include <QTest>

#include <cmath>
#include <string>
#include <utility>

using namespace parallax;

namespace {

bool near(double got, double want, double rel)
{
    return std::fabs(got - want) <= rel * std::fabs(want);
}

// A GPT of 2 layers, hidden 1024, 16 heads, on one A100; 1 sequence of 1024 tokens per micro-batch.
constexpr int kLayers = 2;
constexpr long long kHidden = 1024;
constexpr int kHeads = 16;
constexpr long long kSeq = 1024;

TrainingSpec training(Precision p, Framework f = Framework::megatron_deepspeed)
{
    TrainingSpec t;
    t.seq_len = kSeq;
    t.global_batch = 8;
    t.precision = p;
    t.framework = f;
    t.flash_attention = false;
    return t;
}

ClusterSpec a100()
{
    return test::cluster("A100-SXM4-80GB", 1, 8, "nvlink3-nvswitch", "ib-hdr");
}

MemoryBreakdown stage0_memory(const PlanContext& ctx, const Strategy& s)
{
    EvaluationCache cache(ctx);
    StrategyCosts c;
    compute_costs(ctx, s, cache, c);
    return stage_memory(ctx, s, *c.layout, 0, 1, c.layer.activations);
}

double first_op_bytes(const LayerOps& ops, OpKind k, OpPhase ph)
{
    for (int i = 0; i < ops.count; ++i)
        if (ops.op[i].kind == k && ops.op[i].phase == ph)
            return ops.op[i].bytes;
    return -1;
}

} // namespace

class TestFp32Training : public QObject {
    Q_OBJECT

private slots:
    // Adam in fp32: 4 B weights (the master copy itself), 4 B gradients, 8 B moments; SGD and Lion one
    // 4 B moment. The bf16 states stay as they were (DeepSpeed: 2 + 2 + 12; Megatron: 2 + 4 + 12).
    void state_bytes_per_param()
    {
        Strategy s;
        const StateBytes adam = state_bytes(training(Precision::fp32), s);
        QCOMPARE(adam.weights, 4.0);
        QCOMPARE(adam.gradients, 4.0);
        QCOMPARE(adam.optimizer, 8.0);
        s.optimizer = Optimizer::sgd;
        const StateBytes sgd = state_bytes(training(Precision::fp32), s);
        QCOMPARE(sgd.weights + sgd.gradients + sgd.optimizer, 12.0);
        s.optimizer = Optimizer::adam;
        const StateBytes ds = state_bytes(training(Precision::bf16), s);
        QCOMPARE(ds.weights + ds.gradients + ds.optimizer, 16.0);
        QCOMPARE(ds.gradients, 2.0);
        const StateBytes mg = state_bytes(training(Precision::bf16, Framework::megatron), s);
        QCOMPARE(mg.weights + mg.gradients + mg.optimizer, 18.0);
    }

    // The whole stage on one GPU: weights, gradients and optimizer states are P x (4, 4, 8) bytes in fp32
    // against P x (2, 2, 12) in bf16 (Megatron-DeepSpeed), P the model's parameters.
    void stage_states_fp32_vs_bf16()
    {
        const ModelSpec m = test::gpt(kLayers, kHidden, kHeads);
        Strategy s;
        s.dp = 1;
        s.micro_batch = 1;
        ClusterSpec one = test::cluster("A100-SXM4-80GB", 1, 1, "nvlink3-nvswitch", "ib-hdr");
        const PlanContext fp32(m, training(Precision::fp32), one);
        const PlanContext bf16(m, training(Precision::bf16), one);
        const double params = total_params(m);
        const MemoryBreakdown a = stage0_memory(fp32, s);
        const MemoryBreakdown b = stage0_memory(bf16, s);
        QVERIFY2(near(a.weights, 4 * params, 1e-12), qPrintable(QString::number(a.weights / params)));
        QVERIFY(near(a.gradients, 4 * params, 1e-12));
        QVERIFY(near(a.optimizer, 8 * params, 1e-12));
        QVERIFY(near(b.weights, 2 * params, 1e-12));
        QVERIFY(near(b.gradients, 2 * params, 1e-12));
        QVERIFY(near(b.optimizer, 12 * params, 1e-12));
        // Activations: each layer by Korthikanti's count (below) plus the embedding output (s b h elements).
        const double sbh = static_cast<double>(kSeq) * kHidden;
        const double scores_per_sbh = static_cast<double>(kHeads) * kSeq / kHidden;
        const double layer32 = sbh * (66 + 9 * scores_per_sbh);
        const double layer16 = sbh * (34 + 5 * scores_per_sbh);
        QVERIFY2(
            near(a.activations, kLayers * layer32 + 4 * sbh, 1e-12), qPrintable(QString::number(a.activations / sbh)));
        QVERIFY(near(b.activations, kLayers * layer16 + 2 * sbh, 1e-12));
    }

    // DeepSpeed without ZeRO flattens the gradients into one new buffer to all-reduce them after the
    // pipeline flush (engine.py, allreduce_bucket: self.flatten(bucket)). At one sequence no freed
    // activation block holds it (the score matrix, 16 x 1024^2 x 4 B = 64 MiB, is smaller than the 4 B
    // gradients): the buffer adds to the peak. At 32 sequences the 2 GiB score matrix it fits in is free.
    void flat_gradient_buffer_without_zero()
    {
        const ModelSpec m = test::gpt(kLayers, kHidden, kHeads);
        ClusterSpec one = test::cluster("A100-SXM4-80GB", 1, 1, "nvlink3-nvswitch", "ib-hdr");
        TrainingSpec t = training(Precision::fp32);
        t.global_batch = 32;
        const PlanContext ctx(m, t, one);
        const double loss_peak = software_traits(Framework::megatron_deepspeed).loss_peak_bytes_per_logit;
        auto flat_buffer = [&](int micro_batch) {
            Strategy s;
            s.dp = 1;
            s.micro_batch = micro_batch;
            const MemoryBreakdown mem = stage0_memory(ctx, s);
            const double loss = static_cast<double>(micro_batch) * kSeq * static_cast<double>(m.vocab) * loss_peak;
            return std::pair { mem.other - 1.75 * units::kGiB - 0.1 * mem.activations - loss, mem.gradients };
        };
        const auto [one_seq, gradients] = flat_buffer(1);
        QVERIFY(gradients > 16.0 * kSeq * kSeq * 4);
        QVERIFY2(near(one_seq, gradients, 1e-9), qPrintable(QString::number(one_seq / gradients)));
        QVERIFY(std::fabs(flat_buffer(32).first) < 1e-3 * gradients);
    }

    // Korthikanti et al. 2022 Sec. 4.1: a GPT layer stores sbh(34 + 5as/h) bytes with 2-byte activations and
    // 1-byte dropout masks: 16 sbh and 2 as^2b two-byte elements, 2 sbh and as^2b mask bytes. At 4 bytes an
    // element: sbh(16*4 + 2) + as^2b(2*4 + 1) = sbh(66 + 9as/h). fp32 has no flash attention, so asking for it
    // changes nothing.
    void layer_activations_korthikanti()
    {
        const ModelSpec m = test::gpt(kLayers, kHidden, kHeads);
        const ClusterSpec c = a100();
        Strategy s;
        s.micro_batch = 1;
        const double sbh = static_cast<double>(kSeq) * kHidden;
        const double as_h = static_cast<double>(kHeads) * kSeq / kHidden;
        TrainingSpec t32 = training(Precision::fp32);
        QVERIFY(near(layer_activation_bytes(test::layer_context(m, t32, s, c), false), sbh * (66 + 9 * as_h), 1e-12));
        t32.flash_attention = true;
        QVERIFY(near(layer_activation_bytes(test::layer_context(m, t32, s, c), false), sbh * (66 + 9 * as_h), 1e-12));
        const TrainingSpec t16 = training(Precision::bf16);
        QVERIFY(near(layer_activation_bytes(test::layer_context(m, t16, s, c), false), sbh * (34 + 5 * as_h), 1e-12));
    }

    // A compute-bound GEMM (8192^3 on an A100) runs at peak x efficiency: the fp32 to bf16 time ratio is
    // (312 x 0.82) / (19.5 x 0.9) (datasheet peaks, Ampere's GEMM efficiencies); the tile, wave and K-loop
    // factors are the same for both and cancel.
    void gemm_at_fp32_peak()
    {
        const ClusterSpec c = a100();
        const ComputeDevice dev = ComputeDevice::of(c.gpu);
        const double n = 8192;
        const double overhead = dev.gen->kernel_overhead_s;
        const double t32 = gemm_time_s(dev, n, n, n, Precision::fp32) - overhead;
        const double t16 = gemm_time_s(dev, n, n, n, Precision::bf16) - overhead;
        const double want = (312.0 * 0.82) / (19.5 * 0.9);
        QVERIFY2(near(t32 / t16, want, 1e-9), qPrintable(QString::number(t32 / t16)));
        // The fp32 GEMM itself: 2 n^3 FLOPs at 19.5 TFLOP/s x 0.9 x the shared shape factor.
        const double shape = gemm_efficiency(dev, n, n, n, Precision::fp32) / 0.9;
        QVERIFY(near(t32, 2 * n * n * n / (19.5e12 * 0.9 * shape), 1e-9));
    }

    // Memory-bound kernels and activation collectives move 4-byte elements: the forward layer norm's traffic
    // and the TP all-reduce of a [tokens, h] activation are exactly twice the bf16 ones.
    void traffic_doubles()
    {
        const ModelSpec m = test::gpt(kLayers, kHidden, kHeads);
        const ClusterSpec c = a100();
        Strategy s;
        s.tp = 2;
        s.dp = 4;
        s.micro_batch = 1;
        const TrainingSpec t32 = training(Precision::fp32);
        const TrainingSpec t16 = training(Precision::bf16);
        LayerOps a, b;
        build_layer_ops(test::layer_context(m, t32, s, c), false, a);
        build_layer_ops(test::layer_context(m, t16, s, c), false, b);
        const double norm32 = first_op_bytes(a, OpKind::norm, OpPhase::forward);
        const double norm16 = first_op_bytes(b, OpKind::norm, OpPhase::forward);
        QVERIFY(norm16 > 0);
        QCOMPARE(norm32, 2 * norm16);
        const double tp32 = first_op_bytes(a, OpKind::tp_comm, OpPhase::forward);
        const double tp16 = first_op_bytes(b, OpKind::tp_comm, OpPhase::forward);
        QCOMPARE(tp16, static_cast<double>(kSeq) * kHidden * 2);
        QCOMPARE(tp32, static_cast<double>(kSeq) * kHidden * 4);
    }

    // fp32 scores leave Megatron's fused scale-mask-softmax (16-bit only): masked_fill_ and softmax run as
    // PyTorch kernels, 4 passes over the score matrix forward; backward softmax's 5 and the CopySlices of the
    // in-place fill on a view, 8: 13. They stream at 0.6 of the datasheet bandwidth (Sailor's op profiles).
    // OPT-350M at TP 4 on a GH200, one sequence of 2,048: 4 x 2048^2 = 16.8M scores of 4 B.
    void fp32_scores_take_pytorch_kernels()
    {
        const test::SailorOptLayer layer;
        const LayerOps ops = layer.ops();
        const ComputeDevice dev = ComputeDevice::of(layer.cluster.gpu);
        const double overhead = dev.gen->kernel_overhead_s;
        const double scores = 4.0 * 2048 * 2048;
        const double qk = gemm_time_s(dev, 2048, 2048, 64, Precision::tf32, 4);
        const double pv = gemm_time_s(dev, 2048, 64, 2048, Precision::tf32, 4);
        const double bwd_gemms = gemm_time_s(dev, 2048, 2048, 64, Precision::tf32, 4)
            + gemm_time_s(dev, 2048, 64, 2048, Precision::tf32, 4)
            + gemm_time_s(dev, 2048, 64, 2048, Precision::tf32, 4)
            + gemm_time_s(dev, 2048, 64, 2048, Precision::tf32, 4);
        const double stream = 4000e9 * 0.6;
        double fwd = -1, bwd = -1;
        for (int i = 0; i < ops.count; ++i) {
            if (ops.op[i].kind != OpKind::attention)
                continue;
            (ops.op[i].phase == OpPhase::forward ? fwd : bwd) = ops.op[i].time_s;
        }
        QCOMPARE(first_op_bytes(ops, OpKind::attention, OpPhase::forward), scores * 4 * 4);
        QVERIFY2(near(fwd, qk + pv + scores * 4 * 4 / stream + overhead, 1e-9), qPrintable(QString::number(fwd)));
        QVERIFY2(near(bwd, bwd_gemms + scores * 13 * 4 / stream + overhead, 1e-9), qPrintable(QString::number(bwd)));
    }

    // A whole fp32 plan: the MFU is against the fp32 peak (SCENARIO.md: the dense peak of the training
    // precision), power is finite and between idle and TDP, and the checkpoint saves 4 + 8 B/param.
    void plan_mfu_power_checkpoint()
    {
        const ModelSpec m = test::gpt(kLayers, kHidden, kHeads);
        const PlanContext ctx(m, training(Precision::fp32), a100());
        const AnalyticModel model(ctx);
        Strategy s;
        s.dp = 8;
        s.micro_batch = 1;
        const Prediction p = model.predict(s);
        QVERIFY(p.feasible);
        QVERIFY(p.step_time_s > 0 && std::isfinite(p.step_time_s));
        QVERIFY(near(p.mfu, p.tflops_per_gpu * units::kTFLOP / 19.5e12, 1e-12));
        QVERIFY(std::isfinite(p.power.avg_W_per_gpu));
        QVERIFY(p.power.avg_W_per_gpu > ctx.cluster.gpu.idle_W);
        QVERIFY(p.power.peak_W_per_gpu <= ctx.cluster.gpu.tdp_W + 1e-9);
        QVERIFY(near(p.checkpoint_bytes, 12 * total_params(m), 1e-12));
        // The same plan in bf16 is faster: the A100's bf16 tensor cores have 16x its fp32 peak.
        const PlanContext ctx16(m, training(Precision::bf16), a100());
        const Prediction q = AnalyticModel(ctx16).predict(s);
        QVERIFY(q.step_time_s < p.step_time_s);
    }

    // A GPU that gives no fp32 peak: the plan is refused by the precision rule, naming the missing key.
    void gpu_without_fp32_peak()
    {
        const ModelSpec m = test::gpt(kLayers, kHidden, kHeads);
        GpuSpec g = test::gpu("A100-SXM4-80GB");
        g.peak_flops[static_cast<int>(Precision::fp32)] = 0;
        const TrainingSpec t = training(Precision::fp32);
        const PlanInputs in { m, t, g, 8 };
        Strategy s;
        s.dp = 8;
        QCOMPARE(check_strategy(in, s), Rule::precision_unsupported);
        const std::string why = explain(Rule::precision_unsupported, in, s);
        QVERIFY2(why.find("peak_TFLOPs.fp32") != std::string::npos, why.c_str());
    }

    // The scenario reader takes "fp32" and "tf32" (fp32 training whose GEMMs cuBLAS runs on TF32 tensor
    // cores); tf32 needs a GPU with TF32 (Turing has none).
    void scenario_precision_values()
    {
        auto scenario = [](const std::string& precision, const std::string& gpu) {
            const nlohmann::json j = { { "schema", 1 },
                { "model",
                    { { "name", "g" }, { "layers", 2 }, { "hidden", 1024 }, { "heads", 16 }, { "ffn_hidden", 4096 },
                        { "vocab", 51200 } } },
                { "cluster",
                    { { "gpu", gpu }, { "nodes", 1 }, { "gpus_per_node", 8 }, { "intra_node", "pcie4" },
                        { "inter_node", "ib-hdr" } } },
                { "training",
                    { { "global_batch", 64 }, { "seq_len", 1024 }, { "precision", precision },
                        { "framework", "megatron-deepspeed" }, { "flash_attention", false } } },
                { "strategy", { { "tp", 1 }, { "pp", 1 }, { "dp", 8 }, { "micro_batch", 1 } } } };
            return j.dump();
        };
        const Scenario s
            = parse_scenario_text(scenario("fp32", "A100-PCIe-80GB"), "fp32.json", PresetCatalog::standard());
        QCOMPARE(s.training.precision, Precision::fp32);
        QCOMPARE(scenario_to_json(s)["training"]["precision"].get<std::string>(), std::string("fp32"));
        const Scenario t
            = parse_scenario_text(scenario("tf32", "A100-PCIe-80GB"), "tf32.json", PresetCatalog::standard());
        QCOMPARE(t.training.precision, Precision::tf32);
        QCOMPARE(scenario_to_json(t)["training"]["precision"].get<std::string>(), std::string("tf32"));
        // The same fp32 state and activations; only the GEMMs run faster (A100: 156 vs 19.5 TFLOP/s).
        const PlanContext cs(s.model, s.training, s.cluster);
        const PlanContext ct(t.model, t.training, t.cluster);
        AnalyticResult rs, rt;
        AnalyticModel(cs).evaluate(s.strategy, rs);
        AnalyticModel(ct).evaluate(t.strategy, rt);
        QCOMPARE(rt.peak_memory_bytes, rs.peak_memory_bytes);
        QVERIFY(rt.step_time_s < 0.5 * rs.step_time_s);
        try {
            parse_scenario_text(scenario("tf32", "T4"), "turing.json", PresetCatalog::standard());
            QFAIL("tf32 accepted on a GPU without TF32");
        } catch (const InputError& e) {
            const std::string what = e.what();
            QVERIFY2(what.find("turing.json") != std::string::npos, e.what());
        }
    }
};

QTEST_GUILESS_MAIN(TestFp32Training)
#include "tst_fp32_training.moc"

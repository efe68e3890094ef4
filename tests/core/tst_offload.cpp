// Offload as a choice with costs: activations to host memory per layer (Megatron-Core --cpu-offloading,
// Transformer Engine's CPU offload) and parameters (ZeRO-Infinity), against hand-worked copy times and
// bytes; plans that fit only with them, at a visible price, in the prediction, the improvements and the
// search.
#include "model/activation_offload.hpp"
#include "model/analytic_model.hpp"
#include "model/host_link.hpp"
#include "model/memory_model.hpp"
#include "model/strategy_costs.hpp"
#include "search/improvements.hpp"
#include "search/search.hpp"
#include "spec/framework_support.hpp"
#include "spec/layer_ranges.hpp"

#include "../support/published_row.hpp"
#include "../support/test_plans.hpp"

#include <QTest>

#include <algorithm>
#include <cmath>

using namespace parallax;

namespace {

bool near(double got, double want, double rel)
{
    return std::fabs(got - want) <= rel * std::fabs(want);
}

// A 1.3B-class GPT (24 layers, hidden 2048) on one H100: 8 sequences of 4,096 tokens, micro-batch 2.
struct SmallPlan {
    ModelSpec model = test::gpt(24, 2048, 16);
    TrainingSpec training;
    ClusterSpec cluster = test::cluster("H100-SXM5-80GB", 1, 1, "nvlink4-nvswitch", "ib-ndr");
    Strategy strategy;
    SmallPlan()
    {
        training.seq_len = 4096;
        training.global_batch = 8;
        strategy.micro_batch = 2;
    }
};

} // namespace

class TestOffload : public QObject {
    Q_OBJECT

private slots:
    // PCIe gen 5 x16 at 80% (51.2 GB/s each way) on an H100; NVLink-C2C at 80% of 450 GB/s on a GH200.
    void host_link_rates()
    {
        QCOMPARE(host_link_Bps(test::cluster("H100-SXM5-80GB", 1, 8, "nvlink4-nvswitch", "ib-ndr")), 51.2e9);
        QCOMPARE(host_link_Bps(test::cluster("A100-SXM4-80GB", 1, 8, "nvlink3-nvswitch", "ib-hdr")), 25.6e9);
        QCOMPARE(host_link_Bps(test::cluster("GH200-96GB", 1, 1, "nvlink4-nvswitch", "ib-ndr")), 360e9);
        // In an NVL72 rack two GPUs copy into one Grace's LPDDR5X at once: half of its 512 GB/s (GB200,
        // 18.4 TB/s over 36 Graces) or ~389 GB/s (GB300, 14 TB/s over 36) binds before the C2C link does.
        QVERIFY(near(
            host_link_Bps(test::cluster("B200", 1, 72, "nvlink5-nvl72", "ib-ndr")), 18.4e12 / 36 / 2 * 0.8, 1e-12));
        QVERIFY(
            near(host_link_Bps(test::cluster("B300", 1, 72, "nvlink5-nvl72", "ib-xdr")), 14e12 / 36 / 2 * 0.8, 1e-12));
        // An 8-GPU DGX B200 copies over PCIe gen 5.
        QCOMPARE(host_link_Bps(test::cluster("B200", 1, 8, "nvlink5-nvswitch", "ib-ndr")), 51.2e9);
    }

    // Megatron-Bridge's Llama 3 70B FSDP recipes for the NVL72 racks offload the activations of the first
    // 20 (GB300) or 40 (GB200) layers (cpu_offloading_num_layers, scripts/performance/configs at v0.4.0):
    // a published row that says so in its notes runs with those layers offloaded, the others not.
    void published_recipe_offloads_its_first_layers()
    {
        const auto row = [](const char* notes) {
            return nlohmann::json::parse(std::string(R"json({"id": "t", "year": 2026,
                "source": "NVIDIA-NeMo/Megatron-Bridge docs/performance-summary.md, 26.04 NeMo container",
                "model": {"name": "Llama 3 70B", "n_layers": 80, "hidden_size": 8192, "n_heads": 64,
                    "n_kv_heads": 8, "ffn_hidden_size": 28672, "vocab_size": 128256, "seq_len": 8192},
                "hardware": {"gpu_type": "GB300 NVL72 (B300-class GPU)", "gpus_per_node": 72, "n_gpus": 64},
                "strategy": {"tp": 1, "pp": 1, "cp": 1, "micro_batch_size": 2, "global_batch_size": 256,
                    "zero_stage_or_fsdp": "fsdp (64 GPUs)", "precision": "fp8 (current scaling, per-tensor)"},
                "result": {"tokens_per_sec_per_gpu": 5000}, "notes": ")json")
                + notes + "\"}");
        };
        const auto read = [](const nlohmann::json& r) { return test::published_row_scenario(r); };
        const Scenario offloaded = read(row("use_megatron_fsdp=True, cpu_offloading_num_layers=20 from the recipe"));
        QVERIFY(offloaded.strategy.layers != nullptr);
        QVERIFY(offloaded.strategy.layers->offloads_activations(0, false));
        QVERIFY(offloaded.strategy.layers->offloads_activations(19, false));
        QVERIFY(!offloaded.strategy.layers->offloads_activations(20, false));
        const Scenario plain = read(row("use_megatron_fsdp=True"));
        QVERIFY(plain.strategy.layers == nullptr);
        // The row's own field says the same and wins over its notes.
        nlohmann::json stated = row("cpu_offloading_num_layers=40");
        stated["strategy"]["activation_offload_layers"] = 20;
        const Scenario field = read(stated);
        QVERIFY(field.strategy.layers->offloads_activations(19, false));
        QVERIFY(!field.strategy.layers->offloads_activations(20, false));

        // Without the offload the 80 layers' activations of a micro-batch do not fit the B300's memory;
        // with it they do, 18 layers' worth lighter (20 offloaded, two layers' copy buffers kept), and the
        // step pays the copies the Grace's memory cannot hide behind the next layer.
        const PlanContext ctx(offloaded.model, offloaded.training, offloaded.cluster);
        const AnalyticModel model(ctx);
        const Prediction without = model.predict(plain.strategy);
        const Prediction with = model.predict(offloaded.strategy);
        QVERIFY(!without.feasible);
        QVERIFY2(with.feasible, with.infeasible_reason.c_str());
        EvaluationCache cache(ctx);
        StrategyCosts c;
        compute_costs(ctx, plain.strategy, cache, c);
        QVERIFY(near(without.memory.activations - with.memory.activations, 18 * c.layer.activations.dense, 1e-6));
        const double copy_s = c.layer.activations.dense / host_link_Bps(offloaded.cluster);
        const double exposed_fwd = copy_s - c.layer.dense.fwd_time();
        QVERIFY2(exposed_fwd > 0, "the Grace's memory share cannot hide a layer's copy behind the next forward");
        const double exposed_bwd = std::max(0.0, copy_s - c.layer.dense.bwd_time());
        const double microbatches = 256.0 / 64 / 2;
        QVERIFY(near(with.time.host_copy_s, microbatches * 20 * (exposed_fwd + exposed_bwd), 1e-6));
    }

    // Each of the 24 layers' saved activations goes out and comes back once per micro-batch: what the copy
    // takes beyond the layer's own forward (backward) is added, once per layer and micro-batch.
    void activation_copies_hand_worked()
    {
        SmallPlan p;
        const PlanContext ctx(p.model, p.training, p.cluster);
        EvaluationCache cache(ctx);
        StrategyCosts c;
        compute_costs(ctx, p.strategy, cache, c);
        const double act = c.layer.activations.dense; // one layer, one micro-batch
        const double copy_s = act / 51.2e9;
        const double fwd = c.layer.dense.fwd_time(), bwd = c.layer.dense.bwd_time();
        QVERIFY2(copy_s > fwd && copy_s > bwd, "the plan is chosen so that PCIe cannot hide the copies");
        const double per_layer = (copy_s - fwd) + (copy_s - bwd);

        const AnalyticModel model(ctx);
        const Prediction plain = model.predict(p.strategy);
        Strategy off = p.strategy;
        off.offload_activations = true;
        const Prediction offloaded = model.predict(off);
        const double microbatches = 4;
        QVERIFY(near(offloaded.time.host_copy_s, microbatches * 24 * per_layer, 1e-9));
        QVERIFY(near(offloaded.step_time_s - plain.step_time_s, microbatches * 24 * per_layer, 1e-6));
        QCOMPARE(plain.time.host_copy_s, 0.0);
        // Memory: 24 layers of one micro-batch in flight become the two layers' copy buffers.
        QVERIFY(near(plain.memory.activations - offloaded.memory.activations, (24 - 2) * act, 1e-9));
    }

    // Each saved tensor goes to its own pinned host block, which PyTorch's caching host allocator rounds up
    // to a power of two (CachingHostAllocator.h, allocate). At micro-batch 2 every tensor of this plan is a
    // power of two (8,192 tokens x 2,048 x 2 bytes, ...): host memory is the activations themselves. At
    // micro-batch 3 every tensor is 3 x 2^k bytes and takes a 4 x 2^k block: a third more.
    void offloaded_activations_take_power_of_two_pinned_blocks()
    {
        for (const int mb : { 2, 3 }) {
            SmallPlan p;
            p.strategy.micro_batch = mb;
            p.training.global_batch = 4 * mb;
            p.strategy.offload_activations = true;
            const PlanContext ctx(p.model, p.training, p.cluster);
            EvaluationCache cache(ctx);
            StrategyCosts c;
            compute_costs(ctx, p.strategy, cache, c);
            const double act = c.layer.activations.dense;
            const double rounding = mb == 2 ? 1.0 : 4.0 / 3.0;
            QVERIFY(near(c.layer.activations.dense_host, rounding * act, 1e-12));
            const Prediction off = AnalyticModel(ctx).predict(p.strategy);
            QVERIFY2(near(off.memory.host, 24 * rounding * act, 1e-9),
                qPrintable(QString::number(off.memory.host / (24 * act))));
        }
    }

    // On a Grace superchip the C2C link moves a layer's activations faster than the layer computes: all
    // of it hides, the step is unchanged and the memory is saved.
    void nvlink_c2c_hides_the_copies()
    {
        SmallPlan p;
        p.cluster = test::cluster("GH200-96GB", 1, 1, "nvlink4-nvswitch", "ib-ndr");
        const PlanContext ctx(p.model, p.training, p.cluster);
        const AnalyticModel model(ctx);
        const Prediction plain = model.predict(p.strategy);
        Strategy off = p.strategy;
        off.offload_activations = true;
        const Prediction offloaded = model.predict(off);
        QCOMPARE(offloaded.time.host_copy_s, 0.0);
        QVERIFY(near(offloaded.step_time_s, plain.step_time_s, 1e-12));
        QVERIFY(offloaded.peak_memory_bytes < plain.peak_memory_bytes);
    }

    // Llama 3 8B at 8K tokens, micro-batch 2, no recompute, on 8 H100 (FSDP 8): the activations of one
    // micro-batch do not fit in 80 GB; offloaded, they do, and the step pays for the copies PCIe cannot hide.
    void activation_offload_makes_a_plan_fit_at_a_price()
    {
        TrainingSpec t;
        t.seq_len = 8192;
        t.global_batch = 32;
        const PlanContext ctx(
            test::model("llama3-8b"), t, test::cluster("H100-SXM5-80GB", 1, 8, "nvlink4-nvswitch", "ib-ndr"));
        Strategy s;
        s.dp = 8;
        s.zero = 3;
        s.micro_batch = 2;
        const AnalyticModel model(ctx);
        const Prediction plain = model.predict(s);
        QVERIFY(!plain.feasible);
        s.offload_activations = true;
        const Prediction offloaded = model.predict(s);
        QVERIFY2(offloaded.feasible, offloaded.infeasible_reason.c_str());
        QVERIFY(offloaded.time.host_copy_s > 0);
        QVERIFY(near(offloaded.step_time_s - plain.step_time_s, offloaded.time.host_copy_s, 1e-6));
    }

    // The waterfall lists the activation offload that makes the plan fit, with its price: the exposed copies.
    void improvements_list_activation_offload_with_its_price()
    {
        Scenario s;
        s.model = test::model("llama3-8b");
        s.cluster = test::cluster("H100-SXM5-80GB", 1, 8, "nvlink4-nvswitch", "ib-ndr");
        s.training.seq_len = 8192;
        s.training.global_batch = 32;
        s.strategy.dp = 8;
        s.strategy.zero = 3;
        s.strategy.micro_batch = 2;
        const ImprovementWaterfall w = plan_improvements(s);
        QVERIFY(!w.baseline_feasible);
        QVERIFY(!w.steps.empty());
        QCOMPARE(w.steps.front().name, std::string("activation offload"));
        QVERIFY(w.improved.strategy.offload_activations);
        const PlanContext ctx(s.model, s.training, s.cluster);
        const Prediction fitted = AnalyticModel(ctx).predict(w.improved.strategy);
        QVERIFY(near(-w.steps.front().step_time_s_saved, fitted.time.host_copy_s, 1e-6));
    }

    // ZeRO-Infinity on one V100 (DGX-2's GPU, PCIe gen 3: 12.8 GB/s each way): a 10B GPT-2 (50 layers, hidden
    // 4096) under ZeRO 3. Each pass fetches every parameter (2 bytes) over PCIe, one layer ahead of a compute
    // that is longer than the fetch: only the first layer's fetch shows, in the forward and in the backward.
    // The GPU keeps no weights, gradients or optimizer states beyond the two gathered layers and a bucket.
    void parameter_offload_hand_worked()
    {
        ModelSpec m = test::gpt(50, 4096, 32, 50257);
        TrainingSpec t;
        t.framework = Framework::megatron_deepspeed;
        t.precision = Precision::fp16;
        t.seq_len = 1024;
        t.global_batch = 10;
        const PlanContext ctx(m, t, test::cluster("V100-SXM2-32GB", 1, 1, "nvlink2", "ib-hdr"));
        Strategy s;
        s.micro_batch = 10;
        s.zero = 3;
        s.recompute = Recompute::full;
        const AnalyticModel model(ctx);
        const Prediction plain = model.predict(s);
        QVERIFY(!plain.feasible);
        s.offload_params = true;
        const Prediction p = model.predict(s);
        QVERIFY2(p.feasible, p.infeasible_reason.c_str());
        EvaluationCache cache(ctx);
        const StageParams sp = stage_params(ctx, s, cache.layout(s), 0);
        const double fetch_s = sp.total() * 2 / 12.8e9; // every parameter, fp16, per pass
        const StageTiming compute = model.stage_timing(s, 0);
        QVERIFY2(fetch_s < compute.forward_s - fetch_s / 50, "the fetch hides under the forward but for one layer");
        QVERIFY(near(p.time.host_copy_s, 2 * fetch_s / 50, 1e-9));
        QCOMPARE(p.memory.weights, 0.0);
        QCOMPARE(p.memory.optimizer, 0.0);
        QVERIFY(p.memory.gradients <= 5e8 * 2);
        // The step: CPU Adam on every parameter (both sockets of the node for the one GPU).
        QVERIFY(near(p.time.offload_s, sp.total() * 0.5 * 1e-9, 1e-9));
        QCOMPARE(p.time.optimizer_s, 0.0);
    }

    // Llama 2 13B does not fit a 24 GB GPU in any plan (its fp16 weights alone take 26 GB): the search finds
    // nothing, tries the offloads to host memory, and says what the plan that fits pays.
    void search_fits_with_parameter_offload_and_tells_the_price()
    {
        Scenario sc;
        sc.model = test::model("llama2-13b");
        sc.cluster = test::cluster("RTX-4090", 1, 1, "pcie4", "roce-400g");
        sc.training.framework = Framework::megatron_deepspeed;
        sc.training.seq_len = 2048;
        sc.training.global_batch = 8;
        SearchOptions o;
        o.threads = 1;
        o.refine_top = 0;
        const SearchOutcome out = search_strategies(sc, o);
        QVERIFY(!out.results.empty());
        const Strategy& best = out.results.front().strategy;
        QVERIFY(best.offload_params);
        QCOMPARE(best.zero, 3);
        bool noted = false;
        for (const std::string& n : out.notes)
            noted = noted || n.find("fits only with parameter offload (ZeRO-Infinity): +") != std::string::npos;
        QVERIFY2(noted, out.notes.empty() ? "no notes" : out.notes.back().c_str());
        // Megatron-LM has no parameter offload: the same search finds nothing it can run.
        sc.training.framework = Framework::megatron;
        QVERIFY(search_strategies(sc, o).results.empty());
    }

    void frameworks_that_offload()
    {
        QVERIFY(framework_supports_activation_offload(Framework::megatron, 1, Recompute::none));
        QVERIFY(!framework_supports_activation_offload(Framework::megatron, 2, Recompute::none));
        QVERIFY(!framework_supports_activation_offload(Framework::megatron, 1, Recompute::selective));
        QVERIFY(framework_supports_activation_offload(Framework::megatron_deepspeed, 4, Recompute::full));
        QVERIFY(!framework_supports_activation_offload(Framework::torchtitan, 1, Recompute::none));
        QVERIFY(!framework_supports_param_offload(Framework::megatron));
        QVERIFY(framework_supports_param_offload(Framework::torchtitan));
    }

    // The reference nodes' host memory (datasheets: DGX-2 1.5 TB for 16 V100, DGX A100 1 TB, DGX H100 2 TB,
    // GH200 480 GB per superchip, GB200 NVL72 480 GB per Grace of 2 GPUs); a scenario's value wins.
    void host_memory_per_node_defaults()
    {
        QCOMPARE(host_memory_per_node_bytes(test::cluster("V100-SXM2-32GB", 1, 16, "nvlink2", "ib-hdr")), 1.5e12);
        // One GPU of a DGX-2 (ZeRO-Offload's single-GPU runs) has the whole node's host memory.
        QCOMPARE(host_memory_per_node_bytes(test::cluster("V100-SXM2-32GB", 1, 1, "nvlink2", "ib-hdr")), 1.5e12);
        QCOMPARE(host_memory_per_node_bytes(test::cluster("A100-SXM4-80GB", 1, 8, "nvlink3-nvswitch", "ib-hdr")), 1e12);
        QCOMPARE(host_memory_per_node_bytes(test::cluster("H100-SXM5-80GB", 1, 8, "nvlink4-nvswitch", "ib-ndr")), 2e12);
        QCOMPARE(host_memory_per_node_bytes(test::cluster("GH200-96GB", 1, 1, "nvlink4-nvswitch", "ib-ndr")), 480e9);
        QCOMPARE(host_memory_per_node_bytes(test::cluster("B200", 1, 72, "nvlink5-nvl72", "ib-ndr")), 36 * 480e9);
        ClusterSpec c = test::cluster("A100-SXM4-80GB", 1, 8, "nvlink3-nvswitch", "ib-hdr");
        c.host_memory_GB = 2000;
        QCOMPARE(host_memory_per_node_bytes(c), 2e12);
    }

    // A 37B GPT (60 layers, hidden 7168) under ZeRO-Infinity on one GH200: the GPU keeps two gathered layers,
    // but the host keeps 16 bytes per parameter (fp32 master, Adam's moments, fp16 gradients and weights:
    // Ren et al. 2021 Sec. 4.1), ~590 GB against the superchip's 480 GB of LPDDR5X.
    void offloads_must_fit_the_node_host_memory()
    {
        TrainingSpec t;
        t.framework = Framework::megatron_deepspeed;
        t.seq_len = 2048;
        t.global_batch = 8;
        ClusterSpec c = test::cluster("GH200-96GB", 1, 1, "nvlink4-nvswitch", "ib-ndr");
        Strategy s;
        s.zero = 3;
        s.micro_batch = 1;
        s.recompute = Recompute::full;
        s.offload_params = true;
        const ModelSpec m = test::gpt(60, 7168, 56);
        {
            const PlanContext ctx(m, t, c);
            const Prediction p = AnalyticModel(ctx).predict(s);
            QVERIFY(p.peak_memory_bytes <= p.capacity_bytes); // the GPU side fits
            QVERIFY(!p.feasible);
            QCOMPARE(p.host_capacity_bytes_per_node, 480e9);
            EvaluationCache cache(ctx);
            const double params = stage_params(ctx, s, cache.layout(s), 0).total();
            QVERIFY2(near(p.host_memory_bytes_per_node, 16 * params, 1e-9),
                qPrintable(QString::number(p.host_memory_bytes_per_node / params)));
            QVERIFY2(p.infeasible_reason.find("host memory") != std::string::npos, p.infeasible_reason.c_str());
            QVERIFY2(p.infeasible_reason.find("447 GiB") != std::string::npos, p.infeasible_reason.c_str());
        }
        c.host_memory_GB = 1000; // a larger host: the same plan runs
        const PlanContext ctx(m, t, c);
        const Prediction p = AnalyticModel(ctx).predict(s);
        QVERIFY2(p.feasible, p.infeasible_reason.c_str());
    }

    // A node's GPUs share its host memory: a 77B GPT (96 layers, hidden 8192) under ZeRO-Infinity over 8 GPUs puts 1/8
    // of its 16 bytes per parameter on each GPU's host share, all of them together on the node. That overflows a DGX
    // A100's 1 TB and fits a DGX H100's 2 TB.
    void host_memory_is_shared_by_the_node()
    {
        TrainingSpec t;
        t.framework = Framework::megatron_deepspeed;
        t.seq_len = 2048;
        t.global_batch = 16;
        Strategy s;
        s.dp = 8;
        s.zero = 3;
        s.micro_batch = 1;
        s.recompute = Recompute::full;
        s.offload_params = true;
        const ModelSpec m = test::gpt(96, 8192, 64);
        const PlanContext a100(m, t, test::cluster("A100-SXM4-80GB", 1, 8, "nvlink3-nvswitch", "ib-hdr"));
        const Prediction pa = AnalyticModel(a100).predict(s);
        QVERIFY(pa.peak_memory_bytes <= pa.capacity_bytes); // the GPUs fit; their host does not
        QVERIFY(!pa.feasible);
        QVERIFY(near(pa.host_memory_bytes_per_node, 8 * pa.memory.host, 1e-12));
        QVERIFY(pa.host_memory_bytes_per_node > 1e12);
        const PlanContext h100(m, t, test::cluster("H100-SXM5-80GB", 1, 8, "nvlink4-nvswitch", "ib-ndr"));
        const Prediction ph = AnalyticModel(h100).predict(s);
        QVERIFY2(ph.feasible, ph.infeasible_reason.c_str());
        QVERIFY(near(ph.host_memory_bytes_per_node, pa.host_memory_bytes_per_node, 1e-12));
        // Offloaded activations count too: every micro-batch in flight keeps its layers on the host.
        Strategy act;
        act.dp = 8;
        act.zero = 3;
        act.micro_batch = 1;
        act.offload_activations = true;
        const Prediction with = AnalyticModel(h100).predict(act);
        act.offload_activations = false;
        const Prediction without = AnalyticModel(h100).predict(act);
        QVERIFY(with.memory.host > 0);
        QCOMPARE(without.memory.host, 0.0);
        QVERIFY(with.memory.activations < without.memory.activations);
    }

    // Llama 3 8B at 8K tokens, FSDP over 8 GH200 superchips: without recomputation two sequences per
    // micro-batch do not fit. NVLink-C2C hides the activation copies, so offloading them beats
    // recomputing the forward, and the search takes the offload though a recomputing plan fits as well.
    void search_prefers_activation_offload_over_recompute_on_c2c()
    {
        Scenario sc;
        sc.model = test::model("llama3-8b");
        sc.cluster = test::cluster("GH200-96GB", 8, 1, "nvlink4-nvswitch", "ib-ndr");
        sc.training.seq_len = 8192;
        sc.training.global_batch = 16;
        Strategy s;
        s.dp = 8;
        s.zero = 3;
        s.micro_batch = 2;
        const PlanContext ctx(sc.model, sc.training, sc.cluster);
        const AnalyticModel model(ctx);
        QVERIFY(!model.predict(s).feasible);
        Strategy rc = s;
        rc.recompute = Recompute::full;
        Strategy off = s;
        off.offload_activations = true;
        const Prediction recomputed = model.predict(rc), offloaded = model.predict(off);
        QVERIFY(recomputed.feasible && offloaded.feasible);
        QVERIFY(offloaded.step_time_s < recomputed.step_time_s);
        SearchOptions o;
        o.threads = 1;
        o.refine_top = 0;
        o.fix.tp = 1;
        o.fix.pp = 1;
        o.fix.cp = 1;
        o.fix.zero = 3;
        o.fix.micro_batch = 2;
        const SearchOutcome out = search_strategies(sc, o);
        QVERIFY(!out.results.empty());
        const Strategy& best = out.results.front().strategy;
        QVERIFY(best.offload_activations);
        QCOMPARE(best.recompute, Recompute::none);
        QVERIFY(out.results.front().analytic.step_time_s <= offloaded.step_time_s * (1 + 1e-9));
    }
};

QTEST_APPLESS_MAIN(TestOffload)
#include "tst_offload.moc"

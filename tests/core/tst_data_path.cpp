// The data path of a step (training.data) and the improvement waterfall around the parallel degrees,
// each against a hand-worked number: a loader that tokenises too slowly stalls the step by exactly what
// it cannot finish, more workers remove the stall, storage that is too slow cannot be fixed by workers,
// in-line loading never overlaps, and CPU Adam takes the loader's cores while it runs.
#include "io/improvements_io.hpp"
#include "io/preset_catalog.hpp"
#include "io/scenario_io.hpp"
#include "model/analytic_model.hpp"
#include "model/data_path.hpp"
#include "search/improvements.hpp"
#include "spec/input_error.hpp"

#include "../support/test_plans.hpp"

#include <QTest>

#include <cmath>

using namespace parallax;

namespace {

bool near(double got, double want, double rel)
{
    return std::fabs(got - want) <= rel * std::fabs(want);
}

// Llama 3 8B, TP 2 x DP 4 on one H100 node: 32 sequences of 8,192 tokens a step, 4 loaders of 65,536.
Scenario llama8b_node()
{
    Scenario s;
    s.model = test::model("llama3-8b");
    s.cluster = test::cluster("H100-SXM5-80GB", 1, 8, "nvlink4-nvswitch", "ib-ndr");
    s.training.global_batch = 32;
    s.training.seq_len = 8192;
    s.strategy.tp = 2;
    s.strategy.sequence_parallel = true;
    s.strategy.dp = 4;
    s.strategy.zero = 1;
    s.strategy.recompute = Recompute::selective;
    return s;
}

Prediction predict(const Scenario& s)
{
    const PlanContext ctx(s.model, s.training, s.cluster);
    return AnalyticModel(ctx).predict(s.strategy);
}

} // namespace

class TestDataPath : public QObject {
    Q_OBJECT

private slots:
    void pretokenized_data_never_stalls()
    {
        const Prediction p = predict(llama8b_node());
        QVERIFY(p.feasible);
        QCOMPARE(p.time.data_stall_s, 0.0);
    }

    void slow_tokenisation_stalls_the_step_by_what_it_cannot_finish()
    {
        Scenario s = llama8b_node();
        const double gpu_step = predict(s).step_time_s;
        s.training.data.pretokenized = false;
        s.training.data.tokenize_tokens_per_s_per_core = 5000; // a Python pre-processing pass per document
        s.training.data.workers = 1;
        const Prediction p = predict(s);
        // One loader per DP rank tokenises its 8 sequences x 8,192 tokens on one core: 13.1 s a step.
        const double tokenize_s = 8.0 * 8192 / 5000;
        QVERIFY2(tokenize_s > gpu_step, "the case must be loader-bound");
        QVERIFY(near(p.step_time_s, tokenize_s, 1e-9));
        QVERIFY(near(p.time.data_stall_s, tokenize_s - gpu_step, 1e-9));
        QVERIFY(near(p.time.total(), p.step_time_s, 1e-9));
        const PlanContext ctx(s.model, s.training, s.cluster);
        const DataPathCost d = data_path_cost(ctx, s.strategy, gpu_step, 0);
        QCOMPARE(d.limit, DataPathLimit::tokenization);
        QCOMPARE(d.loading_ranks, 4);
        QCOMPARE(d.workers_to_hide, static_cast<int>(std::ceil(tokenize_s / gpu_step)));
        // The waterfall's first step is the fix: enough workers, and the stall is gone.
        const ImprovementWaterfall w = plan_improvements(s);
        QVERIFY(!w.steps.empty());
        QCOMPARE(w.steps.front().name, std::string("better loader"));
        QVERIFY(near(w.steps.front().step_time_s_saved, p.time.data_stall_s, 1e-6));
        QCOMPARE(w.improved.training.data.workers, d.workers_to_hide);
        QCOMPARE(predict(w.improved).time.data_stall_s, 0.0);
    }

    void slow_storage_is_not_fixed_by_workers()
    {
        Scenario s = llama8b_node();
        const double gpu_step = predict(s).step_time_s;
        s.training.data.storage_read_GBps_per_node = 1e-4; // 100 kB/s
        const Prediction p = predict(s);
        // 4 loaders on the node read 65,536 tokens each at 4 bytes (vocab 128,256 > 65,500).
        const double storage_s = 4 * 65536.0 * 4 / 1e5;
        QVERIFY(near(p.step_time_s, storage_s, 1e-9));
        QVERIFY(near(p.time.data_stall_s, storage_s - gpu_step, 1e-9));
        const PlanContext ctx(s.model, s.training, s.cluster);
        QCOMPARE(data_path_cost(ctx, s.strategy, gpu_step, 0).limit, DataPathLimit::storage);
        const ImprovementWaterfall w = plan_improvements(s);
        for (const Improvement& i : w.steps)
            QVERIFY(i.name != "better loader");
    }

    void loading_in_line_never_overlaps()
    {
        Scenario s = llama8b_node();
        const double gpu_step = predict(s).step_time_s;
        s.training.data.workers = 0;
        const Prediction p = predict(s);
        // Storage (4 x 65,536 x 4 B at 2 GB/s) plus the copy (65,536 x 28 B at 80% of 64 GB/s), in line.
        const double in_line = 4 * 65536.0 * 4 / 2e9 + 65536.0 * 28 / (64e9 * 0.8);
        QVERIFY(near(p.time.data_stall_s, in_line, 1e-9));
        QVERIFY(near(p.step_time_s, gpu_step + in_line, 1e-9));
    }

    void cpu_adam_takes_the_loaders_cores()
    {
        Scenario s = llama8b_node();
        s.training.data.pretokenized = false;
        s.training.data.cpu_cores_per_node = 16; // 8 for the ranks, two worker cores per loader
        const PlanContext ctx(s.model, s.training, s.cluster);
        const double step = 10;
        const DataPathCost free = data_path_cost(ctx, s.strategy, step, 0);
        const DataPathCost shared = data_path_cost(ctx, s.strategy, step, 5);
        QVERIFY(near(free.tokenize_s, 65536.0 / (2.5e5 * 2), 1e-9)); // 2 workers each: 8 free cores, 4 loaders
        QVERIFY(near(shared.tokenize_s, 2 * free.tokenize_s, 1e-9)); // CPU Adam holds them half the step
    }

    void scenario_keys_round_trip_and_bad_values_name_the_key()
    {
        const std::string text = R"({"schema":1,"model":"llama3-8b","cluster":{"gpu":"H100-SXM5-80GB","nodes":1,
            "gpus_per_node":8,"intra_node":"nvlink4-nvswitch","inter_node":"ib-ndr"},
            "training":{"global_batch":32,"seq_len":8192,"data":{"pretokenized":false,"workers":6,
            "prefetch_batches":4,"tokenize_tokens_per_s_per_core":40000,"storage_read_GBps_per_node":1.5,
            "bytes_per_token":3.5,"cpu_cores_per_node":96}},"strategy":{"dp":8}})";
        const Scenario s = parse_scenario(nlohmann::json::parse(text), "s.json", PresetCatalog::standard());
        const DataPipelineSpec& d = s.training.data;
        QCOMPARE(d.pretokenized, false);
        QCOMPARE(d.workers, 6);
        QCOMPARE(d.prefetch_batches, 4);
        QCOMPARE(d.tokenize_tokens_per_s_per_core, 40000.0);
        QCOMPARE(*d.bytes_per_token, 3.5);
        QCOMPARE(*d.cpu_cores_per_node, 96);
        const Scenario back = parse_scenario(scenario_to_json(s), "back.json", PresetCatalog::standard());
        QVERIFY(back.training.data == d);
        // The default data path writes nothing: scenarios without it stay as they were.
        QVERIFY(!scenario_to_json(llama8b_node()).at("training").contains("data"));
        nlohmann::json bad = nlohmann::json::parse(text);
        bad["training"]["data"]["prefetch_batches"] = 0;
        try {
            parse_scenario(bad, "s.json", PresetCatalog::standard());
            QFAIL("prefetch 0 with workers accepted");
        } catch (const InputError& e) {
            QCOMPARE(e.key(), std::string("training.data.prefetch_batches"));
        }
    }

    void waterfall_lists_what_changes_the_plan()
    {
        // The default scenario (Llama 3 70B, TP 4 x PP 4 x VPP 5 x CP 2 x DP 2 on 64 H100), with the
        // optimizer offloaded although it fits without.
        Scenario s = load_scenario_preset("default", PresetCatalog::standard());
        s.strategy.offload_optimizer = true;
        s.strategy.tp_comm_overlap = false;
        const ImprovementWaterfall w = plan_improvements(s);
        QVERIFY(w.baseline_feasible);
        std::vector<std::string> names;
        for (const Improvement& i : w.steps)
            names.push_back(i.name);
        QCOMPARE(names, (std::vector<std::string> { "optimizer offload", "fused TP overlap", "per-stage clocks" }));
        // Each step starts where the previous one ended.
        double step = w.baseline_step_time_s;
        double energy = w.baseline_energy_J;
        for (const Improvement& i : w.steps) {
            QVERIFY(!i.change.empty()); // every row changes a setting (no price rows here)
            QVERIFY(near(i.step_time_s, step - i.step_time_s_saved, 1e-9));
            QVERIFY(near(i.energy_J, energy - i.energy_J_saved, 1e-9));
            step = i.step_time_s;
            energy = i.energy_J;
        }
        QVERIFY(w.steps[0].step_time_s_saved > 0); // no PCIe copies, no CPU Adam
        QVERIFY(w.steps[1].step_time_s_saved > 0); // TP collectives under their GEMMs
        QVERIFY(w.steps[2].energy_J_saved > 0); // stages off the critical path slowed down
        QVERIFY(w.steps[2].step_time_s_saved > -0.011 * w.steps[1].step_time_s); // within the planner's 1%
        const Prediction improved = predict(w.improved);
        QVERIFY(near(improved.step_time_s, w.steps.back().step_time_s, 1e-9));
        const nlohmann::json j = improvements_to_json(w);
        QCOMPARE(j.size(), std::size_t(3));
        for (const char* key : { "name", "step_time_s_saved", "energy_J_saved" })
            QVERIFY(j[0].contains(key));
        QVERIFY(improvements_to_text(w).find("fused TP overlap") != std::string::npos);
    }

    void offload_that_makes_a_plan_fit_is_listed_with_its_price()
    {
        // Llama 3 70B on 8 H100 with ZeRO 1: the optimizer states do not fit; offloaded, they do.
        Scenario s;
        s.model = test::model("llama3-70b");
        s.cluster = test::cluster("H100-SXM5-80GB", 1, 8, "nvlink4-nvswitch", "ib-ndr");
        s.training.global_batch = 16;
        s.training.seq_len = 4096;
        s.strategy.tp = 8;
        s.strategy.dp = 1;
        s.strategy.sequence_parallel = true;
        s.strategy.zero = 1;
        s.strategy.recompute = Recompute::full;
        QVERIFY2(!predict(s).feasible, "the plan must not fit without offload");
        const ImprovementWaterfall w = plan_improvements(s);
        QVERIFY(!w.baseline_feasible);
        QVERIFY(!w.steps.empty());
        QCOMPARE(w.steps.front().name, std::string("optimizer offload"));
        QVERIFY(w.improved.strategy.offload_optimizer);
        QVERIFY(w.steps.front().step_time_s_saved < 0); // its price
        // The price is the offload's share of the step of the plan as the offload leaves it (later steps, say a
        // shorter backward under fused TP overlap, expose more of the per-micro-batch gradient copies).
        Scenario fitted = s;
        fitted.strategy.offload_optimizer = true;
        QVERIFY(near(-w.steps.front().step_time_s_saved, predict(fitted).time.offload_s, 1e-9));
    }
};

QTEST_APPLESS_MAIN(TestDataPath)
#include "tst_data_path.moc"

// The search over heterogeneous plans (docs/heterogeneous.md, "Search"): on DGX H100 + DGX A100 nodes
// it beats the H100 nodes alone and stays below the two halves' bests added up; a group too slow to
// help stays idle; the what-ifs move layers towards the faster stage; it stops when cancelled; on one
// group it finds what the plain search finds; its JSON plan predicts the same when pasted back.
#include "io/hetero_search_io.hpp"
#include "io/preset_catalog.hpp"
#include "io/scenario_io.hpp"
#include "model/hetero_model.hpp"
#include "search/hetero_search.hpp"
#include "search/search.hpp"
#include "spec/input_error.hpp"

#include <QTest>

#include <nlohmann/json.hpp>

#include <cmath>

using namespace parallax;
using nlohmann::json;

namespace {

const PresetCatalog& catalog()
{
    return PresetCatalog::standard();
}

json dgx_h100(int nodes)
{
    return { { "name", "h100" }, { "gpu", "H100-SXM5-80GB" }, { "nodes", nodes }, { "gpus_per_node", 8 },
        { "intra_node", "nvlink4-nvswitch" } };
}

json dgx_a100(int nodes)
{
    return { { "name", "a100" }, { "gpu", "A100-SXM4-80GB" }, { "nodes", nodes }, { "gpus_per_node", 8 },
        { "intra_node", "nvlink3-nvswitch" } };
}

// Llama 3 70B at a global batch of 256 sequences of 4,096 tokens (1M tokens per step, Meta's recipe
// scaled to 64 GPUs).
json training(const char* precision = "bf16")
{
    return { { "global_batch", 256 }, { "seq_len", 4096 }, { "precision", precision } };
}

Scenario mixed_scenario(const json& groups, const char* precision = "bf16", const json& extra = json::object())
{
    json j = { { "schema", 1 }, { "model", "llama3-70b" },
        { "cluster", { { "groups", groups }, { "inter_node", "ib-ndr" } } }, { "training", training(precision) } };
    j.update(extra);
    return parse_scenario(j, "mixed.json", catalog(), ScenarioUse::search);
}

// The same nodes as a plain cluster.
Scenario plain_scenario(const json& group)
{
    const json j = { { "schema", 1 }, { "model", "llama3-70b" },
        { "cluster",
            { { "gpu", group["gpu"] }, { "nodes", group["nodes"] }, { "gpus_per_node", group["gpus_per_node"] },
                { "intra_node", group["intra_node"] }, { "inter_node", "ib-ndr" } } },
        { "training", training() } };
    return parse_scenario(j, "plain.json", catalog(), ScenarioUse::search);
}

// The plain search's best tokens/s among the plans Megatron-LM runs (the scenario's framework), analytic
// as the heterogeneous model is.
double plain_best_tokens_per_s(const Scenario& s)
{
    SearchOptions o;
    o.top = 1;
    o.refine_top = 0;
    const SearchOutcome out = search_strategies(s, o);
    return out.results.empty() ? 0.0 : out.results.front().prediction.tokens_per_s;
}

HeteroSearchOutcome hetero_search(const Scenario& s, int top = 3)
{
    HeteroSearchOptions o;
    o.top = top;
    return search_heterogeneous(s, o);
}

double best_tokens_per_s(const HeteroSearchOutcome& o)
{
    return o.results.empty() ? 0.0 : o.results.front().prediction.prediction.tokens_per_s;
}

} // namespace

class TestHeteroSearch : public QObject {
    Q_OBJECT

private slots:
    // The bar: 4 DGX H100 + 4 DGX A100 at least as fast as the 4 DGX H100 alone, and no
    // faster than the best of each half added up.
    void mixedBeatsH100AloneAndStaysBelowBothHalves()
    {
        const HeteroSearchOutcome mixed = hetero_search(mixed_scenario(json::array({ dgx_h100(4), dgx_a100(4) })));
        QVERIFY(!mixed.results.empty());
        const double h100 = plain_best_tokens_per_s(plain_scenario(dgx_h100(4)));
        const double a100 = plain_best_tokens_per_s(plain_scenario(dgx_a100(4)));
        const double best = best_tokens_per_s(mixed);
        qInfo("mixed %.0f tok/s, H100 alone %.0f, A100 alone %.0f, sum %.0f", best, h100, a100, h100 + a100);
        QVERIFY(h100 > 0 && a100 > 0);
        QVERIFY(best >= h100);
        QVERIFY(best <= h100 + a100);
        // The A100s are worth having: the winner uses both groups.
        QVERIFY(mixed.results.front().idle_groups.empty());
        QVERIFY(mixed.results.front().prediction.prediction.feasible);
        // Best first.
        for (std::size_t i = 1; i < mixed.results.size(); ++i)
            QVERIFY(mixed.results[i].objective <= mixed.results[i - 1].objective);
    }

    // One g4dn node (4 T4 on PCIe) beside 4 DGX H100 for Llama 3 70B: every layer it takes paces the
    // pipeline, so the search leaves it idle and says what adding it would cost.
    void slowGroupStaysIdle()
    {
        const json t4
            = { { "name", "t4" }, { "gpu", "T4" }, { "nodes", 1 }, { "gpus_per_node", 4 }, { "intra_node", "pcie4" } };
        const HeteroSearchOutcome o = hetero_search(mixed_scenario(json::array({ dgx_h100(4), t4 }), "fp16"));
        QVERIFY(!o.results.empty());
        const HeteroSearchResult& best = o.results.front();
        QCOMPARE(best.idle_groups, std::vector<std::string> { "t4" });
        for (const PipelineStageSpec& st : best.stages)
            for (const StageReplica& r : st.replicas)
                QCOMPARE(r.group, std::string("h100"));
        bool adding_named = false;
        for (const HeteroWhatIf& w : best.what_ifs)
            if (w.change.rfind("adding group t4", 0) == 0) {
                adding_named = true;
                QVERIFY(!w.feasible || w.step_time_change > 0);
            }
        QVERIFY(adding_named);
    }

    // Equal layers on an H100 stage and an A100 stage: the A100 stage paces the pipeline, so the best
    // layer move goes from it to the H100 stage, and is faster.
    void layerMoveGoesToTheFasterStage()
    {
        const Scenario s = mixed_scenario(json::array({ dgx_h100(4), dgx_a100(4) }));
        HeteroLayout layout;
        layout.family = HeteroFamily::group_blocks;
        layout.shares = { GroupShare { 0, 8, 1, 4 }, GroupShare { 1, 8, 1, 4 } };
        Strategy knobs = s.strategy;
        knobs.micro_batch = 1;
        knobs.recompute = Recompute::selective;
        knobs.zero = 1;
        knobs.sequence_parallel = true;
        const std::vector<HeteroWhatIf> what_ifs = hetero_what_ifs(s, layout, knobs, { 40, 40 }, builtin_calibration());
        QVERIFY(!what_ifs.empty());
        const auto move = std::find_if(
            what_ifs.begin(), what_ifs.end(), [](const HeteroWhatIf& w) { return w.change.rfind("moving", 0) == 0; });
        QVERIFY(move != what_ifs.end());
        qInfo("%s", move->text().c_str());
        QVERIFY2(move->change.find("from stage 1 (a100) to stage 0 (h100)") != std::string::npos, move->change.c_str());
        QVERIFY(move->feasible && move->step_time_change < 0);
        QVERIFY(move->text().find("faster") != std::string::npos);
        // The opposite direction is slower.
        for (const HeteroWhatIf& w : what_ifs)
            if (w.change.find("from stage 0 (h100) to stage 1 (a100)") != std::string::npos)
                QVERIFY(w.step_time_change > 0);
    }

    // Cancelled after the first progress report, the search stops early and says so.
    void cancellationStopsTheSearch()
    {
        const Scenario s = mixed_scenario(json::array({ dgx_h100(4), dgx_a100(4) }));
        const HeteroSearchOutcome full = hetero_search(s);
        CancelToken cancel;
        HeteroSearchOptions o;
        o.threads = 2;
        o.progress = [&](double) { cancel.cancel(); };
        const HeteroSearchOutcome stopped = search_heterogeneous(s, o, cancel);
        QVERIFY(stopped.cancelled);
        QVERIFY(!full.cancelled);
        QVERIFY(stopped.evaluated < full.evaluated / 2);
        QVERIFY(!stopped.results.empty()); // what it had costed before it stopped
        QVERIFY(stopped.results.front().objective <= full.results.front().objective);
        // Cancelled before it starts: nothing costed.
        CancelToken before;
        before.cancel();
        const HeteroSearchOutcome none = search_heterogeneous(s, HeteroSearchOptions {}, before);
        QVERIFY(none.cancelled);
        QCOMPARE(none.evaluated, 0LL);
        QVERIFY(none.results.empty());
    }

    // A cluster of one group is a plain cluster: the best plan agrees with the plain search's best
    // within 2% (the plain search also has interleaving and context parallelism, which explicit
    // pipelines do not).
    void oneGroupAgreesWithPlainSearch()
    {
        const HeteroSearchOutcome one = hetero_search(mixed_scenario(json::array({ dgx_h100(4) })));
        const double plain = plain_best_tokens_per_s(plain_scenario(dgx_h100(4)));
        const double best = best_tokens_per_s(one);
        qInfo("one group %.0f tok/s, plain search %.0f", best, plain);
        QVERIFY(std::fabs(best / plain - 1) < 0.02);
    }

    // The winner's JSON strategy pasted back into the scenario predicts the same step.
    void jsonWinnerRoundTripsThroughPredict()
    {
        const json groups = json::array({ dgx_h100(4), dgx_a100(4) });
        const Scenario s = mixed_scenario(groups);
        const HeteroSearchOutcome o = hetero_search(s, 2);
        QVERIFY(!o.results.empty());
        const json out = json::parse(hetero_search_to_json(s, o).dump());
        QCOMPARE(out["results"].size(), o.results.size());
        const json& strategy = out["results"][0]["strategy"];
        QVERIFY(strategy.contains("stages"));
        QVERIFY(!strategy.contains("tp") && !strategy.contains("pp") && !strategy.contains("dp"));
        const json scenario = { { "schema", 1 }, { "model", "llama3-70b" },
            { "cluster", { { "groups", groups }, { "inter_node", "ib-ndr" } } }, { "training", training() },
            { "strategy", strategy } };
        const Scenario plan = parse_scenario(scenario, "pasted.json", catalog());
        const HeteroPrediction h = predict_heterogeneous(plan);
        const double searched = o.results.front().prediction.prediction.step_time_s;
        QVERIFY(std::fabs(h.prediction.step_time_s / searched - 1) < 1e-9);
        QCOMPARE(out["results"][0]["prediction"]["step_time_s"].get<double>(), searched);
        QVERIFY(out["results"][0]["explanation"]["what_ifs"].is_array());
        // The text table names each stage's replicas and the idle groups.
        const std::string text = hetero_search_to_text(s, o);
        QVERIFY(text.find("stage 0:") != std::string::npos);
        QVERIFY(text.find("idle groups:") != std::string::npos);
    }

    // One evaluator costs many plans: its caches carry nothing from one plan to the next.
    void evaluatorReuseMatchesFreshPredictions()
    {
        const Scenario s = mixed_scenario(json::array({ dgx_h100(4), dgx_a100(4) }));
        const HeteroSearchOutcome o = hetero_search(s, 3);
        QVERIFY(o.results.size() >= 2);
        HeteroEvaluator evaluator(s);
        for (const HeteroSearchResult& r : o.results) {
            const Scenario plan = hetero_plan_scenario(s, r.strategy, r.stages);
            const double reused = evaluator.predict(plan).prediction.step_time_s;
            QCOMPARE(reused, predict_heterogeneous(plan).prediction.step_time_s);
            QCOMPARE(reused, r.prediction.prediction.step_time_s);
        }
    }

    // With a reliability section plans are ranked by goodput, as the plain search ranks them; a memory
    // headroom asked for is kept by every plan.
    void goodputRankingAndHeadroom()
    {
        json a100 = dgx_a100(4);
        a100["preemption_rate_per_hour"] = 0.5; // spot nodes
        const json extra
            = { { "reliability", json::object() }, { "search", { { "limits", { { "memory_headroom", 0.2 } } } } } };
        const Scenario s = mixed_scenario(json::array({ dgx_h100(4), a100 }), "bf16", extra);
        HeteroSearchOptions o;
        o.top = 3;
        o.rank_by_goodput = true;
        const HeteroSearchOutcome out = search_heterogeneous(s, o);
        QVERIFY(out.ranked_by_goodput);
        QVERIFY(!out.results.empty());
        for (std::size_t i = 0; i < out.results.size(); ++i) {
            const HeteroSearchResult& r = out.results[i];
            QVERIFY(r.goodput_tokens_per_s > 0);
            QVERIFY(r.goodput_tokens_per_s < r.prediction.prediction.tokens_per_s);
            QCOMPARE(r.objective, r.goodput_tokens_per_s);
            if (i > 0)
                QVERIFY(r.goodput_tokens_per_s <= out.results[i - 1].goodput_tokens_per_s);
            for (const HeteroStageReport& st : r.prediction.stages)
                for (const HeteroReplicaReport& rep : st.replicas)
                    QVERIFY(rep.peak_memory_bytes <= 0.8 * rep.capacity_bytes);
        }
    }

    // search.fix pins what an explicit pipeline has: every replica's TP, the stage count, the knobs; what it
    // does not have (dp, interleaving) is ignored with a note.
    void searchFixIsHonoured()
    {
        const json extra
            = { { "search", { { "fix", { { "tp", 8 }, { "pp", 2 }, { "zero", 1 }, { "dp", 4 }, { "vpp", 2 } } } } } };
        const Scenario s = mixed_scenario(json::array({ dgx_h100(4), dgx_a100(4) }), "bf16", extra);
        HeteroSearchOptions o;
        o.top = 5;
        o.fix = search_fix_from(s);
        const HeteroSearchOutcome out = search_heterogeneous(s, o);
        QVERIFY(!out.results.empty());
        for (const HeteroSearchResult& r : out.results) {
            QCOMPARE(r.stages.size(), std::size_t { 2 });
            QCOMPARE(r.strategy.zero, 1);
            for (const PipelineStageSpec& st : r.stages)
                for (const StageReplica& rep : st.replicas)
                    QCOMPARE(rep.tp, 8);
        }
        QCOMPARE(out.notes.size(), std::size_t { 2 }); // dp, and vpp
    }

    // A cluster with groups needs no stages to be searched, but still needs them to be predicted.
    void searchNeedsNoStages()
    {
        const json j = { { "schema", 1 }, { "model", "llama3-70b" },
            { "cluster", { { "groups", json::array({ dgx_h100(1), dgx_a100(1) }) }, { "inter_node", "ib-ndr" } } },
            { "training", training() } };
        const Scenario s = parse_scenario(j, "mixed.json", catalog(), ScenarioUse::search);
        QVERIFY(s.cluster.heterogeneous() && s.stages.empty());
        // Saved and read again for a search, it is the same scenario.
        const json saved = scenario_to_json(s);
        QVERIFY(scenario_to_json(parse_scenario(saved, "saved.json", catalog(), ScenarioUse::search)) == saved);
        QVERIFY_THROWS_EXCEPTION(InputError, parse_scenario(j, "mixed.json", catalog(), ScenarioUse::plan));
    }
};

QTEST_APPLESS_MAIN(TestHeteroSearch)
#include "tst_hetero_search.moc"

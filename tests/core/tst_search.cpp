// Strategy search and sweeps: validity, pruning soundness against brute force, determinism across
// thread counts, cancellation, pinned dimensions, and never losing to a published configuration.
#include "calibration/published_runs.hpp"
#include "io/preset_catalog.hpp"
#include "io/scenario_io.hpp"
#include "io/search_io.hpp"
#include "model/analytic_model.hpp"
#include "model/strategy_costs.hpp"
#include "search/search.hpp"
#include "search/sweep.hpp"
#include "spec/framework_support.hpp"
#include "spec/input_error.hpp"
#include "spec/strategy_rules.hpp"

#include "../support/test_plans.hpp"

#include <QTest>

#include <fstream>
#include <sstream>

using namespace parallax;

namespace {

Scenario small_scenario()
{
    Scenario s;
    s.model = test::model("llama3-8b");
    s.cluster = test::cluster("H100-SXM5-80GB", 2, 8, "nvlink4-nvswitch", "ib-ndr");
    s.training.global_batch = 64;
    s.training.seq_len = 4096;
    return s;
}

SearchOptions quick(int threads, int top = 10)
{
    SearchOptions o;
    o.threads = threads;
    o.top = top;
    o.refine_top = 0;
    return o;
}

QStringList names(const SearchOutcome& o)
{
    QStringList out;
    for (const auto& r : o.results)
        out << QString::fromStdString(strategy_to_json(r.strategy).dump()) + QStringLiteral(" ")
                + QString::number(r.objective, 'g', 12);
    return out;
}

QStringList pareto_names(const SearchOutcome& o)
{
    QStringList out;
    for (const auto& r : o.pareto)
        out << QString::fromStdString(strategy_to_json(r.strategy).dump());
    return out;
}

// Brute force also ranks variants the pruned search proves dominated without evaluating them: the
// same strategy with more recomputation (or offloading) than a lighter variant that fits, tried first
// In the search's order (no offload before offload, none < selective < full). Without those, the brute
// force ranking is the one the pruned search must reproduce.
QStringList undominated(const SearchOutcome& o, const Scenario& sc)
{
    const PlanContext ctx(sc.model, sc.training, sc.cluster);
    const AnalyticModel model(ctx);
    const PlanInputs in { sc.model, sc.training, sc.cluster.gpu, sc.cluster.total_gpus() };
    auto lighter_fits = [&](const Strategy& s) {
        for (bool offload : { false, true })
            for (Recompute rc : { Recompute::none, Recompute::selective, Recompute::full }) {
                if (offload == s.offload_optimizer && rc == s.recompute)
                    return false; // reached the variant itself
                Strategy lighter = s;
                lighter.offload_optimizer = offload;
                lighter.recompute = rc;
                if (check_strategy(in, lighter) != Rule::ok)
                    continue;
                AnalyticResult a;
                model.evaluate(lighter, a);
                if (a.feasible)
                    return true;
            }
        return false;
    };
    QStringList out;
    for (const auto& r : o.results)
        if (!lighter_fits(r.strategy))
            out << QString::fromStdString(strategy_to_json(r.strategy).dump()) + QStringLiteral(" ")
                    + QString::number(r.objective, 'g', 12);
    return out;
}

} // namespace

class TestSearch : public QObject {
    Q_OBJECT
private slots:
    void results_are_valid_and_ranked()
    {
        const Scenario s = small_scenario();
        const SearchOutcome o = search_strategies(s, quick(2));
        QVERIFY(o.evaluated > 1000);
        QVERIFY(o.feasible > 0 && o.feasible <= o.evaluated);
        QCOMPARE(static_cast<int>(o.results.size()), 10);
        const PlanInputs in { s.model, s.training, s.cluster.gpu, s.cluster.total_gpus() };
        for (std::size_t i = 0; i < o.results.size(); ++i) {
            const SearchResult& r = o.results[i];
            QCOMPARE(check_strategy(in, r.strategy), Rule::ok);
            QVERIFY(r.analytic.feasible);
            QVERIFY(r.prediction.tokens_per_s > 0);
            QVERIFY(!r.limiter.empty());
            if (i > 0)
                QVERIFY(o.results[i - 1].objective >= r.objective);
        }
        QVERIFY(o.results.front().runner_up.has_value());
        QVERIFY(!o.results.front().runner_up->dimension.empty());
        QVERIFY(o.results.front().runner_up->slower_fraction >= 0);
        // The Pareto front holds no dominated plan.
        QVERIFY(!o.pareto.empty());
    }

    // Pruning never drops a strategy that could be best: the pruned search returns the same top 10
    // as brute force.
    void pruning_is_sound()
    {
        const Scenario s = small_scenario();
        SearchOptions pruned = quick(2);
        SearchOptions brute = quick(2);
        brute.prune = false;
        const SearchOutcome a = search_strategies(s, pruned);
        const SearchOutcome b = search_strategies(s, brute);
        const QStringList best = undominated(b, s);
        QVERIFY(best.size() >= 5);
        QCOMPARE(names(a).mid(0, best.size()), best);
        QVERIFY(a.pruned > 0);
        QCOMPARE(b.pruned, 0LL);
        QCOMPARE(a.evaluated, b.evaluated); // pruned variants count as evaluated (proved dominated)
        QVERIFY(b.feasible >= a.feasible);
    }

    // A search thread's cache serves thousands of strategies: each must get exactly what a fresh
    // evaluation gives (the cache once keyed entries by a hash of their fields, and distinct MoE shapes
    // shared entries: tp 4 with ep 1 and tp 4, cp 2, ep 64, both with expert TP 1). Also at a lowered clock and a power
    // cap, where the clock ladder is built lazily.
    void warm_cache_matches_fresh_evaluation()
    {
        const ModelSpec m = test::model("deepseek-v3");
        for (double clock_MHz : { 0.0, 1500.0 }) {
            TrainingSpec t;
            t.global_batch = 1920;
            t.seq_len = 4096;
            t.precision = Precision::fp8;
            t.clock_MHz = clock_MHz;
            t.power_cap_W = clock_MHz > 0 ? 500 : 0;
            const ClusterSpec c = test::cluster("H800-SXM5-80GB", 128, 8, "nvlink4-h800", "ib-ndr");
            const PlanContext ctx(m, t, c);
            const AnalyticModel model(ctx);
            const PlanInputs in { m, t, c.gpu, c.total_gpus() };
            EvaluationCache warm(ctx);
            int compared = 0, differing_steps = 0;
            double last_step = 0;
            for (int tp : { 1, 2, 4 })
                for (int cp : { 1, 2 })
                    for (int ep : { 1, 8, 64 })
                        for (int pp : { 8, 16 })
                            for (int mb : { 1, 2, 3, 5 })
                                for (int etp : { 0, 1 })
                                    for (Recompute rc : { Recompute::none, Recompute::full }) {
                                        Strategy s;
                                        s.expert_tp = etp;
                                        s.tp = tp;
                                        s.cp = cp;
                                        s.ep = ep;
                                        s.pp = pp;
                                        s.dp = static_cast<int>(c.total_gpus() / (tp * cp * pp));
                                        s.micro_batch = mb;
                                        s.recompute = rc;
                                        s.sequence_parallel = tp > 1;
                                        s.zero = 1;
                                        if (check_strategy(in, s) != Rule::ok)
                                            continue;
                                        AnalyticResult a, b;
                                        model.evaluate(s, a, warm);
                                        model.evaluate(s, b); // a cache of its own
                                        QCOMPARE(a.step_time_s, b.step_time_s);
                                        QCOMPARE(a.peak_memory_bytes, b.peak_memory_bytes);
                                        QCOMPARE(a.power.energy_J_per_token, b.power.energy_J_per_token);
                                        QCOMPARE(model.peak_memory_bytes(s, warm), b.peak_memory_bytes);
                                        differing_steps += a.step_time_s != last_step ? 1 : 0;
                                        last_step = a.step_time_s;
                                        ++compared;
                                    }
            QVERIFY2(compared > 200, qPrintable(QString::number(compared)));
            QVERIFY(differing_steps > compared / 2); // the strategies really differ
        }
    }

    void deterministic_across_thread_counts()
    {
        const Scenario s = small_scenario();
        const SearchOutcome one = search_strategies(s, quick(1));
        const SearchOutcome two = search_strategies(s, quick(2));
        const SearchOutcome four = search_strategies(s, quick(4));
        QCOMPARE(names(one), names(two));
        QCOMPARE(names(one), names(four));
        QCOMPARE(one.evaluated, four.evaluated);
        QCOMPARE(one.feasible, four.feasible);
        QCOMPARE(pareto_names(one), pareto_names(four));
    }

    // A front larger than the reported cap: which 64 points are reported must not depend on the
    // order the workers found them in.
    void pareto_front_is_deterministic_when_capped()
    {
        const Scenario s = load_scenario_preset("llama3.1-405b-16k-h100", PresetCatalog::standard());
        const SearchOutcome one = search_strategies(s, quick(1));
        QCOMPARE(static_cast<int>(one.pareto.size()), 64);
        for (int threads : { 2, 3, 4 }) {
            const SearchOutcome many = search_strategies(s, quick(threads));
            QCOMPARE(pareto_names(many), pareto_names(one));
        }
    }

    void cancellation_stops_early()
    {
        Scenario s = small_scenario();
        s.cluster.nodes = 16; // a bigger space
        SearchOptions o = quick(2);
        const CancelToken cancel = o.cancel;
        int calls = 0;
        o.progress = [&](double) {
            ++calls;
            cancel.cancel();
        };
        const SearchOutcome stopped = search_strategies(s, o);
        QVERIFY(stopped.cancelled);
        QVERIFY(calls >= 1);
        const SearchOutcome full = search_strategies(s, quick(2));
        QVERIFY(!full.cancelled);
        QVERIFY(stopped.evaluated < full.evaluated);
    }

    void pinned_dimensions()
    {
        Scenario s = small_scenario();
        SearchSpec spec;
        spec.fix["tp"] = "4";
        spec.fix["recompute"] = "selective";
        s.search = spec;
        SearchOptions o = quick(2);
        o.fix = search_fix_from(s);
        const SearchOutcome out = search_strategies(s, o);
        QVERIFY(!out.results.empty());
        for (const auto& r : out.results) {
            QCOMPARE(r.strategy.tp, 4);
            QCOMPARE(r.strategy.recompute, Recompute::selective);
        }
    }

    // The MoE and long-context dimensions: expert TP folded over the TP ranks (EP above dp*cp), both CP
    // exchanges, the EP-overlapped variant, the scenario's optimizer, and 8-bit states only where
    // full-precision Adam does not fit.
    void moe_and_optimizer_dimensions()
    {
        Scenario s;
        s.model = test::model("mixtral-8x7b");
        s.cluster = test::cluster("H100-SXM5-80GB", 2, 8, "nvlink4-nvswitch", "ib-ndr");
        s.training.global_batch = 64;
        s.training.seq_len = 4096;
        SearchOptions o = quick(2, 4000);
        const SearchOutcome out = search_strategies(s, o);
        QVERIFY(!out.results.empty());
        const PlanInputs in { s.model, s.training, s.cluster.gpu, s.cluster.total_gpus() };
        const PlanContext ctx(s.model, s.training, s.cluster);
        const AnalyticModel model(ctx);
        bool folded = false, overlapped = false, full_precision = false;
        for (const auto& r : out.results) {
            QCOMPARE(check_strategy(in, r.strategy), Rule::ok);
            folded |= r.strategy.ep > static_cast<long long>(r.strategy.dp) * r.strategy.cp;
            overlapped |= r.strategy.ep_overlap;
            full_precision |= r.strategy.optimizer == Optimizer::adam;
            if (r.strategy.optimizer == Optimizer::adam8bit) {
                // Only where fp32 Adam does not fit even with full recompute (and offload where allowed).
                Strategy lightest = r.strategy;
                lightest.optimizer = Optimizer::adam;
                lightest.recompute = Recompute::full;
                lightest.offload_optimizer = lightest.zero >= 1;
                AnalyticResult a;
                model.evaluate(lightest, a);
                QVERIFY(!a.feasible);
            }
        }
        QVERIFY(folded);
        QVERIFY(overlapped);
        QVERIFY(full_precision);

        // Long context: both CP exchanges appear.
        Scenario lc = small_scenario();
        lc.training.seq_len = 65536;
        lc.training.global_batch = 16;
        SearchSpec spec;
        spec.fix["cp"] = "4";
        lc.search = spec;
        SearchOptions lo = quick(2, 4000);
        lo.fix = search_fix_from(lc);
        bool ring = false, ulysses = false;
        for (const auto& r : search_strategies(lc, lo).results) {
            ring |= r.strategy.cp_kind == CpKind::ring;
            ulysses |= r.strategy.cp_kind == CpKind::all_to_all;
        }
        QVERIFY(ring && ulysses);

        // The scenario's optimizer is kept; with too little memory for fp32 Adam anywhere, 8-bit Adam fits.
        Scenario tight = small_scenario();
        tight.cluster = test::cluster("A100-SXM4-40GB", 1, 2, "nvlink3-nvswitch", "ib-hdr");
        tight.training.global_batch = 8;
        tight.training.seq_len = 1024;
        // (8-bit optimizer states are in no framework's table: offered only with any_framework.)
        SearchOptions any = quick(2);
        any.any_framework = true;
        const SearchOutcome t8 = search_strategies(tight, any);
        QVERIFY(!t8.results.empty());
        for (const auto& r : t8.results)
            QCOMPARE(r.strategy.optimizer, Optimizer::adam8bit);
        for (const auto& r : search_strategies(tight, quick(2)).results)
            QVERIFY(r.strategy.optimizer != Optimizer::adam8bit);
        tight.strategy.optimizer = Optimizer::sgd;
        for (const auto& r : search_strategies(tight, quick(2)).results)
            QCOMPARE(r.strategy.optimizer, Optimizer::sgd);
    }

    // Plans come only from what training.framework runs (framework_support.hpp): under Megatron-LM no
    // ZB-H1 or DualPipe; --any-framework offers them, labelled with the frameworks that run each.
    void framework_aware_search()
    {
        Scenario s = small_scenario();
        SearchSpec spec;
        spec.fix["pp"] = "4";
        s.search = spec;
        SearchOptions o = quick(2, 4000);
        o.fix = search_fix_from(s);
        auto contains = [](const std::vector<Framework>& fs, Framework f) {
            return std::find(fs.begin(), fs.end(), f) != fs.end();
        };
        const SearchOutcome meg = search_strategies(s, o);
        QVERIFY(!meg.results.empty());
        QVERIFY(!meg.any_framework);
        for (const auto& r : meg.results) {
            QVERIFY(r.strategy.schedule != Schedule::zb_h1 && r.strategy.schedule != Schedule::dualpipe);
            QVERIFY(framework_runs(Framework::megatron, r.strategy, s.model));
            QVERIFY(contains(r.frameworks, Framework::megatron));
            if (r.runner_up)
                QVERIFY(framework_runs(Framework::megatron, r.runner_up->strategy, s.model));
        }
        for (const auto& r : meg.pareto)
            QVERIFY(framework_runs(Framework::megatron, r.strategy, s.model));
        QVERIFY(search_outcome_to_json(meg)["framework"] == "megatron");

        o.any_framework = true;
        const SearchOutcome any = search_strategies(s, o);
        bool zb = false, dual = false;
        for (const auto& r : any.results) {
            QCOMPARE(r.frameworks, frameworks_running(r.strategy, s.model));
            zb |= r.strategy.schedule == Schedule::zb_h1;
            dual |= r.strategy.schedule == Schedule::dualpipe;
            if (r.strategy.schedule == Schedule::zb_h1 || r.strategy.schedule == Schedule::dualpipe)
                QVERIFY(!contains(r.frameworks, Framework::megatron));
        }
        QVERIFY(zb && dual);
        QVERIFY(any.evaluated > meg.evaluated);
        const auto j = search_outcome_to_json(any);
        QVERIFY(j["framework"] == "any");
        QVERIFY(j["results"][0]["frameworks"].is_array());
        QVERIFY(search_outcome_to_text(any).find("frameworks: ") != std::string::npos);

        // A pinned schedule the framework lacks: nothing found, and the notes say why.
        Scenario pinned = s;
        pinned.search->fix["schedule"] = "zb-h1";
        SearchOptions po = quick(2, 10);
        po.fix = search_fix_from(pinned);
        const SearchOutcome none = search_strategies(pinned, po);
        QVERIFY(none.results.empty());
        QVERIFY(std::any_of(none.notes.begin(), none.notes.end(),
            [](const std::string& n) { return n.find("search.fix pins schedule zb-h1") != std::string::npos; }));

        // torchtitan: FSDP or DDP alone, sequence parallel with TP, ring CP, Adam, no interleaving-less ZB.
        Scenario titan = small_scenario();
        titan.training.framework = Framework::torchtitan;
        SearchOptions to = quick(2, 4000);
        const SearchOutcome t = search_strategies(titan, to);
        QVERIFY(!t.results.empty());
        for (const auto& r : t.results) {
            QVERIFY(framework_runs(Framework::torchtitan, r.strategy, titan.model));
            QVERIFY(r.strategy.zero != 1 || static_cast<long long>(r.strategy.dp) * r.strategy.cp == 1);
            QVERIFY(r.strategy.tp == 1 || r.strategy.sequence_parallel);
            QCOMPARE(r.strategy.optimizer, Optimizer::adam);
        }
        // Megatron-DeepSpeed: no virtual stages.
        Scenario ds = s;
        ds.training.framework = Framework::megatron_deepspeed;
        SearchOptions dso = quick(2, 4000);
        dso.fix = search_fix_from(ds);
        const SearchOutcome d = search_strategies(ds, dso);
        for (const auto& r : d.results) {
            QCOMPARE(r.strategy.vpp, 1);
            QVERIFY(r.strategy.schedule == Schedule::one_f_one_b || r.strategy.schedule == Schedule::zb_h1);
        }
        QVERIFY(std::any_of(
            d.results.begin(), d.results.end(), [](const SearchResult& r) { return r.strategy.zero >= 1; }));
        // DeepSpeed's fp32 gradient all-reduce refuses ZeRO: only plain data parallelism is offered.
        ds.training.grad_reduce_in_fp32 = true;
        const SearchOutcome fp32 = search_strategies(ds, dso);
        QVERIFY(!fp32.results.empty());
        for (const auto& r : fp32.results)
            QCOMPARE(r.strategy.zero, 0);
    }

    void refinement_uses_the_simulator()
    {
        const Scenario s = small_scenario();
        SearchOptions o = quick(2, 3);
        o.refine_top = 3;
        const SearchOutcome out = search_strategies(s, o);
        QCOMPARE(static_cast<int>(out.results.size()), 3);
        for (const auto& r : out.results)
            QCOMPARE(r.prediction.fidelity, Fidelity::simulated);
    }

    void json_follows_the_contract()
    {
        const SearchOutcome o = search_strategies(small_scenario(), quick(2, 2));
        const nlohmann::json j = search_outcome_to_json(o);
        QCOMPARE(j["schema"].get<int>(), 1);
        for (const char* key : { "evaluated", "feasible", "seconds", "results" })
            QVERIFY2(j.contains(key), key);
        QCOMPARE(j["results"].size(), std::size_t(2));
        QVERIFY(j["results"][0].contains("strategy"));
        QVERIFY(j["results"][0]["prediction"].contains("step_time_s"));
        QVERIFY(j["results"][0]["explanation"].contains("limiter"));
    }

    // the best strategy found for the published Megatron runs is never predicted slower than
    // the published configuration (otherwise the search would be missing part of the space).
    void never_slower_than_published()
    {
        std::ifstream in(std::string(PARALLAX_SOURCE_DIR) + "/validation/published-runs.json");
        QVERIFY(in.good());
        std::stringstream ss;
        ss << in.rdbuf();
        std::vector<SkippedRow> skipped;
        const auto cases = read_published_runs(
            nlohmann::json::parse(ss.str()), "published-runs.json", PresetCatalog::standard(), skipped);
        int checked = 0;
        for (const ValidationCase& c : cases) {
            if (c.source_group != "narayanan21" && c.source_group != "korthikanti22" && c.source_group != "megatron")
                continue;
            const PlanContext ctx(c.scenario.model, c.scenario.training, c.scenario.cluster);
            AnalyticResult published;
            AnalyticModel(ctx).evaluate(c.scenario.strategy, published);
            const SearchOutcome o = search_strategies(c.scenario, quick(2, 1));
            QVERIFY2(!o.results.empty(), c.id.c_str());
            QVERIFY2(o.results.front().analytic.tokens_per_s >= published.tokens_per_s * 0.9999,
                qPrintable(QStringLiteral("%1: best %2 < published %3")
                               .arg(QString::fromStdString(c.id))
                               .arg(o.results.front().analytic.tokens_per_s)
                               .arg(published.tokens_per_s)));
            ++checked;
        }
        QVERIFY(checked >= 15);
    }

    // Llama 3.1 405B has 126 layers: no pp x vpp of 16 x 4 or 8 x 8 divides them, yet Meta (and NVIDIA's
    // recipes) run such interleaved plans with a stage or chunk one layer lighter. The search offers them.
    void searches_virtual_stages_that_do_not_divide_the_layers()
    {
        const Scenario s = load_scenario_preset("llama3.1-405b-16k-h100", PresetCatalog::standard());
        QCOMPARE(s.model.layers, 126);
        SearchOptions o = quick(2, 50);
        const SearchOutcome out = search_strategies(s, o);
        int uneven = 0;
        for (const SearchResult& r : out.results)
            if (r.strategy.vpp > 1 && s.model.layers % (r.strategy.pp * r.strategy.vpp) != 0)
                ++uneven;
        QVERIFY2(uneven > 0, "no interleaved plan with uneven chunks among the best 50");
        // The published plan (TP 8, PP 16, 4 virtual stages, 7 layers on the first and last stage) is no
        // better than the best plan found.
        const PlanContext ctx(s.model, s.training, s.cluster);
        AnalyticResult published;
        AnalyticModel(ctx).evaluate(s.strategy, published);
        QVERIFY(published.feasible);
        QVERIFY(out.results.front().analytic.tokens_per_s >= published.tokens_per_s);
    }

    void sweep_reports_scaling()
    {
        Scenario s = small_scenario();
        s.training.global_batch = 16; // a fixed, small batch: many GPUs stop paying
        SweepOptions o;
        o.search = quick(2, 1);
        const auto points = sweep_gpus(s, { 8, 16, 64, 256 }, o);
        QCOMPARE(static_cast<int>(points.size()), 4);
        QCOMPARE(points[0].gpus, 8LL);
        QCOMPARE(points[3].gpus, 256LL);
        bool stops_paying = false;
        for (const auto& p : points) {
            QVERIFY(p.has_best);
            QVERIFY(!p.family.empty());
            for (const auto& n : p.notes)
                stops_paying = stops_paying || n.find("stops paying") != std::string::npos;
        }
        QVERIFY(stops_paying);
        QVERIFY(points[3].scaling_efficiency < points[1].scaling_efficiency);
        const nlohmann::json j = sweep_to_json(points);
        QCOMPARE(j["points"].size(), std::size_t(4));
        QVERIFY(j["points"][0].contains("best"));
        QVERIFY_THROWS_EXCEPTION(InputError, sweep_gpus(s, { 12 }, o));
    }
};

QTEST_APPLESS_MAIN(TestSearch)
#include "tst_search.moc"

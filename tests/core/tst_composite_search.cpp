// The composite search (search.composite): reading its section, the composites it finds around the best
// plain plans (recompute on the first layers only, lighter edge stages, a lower TP on the layers that
// fit it), the winner's explanation, its
// strategy pasted back into a scenario predicting the same step, cancellation and the candidate cap.
#include "io/preset_catalog.hpp"
#include "io/scenario_io.hpp"
#include "model/analytic_model.hpp"
#include "search/composite_search.hpp"
#include "spec/input_error.hpp"
#include "spec/layer_ranges.hpp"

#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

using namespace parallax;

namespace {

// The documented composite example's plan without its ranges: Llama 3 70B on 64 H100, 8K tokens,
// micro-batch 3, TP 8 × PP 4 × DP 2 pinned; without recompute stage 0 needs 97 GiB.
nlohmann::json scenario_json(const nlohmann::json& composite)
{
    Scenario ex = load_scenario_file(
        PARALLAX_SOURCE_DIR "/docs/examples/composite-recompute-first-stages.json", PresetCatalog::standard());
    nlohmann::json j = scenario_to_json(ex);
    j["strategy"].erase("layers");
    j["strategy"].erase("first_stage_layers");
    j["search"] = { { "fix",
                        { { "tp", 8 }, { "pp", 4 }, { "cp", 1 }, { "micro_batch", 3 }, { "schedule", "1f1b" },
                            { "zero", 1 }, { "sequence_parallel", true } } },
        { "composite", composite } };
    return j;
}

Scenario read(const nlohmann::json& j, ScenarioUse use)
{
    return parse_scenario(j, "test.json", PresetCatalog::standard(), use);
}

struct Searched {
    SearchOutcome plain;
    CompositeOutcome composite;
};

Searched search(const nlohmann::json& composite, bool cancel = false, const char* fixed_recompute = nullptr)
{
    nlohmann::json j = scenario_json(composite);
    if (fixed_recompute)
        j["search"]["fix"]["recompute"] = fixed_recompute;
    const Scenario s = read(j, ScenarioUse::search);
    SearchOptions o;
    o.threads = 2;
    o.refine_top = 0;
    o.fix = search_fix_from(s);
    Searched out;
    out.plain = search_strategies(s, o);
    CompositeSearchOptions co;
    co.spec = *s.search->composite;
    co.threads = 2;
    co.fix = o.fix;
    if (cancel)
        co.cancel.cancel();
    out.composite = search_composites(s, out.plain.results, co);
    return out;
}

bool contains(const std::string& s, const std::string& part)
{
    return s.find(part) != std::string::npos;
}

// The TP 4 example's cluster and batch (Llama 3 70B, 64 H100, micro-batch 2, selective recompute)
// without its ranges, TP free: TP 4 everywhere does not fit, so the best plain plan is TP 8 x PP 4 x DP 2.
nlohmann::json range_tp_scenario_json(const nlohmann::json& composite)
{
    Scenario ex = load_scenario_file(
        PARALLAX_SOURCE_DIR "/docs/examples/composite-tp4-where-memory-allows.json", PresetCatalog::standard());
    nlohmann::json j = scenario_to_json(ex);
    j["strategy"].erase("layers");
    j["search"] = { { "fix",
                        { { "pp", 4 }, { "cp", 1 }, { "micro_batch", 2 }, { "schedule", "1f1b" }, { "zero", 1 },
                            { "sequence_parallel", true }, { "recompute", "selective" } } },
        { "composite", composite } };
    return j;
}

Searched search_json(const nlohmann::json& j)
{
    const Scenario s = read(j, ScenarioUse::search);
    SearchOptions o;
    o.threads = 2;
    o.refine_top = 0;
    o.fix = search_fix_from(s);
    Searched out;
    out.plain = search_strategies(s, o);
    CompositeSearchOptions co;
    co.spec = *s.search->composite;
    co.threads = 2;
    co.fix = o.fix;
    out.composite = search_composites(s, out.plain.results, co);
    return out;
}

// A composite's strategy pasted into the scenario (without its search) reads back: the reader's rules hold.
bool reader_accepts(const nlohmann::json& scenario, const Strategy& s)
{
    nlohmann::json j = scenario;
    j.erase("search");
    j["strategy"] = strategy_to_json(s);
    try {
        read(j, ScenarioUse::plan);
    } catch (const InputError&) {
        return false;
    }
    return true;
}

} // namespace

class TestCompositeSearch : public QObject {
    Q_OBJECT

private slots:
    void reads_the_composite_section()
    {
        const Scenario s
            = read(scenario_json({ { "recompute_ranges", true }, { "edge_stage_layers", false }, { "range_tp", false },
                       { "expert_tp", { 1, 2 } }, { "max_candidates", 50 }, { "base_plans", 3 } }),
                ScenarioUse::search);
        QVERIFY(s.search && s.search->composite);
        const CompositeSearchSpec& c = *s.search->composite;
        QVERIFY(c.recompute_ranges && !c.edge_stage_layers && !c.range_tp);
        QCOMPARE(c.expert_tp, std::vector<int>({ 1, 2 }));
        QCOMPARE(c.max_candidates, 50);
        QCOMPARE(c.base_plans, 3);
        // Saved and read back the same.
        const Scenario again = read(scenario_to_json(s), ScenarioUse::search);
        QVERIFY(again.search->composite == s.search->composite);
        auto error = [](const nlohmann::json& composite) -> std::string {
            try {
                read(scenario_json(composite), ScenarioUse::search);
            } catch (const InputError& e) {
                return e.what();
            }
            return {};
        };
        QVERIFY(contains(error({ { "expert_tp", { 0 } } }), "test.json: search.composite.expert_tp"));
        QVERIFY(contains(error({ { "range_tp", 4 } }), "test.json: search.composite.range_tp"));
        QVERIFY(contains(error({ { "max_candidates", 0 } }), "test.json: search.composite.max_candidates"));
        QVERIFY(contains(error({ { "recompute_range", true } }), "test.json: search.composite.recompute_range"));
    }

    // Pinned to TP 8 × PP 4 × CP 1, the only plain plans that fit recompute every layer in full. The
    // composite search recomputes the first layers only, lightens the first stage, and beats them: at
    // least as fast as the documented hand-made composite (full recompute on layers 0-24, first stage 17
    // layers), which lies in its grid.
    void finds_recompute_where_the_memory_is()
    {
        const Searched r = search(nlohmann::json::object());
        QVERIFY(!r.plain.results.empty());
        QCOMPARE(r.composite.best_plain.recompute, Recompute::full);
        QVERIFY(!r.composite.results.empty());
        QVERIFY(r.composite.feasible > 0 && r.composite.evaluated == r.composite.candidates);
        const CompositeResult& w = r.composite.results.front();
        QVERIFY(w.prediction.feasible);
        QVERIFY(w.strategy.layers);
        const LayerRange& range = w.strategy.layers->ranges.front();
        QCOMPARE(range.first, 0);
        QCOMPARE(*range.recompute, Recompute::full);
        QVERIFY(w.strategy.recompute != Recompute::full);
        const Scenario handmade = load_scenario_file(
            PARALLAX_SOURCE_DIR "/docs/examples/composite-recompute-first-stages.json", PresetCatalog::standard());
        const PlanContext ctx(handmade.model, handmade.training, handmade.cluster);
        const Prediction hp = AnalyticModel(ctx).predict(handmade.strategy);
        QVERIFY2(w.prediction.step_time_s <= hp.step_time_s * (1 + 1e-9),
            qPrintable(QStringLiteral("%1 vs %2").arg(w.prediction.step_time_s).arg(hp.step_time_s)));
        // The winner's prediction is the analytic model's for its strategy, and the results are best first.
        QCOMPARE(AnalyticModel(ctx).predict(w.strategy).step_time_s, w.prediction.step_time_s);
        for (std::size_t i = 1; i < r.composite.results.size(); ++i)
            QVERIFY(
                r.composite.results[i - 1].prediction.tokens_per_s >= r.composite.results[i].prediction.tokens_per_s);
        // Explained in the composite's terms, against the best plain plan.
        const double gain = 1 - w.prediction.step_time_s / r.composite.best_plain_prediction.step_time_s;
        QVERIFY(gain > 0.1);
        const std::string& text = r.composite.explanation;
        QVERIFY2(contains(text, "full recompute on layers 0-" + std::to_string(range.last) + " only"), text.c_str());
        QVERIFY2(contains(text, "faster than the best plain plan") && contains(text, "fits in"), text.c_str());
        QVERIFY2(contains(text, std::to_string(static_cast<int>(std::lround(100 * gain))) + "% faster"), text.c_str());
    }

    // `search --json` gives the winner's strategy with its layers; pasted back into the scenario,
    // `predict` gives the same step time.
    void winner_round_trips_through_predict()
    {
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("s.json"));
        std::ofstream(file.toStdString()) << scenario_json(nlohmann::json::object()).dump(2);
        QProcess p;
        p.start(QStringLiteral(PARALLAX_CLI_PATH),
            { QStringLiteral("search"), file, QStringLiteral("--json"), QStringLiteral("--threads"),
                QStringLiteral("2"), QStringLiteral("--refine"), QStringLiteral("0") });
        QVERIFY(p.waitForFinished(120000));
        QCOMPARE(p.exitCode(), 0);
        const nlohmann::json out = nlohmann::json::parse(p.readAllStandardOutput().toStdString());
        const nlohmann::json& winner = out["composite"]["results"][0];
        QVERIFY(winner["strategy"].contains("layers"));
        nlohmann::json sc = scenario_json(nlohmann::json::object());
        sc.erase("search");
        sc["strategy"] = winner["strategy"];
        const QString pasted = dir.filePath(QStringLiteral("winner.json"));
        std::ofstream(pasted.toStdString()) << sc.dump(2);
        p.start(QStringLiteral(PARALLAX_CLI_PATH), { QStringLiteral("predict"), pasted, QStringLiteral("--json") });
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 0);
        const nlohmann::json predicted = nlohmann::json::parse(p.readAllStandardOutput().toStdString());
        const double a = predicted["step_time_s"].get<double>(), b = winner["prediction"]["step_time_s"].get<double>();
        QVERIFY2(std::fabs(a - b) <= 1e-9 * b, qPrintable(QStringLiteral("%1 vs %2").arg(a).arg(b)));
    }

    // On the TP 4 example's cluster the best plain plan is TP 8 (TP 4 everywhere does not fit stage 0);
    // the search finds TP 4 on the last layers, DP doubled, by bisection, beats the plain plan, and names
    // the range. The documented hand-made composite (TP 4 on layers 15-79, 9.40 s against 10.11 s)
    // bounds it: the bisection finds the longest suffix that fits, at least as long.
    void finds_a_lower_tp_where_the_memory_allows()
    {
        const nlohmann::json j = range_tp_scenario_json(nlohmann::json::object());
        const Searched r = search_json(j);
        QCOMPARE(r.composite.best_plain.tp, 8);
        QVERIFY(r.composite.memory_checks > 0);
        const CompositeResult* found = nullptr;
        for (const CompositeResult& c : r.composite.results) {
            QVERIFY(reader_accepts(j, c.strategy));
            if (!found && c.strategy.layers && c.strategy.layers->ranges.front().tp)
                found = &c;
        }
        QVERIFY(found);
        const LayerRange& range = found->strategy.layers->ranges.front();
        QCOMPARE(*range.tp, 4);
        QCOMPARE(range.last, 79);
        QVERIFY(range.first <= 15);
        QVERIFY(found->prediction.feasible);
        QVERIFY(found->prediction.step_time_s < r.composite.best_plain_prediction.step_time_s);
        const CompositeResult& w = r.composite.results.front();
        QVERIFY(w.strategy.layers && w.strategy.layers->ranges.front().tp);
        const std::string& text = r.composite.explanation;
        const std::string named = "TP 4 on layers " + std::to_string(range.first) + "-79 with DP doubled";
        QVERIFY2(contains(text, named) && contains(text, "faster than the best plain plan"), text.c_str());
        // Switched off, or with TP pinned, no range regroups.
        for (const Searched& off : { search_json(range_tp_scenario_json({ { "range_tp", false } })), search_json([&] {
                                        nlohmann::json pinned = j;
                                        pinned["search"]["fix"]["tp"] = 8;
                                        return pinned;
                                    }()) }) {
            QCOMPARE(off.composite.memory_checks, 0LL);
            for (const CompositeResult& c : off.composite.results)
                QVERIFY(!c.strategy.layers || !c.strategy.layers->ranges.front().tp);
        }
    }

    void cancelled_search_returns_what_it_has()
    {
        const Searched r = search(nlohmann::json::object(), true);
        QVERIFY(r.composite.cancelled);
        QCOMPARE(r.composite.evaluated, 0LL);
        QVERIFY(r.composite.results.empty());
    }

    // The grid is cut at max_candidates and says so; without recompute ranges only the edge stages vary.
    void limits_hold()
    {
        const Searched cut = search({ { "max_candidates", 10 } });
        QCOMPARE(cut.composite.candidates, 10LL);
        QVERIFY(cut.composite.truncated);
        const Searched edges = search({ { "recompute_ranges", false } });
        for (const CompositeResult& c : edges.composite.results) {
            QVERIFY(!c.strategy.layers);
            QVERIFY(c.strategy.first_stage_layers > 0 || c.strategy.last_stage_layers > 0);
        }
        // A recompute pinned by search.fix stays everywhere: only the edge stages vary.
        const Searched pinned = search(nlohmann::json::object(), false, "full");
        QVERIFY(!pinned.composite.results.empty());
        for (const CompositeResult& c : pinned.composite.results) {
            QVERIFY(!c.strategy.layers);
            QCOMPARE(c.strategy.recompute, Recompute::full);
        }
    }
};

QTEST_GUILESS_MAIN(TestCompositeSearch)
#include "tst_composite_search.moc"

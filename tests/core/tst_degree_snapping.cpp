// The planner's core helpers, without any widget: degree snapping and rebalancing (only values the
// rules allow, the GPU count kept, locks honoured, dependent settings pulled along), the rank grid
// behind the cluster view, the evaluation bundle (sensitivity curves, TP x PP heatmap) and the
// "learn" texts.
#include "io/preset_catalog.hpp"
#include "io/scenario_io.hpp"
#include "search/degree_snapping.hpp"
#include "search/plan_explain.hpp"
#include "viewdata/plan_evaluation.hpp"
#include "viewdata/rank_grid.hpp"

#include <QTest>

#include <algorithm>
#include <cmath>
#include <set>

using namespace parallax;

namespace {

Scenario preset(const char* name)
{
    return load_scenario_preset(name, PresetCatalog::standard());
}

QString qs(const std::string& s)
{
    return QString::fromStdString(s);
}

QList<int> values_of(const std::vector<DegreeOption>& options, bool valid_only)
{
    QList<int> out;
    for (const DegreeOption& o : options)
        if (!valid_only || o.valid())
            out << o.value;
    return out;
}

} // namespace

class TestDegreeSnapping : public QObject {
    Q_OBJECT
private slots:
    void namesRoundTrip();
    void absorberHonoursLocks();
    void candidatesAreDivisors();
    void changeKeepsGpuCount_data();
    void changeKeepsGpuCount();
    void onlyRuleAbidingValuesAreValid();
    void blockedValuesSayWhy();
    void pipelineOfOneDropsVirtualStages();
    void stageOverridesOfAnotherDepthGoEven();
    void microBatchFollowsDp();
    void nearestValidSnapsOnLogScale();
    void scheduleToggleBringsVirtualStages();
    void refitAfterClusterChange();
    void rankGridCoordinates();
    void rankGridBoundaries();
    void evaluationBundle();
    void simulatedFidelity();
    void evaluationOfInvalidPlan();
    void heatmapMarksOutOfMemory();
    void evaluationCanBeCancelled();
    void learnTextsExist();
    void whyMovedNamesTheParts();
};

void TestDegreeSnapping::namesRoundTrip()
{
    for (Degree d : kAllDegrees) {
        QCOMPARE(degree_from_string(to_string(d)), std::optional<Degree>(d));
        Strategy s;
        set_degree_value(s, d, 7);
        QCOMPARE(degree_value(s, d), 7);
    }
    QVERIFY(!degree_from_string("zz"));
    QVERIFY(multiplies_gpus(Degree::tp) && multiplies_gpus(Degree::dp));
    QVERIFY(!multiplies_gpus(Degree::ep) && !multiplies_gpus(Degree::vpp) && !multiplies_gpus(Degree::micro_batch));
}

void TestDegreeSnapping::absorberHonoursLocks()
{
    DegreeLocks locks;
    QCOMPARE(pick_absorber(Degree::tp, Degree::dp, locks), std::optional<Degree>(Degree::dp));
    QCOMPARE(pick_absorber(Degree::tp, Degree::pp, locks), std::optional<Degree>(Degree::pp));
    // Changing the preferred absorber itself: the fallback order takes over.
    QCOMPARE(pick_absorber(Degree::dp, Degree::dp, locks), std::optional<Degree>(Degree::pp));
    locks.set(Degree::dp, true);
    QCOMPARE(pick_absorber(Degree::tp, Degree::dp, locks), std::optional<Degree>(Degree::pp));
    locks.set(Degree::pp, true);
    locks.set(Degree::cp, true);
    QVERIFY(!pick_absorber(Degree::tp, Degree::dp, locks));
    QVERIFY(!pick_absorber(Degree::vpp, Degree::dp, DegreeLocks {}));
}

void TestDegreeSnapping::candidatesAreDivisors()
{
    const Scenario s = preset("default"); // 64 GPUs, llama3-70b (64 heads, 80 layers)
    const PlanInputs in = plan_inputs(s);
    const std::vector<int> tp = candidate_values(in, s.strategy, Degree::tp);
    QCOMPARE(QList<int>(tp.begin(), tp.end()), (QList<int> { 1, 2, 4, 8, 16, 32, 64 }));
    const std::vector<int> vpp = candidate_values(in, s.strategy, Degree::vpp);
    QCOMPARE(vpp.front(), 1);
    QCOMPARE(vpp.back(), 20); // 80 layers / pp 4
    const std::vector<int> ep = candidate_values(in, s.strategy, Degree::ep);
    QCOMPARE(QList<int>(ep.begin(), ep.end()), QList<int> { 1 }); // dense model
    const std::vector<int> mb = candidate_values(in, s.strategy, Degree::micro_batch);
    QCOMPARE(mb.back(), 64); // 128 sequences over dp 2
}

void TestDegreeSnapping::changeKeepsGpuCount_data()
{
    QTest::addColumn<QString>("degree");
    QTest::addColumn<int>("value");
    QTest::addColumn<QString>("absorber");
    QTest::newRow("tp 8, dp absorbs") << "tp" << 8 << "dp";
    QTest::newRow("pp 2, dp absorbs") << "pp" << 2 << "dp";
    QTest::newRow("pp 8, cp absorbs") << "pp" << 8 << "cp";
    QTest::newRow("dp 4, pp absorbs") << "dp" << 4 << "pp";
    QTest::newRow("cp 1, dp absorbs") << "cp" << 1 << "dp";
}

void TestDegreeSnapping::changeKeepsGpuCount()
{
    QFETCH(QString, degree);
    QFETCH(int, value);
    QFETCH(QString, absorber);
    const Scenario s = preset("default");
    const PlanInputs in = plan_inputs(s);
    const Degree d = *degree_from_string(degree.toStdString());
    const Degree a = *degree_from_string(absorber.toStdString());
    const std::optional<DegreeOption> o = change_degree(in, s.strategy, d, value, a);
    QVERIFY(o.has_value());
    QCOMPARE(degree_value(o->strategy, d), value);
    QCOMPARE(o->strategy.total_gpus(), s.cluster.total_gpus());
    for (Degree other : { Degree::tp, Degree::pp, Degree::dp, Degree::cp })
        if (other != d && other != a)
            QCOMPARE(degree_value(o->strategy, other), degree_value(s.strategy, other));
    QVERIFY2(o->valid(), o->why.c_str());
}

void TestDegreeSnapping::onlyRuleAbidingValuesAreValid()
{
    const Scenario s = preset("default");
    const PlanInputs in = plan_inputs(s);
    const std::vector<DegreeOption> tp = degree_options(in, s.strategy, Degree::tp, Degree::dp, DegreeLocks {});
    // dp 2 * tp 4 = 8 GPUs to share: tp 1, 2, 4, 8 fit; 16+ leave no whole dp.
    QCOMPARE(values_of(tp, true), (QList<int> { 1, 2, 4, 8 }));
    for (const DegreeOption& o : tp) {
        QCOMPARE(check_strategy(in, o.strategy) == Rule::ok, o.valid());
        if (o.valid())
            QCOMPARE(o.strategy.total_gpus(), 64LL);
    }
    // With pp absorbing instead, tp 16 becomes reachable (pp 1) but breaks the KV-head rule (8 KV heads).
    const std::vector<DegreeOption> via_pp = degree_options(in, s.strategy, Degree::tp, Degree::pp, DegreeLocks {});
    const auto tp16 = std::find_if(via_pp.begin(), via_pp.end(), [](const DegreeOption& o) { return o.value == 16; });
    QVERIFY(tp16 != via_pp.end());
    QVERIFY(!tp16->valid());
    QCOMPARE(tp16->rule, Rule::tp_kv_heads);
    QVERIFY(tp16->why.find("KV heads") != std::string::npos);
}

void TestDegreeSnapping::blockedValuesSayWhy()
{
    const Scenario s = preset("default");
    const PlanInputs in = plan_inputs(s);
    DegreeLocks locks;
    locks.set(Degree::dp, true);
    locks.set(Degree::pp, true);
    locks.set(Degree::cp, true);
    const std::vector<DegreeOption> tp = degree_options(in, s.strategy, Degree::tp, Degree::dp, locks);
    QCOMPARE(values_of(tp, true), QList<int> { 4 });
    for (const DegreeOption& o : tp)
        if (o.value != 4)
            QVERIFY2(o.why.find("locked") != std::string::npos, o.why.c_str());
}

// Llama 3.1 405B's first and last stages of 7 layers suit its PP 16; at PP 2 they would leave 112 of its
// 126 layers on no stage. Changing PP there sets the layers back to an even split and says why; at PP 8 the
// overrides still fit and stay.
void TestDegreeSnapping::stageOverridesOfAnotherDepthGoEven()
{
    const Scenario s = preset("llama3.1-405b-16k-h100"); // tp 8, pp 16, first/last 7 layers
    QCOMPARE(s.strategy.first_stage_layers, 7);
    const PlanInputs in = plan_inputs(s);
    Strategy two = s.strategy;
    two.pp = 2;
    two.dp = 1024;
    QCOMPARE(check_strategy(in, two), Rule::stage_overrides);
    QVERIFY2(explain(Rule::stage_overrides, in, two).find("must add up to the 126 layers") != std::string::npos,
        explain(Rule::stage_overrides, in, two).c_str());
    const std::optional<DegreeOption> o = change_degree(in, s.strategy, Degree::pp, 2, Degree::dp);
    QVERIFY(o.has_value());
    QCOMPARE(o->strategy.pp, 2);
    QCOMPARE(o->strategy.first_stage_layers, 0);
    QCOMPARE(o->strategy.last_stage_layers, 0);
    QVERIFY(o->rule != Rule::stage_overrides);
    bool said = false;
    for (const CompanionChange& c : o->companions)
        said = said || (c.setting == "first / last stage layers" && c.from == "7 / 7" && c.to == "an even split");
    QVERIFY(said);
    const std::optional<DegreeOption> eight = change_degree(in, s.strategy, Degree::pp, 8, Degree::dp);
    QVERIFY(eight.has_value());
    QCOMPARE(eight->strategy.first_stage_layers, 7);
    QCOMPARE(eight->strategy.last_stage_layers, 7);
}

void TestDegreeSnapping::pipelineOfOneDropsVirtualStages()
{
    const Scenario s = preset("default"); // pp 4, vpp 5, interleaved
    const PlanInputs in = plan_inputs(s);
    const std::optional<DegreeOption> o = change_degree(in, s.strategy, Degree::pp, 1, Degree::dp);
    QVERIFY(o.has_value());
    QCOMPARE(o->strategy.pp, 1);
    QCOMPARE(o->strategy.dp, 8);
    QCOMPARE(o->strategy.vpp, 1);
    QCOMPARE(o->strategy.schedule, Schedule::one_f_one_b);
    QVERIFY(o->valid());
    QStringList settings;
    for (const CompanionChange& c : o->companions)
        settings << qs(c.setting);
    QVERIFY2(settings.contains(QStringLiteral("vpp")), qPrintable(settings.join(u',')));
    QVERIFY(settings.contains(QStringLiteral("schedule")));
    // And setting vpp back turns the interleaved schedule on.
    const std::optional<DegreeOption> back = change_degree(in, s.strategy, Degree::vpp, 1, std::nullopt);
    QVERIFY(back.has_value());
    QCOMPARE(back->strategy.schedule, Schedule::one_f_one_b);
    const std::optional<DegreeOption> two = change_degree(in, back->strategy, Degree::vpp, 2, std::nullopt);
    QCOMPARE(two->strategy.schedule, Schedule::interleaved);
    QVERIFY2(two->valid(), two->why.c_str());
}

void TestDegreeSnapping::microBatchFollowsDp()
{
    Scenario s = preset("default");
    s.strategy.micro_batch = 64; // 128 / (64 * 2) = 1 micro-batch... interleaved needs a multiple of pp
    const PlanInputs in = plan_inputs(s);
    const std::optional<DegreeOption> o = change_degree(in, s.strategy, Degree::dp, 8, Degree::cp);
    QVERIFY(!o.has_value()); // cp 2 cannot absorb a 4x larger dp
    const std::optional<DegreeOption> p = change_degree(in, s.strategy, Degree::dp, 4, Degree::cp);
    QVERIFY(p.has_value());
    QCOMPARE(p->strategy.cp, 1);
    QVERIFY(p->strategy.micro_batch < 64);
    QCOMPARE(in.training.global_batch % (static_cast<long long>(p->strategy.micro_batch) * p->strategy.dp), 0LL);
    QVERIFY2(p->valid(), p->why.c_str());
}

void TestDegreeSnapping::nearestValidSnapsOnLogScale()
{
    const Scenario s = preset("default");
    const PlanInputs in = plan_inputs(s);
    const std::vector<DegreeOption> tp = degree_options(in, s.strategy, Degree::tp, Degree::dp, DegreeLocks {});
    QCOMPARE(nearest_valid(tp, 5.0)->value, 4); // log2 5 = 2.32: nearer 4 than 8
    QCOMPARE(nearest_valid(tp, 6.0)->value, 8);
    QCOMPARE(nearest_valid(tp, 100.0)->value, 8); // 16+ are not valid
    QCOMPARE(nearest_valid(tp, 0.3)->value, 1);
    QVERIFY(nearest_valid({}, 3.0) == nullptr);
}

void TestDegreeSnapping::scheduleToggleBringsVirtualStages()
{
    Scenario s = preset("gpt3-175b-1024-a100"); // pp 16, 96 layers, 1f1b
    const PlanInputs in = plan_inputs(s);
    const ToggleOption o = with_schedule(in, s.strategy, Schedule::interleaved);
    QVERIFY2(o.rule == Rule::ok, o.why.c_str());
    QVERIFY(o.strategy.vpp >= 2);
    QCOMPARE(o.strategy.schedule, Schedule::interleaved);
    const ToggleOption back = with_schedule(in, o.strategy, Schedule::gpipe);
    QCOMPARE(back.strategy.vpp, 1);
    QVERIFY(back.rule == Rule::ok);
    const ToggleOption dual = with_schedule(in, s.strategy, Schedule::dualpipe);
    QCOMPARE(dual.rule == Rule::ok, true); // pp 16 is even
}

void TestDegreeSnapping::refitAfterClusterChange()
{
    Scenario s = preset("default"); // tp4 pp4 cp2 dp2 on 64
    s.cluster.nodes = 16; // 128 GPUs
    Strategy t = refit_to_gpus(plan_inputs(s), s.strategy);
    QCOMPARE(t.dp, 4);
    QCOMPARE(t.tp, 4);
    s.cluster.nodes = 4;
    s.cluster.gpus_per_node = 4; // 16 GPUs: tp*pp*cp = 32 no longer fits
    t = refit_to_gpus(plan_inputs(s), s.strategy);
    QCOMPARE(t.total_gpus(), 16LL);
    QVERIFY(check_strategy(plan_inputs(s), t) == Rule::ok);
    // One step (a factor 2) away from the old plan on one degree.
    QCOMPARE(t.model_parallel_gpus(), 16LL);
    QCOMPARE(t.dp, 1);
    s.cluster.nodes = 1;
    s.cluster.gpus_per_node = 6; // 6 GPUs: no valid plan (dp 3 or pp 3 break the batch rules)
    t = refit_to_gpus(plan_inputs(s), s.strategy);
    QCOMPARE(t.total_gpus(), 6LL); // the GPU count holds; the broken rule is left for the user to see
}

void TestDegreeSnapping::rankGridCoordinates()
{
    Strategy s;
    s.tp = 4;
    s.cp = 2;
    s.dp = 2;
    s.pp = 4; // 64 ranks, order tp-cp-ep-dp-pp
    const RankGrid g(s, 8);
    QCOMPARE(g.ranks(), 64LL);
    QCOMPARE(g.stride(ParallelDim::tp), 1LL);
    QCOMPARE(g.stride(ParallelDim::cp), 4LL);
    QCOMPARE(g.stride(ParallelDim::dp), 8LL);
    QCOMPARE(g.stride(ParallelDim::pp), 16LL);
    QCOMPARE(g.coordinate(13, ParallelDim::tp), 1LL);
    QCOMPARE(g.coordinate(13, ParallelDim::cp), 1LL);
    QCOMPARE(g.coordinate(13, ParallelDim::dp), 1LL);
    QCOMPARE(g.coordinate(13, ParallelDim::pp), 0LL);
    QCOMPARE(g.coordinate(63, ParallelDim::pp), 3LL);
    // Ranks of one TP group share its id; the ids of each dimension cover ranks/size groups.
    for (ParallelDim d : { ParallelDim::tp, ParallelDim::cp, ParallelDim::dp, ParallelDim::pp }) {
        std::set<long long> ids;
        for (long long r = 0; r < g.ranks(); ++r)
            ids.insert(g.group_id(r, d));
        QCOMPARE(static_cast<long long>(ids.size()), g.ranks() / g.size(d));
    }
    QCOMPARE(g.group_id(0, ParallelDim::tp), g.group_id(3, ParallelDim::tp));
    QVERIFY(g.group_id(3, ParallelDim::tp) != g.group_id(4, ParallelDim::tp));
    QCOMPARE(g.group_id(0, ParallelDim::pp), g.group_id(16, ParallelDim::pp));
    // Expert layout: EP groups come from DP x CP ranks.
    Strategy m = s;
    m.ep = 4;
    const RankGrid e(m, 8, true);
    QCOMPARE(e.size(ParallelDim::ep), 4LL);
    QCOMPARE(e.size(ParallelDim::dp), 1LL); // tp*cp*dp / (etp*ep) = 16/16
    QCOMPARE(e.ranks(), 64LL);
}

void TestDegreeSnapping::rankGridBoundaries()
{
    Strategy s;
    s.tp = 4;
    s.cp = 2;
    s.dp = 2;
    s.pp = 4;
    const RankGrid g(s, 8);
    QVERIFY(g.is_band(ParallelDim::pp));
    QVERIFY(!g.is_band(ParallelDim::tp));
    QCOMPARE(g.segment(ParallelDim::tp), 4LL); // one TP group
    QCOMPARE(g.segment(ParallelDim::pp), 16LL); // one stage
    QCOMPARE(g.segment(ParallelDim::dp), 16LL); // tile of tp*cp*dp
    // Dragging the first TP boundary from 4 to 8 asks for tp 8; the third to 6 asks for tp 2.
    QCOMPARE(g.degree_for_boundary(ParallelDim::tp, 1, 8), 8.0);
    QCOMPARE(g.degree_for_boundary(ParallelDim::tp, 3, 6), 2.0);
    // Stage 0 grown from 16 to 32 ranks: pp 2.
    QCOMPARE(g.degree_for_boundary(ParallelDim::pp, 1, 32), 2.0);
    QCOMPARE(g.degree_for_boundary(ParallelDim::dp, 1, 32), 4.0);
    QCOMPARE(g.colour_index(20, ParallelDim::pp), 1LL);
}

void TestDegreeSnapping::evaluationBundle()
{
    const Scenario s = preset("default");
    const PlanEvaluation e = evaluate_plan(s, PlanEvaluationOptions {});
    QVERIFY(e.valid);
    QVERIFY(e.violations.empty());
    QVERIFY(e.prediction.tokens_per_s > 0);
    QVERIFY(!e.cancelled);
    for (Degree d : kAllDegrees) {
        const SensitivityCurve& c = e.curve(d);
        QCOMPARE(c.degree, d);
        QCOMPARE(c.current, degree_value(s.strategy, d));
        QVERIFY(!c.points.empty());
        bool has_current = false;
        for (const PlanPoint& p : c.points) {
            if (p.option.value == c.current) {
                has_current = true;
                QVERIFY(p.valid());
                // The current point is the current plan: same numbers as the prediction.
                QCOMPARE(p.tokens_per_s, e.prediction.tokens_per_s);
            }
            if (p.valid())
                QVERIFY(p.tokens_per_s > 0);
        }
        QVERIFY(has_current);
    }
    QCOMPARE(e.curve(Degree::tp).absorber, std::optional<Degree>(Degree::dp));
    QVERIFY(!e.curve(Degree::vpp).absorber);
    QCOMPARE(e.heatmap.cells.size(), e.heatmap.tp_values.size() * e.heatmap.pp_values.size());
}

void TestDegreeSnapping::simulatedFidelity()
{
    const Scenario s = preset("default");
    PlanEvaluationOptions o;
    o.fidelity = Fidelity::simulated;
    o.alternatives = false;
    const PlanEvaluation e = evaluate_plan(s, o);
    QVERIFY(e.valid);
    QCOMPARE(e.prediction.fidelity, Fidelity::simulated);
    const PlanEvaluation a = evaluate_plan(s, PlanEvaluationOptions {});
    QCOMPARE(a.prediction.fidelity, Fidelity::analytic);
    // The two fidelities agree closely on this plan (tst_simulator checks the grid).
    QVERIFY(std::abs(e.prediction.step_time_s / a.prediction.step_time_s - 1) < 0.1);
}

void TestDegreeSnapping::evaluationOfInvalidPlan()
{
    Scenario s = preset("default");
    s.strategy.tp = 3; // does not divide 64 heads nor the GPU count
    const PlanEvaluation e = evaluate_plan(s, PlanEvaluationOptions {});
    QVERIFY(!e.valid);
    QVERIFY(e.violations.size() >= 2);
    QStringList keys;
    for (const RuleViolation& v : e.violations)
        keys << qs(v.key);
    QVERIFY2(keys.contains(QStringLiteral("strategy.tp")), qPrintable(keys.join(u',')));
    QVERIFY(keys.contains(QStringLiteral("strategy.dp"))); // the GPU-count rule
    QVERIFY(!e.prediction.feasible);
    QVERIFY(!e.prediction.infeasible_reason.empty());
}

void TestDegreeSnapping::heatmapMarksOutOfMemory()
{
    const Scenario s = preset("gpt3-175b-1024-a100");
    const PlanEvaluation e = evaluate_plan(s, PlanEvaluationOptions {});
    QVERIFY(e.valid);
    int oom = 0, feasible = 0, invalid = 0;
    for (const PlanPoint& p : e.heatmap.cells) {
        if (!p.valid())
            ++invalid;
        else if (p.feasible)
            ++feasible;
        else
            ++oom;
    }
    // tp 8, pp 1 of a 175B model (22B parameters per GPU) cannot fit in 80 GB; the published tp 8,
    // pp 16 does; tp 1, pp 1 leaves dp 1024, which does not divide the batch of 1536.
    QVERIFY(oom > 0);
    QVERIFY(feasible > 0);
    QVERIFY(invalid > 0);
    const auto& tps = e.heatmap.tp_values;
    const auto& pps = e.heatmap.pp_values;
    const std::size_t i1 = std::find(tps.begin(), tps.end(), 1) - tps.begin();
    const std::size_t j1 = std::find(pps.begin(), pps.end(), 1) - pps.begin();
    const std::size_t i8 = std::find(tps.begin(), tps.end(), 8) - tps.begin();
    QCOMPARE(e.heatmap.at(i1, j1).option.rule, Rule::batch_divisible);
    QVERIFY(e.heatmap.at(i8, j1).valid());
    QVERIFY(!e.heatmap.at(i8, j1).feasible);
    const std::size_t j16 = std::find(pps.begin(), pps.end(), 16) - pps.begin();
    QVERIFY(e.heatmap.at(i8, j16).feasible);
    QCOMPARE(e.heatmap.at(i8, j16).tokens_per_s, e.prediction.tokens_per_s);
}

void TestDegreeSnapping::evaluationCanBeCancelled()
{
    const Scenario s = preset("default");
    const PlanEvaluation e = evaluate_plan(s, PlanEvaluationOptions {}, [] {
        CancelToken cancelled;
        cancelled.cancel();
        return cancelled;
    }());
    QVERIFY(e.cancelled);
    QVERIFY(e.valid); // the plan itself is still judged
}

void TestDegreeSnapping::learnTextsExist()
{
    for (Degree d : kAllDegrees) {
        const Explanation& x = explain_degree(d);
        QVERIFY(!x.title.empty() && !x.what.empty() && !x.formula.empty() && !x.source.empty());
    }
    for (const std::string& key : toggle_keys()) {
        const Explanation* x = explain_toggle(key);
        QVERIFY2(x && !x->what.empty() && !x->formula.empty() && !x->source.empty(), key.c_str());
    }
    QVERIFY(explain_toggle("nope") == nullptr);
    for (int i = 0; i < kMetricCount; ++i) {
        const Explanation& x = explain_metric(static_cast<Metric>(i));
        QVERIFY2(!x.title.empty() && !x.what.empty() && !x.formula.empty() && !x.source.empty(), x.title.c_str());
    }
}

void TestDegreeSnapping::whyMovedNamesTheParts()
{
    const Scenario s = preset("default");
    const PlanInputs in = plan_inputs(s);
    const PlanContext ctx(s.model, s.training, s.cluster);
    const AnalyticModel model(ctx);
    const Prediction a = model.predict(s.strategy);
    const std::optional<DegreeOption> o = change_degree(in, s.strategy, Degree::pp, 1, Degree::dp);
    QVERIFY(o && o->valid());
    const Prediction b = model.predict(o->strategy);
    const std::string why = why_moved(Metric::step_time, a, b);
    QVERIFY2(why.find("Step time") == 0, why.c_str());
    QVERIFY2(why.find("bubble") != std::string::npos || why.find("communication") != std::string::npos, why.c_str());
    const std::string mem = why_moved(Metric::peak_memory, a, b);
    QVERIFY2(mem.find("GiB") != std::string::npos, mem.c_str());
    QVERIFY(why_moved(Metric::step_time, a, a).empty());
    QCOMPARE(qs(describe_strategy_change(s.strategy, o->strategy)).contains(QStringLiteral("pp 4 -> 1")), true);
    QVERIFY(describe_strategy_change(s.strategy, s.strategy).empty());
}

QTEST_APPLESS_MAIN(TestDegreeSnapping)
#include "tst_degree_snapping.moc"

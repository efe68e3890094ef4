// Goodput under failures and spot preemptions (docs/goodput.md): the closed form of the
// checkpoint/restart process against a Monte Carlo of the same process, the optimal interval
// against Young 1974 and Daly 2006, the Llama 3 report's interruption rate and effective training
// time, a spot preemption rate, AutoHet's recovery speed-up, and the scenario keys.
#include "io/preset_catalog.hpp"
#include "io/scenario_io.hpp"
#include "model/analytic_model.hpp"
#include "model/goodput.hpp"
#include "model/goodput_plan.hpp"
#include "model/goodput_sim.hpp"
#include "model/hetero_model.hpp"
#include "model/model_math.hpp"
#include "search/search.hpp"
#include "spec/input_error.hpp"

#include <QTest>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <fstream>

using namespace parallax;
using nlohmann::json;

namespace {

const PresetCatalog& catalog()
{
    return PresetCatalog::standard();
}

double relative(double a, double b)
{
    return std::fabs(a - b) / std::fabs(b);
}

std::string error_of(const json& j, ScenarioUse use = ScenarioUse::plan)
{
    try {
        parse_scenario(j, "plan.json", catalog(), use);
    } catch (const InputError& e) {
        return e.key() + " | " + e.rule();
    }
    return "no error";
}

json small_scenario()
{
    return { { "schema", 1 }, { "model", "llama3-8b" },
        { "cluster",
            { { "gpu", "H100-SXM5-80GB" }, { "nodes", 2 }, { "gpus_per_node", 8 }, { "intra_node", "nvlink4-nvswitch" },
                { "inter_node", "ib-ndr" } } },
        { "training", { { "global_batch", 64 }, { "seq_len", 4096 }, { "precision", "bf16" } } },
        { "strategy", { { "tp", 4 }, { "pp", 1 }, { "dp", 4 }, { "micro_batch", 1 } } } };
}

json read_json(const std::string& path)
{
    std::ifstream in(path);
    return json::parse(in);
}

// A process whose recovery is a plain downtime split into its parts.
CheckpointProcess process(double lambda, double interval_s, double write_s, double recovery_s)
{
    CheckpointProcess p;
    p.interruptions_per_s = lambda;
    p.interval_s = interval_s;
    p.write_s = write_s;
    p.recovery.restart_s = 0.5 * recovery_s;
    p.recovery.replacement_s = 0.25 * recovery_s;
    p.recovery.reload_s = 0.15 * recovery_s;
    p.recovery.warmup_s = 0.1 * recovery_s;
    return p;
}

} // namespace

class TestGoodput : public QObject {
    Q_OBJECT
private slots:
    void closedFormMatchesMonteCarlo();
    void bestIntervalAgainstYoungAndDaly();
    void firstOrderAtLowRates();
    void llama3InterruptionsAndEffectiveTime();
    void spotPreemptionRate();
    void autoHetRecoverySpeedup();
    void recoveryStrategies();
    void replanRepredictsSurvivors();
    void scenarioKeys();
    void searchRanksByGoodput();
    void exampleScenario();
};

// The acceptance test: the closed form and a Monte Carlo of the same process agree within
// 2%, on the useful fraction and on every part of the lost time, at several (lambda, T, C) points
// including the optimal interval and rates far beyond the first-order regime.
void TestGoodput::closedFormMatchesMonteCarlo()
{
    struct Point {
        double lambda, interval_s, write_s, recovery_s;
    };
    const double llama_lambda = kLlama3InterruptionsPerGpuHour * kLlama3Gpus / 3600; // 8.6 a day
    const Point points[] = {
        { llama_lambda, best_interval_s(2.84, llama_lambda), 2.84, 610 }, // Llama 3 scale, optimal T
        { 1.0 / 3600, 600, 60, 600 }, // one an hour
        { 1.0 / 600, best_interval_s(30, 1.0 / 600), 30, 120 }, // spot: one every 10 min, optimal T
        { 1e-3, 2000, 10, 300 }, // lambda (T + C) = 2: far past first order
        { 1e-5, young_interval_s(300, 1e-5), 300, 1800 }, // slow storage, Young's T
    };
    const auto t0 = std::chrono::steady_clock::now();
    std::uint64_t seed = 20261204;
    for (const Point& pt : points) {
        const CheckpointProcess p = process(pt.lambda, pt.interval_s, pt.write_s, pt.recovery_s);
        const TimeFractions cf = expected_time_fractions(p);
        // 300,000-400,000 interruptions: the sampling noise of each part is ~0.3% of it.
        const SimulatedGoodput mc = simulate_goodput(p, 4e5 / pt.lambda, seed++);
        QVERIFY(mc.interruptions > 250000);
        const double sum = cf.useful + cf.lost();
        QVERIFY(std::fabs(sum - 1) < 1e-12);
        QVERIFY2(relative(mc.time.useful, cf.useful) < 0.02, qPrintable(QString::number(mc.time.useful)));
        QVERIFY2(relative(mc.time.lost(), cf.lost()) < 0.02,
            qPrintable(QStringLiteral("lost %1 vs %2").arg(mc.time.lost()).arg(cf.lost())));
        QVERIFY(relative(mc.time.lost_work, cf.lost_work) < 0.02);
        QVERIFY(relative(mc.time.checkpoint_writes, cf.checkpoint_writes) < 0.02);
        QVERIFY(relative(mc.time.restart, cf.restart) < 0.02);
        QVERIFY(relative(mc.time.reload, cf.reload) < 0.02);
        // Interruptions per second of running (wall time minus recovery) is lambda.
        const double running_s = mc.wall_s * (1 - cf.restart - cf.replacement - cf.reload - cf.warmup);
        QVERIFY(relative(static_cast<double>(mc.interruptions) / running_s, pt.lambda) < 0.02);
    }
    qInfo("Monte Carlo of %zu points took %.2f s", std::size(points),
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
}

// The exact optimum against the published estimates: Daly's higher-order interval is within 0.1%
// while lambda C is small and Young's first order drifts as it grows.
void TestGoodput::bestIntervalAgainstYoungAndDaly()
{
    // Llama 3 scale: C = 2.84 s, M = 1 / lambda = 10,012 s. Young: sqrt(2 x 2.84 x 10,012) = 238.5 s.
    const double lambda = 466.0 / (54 * 86400);
    QVERIFY(relative(young_interval_s(2.84, lambda), std::sqrt(2 * 2.84 * 54 * 86400 / 466.0)) < 1e-12);
    QVERIFY(std::fabs(young_interval_s(2.84, lambda) - 238.5) < 0.1);
    const double best = best_interval_s(2.84, lambda);
    QVERIFY(relative(daly_interval_s(2.84, lambda), best) < 1e-3);
    QVERIFY(relative(young_interval_s(2.84, lambda), best) < 0.02);
    // The best interval is a maximum: 10% either side loses goodput.
    auto useful = [&](double t) { return expected_time_fractions(process(lambda, t, 2.84, 600)).useful; };
    QVERIFY(useful(best) > useful(0.9 * best));
    QVERIFY(useful(best) > useful(1.1 * best));
    // lambda C = 0.3: Young overshoots (sqrt(0.6) / lambda = 0.775 / lambda) where the exact root
    // x of e^(x + 0.3) (x - 1) + 1 = 0 is 0.589 (by hand: h(0.588) = -0.0013, h(0.590) = +0.0016);
    // Daly: sqrt(0.6) (1 + sqrt(0.15) / 3 + 0.15 / 9) - 0.3 = 0.5875.
    const double x = best_interval_s(0.3, 1.0);
    QVERIFY(std::fabs(std::exp(x + 0.3) * (x - 1) + 1) < 1e-9);
    QVERIFY(std::fabs(x - 0.5889) < 0.0005);
    QVERIFY(relative(young_interval_s(0.3, 1.0), x) > 0.2);
    QVERIFY(relative(daly_interval_s(0.3, 1.0), x) < 0.05);
    // C >= 2M: Daly checkpoints every M.
    QCOMPARE(daly_interval_s(30, 0.1), 10.0);
    // No interruptions: no checkpoint needed.
    QCOMPARE(best_interval_s(10, 0), 0.0);
}

// At low rates the closed form reduces to the first-order waste C / (T + C) + lambda ((T + C) / 2 + R)
// (Young 1974; Daly 2006). Hand-worked at lambda = 1 / day, T = 1 h, C = 60 s, R = 600 s:
// lambda tau = 3660 / 86400 = 0.0423611, e^0.0423611 - 1 = 0.0432711 interruptions per segment,
// 0.0432711 x 86400 = 3738.62 s running + 0.0432711 x 600 = 25.96 s recovering = 3764.58 s.
void TestGoodput::firstOrderAtLowRates()
{
    const double lambda = 1.0 / 86400;
    const TimeFractions f = expected_time_fractions(process(lambda, 3600, 60, 600));
    QVERIFY(std::fabs(f.useful - 3600 / 3764.58) < 1e-5); // 0.956282
    QVERIFY(std::fabs(f.checkpoint_writes - 60 / 3764.58) < 1e-5); // 0.015938
    const double first_order = 60.0 / 3660 + lambda * (3660.0 / 2 + 600); // 0.044518
    QVERIFY(std::fabs(f.lost() - first_order) < 0.001);
}

// The Llama 3 report (Dubey et al. 2024, sec. 3.3.4): 466 interruptions in 54 days on 16,384 H100s,
// >90% effective training time.
void TestGoodput::llama3InterruptionsAndEffectiveTime()
{
    QVERIFY(relative(kLlama3InterruptionsPerGpuHour, 466.0 / (54 * 24 * 16384.0)) < 1e-12);
    QVERIFY(std::fabs(kLlama3InterruptionsPerGpuHour - 2.19e-5) < 0.01e-5);
    QVERIFY(std::fabs(kLlama3UnexpectedInterruptionsPerGpuHour - 1.97e-5) < 0.01e-5);

    Scenario s = load_scenario_preset("llama3.1-405b-16k-h100", catalog());
    ReliabilitySpec r; // the defaults read_reliability() applies
    r.failure_rate_per_gpu_hour = kLlama3InterruptionsPerGpuHour;
    r.checkpoint_write_GBps_per_node = kLlama3StorageGBpsPerNode;
    r.checkpoint_read_GBps_per_node = kLlama3StorageGBpsPerNode;
    r.restart_overhead_s = 600; // ten minutes to detect, drain, reschedule and relaunch 16k ranks
    s.reliability = r;
    const PlanContext ctx(s.model, s.training, s.cluster);
    const Prediction p = AnalyticModel(ctx).predict(s.strategy);
    const GoodputReport g = scenario_goodput(s, p);
    QVERIFY(std::fabs(g.interruptions_per_day - 466.0 / 54) < 1e-9); // 8.63
    // Checkpoint: 14 B/parameter (bf16 weights + fp32 master and two Adam moments) written by 2,048
    // nodes at 2 TB/s together (Tectonic's sustained rate).
    const double bytes = total_params(s.model) * 14;
    QVERIFY(relative(g.checkpoint_bytes, bytes) < 1e-12);
    QVERIFY(relative(g.checkpoint_write_s, bytes / 2e12) < 1e-9);
    QVERIFY(g.checkpoint_write_s > 2.5 && g.checkpoint_write_s < 3.2);
    QVERIFY(g.fraction_of_throughput > 0.90);
    QVERIFY(g.fraction_of_throughput < 0.95);
    QVERIFY(relative(g.tokens_per_s, p.tokens_per_s * g.fraction_of_throughput) < 1e-12);
    QVERIFY(relative(g.checkpoint_interval_s, g.best_checkpoint_interval_s) < 1e-12); // "auto"
    // Hand-worked first order: at the best interval writes and lost work take 2 sqrt(lambda C / 2)
    // of the running time, and each second of running adds lambda R of recovery:
    // (1 - 2 sqrt(1e-4 x 2.84 / 2)) / (1 + 1e-4 x (600 + 2.84 + step)) = 0.976 / 1.061 = 0.920.
    const double lambda = 466.0 / (54 * 86400);
    const double R = 600 + g.checkpoint_read_s + p.step_time_s;
    const double hand = (1 - 2 * std::sqrt(lambda * g.checkpoint_write_s / 2)) / (1 + lambda * R);
    QVERIFY2(std::fabs(g.fraction_of_throughput - hand) < 0.003,
        qPrintable(QStringLiteral("%1 vs %2").arg(g.fraction_of_throughput).arg(hand)));
    // Checkpointing every 3 hours instead keeps only about half (lambda T = 1.08: most segments fail).
    ReliabilitySpec rare = r;
    rare.checkpoint_interval_s = 3 * 3600.0;
    s.reliability = rare;
    QVERIFY(scenario_goodput(s, p).fraction_of_throughput < 0.6);
}

// Spot: Google's preemptible VMs live at most 24 hours (Kadupitiya, Jadhao and Sharma 2020,
// "Modeling the temporally constrained preemptions of transient cloud VMs"), so a node kept busy
// on them is preempted at least once a day: 1/24 per node and hour.
void TestGoodput::spotPreemptionRate()
{
    json j = read_json(PARALLAX_SOURCE_DIR "/docs/examples/hetero-h100-a100.json");
    j["cluster"]["groups"][1]["preemption_rate_per_hour"] = 1.0 / 24;
    j["cluster"]["groups"][1]["replacement_delay_s"] = 900;
    j["reliability"] = { { "failure_rate_per_gpu_hour", 0 }, { "replacement_delay_s", 60 } };
    const Scenario s = parse_scenario(j, "spot.json", catalog());
    const HeteroPrediction h = predict_heterogeneous(s);
    GoodputReport g = scenario_goodput(s, h);
    QVERIFY(std::fabs(g.preemptions_per_day - 1.0) < 1e-12); // one A100 node
    QCOMPARE(g.failures_per_day, 0.0);
    QCOMPARE(g.recovery_cost.replacement_s, 900.0); // the group's own delay
    // With GPU failures too: 16 GPUs at the Llama 3 rate, replaced after 60 s; the mean wait is
    // weighted by how often each happens.
    j["reliability"]["failure_rate_per_gpu_hour"] = kLlama3InterruptionsPerGpuHour;
    const Scenario both = parse_scenario(j, "spot.json", catalog());
    g = scenario_goodput(both, h);
    const double failures_per_day = 16 * 24 * kLlama3InterruptionsPerGpuHour;
    QVERIFY(relative(g.interruptions_per_day, 1.0 + failures_per_day) < 1e-12);
    QVERIFY(relative(g.recovery_cost.replacement_s, (900 + failures_per_day * 60) / (1 + failures_per_day)) < 1e-12);
    QVERIFY(g.tokens_per_s < h.prediction.tokens_per_s);
    // The same cluster on demand keeps more of its throughput.
    j["cluster"]["groups"][1]["preemption_rate_per_hour"] = 0;
    const Scenario on_demand = parse_scenario(j, "spot.json", catalog());
    QVERIFY(scenario_goodput(on_demand, h).fraction_of_throughput > g.fraction_of_throughput);
}

// AutoHet (Wang et al. 2025, arXiv 2512.20953): recovery 1.49x-4.38x faster when the lost state is
// fetched from surviving nodes than when every node downloads the checkpoint from cloud storage
// (their baseline: Varuna). Comparable configuration (assumed, see docs/goodput.md): a 13B model,
// 4 nodes of 8 A100 with HDR InfiniBand (25 GB/s per GPU), 2 data-parallel replicas, cloud storage
// read at 0.5 GB/s per node, 30 s restart, a 5 s step.
void TestGoodput::autoHetRecoverySpeedup()
{
    GoodputPlan plan;
    plan.tokens_per_s = 1e5;
    plan.step_time_s = 5;
    plan.gpus = 32;
    plan.nodes = 4;
    plan.data_parallel_copies = 2;
    plan.checkpoint_bytes = 13e9 * 14; // 182 GB
    plan.inter_node_Bps_per_node = 8 * 25e9;
    ReliabilitySpec spec;
    spec.failure_rate_per_gpu_hour = kLlama3InterruptionsPerGpuHour;
    spec.checkpoint_read_GBps_per_node = 0.5;
    spec.checkpoint_write_GBps_per_node = 0.5;
    spec.restart_overhead_s = 30;
    spec.recovery = RecoveryStrategy::checkpoint;
    const RecoveryCost storage = recovery_cost(spec, plan);
    spec.recovery = RecoveryStrategy::replica_memory;
    const RecoveryCost peers = recovery_cost(spec, plan);
    // By hand: 182 GB / (0.5 GB/s x 4 nodes) = 91 s; the lost node's half-replica share, 91 GB, over
    // 200 GB/s = 0.455 s.
    QVERIFY(std::fabs(storage.reload_s - 91) < 1e-9);
    QVERIFY(std::fabs(peers.reload_s - 0.455) < 1e-9);
    const double speedup = storage.total() / peers.total(); // (30 + 5 + 91) / (30 + 5 + 0.455) = 3.55
    QVERIFY(std::fabs(speedup - 126 / 35.455) < 1e-9);
    QVERIFY(speedup > 1.49 && speedup < 4.38);
    // A slow restart hides the reload: with 300 s it is (305 + 91) / 305.455 = 1.30x.
    spec.restart_overhead_s = 300;
    const double slow_restart = (300 + 5 + 91.0) / recovery_cost(spec, plan).total();
    QVERIFY(std::fabs(slow_restart - 396 / 305.455) < 1e-9);
    plan.data_parallel_copies = 1; // nothing to fetch from: back to the checkpoint
    QCOMPARE(recovery_cost(spec, plan).reload_s, storage.reload_s);
}

void TestGoodput::recoveryStrategies()
{
    GoodputPlan plan;
    plan.tokens_per_s = 1e5;
    plan.step_time_s = 2;
    plan.gpus = 64;
    plan.nodes = 8;
    plan.data_parallel_copies = 4;
    plan.checkpoint_bytes = 1e12;
    plan.inter_node_Bps_per_node = 400e9;
    ReliabilitySpec spec;
    spec.failure_rate_per_gpu_hour = 1e-3;
    spec.checkpoint_read_GBps_per_node = 2;
    spec.checkpoint_write_GBps_per_node = 2;
    spec.restart_overhead_s = 120;
    spec.replacement_delay_s = 1200;
    const RecoveryCost c = recovery_cost(spec, plan);
    QCOMPARE(c.restart_s, 120.0);
    QCOMPARE(c.warmup_s, 2.0);
    QCOMPARE(c.replacement_s, 1200.0);
    QVERIFY(std::fabs(c.reload_s - 1e12 / (2e9 * 8)) < 1e-9); // 62.5 s
    spec.recovery = RecoveryStrategy::replan;
    const RecoveryCost r = recovery_cost(spec, plan);
    // 3 of 4 replicas keep training: the wait costs a quarter of it. A replica spans 8 / 4 = 2 nodes:
    // the lost node's share, 1 TB / 2 = 500 GB, comes over 400 GB/s.
    QCOMPARE(r.replacement_s, 300.0);
    QVERIFY(std::fabs(r.reload_s - 1.25) < 1e-12);
    // Goodput: the closed form at the best interval, and better for replan than for checkpoint.
    const GoodputReport g = predict_goodput(spec, plan);
    QCOMPARE(g.interruptions_per_day, 64 * 24 * 1e-3);
    spec.recovery = RecoveryStrategy::checkpoint;
    QVERIFY(predict_goodput(spec, plan).tokens_per_s < g.tokens_per_s);
    QVERIFY(relative(goodput_tokens_per_s(spec, plan), predict_goodput(spec, plan).tokens_per_s) < 1e-12);
}

// replan on a plain plan: the survivors (one data-parallel replica fewer on the nodes left, the same
// global batch) are re-predicted; the replacement wait costs what they do not deliver.
void TestGoodput::replanRepredictsSurvivors()
{
    json j = small_scenario();
    j["strategy"] = { { "tp", 8 }, { "pp", 1 }, { "dp", 2 }, { "micro_batch", 1 } };
    j["reliability"] = { { "replacement_delay_s", 1000 }, { "recovery", "replan" } };
    const Scenario s = parse_scenario(j, "replan.json", catalog());
    const Prediction p = AnalyticModel(PlanContext(s.model, s.training, s.cluster)).predict(s.strategy);
    // Independently: the one-node plan the survivors run.
    json one = j;
    one["cluster"]["nodes"] = 1;
    one["strategy"]["dp"] = 1;
    one.erase("reliability");
    const Scenario survivors = parse_scenario(one, "survivors.json", catalog());
    const Prediction q = AnalyticModel(PlanContext(survivors.model, survivors.training, survivors.cluster))
                             .predict(survivors.strategy);
    const double kept = q.tokens_per_s / p.tokens_per_s;
    QVERIFY(kept > 0.45 && kept < 0.6);
    QVERIFY(relative(survivor_throughput_fraction(s, p, builtin_calibration()), kept) < 1e-12);
    const GoodputReport g = scenario_goodput(s, p);
    QVERIFY(relative(g.recovery_cost.replacement_s, 1000 * (1 - kept)) < 1e-12);
    // A replica of half a node cannot leave whole nodes behind: the survivors' share is assumed.
    j["strategy"] = { { "tp", 4 }, { "pp", 1 }, { "dp", 4 }, { "micro_batch", 1 } };
    const Scenario quarter = parse_scenario(j, "replan.json", catalog());
    const Prediction pq
        = AnalyticModel(PlanContext(quarter.model, quarter.training, quarter.cluster)).predict(quarter.strategy);
    QCOMPARE(survivor_throughput_fraction(quarter, pq, builtin_calibration()), -1.0);
    QCOMPARE(scenario_goodput(quarter, pq).recovery_cost.replacement_s, 250.0);
}

void TestGoodput::scenarioKeys()
{
    json j = small_scenario();
    QVERIFY(!parse_scenario(j, "plan.json", catalog()).reliability);
    j["reliability"] = json::object();
    Scenario s = parse_scenario(j, "plan.json", catalog());
    QVERIFY(s.reliability);
    QCOMPARE(s.reliability->failure_rate_per_gpu_hour, kLlama3InterruptionsPerGpuHour);
    QVERIFY(!s.reliability->checkpoint_interval_s);
    QCOMPARE(s.reliability->checkpoint_write_GBps_per_node, kLlama3StorageGBpsPerNode);
    QCOMPARE(s.reliability->recovery, RecoveryStrategy::checkpoint);
    j["reliability"] = { { "failure_rate_per_gpu_hour", 1e-4 }, { "checkpoint_interval_s", 900 },
        { "checkpoint_write_GBps_per_node", 5 }, { "checkpoint_read_GBps_per_node", 10 }, { "restart_overhead_s", 120 },
        { "replacement_delay_s", 300 }, { "recovery", "replica_memory" } };
    s = parse_scenario(j, "plan.json", catalog());
    QCOMPARE(*s.reliability->checkpoint_interval_s, 900.0);
    QCOMPARE(s.reliability->recovery, RecoveryStrategy::replica_memory);
    // Round trip.
    const Scenario again = parse_scenario(scenario_to_json(s), "again.json", catalog());
    QVERIFY(again.reliability == s.reliability);

    json bad = j;
    bad["reliability"]["recovery"] = "pray";
    QVERIFY(error_of(bad).starts_with("reliability.recovery | "));
    bad = j;
    bad["reliability"]["checkpoint_interval_s"] = "often";
    QCOMPARE(error_of(bad),
        std::string("reliability.checkpoint_interval_s | must be a number of seconds or \"auto\", "
                    "got \"often\""));
    bad = j;
    bad["reliability"]["failure_rate_per_gpu_hour"] = -1;
    QVERIFY(error_of(bad).starts_with("reliability.failure_rate_per_gpu_hour | must be a number in [0, "));
    bad = j;
    bad["reliability"]["restart_overhed_s"] = 1;
    QVERIFY(error_of(bad).starts_with("reliability.restart_overhed_s | "));
    bad = j;
    bad["strategy"] = { { "tp", 8 }, { "pp", 2 }, { "dp", 1 }, { "micro_batch", 1 } };
    QVERIFY(error_of(bad).starts_with("reliability.recovery | replica_memory reloads a lost node"));
    QCOMPARE(error_of(bad, ScenarioUse::search), std::string("no error")); // a search tries every dp

    json hetero = read_json(PARALLAX_SOURCE_DIR "/docs/examples/hetero-h100-a100.json");
    hetero["cluster"]["groups"][0]["preemption_rate_per_hour"] = -0.5;
    QVERIFY(error_of(hetero).starts_with("cluster.groups[0].preemption_rate_per_hour | must be a number in [0, "));
    hetero["cluster"]["groups"][0]["preemption_rate_per_hour"] = 0.05;
    hetero["cluster"]["groups"][0]["replacement_delay_s"] = 600;
    const Scenario hs = parse_scenario(hetero, "h.json", catalog());
    QCOMPARE(hs.cluster.groups[0].preemption_rate_per_hour, 0.05);
    const Scenario hs2 = parse_scenario(scenario_to_json(hs), "h2.json", catalog());
    QCOMPARE(*hs2.cluster.groups[0].replacement_delay_s, 600.0);
    QVERIFY(!hs2.cluster.groups[1].replacement_delay_s);
}

void TestGoodput::searchRanksByGoodput()
{
    json j = small_scenario();
    SearchOptions o;
    o.threads = 1;
    o.top = 5;
    o.refine_top = 0;
    o.rank_by_goodput = true; // as parallax-cli search sets it
    const SearchOutcome plain = search_strategies(parse_scenario(j, "s.json", catalog(), ScenarioUse::search), o);
    QVERIFY(!plain.ranked_by_goodput);
    QVERIFY(!plain.results.empty());
    QCOMPARE(plain.results.front().goodput_tokens_per_s, 0.0);
    // A harsh environment: an interruption every few minutes, slow storage.
    j["reliability"] = { { "failure_rate_per_gpu_hour", 0.02 }, { "checkpoint_write_GBps_per_node", 0.2 },
        { "checkpoint_read_GBps_per_node", 0.2 }, { "restart_overhead_s", 60 } };
    const Scenario s = parse_scenario(j, "s.json", catalog(), ScenarioUse::search);
    const SearchOutcome g = search_strategies(s, o);
    QVERIFY(g.ranked_by_goodput);
    QVERIFY(!g.results.empty());
    SearchOptions raw = o; // the planner and sweep rank by raw throughput
    raw.rank_by_goodput = false;
    QVERIFY(!search_strategies(s, raw).ranked_by_goodput);
    for (std::size_t i = 0; i < g.results.size(); ++i) {
        const SearchResult& r = g.results[i];
        const double expected = goodput_tokens_per_s(
            *s.reliability, goodput_plan(s, r.strategy, r.prediction.tokens_per_s, r.prediction.step_time_s));
        QVERIFY(relative(r.goodput_tokens_per_s, expected) < 1e-12);
        QVERIFY(r.goodput_tokens_per_s < r.prediction.tokens_per_s);
        if (i > 0)
            QVERIFY(r.goodput_tokens_per_s <= g.results[i - 1].goodput_tokens_per_s);
    }
}

// docs/examples/llama3-405b-16k-goodput.json: the Llama 3 anchor as a scenario predict runs.
void TestGoodput::exampleScenario()
{
    const Scenario s = load_scenario_file(PARALLAX_SOURCE_DIR "/docs/examples/llama3-405b-16k-goodput.json", catalog());
    QVERIFY(s.reliability);
    const PlanContext ctx(s.model, s.training, s.cluster);
    const Prediction p = AnalyticModel(ctx).predict(s.strategy);
    QVERIFY(p.feasible);
    const GoodputReport g = scenario_goodput(s, p);
    QVERIFY(std::fabs(g.interruptions_per_day - 8.63) < 0.01);
    QVERIFY(g.fraction_of_throughput > 0.90);
}

QTEST_GUILESS_MAIN(TestGoodput)
#include "tst_goodput.moc"

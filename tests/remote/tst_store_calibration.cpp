// Calibration from the user's own runs: recorded runs of one cluster go into a run store as logs
// (parsed as the run engine parses them), bad or inconsistent ones are rejected with a reason, the
// fit on some runs shrinks the residuals on runs it did not see, and the calibration it writes is
// used for that GPU only.
#include "calibration/published_runs.hpp"
#include "cluster/cluster_profile.hpp"
#include "io/json_reader.hpp"
#include "io/preset_catalog.hpp"
#include "io/scenario_io.hpp"
#include "model/analytic_model.hpp"
#include "model/plan_context.hpp"
#include "runs/measurements.hpp"
#include "runs/run_catalog.hpp"
#include "runs/store_calibration.hpp"
#include "store/run_store.hpp"

#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <fstream>
#include <sstream>

using namespace parallax;
using namespace parallax::remote;

namespace {

std::string read_file(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

std::string profile_json(const std::string& gpu_type)
{
    return nlohmann::json { { "name", "dgx-b200" }, { "gpu_type", gpu_type } }.dump();
}

// A Megatron log of `steps` iterations at `step_s` seconds each (the first slower: warm-up),
// jittered by +-`jitter` alternately.
std::string megatron_log(double step_s, int steps, double jitter = 0.01)
{
    std::string out;
    char line[512];
    for (int i = 1; i <= steps; ++i) {
        const double t = i == 1 ? 2 * step_s : step_s * (1 + (i % 2 ? jitter : -jitter));
        std::snprintf(line, sizeof line,
            " iteration %8d/     100 | consumed samples: %12d | elapsed time per iteration (ms): %.1f | "
            "learning rate: 3.000000E-06 | global batch size:   128 | lm loss: 1.065463E+01 |\n",
            i, 128 * i, 1000 * t);
        out += line;
    }
    return out;
}

RunRecord run_of(const std::string& id, const std::string& cluster, const Scenario& sc, const std::string& gpu_type)
{
    RunRecord r;
    r.id = id;
    r.framework = "megatron";
    r.launcher = "slurm";
    r.cluster = cluster;
    r.profile_json = profile_json(gpu_type);
    r.scenario_json = scenario_to_json(sc).dump();
    r.plan_json = "{}";
    r.script = "#!/bin/bash\n";
    r.remote_dir = "/scratch/" + id;
    r.detail = "stored";
    return r;
}

void store_run(RunStore& store, RunRecord run, const std::string& log, LogFormat format, RunState state)
{
    store.create(run);
    store.append_log(run.id, 0, log);
    const Measurements m = parse_measurements(log, format);
    store.set_measurements(run.id, m.parsed, m.benches, m.summary_json().dump(), m.run_info_json);
    store.set_state(run.id, state, "test");
}

double step_time_of(const ValidationCase& c)
{
    const Scenario& s = c.scenario;
    return static_cast<double>(s.training.global_batch) * static_cast<double>(s.training.seq_len)
        / static_cast<double>(s.strategy.total_gpus()) / c.measured_tokens_per_s_per_gpu;
}

double rms(const std::vector<Residual>& r)
{
    double ss = 0;
    for (const Residual& x : r)
        ss += x.log_error * x.log_error;
    return std::sqrt(ss / static_cast<double>(r.size()));
}

} // namespace

class TestStoreCalibration : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    QString m_store;
    std::vector<ValidationCase> m_recorded; // the published B200 runs, as this cluster's history

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_store = m_dir.filePath(QStringLiteral("runs.sqlite"));
        // Published Megatron-Bridge runs on B200 (validation/): the shipped calibration was never fitted
        // to them or to any Blackwell run, as a team's own history on a new cluster would be.
        const std::string path
            = std::string(PARALLAX_SOURCE_DIR) + "/validation/published-moe-and-long-context-runs.json";
        std::vector<SkippedRow> skipped;
        for (ValidationCase& c :
            read_published_runs(parse_json_text(read_file(path), path), path, PresetCatalog::standard(), skipped))
            if (c.gpu == "B200" && !c.scenario.model.is_moe())
                m_recorded.push_back(std::move(c));
        QVERIFY(m_recorded.size() >= 4);
        RunStore store(m_store);
        for (const ValidationCase& c : m_recorded)
            store_run(store, run_of(c.id, "dgx-b200", c.scenario, "B200"), megatron_log(step_time_of(c), 6),
                LogFormat::megatron, RunState::completed);
        const Scenario& base = m_recorded.front().scenario;
        const double step = step_time_of(m_recorded.front());
        // What a store also holds, none of which may be fitted.
        store_run(store, run_of("failed", "dgx-b200", base, "B200"), megatron_log(step, 6), LogFormat::megatron,
            RunState::failed);
        store_run(store, run_of("cpu", "dgx-b200", base, "cpu"), megatron_log(step, 6), LogFormat::megatron,
            RunState::completed);
        store_run(store, run_of("unsteady", "dgx-b200", base, "B200"), megatron_log(step, 6, 0.4), LogFormat::megatron,
            RunState::completed);
        store_run(store, run_of("impossible", "dgx-b200", base, "B200"), megatron_log(step / 20, 6),
            LogFormat::megatron, RunState::completed);
        // A recorded torchtitan log (tests/data/logs) that printed a single step: nothing steady to fit.
        store_run(store, run_of("one-step", "dgx-b200", base, "B200"),
            read_file(std::string(PARALLAX_SOURCE_DIR) + "/tests/data/logs/torchtitan-08.log"), LogFormat::torchtitan,
            RunState::completed);
        // A recorded Megatron log whose throughput and step time disagree with the stored plan's batch.
        std::string inconsistent;
        for (int i = 1; i <= 6; ++i)
            inconsistent += " iteration " + std::to_string(i)
                + "/ 100 | elapsed time per iteration (ms): 1000.0 | tokens per gpu per second (tgs): 100.0 |\n";
        store_run(store, run_of("inconsistent", "dgx-b200", base, "B200"), inconsistent, LogFormat::megatron,
            RunState::completed);
    }

    void bad_runs_are_rejected_with_a_reason()
    {
        const RunCatalog catalog(m_store);
        const StoreCases found = store_cases(catalog, "dgx-b200");
        QCOMPARE(found.cases.size(), m_recorded.size());
        std::map<std::string, std::string> why;
        for (const RejectedRun& r : found.rejected)
            why[r.run_id] = r.reason;
        QVERIFY2(why["failed"].find("state failed") != std::string::npos, why["failed"].c_str());
        QVERIFY2(why["cpu"].find("CPU ranks") != std::string::npos, why["cpu"].c_str());
        QVERIFY2(why["unsteady"].find("unsteady") != std::string::npos, why["unsteady"].c_str());
        QVERIFY2(why["impossible"].find("peak FLOP/s") != std::string::npos, why["impossible"].c_str());
        QVERIFY2(why["one-step"].find("too few steady-state steps") != std::string::npos, why["one-step"].c_str());
        QVERIFY(why.count("inconsistent"));
        QCOMPARE(found.rejected.size(), std::size_t(6));
        QVERIFY(store_cases(catalog, "another-cluster").cases.empty());
    }

    // Leave one run out: each run is predicted by a calibration fitted to the others; the residuals of
    // runs the fit never saw shrink.
    void residuals_shrink_on_runs_it_did_not_fit()
    {
        const RunCatalog catalog(m_store);
        const StoreCases found = store_cases(catalog, "dgx-b200");
        QVERIFY(found.cases.size() >= 4);
        // The store's measurement is the published one (median of the logged steady steps).
        for (const ValidationCase& c : found.cases)
            for (const ValidationCase& r : m_recorded)
                if (r.id == c.id)
                    QVERIFY(std::fabs(c.measured_tokens_per_s_per_gpu / r.measured_tokens_per_s_per_gpu - 1) < 0.02);
        std::vector<Residual> before, after;
        for (std::size_t i = 0; i < found.cases.size(); ++i) {
            std::vector<ValidationCase> others = found.cases;
            others.erase(others.begin() + static_cast<std::ptrdiff_t>(i));
            const Calibration fitted
                = fit_store_calibration(others, "dgx-b200", m_store.toStdString(), "2026-12-03T00:00:00Z");
            before.push_back(residuals({ found.cases[i] }, builtin_calibration()).front());
            after.push_back(residuals({ found.cases[i] }, fitted).front());
        }
        qInfo(
            "held-out RMS log error: shipped calibration %.3f, fitted to the other runs %.3f", rms(before), rms(after));
        QVERIFY(rms(after) < rms(before));
        std::vector<ValidationCase> fit(found.cases.begin(), found.cases.end() - 1);
        const Calibration c = fit_store_calibration(fit, "dgx-b200", m_store.toStdString(), "2026-12-03T00:00:00Z");
        QCOMPARE(QString::fromStdString(c.gpu), QStringLiteral("B200"));
        // Provenance: which runs, when, and each residual before and after.
        QCOMPARE(c.provenance["runs"].size(), fit.size());
        QCOMPARE(c.provenance["fitted_at"].get<std::string>(), std::string("2026-12-03T00:00:00Z"));
        const nlohmann::json back = calibration_to_json(c);
        const Calibration reread = calibration_from_json(back, "fitted.json");
        QCOMPARE(reread.gpu, c.gpu);
        QCOMPARE(reread.provenance, c.provenance);
    }

    void never_applied_to_another_gpu()
    {
        const RunCatalog catalog(m_store);
        const Calibration c
            = fit_store_calibration(store_cases(catalog, "dgx-b200").cases, "dgx-b200", m_store.toStdString(), "now");
        Scenario h100 = load_scenario_preset("default", PresetCatalog::standard());
        const PlanContext other(h100.model, h100.training, h100.cluster, c);
        QCOMPARE(QString::fromStdString(other.calibration.name), QString::fromStdString(builtin_calibration().name));
        const Prediction p = AnalyticModel(other).predict(h100.strategy);
        bool warned = false;
        for (const std::string& w : p.warnings)
            warned = warned || w.find("not applied to H100") != std::string::npos;
        QVERIFY(warned);
        const Scenario& b200 = m_recorded.front().scenario;
        const PlanContext same(b200.model, b200.training, b200.cluster, c);
        QCOMPARE(QString::fromStdString(same.calibration.name), QString::fromStdString(c.name));
        QVERIFY(same.calibration_note.empty());
    }

    void cli_calibrates_from_the_store()
    {
        const QString out = m_dir.filePath(QStringLiteral("b200.json"));
        QProcess p;
        p.start(QStringLiteral(PARALLAX_CLI_PATH),
            { QStringLiteral("calibrate"), QStringLiteral("--from-store"), QStringLiteral("--store"), m_store,
                QStringLiteral("--cluster"), QStringLiteral("dgx-b200"), QStringLiteral("--out"), out });
        QVERIFY(p.waitForFinished(120000));
        const QString text = QString::fromUtf8(p.readAllStandardOutput());
        QCOMPARE(p.exitCode(), 0);
        QVERIFY2(text.contains(QStringLiteral("rejected unsteady: unsteady")), qPrintable(text));
        QVERIFY(text.contains(QStringLiteral("RMS log error")));
        const Calibration c
            = calibration_from_json(parse_json_text(read_file(out.toStdString()), "b200.json"), "b200.json");
        QCOMPARE(QString::fromStdString(c.gpu), QStringLiteral("B200"));
        QVERIFY(!c.is_identity());
        // No store: a clear error.
        p.start(QStringLiteral(PARALLAX_CLI_PATH),
            { QStringLiteral("calibrate"), QStringLiteral("--from-store"), QStringLiteral("--store"),
                m_dir.filePath(QStringLiteral("none.sqlite")) });
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 2);
        QVERIFY(p.readAllStandardError().contains("no run store"));
    }
};

QTEST_GUILESS_MAIN(TestStoreCalibration)
#include "tst_store_calibration.moc"

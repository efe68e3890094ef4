// The built-in probe (resources/probe/parallax_probe.py) as a real PyTorch program: two CPU ranks with gloo,
// started by hand the way srun starts them (RANK/WORLD_SIZE/MASTER_*), for a tensor-parallel and a
// data-parallel plan (the pipeline-parallel plan runs under SLURM in tst_remote_loop). Its records must
// parse with remote/log_parse and hold real, positive measurements; a plan that does not match the ranks
// started must fail cleanly with a "done" record saying so.
#include "io/preset_catalog.hpp"
#include "io/scenario_io.hpp"
#include "jobs/job_bundle.hpp"
#include "runs/measurements.hpp"

#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <arpa/inet.h>
#include <cmath>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

using namespace parallax;
using namespace parallax::remote;

namespace {

quint16 free_port()
{
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a {};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    quint16 port = 0;
    if (::bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0
        && ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
        port = ntohs(a.sin_port);
    ::close(fd);
    return port;
}

struct ProbeRun {
    std::vector<int> exit_codes;
    std::string rank0_log;
    std::string all_logs;
};

// Writes the probe and its plan for `scenario`, starts `ranks` processes and waits for them.
ProbeRun run_probe(const Scenario& scenario, int ranks, const QString& dir)
{
    RunRequest req;
    req.scenario = scenario;
    req.profile.name = "local";
    req.profile.host = "localhost";
    req.run_id = "probe-test";
    req.steps = 4;
    req.probe_microbatches = 2;
    const JobBundle b = make_job_bundle(req);
    for (const char* name : { "parallax_probe.py", "probe_plan.json" }) {
        QFile f(dir + QLatin1Char('/') + QLatin1String(name));
        f.open(QIODevice::WriteOnly);
        const std::string& content = b.find(name)->content;
        f.write(content.data(), static_cast<qint64>(content.size()));
    }
    const QString port = QString::number(free_port());
    std::vector<std::unique_ptr<QProcess>> procs;
    for (int r = 0; r < ranks; ++r) {
        auto p = std::make_unique<QProcess>();
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("RANK"), QString::number(r));
        env.insert(QStringLiteral("WORLD_SIZE"), QString::number(ranks));
        env.insert(QStringLiteral("LOCAL_RANK"), QString::number(r));
        env.insert(QStringLiteral("MASTER_ADDR"), QStringLiteral("127.0.0.1"));
        env.insert(QStringLiteral("MASTER_PORT"), port);
        env.insert(QStringLiteral("OMP_NUM_THREADS"), QStringLiteral("1"));
        p->setProcessEnvironment(env);
        p->setWorkingDirectory(dir);
        p->setProcessChannelMode(QProcess::MergedChannels);
        p->start(QStringLiteral("/usr/bin/python3"),
            { QStringLiteral("parallax_probe.py"), QStringLiteral("--plan"), QStringLiteral("probe_plan.json") });
        procs.push_back(std::move(p));
    }
    ProbeRun out;
    for (int r = 0; r < ranks; ++r) {
        QProcess& p = *procs[static_cast<std::size_t>(r)];
        if (!p.waitForFinished(180000)) {
            p.kill();
            p.waitForFinished();
        }
        out.exit_codes.push_back(p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1);
        const std::string log = p.readAll().toStdString();
        if (r == 0)
            out.rank0_log = log;
        out.all_logs += log;
    }
    return out;
}

Scenario tiny(int tp, int pp, int dp)
{
    Scenario s = load_scenario_file(
        PARALLAX_SOURCE_DIR "/tests/remote/data/tiny_probe_scenario.json", PresetCatalog::standard());
    s.strategy.tp = tp;
    s.strategy.pp = pp;
    s.strategy.dp = dp;
    s.training.global_batch = 4 * dp;
    s.cluster.gpus_per_node = tp * pp * dp;
    validate_scenario(s, "tiny");
    return s;
}

} // namespace

class TestProbe : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void trainsAndBenchmarks_data()
    {
        QTest::addColumn<int>("tp");
        QTest::addColumn<int>("dp");
        QTest::addColumn<QString>("collective");
        QTest::newRow("tensor parallel 2") << 2 << 1 << "tp";
        QTest::newRow("data parallel 2") << 1 << 2 << "dp";
    }

    void trainsAndBenchmarks()
    {
        QFETCH(int, tp);
        QFETCH(int, dp);
        QFETCH(QString, collective);
        QTemporaryDir dir;
        const ProbeRun run = run_probe(tiny(tp, 1, dp), 2, dir.path());
        QVERIFY2(run.exit_codes == std::vector<int>({ 0, 0 }), run.all_logs.c_str());
        const Measurements m = parse_measurements(run.rank0_log, LogFormat::probe);
        QVERIFY2(m.parsed.recognised(), run.rank0_log.c_str());
        QCOMPARE(m.parsed.steps.size(), std::size_t(4));
        for (const StepRecord& s : m.parsed.steps) {
            QVERIFY(s.step_time_s && *s.step_time_s > 0 && std::isfinite(*s.step_time_s));
            QVERIFY(s.tokens_per_s && *s.tokens_per_s > 0);
            QVERIFY(s.samples_per_s && *s.samples_per_s > 0);
            QVERIFY(s.loss && std::isfinite(*s.loss) && *s.loss > 0);
            QVERIFY(!s.memory_GiB); // CPU: no CUDA allocator to ask
            // tokens/s per rank follows from the step time: 2 micro-batches x 2 sequences x 128 tokens x dp replicas.
            QVERIFY(std::abs(*s.tokens_per_s * *s.step_time_s * 2 - 2 * 2 * 128.0 * dp) < 1e-6 * 512 * dp);
        }
        QVERIFY(m.parsed.summary.step_time_s.has_value());
        QCOMPARE(m.done_exit.value(), std::string("ok"));
        QVERIFY(m.run_info_json.find("\"backend\":\"gloo\"") != std::string::npos);
        int gemms = 0;
        bool collective_seen = false;
        for (const BenchRecord& b : m.benches) {
            QVERIFY(b.time_s > 0);
            gemms += b.op == "gemm";
            if (b.op == "all_reduce" && b.group == collective.toStdString()) {
                collective_seen = true;
                QVERIFY(b.bus_GBps && *b.bus_GBps > 0);
            }
        }
        QCOMPARE(gemms, 5); // qkv, attn_out, fc1, fc2, logits with the plan's shapes
        QVERIFY2(collective_seen, run.rank0_log.c_str());
        // Only rank 0 prints records.
        const auto other = run.all_logs.substr(run.rank0_log.size());
        QVERIFY(other.find("PARALLAX_PROBE") == std::string::npos);
    }

    void wrongRankCountFailsCleanly()
    {
        QTemporaryDir dir;
        // A plan for 2 x 2 = 4 ranks, started with 2.
        Scenario s = tiny(2, 1, 2);
        const ProbeRun run = run_probe(s, 2, dir.path());
        QVERIFY(run.exit_codes[0] != 0);
        const Measurements m = parse_measurements(run.rank0_log, LogFormat::probe);
        QCOMPARE(m.done_exit.value_or(""), std::string("error"));
        QVERIFY2(m.done_error.find("4 ranks") != std::string::npos, m.done_error.c_str());
    }
};

QTEST_GUILESS_MAIN(TestProbe)
#include "tst_probe.moc"

// remote/ under faults, without a network: what a SLURM controller outage prints (each program's own exit
// status, "cannot contact the controller" told apart from "no such job", transient sbatch errors), the run
// store opened by many connections at once on a fresh file, and the generated launch files under hostile
// model names. The same faults against real servers are in tst_remote_faults.
#include "io/export/launch_config.hpp"
#include "io/preset_catalog.hpp"
#include "io/scenario_io.hpp"
#include "jobs/job_bundle.hpp"
#include "launch/direct.hpp"
#include "launch/slurm.hpp"
#include "ssh/prompt_bridge.hpp"
#include "store/run_store.hpp"

#include <QDir>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <atomic>
#include <latch>
#include <thread>

using namespace parallax;
using namespace parallax::remote;

namespace {

// What slurm 22.05's clients print when slurmctld is down (slurm_strerror of SLURM_COMMUNICATIONS_CONNECTION_ERROR)
// and when the controller no longer holds the job (ESLURM_INVALID_JOB_ID).
constexpr const char* kNoController = "slurm_load_jobs error: Unable to contact slurm controller (connect failure)\n";
constexpr const char* kInvalidJob = "slurm_load_jobs error: Invalid job id specified\n";

// The batched poll as the cluster's shell runs it, with stand-in programs that print and exit as given.
std::string run_sections_locally(const std::vector<std::pair<std::string, int>>& programs)
{
    ClusterProfile p;
    p.login_shell = false;
    std::vector<std::vector<std::string>> argvs;
    for (const auto& [text, status] : programs)
        argvs.push_back({ "sh", "-c", "printf '%s' \"$0\"; exit " + std::to_string(status), text });
    QProcess sh;
    sh.start(QStringLiteral("/bin/sh"),
        { QStringLiteral("-c"), QString::fromStdString(remote_commands(p, "/no/run/folder", argvs)) });
    sh.waitForFinished(20000);
    return sh.readAllStandardOutput().toStdString();
}

// Python reads a generated file as the framework would (tomllib for torchtitan, PyYAML for OmegaConf) and
// prints its top-level keys, sorted, one per line; the [model] table's keys too for TOML.
QString python_keys(const std::string& text, const char* reader)
{
    QTemporaryDir tmp;
    const QString path = tmp.filePath(QStringLiteral("file"));
    QFile f(path);
    f.open(QIODevice::WriteOnly);
    f.write(text.data(), static_cast<qint64>(text.size()));
    f.close();
    QProcess py;
    py.start(QStringLiteral("/usr/bin/python3"), { QStringLiteral("-c"), QString::fromLatin1(reader), path });
    py.waitForFinished(30000);
    return QString::fromUtf8(py.readAllStandardOutput() + py.readAllStandardError());
}

constexpr const char* kTomlKeys = "import sys, tomllib\n"
                                  "d = tomllib.load(open(sys.argv[1], 'rb'))\n"
                                  "print(sorted(d), sorted(d['model']), d['job']['description'])";
constexpr const char* kYamlKeys = "import sys, yaml\n"
                                  "print(sorted(yaml.safe_load(open(sys.argv[1], encoding='utf-8'))))";

} // namespace

class TestRemoteRobustness : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // --- SLURM controller outages --------------------------------------------------------------------
    void batchedCommandsKeepEachExitStatus()
    {
        // squeue fails (controller down), scontrol succeeds: the shell's own status is only the last one's.
        const auto sections = split_sections(run_sections_locally({ { kNoController, 1 }, { "JobId=7 x\n", 0 } }));
        QCOMPARE(sections.size(), std::size_t(2));
        QCOMPARE(sections[0].exit_status.value_or(-1), 1);
        QCOMPARE(sections[1].exit_status.value_or(-1), 0);
        QCOMPARE(sections[0].out, std::string(kNoController));
        QVERIFY(!sections[0].ok());
        QVERIFY(sections[1].ok());
        // A section cut off without its status (the command killed) has none.
        const auto cut = split_sections(std::string(kSectionEnd) + "\n");
        QCOMPARE(cut.size(), std::size_t(1));
        QVERIFY(!cut[0].exit_status.has_value());
    }

    void controllerOutageIsNotJobUnknown()
    {
        QCOMPARE(classify_slurm_answer({ kNoController, 1 }), SlurmAnswer::no_answer);
        QCOMPARE(classify_slurm_answer({ "squeue: error: Socket timed out on send/recv operation\n", 1 }),
            SlurmAnswer::no_answer);
        QCOMPARE(classify_slurm_answer({ "", std::nullopt }), SlurmAnswer::no_answer);
        QCOMPARE(classify_slurm_answer({ kInvalidJob, 1 }), SlurmAnswer::job_unknown);
        QCOMPARE(classify_slurm_answer({ "", 0 }), SlurmAnswer::answered); // squeue -t all: nothing to list
        QCOMPARE(classify_slurm_answer({ "7|RUNNING|None|parallax-run:x\n", 0 }), SlurmAnswer::answered);
    }

    void sbatchErrorsThatPassAreRetried()
    {
        QVERIFY(sbatch_error_is_transient(
            "sbatch: error: Batch job submission failed: Unable to contact slurm controller (connect failure)", 1));
        QVERIFY(sbatch_error_is_transient(
            "sbatch: error: Batch job submission failed: Socket timed out on send/recv operation", 1));
        QVERIFY(sbatch_error_is_transient("", std::nullopt)); // killed: nobody said no
        QVERIFY(!sbatch_error_is_transient(
            "sbatch: error: Batch job submission failed: Invalid partition name specified", 1));
        QVERIFY(!sbatch_error_is_transient(
            "sbatch: error: Batch job submission failed: Invalid account or account/partition combination", 1));
    }

    // --- generated launch files ----------------------------------------------------------------------
    void hostileNamesStayInComments()
    {
        Scenario sc = load_scenario_file(
            PARALLAX_SOURCE_DIR "/tests/remote/data/tiny_probe_scenario.json", PresetCatalog::standard());
        const Scenario plain = sc;
        // Every way a TOML or YAML reader ends a comment line, or refuses a file, followed by a payload.
        const std::string payload = "converters = [\"float8\"]\nx: 1";
        const std::string hostile = "evil\n" + payload + "\r" + payload + "\x0b\x7f\xc2\x85" + payload + "\xe2\x80\xa8"
            + payload + "\xe2\x80\xa9" + payload;
        sc.model.name = hostile;
        LaunchSettings o;
        o.run_label = hostile;
        std::vector<std::string> notes;
        std::vector<std::string> plain_notes;
        LaunchSettings plain_o;
        plain_o.run_label = "plain";
        const QString toml = python_keys(torchtitan_toml(sc, o, "", notes), kTomlKeys);
        const QString plain_toml = python_keys(torchtitan_toml(plain, plain_o, "", plain_notes), kTomlKeys);
        // The same tables and [model] keys as for a plain name; the name survives, escaped, in the description.
        QCOMPARE(toml.section(QStringLiteral("] "), 0, 1), plain_toml.section(QStringLiteral("] "), 0, 1));
        QVERIFY2(toml.contains(QStringLiteral("converters = [\"float8\"]")), qPrintable(toml));
        const QString yaml = python_keys(nemo_yaml(sc, o, notes), kYamlKeys);
        QCOMPARE(yaml, python_keys(nemo_yaml(plain, plain_o, plain_notes), kYamlKeys));
    }

    // --- the direct launcher and secrets ---------------------------------------------------------------
    void workDirWithDashOrTildeWorks()
    {
        ClusterProfile p;
        p.work_dir = "-runs";
        QCOMPARE(run_folder(p, "r1"), std::string("./-runs/r1"));
        p.work_dir = "~/runs/";
        QCOMPARE(run_folder(p, "r1"), std::string("runs/r1"));
        p.work_dir = "~";
        QCOMPARE(run_folder(p, "r1"), std::string("./r1"));
        // The status command of a node, run by a real sh in a login folder holding "-runs/r1".
        QTemporaryDir home;
        QVERIFY(QDir(home.path()).mkpath(QStringLiteral("-runs/r1")));
        p.work_dir = "-runs";
        QProcess sh;
        sh.setWorkingDirectory(home.path());
        sh.start(QStringLiteral("/bin/sh"),
            { QStringLiteral("-c"), QString::fromStdString(direct_status_command(run_folder(p, "r1"), 0)) });
        sh.waitForFinished(10000);
        QCOMPARE(sh.readAllStandardOutput(), QByteArray("starting\n"));
    }

    void passphraseWipeClearsTheSharedBuffer()
    {
        QString typed = QString::fromLatin1("correct horse"); // on the heap, as a dialog's text
        QString handed_over = typed; // shares typed's buffer, as a queued signal's argument does
        const QChar* buffer = typed.constData();
        wipe_shared(handed_over);
        QVERIFY(handed_over.isEmpty());
        for (qsizetype i = 0; i < typed.size(); ++i)
            QCOMPARE(buffer[i], QChar(0));
    }

    // --- the run store ------------------------------------------------------------------------------
    void freshStoreOpenedByManyAtOnce()
    {
        // Every opener of a fresh file reads "schema 0"; only one may create the tables.
        constexpr int kRounds = 15;
        constexpr int kOpeners = 4;
        QTemporaryDir tmp;
        std::atomic<int> failures { 0 };
        std::string first_error;
        std::mutex error_mutex;
        for (int round = 0; round < kRounds; ++round) {
            const QString path = tmp.filePath(QStringLiteral("runs-%1.sqlite").arg(round));
            std::latch start(kOpeners);
            std::vector<std::thread> openers;
            for (int i = 0; i < kOpeners; ++i) {
                openers.emplace_back([&] {
                    start.arrive_and_wait();
                    try {
                        RunStore store(path);
                        store.list();
                    } catch (const std::exception& e) {
                        ++failures;
                        const std::lock_guard lock(error_mutex);
                        if (first_error.empty())
                            first_error = e.what();
                    }
                });
            }
            for (auto& t : openers)
                t.join();
        }
        QVERIFY2(failures == 0,
            qPrintable(QStringLiteral("%1 of %2 opens failed, first: %3")
                           .arg(failures.load())
                           .arg(kRounds * kOpeners)
                           .arg(QString::fromStdString(first_error))));
    }
};

QTEST_GUILESS_MAIN(TestRemoteRobustness)
#include "tst_remote_robustness.moc"

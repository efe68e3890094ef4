// Which finished runs `attach` opens again: a failed run whose job reached the launcher (it may have run on
// after an older version declared it gone), and nothing else. No network: reopening only changes the store.
#include "cluster/cluster_profile.hpp"
#include "runs/run_engine.hpp"
#include "ssh/ssh_interaction.hpp"
#include "store/run_store.hpp"

#include <QTemporaryDir>
#include <QTest>

using namespace parallax::remote;

namespace {

RunRecord stored_run(const std::string& id, RunState state, const std::string& job_id)
{
    ClusterProfile p;
    p.name = "c";
    p.host = "login";
    RunRecord r;
    r.id = id;
    r.framework = "probe";
    r.launcher = "slurm";
    r.cluster = p.name;
    r.profile_json = profile_to_json(p).dump();
    r.scenario_json = "{}";
    r.plan_json = "{}";
    r.remote_dir = "/scratch/" + id;
    r.job_id = job_id;
    r.state = state;
    r.detail = "SLURM job " + job_id + " vanished from squeue and scontrol; its final state is unknown";
    return r;
}

} // namespace

class TestRunReopen : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void onlyFailedRunsWithAJobReopen()
    {
        QTemporaryDir tmp;
        RunStore store(tmp.filePath(QStringLiteral("runs.sqlite")));
        ConnectionPool pool(std::make_shared<NonInteractive>());
        RunEngine engine(store, pool);
        store.create(stored_run("failed-job", RunState::failed, "42"));
        store.create(stored_run("refused", RunState::failed, "")); // sbatch refused it: nothing ran
        store.create(stored_run("done", RunState::completed, "43"));
        store.create(stored_run("stopped", RunState::cancelled, "44"));

        QVERIFY(engine.reopen("failed-job"));
        const RunRecord r = *store.get("failed-job");
        QCOMPARE(r.state, RunState::submitted);
        QVERIFY2(
            r.detail.find("attached again after it was marked failed (SLURM job 42 vanished") == 0, r.detail.c_str());
        QCOMPARE(store.transitions("failed-job").back().state, RunState::submitted);

        for (const char* id : { "refused", "done", "stopped", "no-such-run" }) {
            const auto before = store.get(id);
            QVERIFY2(!engine.reopen(id), id);
            const auto after = store.get(id);
            QCOMPARE(after.has_value(), before.has_value());
            if (after)
                QCOMPARE(after->state, before->state);
        }
    }
};

QTEST_GUILESS_MAIN(TestRunReopen)
#include "tst_run_reopen.moc"

// What the planner's mixed-cluster panels draw and edit, without widgets (core/viewdata): the stage rows
// from the hetero model, the layer and TP edits, the node-group edits with the rule each breaks and the
// group it concerns, and which GPUs of which group each replica holds.
#include "io/preset_catalog.hpp"
#include "io/scenario_io.hpp"
#include "viewdata/group_edits.hpp"
#include "viewdata/group_grid.hpp"
#include "viewdata/stage_rows.hpp"

#include <QTest>

#include <algorithm>

using namespace parallax;

namespace {

Scenario example()
{
    return load_scenario_file(PARALLAX_SOURCE_DIR "/docs/examples/hetero-h100-a100.json", PresetCatalog::standard());
}

} // namespace

class TestHeteroViewdata : public QObject {
    Q_OBJECT
private slots:
    void rowsCarryTheModelsNumbers();
    void layersMoveOnlyBetweenNeighbours();
    void groupEditsKeepReplicasAndSummary();
    void brokenRulesNameTheirGroup();
    void replicasHoldConsecutiveGpus();
};

void TestHeteroViewdata::rowsCarryTheModelsNumbers()
{
    const Scenario s = example();
    const HeteroPrediction h = predict_heterogeneous(s);
    const std::vector<StageRow> rows = stage_rows(s, h);
    QCOMPARE(rows.size(), std::size_t { 2 });
    QCOMPARE(rows[1].first_layer, 16);
    QCOMPARE(rows[1].last_layer(), 31);
    const StageRow& pacing = rows[static_cast<std::size_t>(h.critical_stage)];
    QVERIFY(pacing.critical);
    QCOMPARE(pacing.busy_share, 1.0);
    for (std::size_t k = 0; k < rows.size(); ++k) {
        QCOMPARE(rows[k].busy_s, h.stages[k].busy_s);
        double fullest = 0;
        for (const HeteroReplicaReport& r : h.stages[k].replicas)
            fullest = std::max(fullest, r.peak_memory_bytes);
        QCOMPARE(rows[k].memory_bytes, fullest);
        QVERIFY(rows[k].fits);
    }
    QVERIFY(stage_rows(load_scenario_preset("default", PresetCatalog::standard()), h).empty());
}

void TestHeteroViewdata::layersMoveOnlyBetweenNeighbours()
{
    Scenario s = example();
    const std::optional<Scenario> moved = move_stage_layers(s, 0, 1, 3);
    QVERIFY(moved);
    QCOMPARE(moved->stages[0].layers, 13);
    QCOMPARE(moved->stages[1].layers, 19);
    QVERIFY(!move_stage_layers(s, 0, 0));
    QVERIFY(!move_stage_layers(s, 0, 2));
    QVERIFY(!move_stage_layers(s, 1, 0, 16)); // stage 1 would keep no layer
    const std::optional<Scenario> tp = with_replica_tp(s, 0, 0, 2);
    QVERIFY(tp);
    QCOMPARE(tp->stages[0].replicas[0].tp, 2);
    QCOMPARE(tp->strategy.tp, 2); // strategy.tp repeats the first replica's
    QVERIFY(!with_replica_tp(s, 0, 5, 2));
    QCOMPARE(replica_tp_choices(s, "a100"), (std::vector<int> { 1, 2, 4, 8 }));
}

void TestHeteroViewdata::groupEditsKeepReplicasAndSummary()
{
    const Scenario s = example();
    const Scenario renamed = with_group_name(s, 1, "ampere");
    QCOMPARE(renamed.stages[0].replicas[1].group, std::string("ampere"));
    QVERIFY(!group_edit_error(renamed));
    const Scenario more = with_group_nodes(s, 0, 3);
    QCOMPARE(more.cluster.nodes, 4); // the summary counts every group's nodes
    QCOMPARE(more.cluster.total_gpus(), 32LL);
    const Scenario added = with_added_group(s);
    QCOMPARE(added.cluster.groups.size(), std::size_t { 3 });
    QCOMPARE(added.cluster.groups[2].name, std::string("group3"));
    QVERIFY(!group_edit_error(added));
    QVERIFY(without_group(added, 2));
    QVERIFY(!without_group(added, 0)); // replicas run on it
    const Scenario v100 = with_group_gpu(s, 1, "V100-SXM2-16GB");
    QCOMPARE(v100.cluster.groups[1].gpu.name, std::string("V100-SXM2-16GB"));
    QCOMPARE(v100.cluster.groups[1].gpu_ref, std::string("V100-SXM2-16GB"));
}

void TestHeteroViewdata::brokenRulesNameTheirGroup()
{
    const Scenario s = example();
    const std::optional<GroupEditError> dup = group_edit_error(with_group_name(s, 1, "h100"));
    QVERIFY(dup);
    QCOMPARE(dup->group, 1);
    QCOMPARE(dup->key, std::string("cluster.groups[1].name"));
    const std::optional<GroupEditError> few = group_edit_error(with_group_gpus_per_node(s, 1, 4));
    QVERIFY(few);
    QCOMPARE(few->group, 1); // 8 A100s in use, 4 left
    QVERIFY2(few->message.find("a100") != std::string::npos, few->message.c_str());
}

void TestHeteroViewdata::replicasHoldConsecutiveGpus()
{
    const GroupGrid g = group_grid(with_added_group(example()));
    QCOMPARE(g.types.size(), std::size_t { 2 }); // the new group repeats the A100
    QCOMPARE(g.types[0].gpu, std::string("H100-SXM5-80GB"));
    QCOMPARE(g.types[1].gpus, 16LL);
    QCOMPARE(g.types[1].used, 8LL);
    QCOMPARE(g.groups[2].type, 1);
    QCOMPARE(g.groups[1].nodes[0][3].stage, 0);
    QCOMPARE(g.groups[1].nodes[0][3].replica, 1);
    QCOMPARE(g.groups[1].nodes[0][4].stage, 1);
    QVERIFY(g.groups[2].nodes[0][0].idle());
}

QTEST_GUILESS_MAIN(TestHeteroViewdata)
#include "tst_hetero_viewdata.moc"

// The one notation of a plan (spec/strategy_label.hpp): what the label shows, and that a list of plans
// shows a hidden setting exactly when two plans would otherwise read the same.
#include "spec/strategy_label.hpp"

#include <QString>
#include <QTest>

#include <set>
#include <string>

using namespace parallax;

namespace {

QString q(const std::string& s)
{
    return QString::fromStdString(s);
}

// Llama 3 70B's default plan: TP 4 x PP 4 with 5 virtual stages x CP 2 x DP 2.
Strategy interleaved_plan()
{
    Strategy s;
    s.tp = 4;
    s.pp = 4;
    s.cp = 2;
    s.dp = 2;
    s.vpp = 5;
    s.schedule = Schedule::interleaved;
    s.zero = 1;
    s.recompute = Recompute::selective;
    s.sequence_parallel = true;
    return s;
}

} // namespace

class TestStrategyLabel : public QObject {
    Q_OBJECT
private slots:
    void degreesAsThePlannerWritesThem();
    void labelShowsWhatIsSet();
    void labelLeavesDefaultsOut();
    void hiddenSettingAppearsOnlyWhenItDistinguishes();
    void everyDifferentPlanGetsItsOwnLabel();
};

void TestStrategyLabel::degreesAsThePlannerWritesThem()
{
    QCOMPARE(q(strategy_degrees_label(interleaved_plan())), QStringLiteral("TP 4 × PP 4 × CP 2 × DP 2"));
}

void TestStrategyLabel::labelShowsWhatIsSet()
{
    Strategy s = interleaved_plan();
    s.ep = 2;
    s.offload_optimizer = true;
    s.optimizer = Optimizer::adam8bit;
    QCOMPARE(q(strategy_label(s)),
        QStringLiteral("TP 4 × PP 4 × CP 2 × DP 2, EP 2, VPP 5, mb 1, interleaved, ZeRO 1, selective recompute, SP, "
                       "optimizer offload, adam8bit"));
}

void TestStrategyLabel::labelLeavesDefaultsOut()
{
    Strategy s; // one GPU, 1F1B, nothing else set
    s.cp_kind = CpKind::all_to_all; // hidden settings stay hidden on their own
    s.expert_tp = 1;
    QCOMPARE(q(strategy_label(s)), QStringLiteral("TP 1 × PP 1 × CP 1 × DP 1, mb 1, 1f1b"));
}

void TestStrategyLabel::hiddenSettingAppearsOnlyWhenItDistinguishes()
{
    const Strategy ring = interleaved_plan();
    Strategy a2a = ring;
    a2a.cp_kind = CpKind::all_to_all;
    Strategy other = ring;
    other.micro_batch = 2; // already different: needs no hidden setting
    const std::vector<std::string> labels = distinguishing_labels({ ring, a2a, other });
    QCOMPARE(q(labels[0]), q(strategy_label(ring)) + QStringLiteral(", ring CP"));
    QCOMPARE(q(labels[1]), q(strategy_label(ring)) + QStringLiteral(", all-to-all CP"));
    QCOMPARE(q(labels[2]), q(strategy_label(other)));
    // Only the setting that differs is added, not every hidden one.
    QVERIFY(labels[0].find("expert TP") == std::string::npos);
    QVERIFY(labels[0].find("overlap") == std::string::npos);
}

void TestStrategyLabel::everyDifferentPlanGetsItsOwnLabel()
{
    // Plans that differ in one hidden setting each, and one pair that differs in two.
    const Strategy base = interleaved_plan();
    std::vector<Strategy> plans { base };
    auto add = [&](auto change) {
        Strategy s = base;
        change(s);
        plans.push_back(s);
    };
    add([](Strategy& s) { s.cp_kind = CpKind::all_to_all; });
    add([](Strategy& s) { s.expert_tp = 1; });
    add([](Strategy& s) { s.ep_overlap = true; });
    add([](Strategy& s) { s.tp_comm_overlap = true; });
    add([](Strategy& s) { s.overlap_grad_reduce = false; });
    add([](Strategy& s) { s.overlap_param_gather = false; });
    add([](Strategy& s) { s.first_stage_layers = 3; });
    add([](Strategy& s) {
        s.cp_kind = CpKind::all_to_all;
        s.last_stage_layers = 2;
    });
    const std::vector<std::string> labels = distinguishing_labels(plans);
    QCOMPARE(labels.size(), plans.size());
    const std::set<std::string> unique(labels.begin(), labels.end());
    QCOMPARE(unique.size(), plans.size());
    for (const std::string& l : labels)
        QVERIFY2(l.rfind(strategy_label(base), 0) == 0, l.c_str()); // the visible part is the same for all
}

QTEST_APPLESS_MAIN(TestStrategyLabel)
#include "tst_strategy_label.moc"

// Background work that throws must still end visibly: a QFuture continuation is skipped when its task
// throws (Qt 6.4), so each controller catches what its task throws and reports it. Here each one runs
// a task that throws std::bad_alloc (as a search or sweep of a huge space would), and must deliver an
// error, then work again. And work that outlives its controller (a window closed mid-sweep) delivers
// nothing to it.
#include "async/when_alive.hpp"
#include "gui/plan_evaluator.hpp"
#include "gui/scaling_controller.hpp"
#include "io/preset_catalog.hpp"
#include "io/scenario_io.hpp"

#include <QSemaphore>
#include <QSignalSpy>
#include <QTest>
#include <QThreadPool>
#include <QtConcurrent/QtConcurrentRun>

#include <atomic>

using namespace parallax;

namespace {

Scenario default_scenario()
{
    return load_scenario_preset("default", PresetCatalog::standard());
}

} // namespace

class TestBackgroundFailures : public QObject {
    Q_OBJECT
private slots:
    void evaluation_that_throws_is_delivered_as_an_error()
    {
        auto fail = std::make_shared<std::atomic<bool>>(true);
        app::PlanEvaluator evaluator(
            nullptr, [fail](const Scenario& s, const PlanEvaluationOptions& o, const CancelToken& c) -> PlanEvaluation {
                if (fail->load())
                    throw std::bad_alloc();
                return evaluate_plan(s, o, c);
            });
        QSignalSpy spy(&evaluator, &app::PlanEvaluator::evaluated);
        const quint64 id = evaluator.request(default_scenario(), PlanEvaluationOptions {});
        QTRY_COMPARE_WITH_TIMEOUT(spy.count(), 1, 10000);
        QCOMPARE(evaluator.delivered_request(), id);
        QVERIFY(evaluator.idle());
        const auto e = spy.at(0).at(0).value<std::shared_ptr<const PlanEvaluation>>();
        QVERIFY(e && !e->valid);
        QVERIFY(!e->violations.empty());
        QVERIFY2(e->violations.front().message.find("bad_alloc") != std::string::npos,
            e->violations.front().message.c_str());
        fail->store(false);
        evaluator.request(default_scenario(), PlanEvaluationOptions {});
        QTRY_COMPARE_WITH_TIMEOUT(spy.count(), 2, 30000);
        QVERIFY(spy.at(1).at(0).value<std::shared_ptr<const PlanEvaluation>>()->valid);
    }

    void sweep_that_throws_finishes_with_an_error_and_can_run_again()
    {
        auto calls = std::make_shared<std::atomic<int>>(0);
        app::ScalingController scaling(
            nullptr, [calls](const Scenario&, const std::vector<long long>& counts, const SweepOptions&) {
                if (calls->fetch_add(1) == 0)
                    throw std::bad_alloc();
                return std::vector<SweepPoint>(counts.size());
            });
        QSignalSpy done(&scaling, &app::ScalingController::finished);
        QVERIFY(scaling.start(default_scenario()) > 0);
        QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, 10000);
        QVERIFY(!scaling.running());
        const auto failed = done.at(0).at(0).value<app::ScalingSweepResult>();
        QVERIFY2(failed.error.contains(QStringLiteral("bad_alloc")), qPrintable(failed.error));
        QVERIFY(failed.points.empty());
        QVERIFY(scaling.start(default_scenario()) > 0); // not stuck "running"
        QTRY_COMPARE_WITH_TIMEOUT(done.count(), 2, 10000);
        QVERIFY(done.at(1).at(0).value<app::ScalingSweepResult>().error.isEmpty());
    }

    // when_alive: the result reaches a living receiver on the GUI thread, and none once it is gone, even
    // when the receiver goes while the work still runs.
    void a_result_reaches_only_a_living_receiver()
    {
        QSemaphore release;
        int delivered = -1;
        auto* receiver = new QObject;
        QFuture<int> work = QtConcurrent::run([&release] {
            release.acquire();
            return 7;
        });
        QFuture<void> gone = work.then(qApp, views::when_alive(receiver, [&delivered](int v) { delivered = v; }));
        delete receiver; // closed while its work runs
        release.release();
        work.waitForFinished(); // not `gone`: its continuation needs this thread's event loop
        QTRY_VERIFY_WITH_TIMEOUT(gone.isFinished(), 10000);
        QCOMPARE(delivered, -1);

        QObject alive;
        QFuture<void> kept
            = QtConcurrent::run([] { return 11; }).then(qApp, views::when_alive(&alive, [&delivered, &alive](int v) {
                  QCOMPARE(QThread::currentThread(), alive.thread()); // on the GUI thread
                  delivered = v;
              }));
        QTRY_COMPARE_WITH_TIMEOUT(delivered, 11, 10000);
        QVERIFY(kept.isFinished());
    }

    // A controller destroyed while its sweep runs on the global pool: the sweep ends later and nothing is
    // delivered to the dead object (before, its continuation could be posted to it and crash the GUI).
    void a_sweep_that_outlives_its_controller_delivers_nothing()
    {
        auto started = std::make_shared<QSemaphore>();
        auto release = std::make_shared<QSemaphore>();
        auto finished_sweeps = std::make_shared<std::atomic<int>>(0);
        {
            app::ScalingController scaling(nullptr,
                [started, release, finished_sweeps](
                    const Scenario&, const std::vector<long long>& counts, const SweepOptions&) {
                    started->release();
                    release->acquire();
                    finished_sweeps->fetch_add(1);
                    return std::vector<SweepPoint>(counts.size());
                });
            QVERIFY(scaling.start(default_scenario()) > 0);
            QVERIFY(started->tryAcquire(1, 10000));
        } // the window closes mid-sweep
        release->release();
        QVERIFY(QThreadPool::globalInstance()->waitForDone(10000));
        QTest::qWait(50);
        QCOMPARE(finished_sweeps->load(), 1);
    }
};

QTEST_MAIN(TestBackgroundFailures)
#include "tst_background_failures.moc"

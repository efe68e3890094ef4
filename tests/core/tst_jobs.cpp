// The one way background work is cancelled: a CancelToken shared between the asker and the worker,
// and LatestRequest, whose newer tickets make older ones stale. Checked with real threads: a worker
// polling its token stops once a newer request starts, and only the latest result is kept.
#include "jobs/cancel_token.hpp"
#include "jobs/latest_request.hpp"
#include "jobs/task_outcome.hpp"

#include <QTest>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

using namespace parallax;

class TestJobs : public QObject {
    Q_OBJECT
private slots:
    // A background task's exception becomes its outcome: a continuation never misses it.
    void run_catching_keeps_value_error_and_cancellation()
    {
        const TaskOutcome<int> ok = run_catching([] { return 42; });
        QVERIFY(ok.value && *ok.value == 42 && ok.error.empty() && !ok.cancelled);
        const TaskOutcome<int> bad = run_catching([]() -> int { throw std::bad_alloc(); });
        QVERIFY(!bad.value && !bad.cancelled);
        QVERIFY2(bad.error.find("bad_alloc") != std::string::npos, bad.error.c_str());
        const TaskOutcome<int> odd = run_catching([]() -> int { throw 7; });
        QVERIFY(!odd.value && !odd.error.empty());
        const CancelToken token;
        token.cancel();
        const TaskOutcome<int> stopped = run_catching([&] {
            throw_if_cancelled(token);
            return 1;
        });
        QVERIFY(!stopped.value && stopped.cancelled && stopped.error.empty());
    }
    void copies_share_one_state()
    {
        const CancelToken a;
        const CancelToken b = a;
        QVERIFY(!a.cancelled() && !b.cancelled());
        b.cancel();
        QVERIFY(a.cancelled());
        a.reset();
        QVERIFY(!b.cancelled());
        const CancelToken other;
        a.cancel();
        QVERIFY(!other.cancelled());
    }

    void newer_ticket_makes_older_stale()
    {
        LatestRequest latest;
        const auto first = latest.next();
        QVERIFY(!first.token.cancelled());
        QVERIFY(latest.is_latest(first.id));
        const auto second = latest.next();
        QVERIFY(first.token.cancelled());
        QVERIFY(!second.token.cancelled());
        QVERIFY(!latest.is_latest(first.id));
        QVERIFY(latest.is_latest(second.id));
        QCOMPARE(latest.latest(), second.id);
        second.token.cancel(); // an explicit cancel works on a ticket's token too
        QVERIFY(second.token.cancelled());
        QVERIFY(latest.is_latest(second.id));
        latest.cancel_all();
        QVERIFY(!latest.is_latest(second.id));
    }

    void token_outlives_its_source()
    {
        CancelToken kept;
        {
            LatestRequest latest;
            kept = latest.next().token;
            QVERIFY(!kept.cancelled());
        }
        QVERIFY(!kept.cancelled());
    }

    void stale_worker_stops_and_only_latest_result_is_kept()
    {
        LatestRequest latest;
        std::atomic<int> delivered_id { 0 };
        std::atomic<int> stopped_early { 0 };
        std::vector<std::thread> workers;
        constexpr int requests = 8;
        for (int r = 1; r <= requests; ++r) {
            const auto ticket = latest.next();
            workers.emplace_back([ticket, r, &latest, &delivered_id, &stopped_early] {
                for (int step = 0; step < 2000; ++step) {
                    if (ticket.token.cancelled()) {
                        stopped_early.fetch_add(1);
                        return;
                    }
                    std::this_thread::sleep_for(std::chrono::microseconds(200));
                }
                if (latest.is_latest(ticket.id))
                    delivered_id.store(r);
            });
        }
        for (auto& w : workers)
            w.join();
        QCOMPARE(delivered_id.load(), requests);
        QCOMPARE(stopped_early.load(), requests - 1);
    }
};

QTEST_GUILESS_MAIN(TestJobs)
#include "tst_jobs.moc"

#include "gui/plan_evaluator.hpp"

#include <QtConcurrent/QtConcurrentRun>

namespace parallax::app {

PlanEvaluator::PlanEvaluator(QObject* parent)
    : QObject(parent)
{
    // Two workers: one may still be finishing a stale evaluation (it stops at its next check)
    // while the latest one starts.
    m_pool.setMaxThreadCount(2);
}

PlanEvaluator::~PlanEvaluator()
{
    m_latest->fetch_add(1); // everything running is stale now
    m_pool.waitForDone();
}

quint64 PlanEvaluator::request(const Scenario& s, const PlanEvaluationOptions& o)
{
    const quint64 id = m_latest->fetch_add(1) + 1;
    auto latest = m_latest;
    QtConcurrent::run(&m_pool, [s, o, id, latest]() -> std::shared_ptr<const PlanEvaluation> {
        if (latest->load() != id)
            return nullptr; // a newer request came in before this one started
        auto e = std::make_shared<PlanEvaluation>(evaluate_plan(s, o, [&] { return latest->load() != id; }));
        return e;
    }).then(this, [this, id](std::shared_ptr<const PlanEvaluation> e) {
        if (!e || e->cancelled || id != m_latest->load())
            return;
        m_delivered = id;
        emit evaluated(std::move(e));
    });
    return id;
}

} // namespace parallax::app

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
    m_latest.cancel_all(); // everything running is stale now
    m_pool.waitForDone();
}

quint64 PlanEvaluator::request(const Scenario& s, const PlanEvaluationOptions& o)
{
    const LatestRequest::Ticket ticket = m_latest.next();
    const quint64 id = ticket.id;
    QtConcurrent::run(&m_pool, [s, o, token = ticket.token]() -> std::shared_ptr<const PlanEvaluation> {
        if (token.cancelled())
            return nullptr; // a newer request came in before this one started
        return std::make_shared<PlanEvaluation>(evaluate_plan(s, o, token));
    }).then(this, [this, id](std::shared_ptr<const PlanEvaluation> e) {
        if (!e || e->cancelled || !m_latest.is_latest(id))
            return;
        m_delivered = id;
        emit evaluated(std::move(e));
    });
    return id;
}

} // namespace parallax::app

#include "gui/plan_evaluator.hpp"

#include "jobs/task_outcome.hpp"

#include <QtConcurrent/QtConcurrentRun>

namespace parallax::app {

namespace {

// What the planner shows when the evaluation itself failed: an invalid plan that says why.
PlanEvaluation failed_evaluation(const Scenario& s, const PlanEvaluationOptions& o, const std::string& error)
{
    PlanEvaluation e;
    e.scenario = s;
    e.options = o;
    e.valid = false;
    e.violations.push_back(RuleViolation { Rule::ok, "", "the evaluation failed: " + error });
    return e;
}

} // namespace

PlanEvaluator::PlanEvaluator(QObject* parent, Evaluate evaluate)
    : QObject(parent)
    , m_evaluate(evaluate ? std::move(evaluate) : Evaluate(&evaluate_plan))
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
    QtConcurrent::run(&m_pool,
        [s, o, evaluate = m_evaluate, token = ticket.token]() -> std::shared_ptr<const PlanEvaluation> {
            if (token.cancelled())
                return nullptr; // a newer request came in before this one started
            TaskOutcome<PlanEvaluation> outcome = run_catching([&] { return evaluate(s, o, token); });
            if (outcome.value)
                return std::make_shared<PlanEvaluation>(std::move(*outcome.value));
            if (outcome.cancelled)
                return nullptr;
            return std::make_shared<PlanEvaluation>(failed_evaluation(s, o, outcome.error));
        })
        .then(this, [this, id](std::shared_ptr<const PlanEvaluation> e) {
            if (!e || e->cancelled || !m_latest.is_latest(id))
                return;
            m_delivered = id;
            emit evaluated(std::move(e));
        });
    return id;
}

} // namespace parallax::app

#pragma once
// Evaluation off the GUI thread with "latest request wins" (STYLE.md, jobs/latest_request.hpp): every
// request takes a ticket; a running evaluation polls its token and stops early once it is stale;
// results arrive on the GUI thread (QFuture::then with this object as context, so a destroyed
// receiver gets nothing) and stale ones are dropped. The result is one immutable value.
#include "jobs/latest_request.hpp"
#include "viewdata/plan_evaluation.hpp"

#include <QObject>
#include <QThreadPool>

#include <atomic>
#include <functional>
#include <memory>

namespace parallax::app {

class PlanEvaluator : public QObject {
    Q_OBJECT
public:
    using Evaluate = std::function<PlanEvaluation(const Scenario&, const PlanEvaluationOptions&, const CancelToken&)>;
    // `evaluate` is evaluate_plan except in tests. An evaluation that throws is delivered as an invalid
    // plan whose violation says what went wrong, never dropped.
    explicit PlanEvaluator(QObject* parent = nullptr, Evaluate evaluate = {});
    ~PlanEvaluator() override;

    // Returns the request id; only the evaluation of the latest id is ever delivered.
    quint64 request(const Scenario& s, const PlanEvaluationOptions& o);
    quint64 latest_request() const { return m_latest.latest(); }
    quint64 delivered_request() const { return m_delivered; }
    bool idle() const { return m_delivered == m_latest.latest(); }

signals:
    void evaluated(std::shared_ptr<const parallax::PlanEvaluation> e);

private:
    Evaluate m_evaluate;
    QThreadPool m_pool;
    LatestRequest m_latest;
    quint64 m_delivered = 0;
};

} // namespace parallax::app

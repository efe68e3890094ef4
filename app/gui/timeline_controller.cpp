#include "gui/timeline_controller.hpp"

#include "async/when_alive.hpp"
#include "jobs/task_outcome.hpp"
#include "sim/hetero_simulation.hpp"
#include "sim/simulated_model.hpp"

#include <QtConcurrent/QtConcurrentRun>

namespace parallax::app {

TimelineController::TimelineController(QObject* parent)
    : QObject(parent)
{
}

TimelineController::~TimelineController()
{
    cancel_all();
}

void TimelineController::request(const Scenario& s, std::shared_ptr<const Calibration> calibration)
{
    const LatestRequest::Ticket ticket = m_latest.next();
    const std::uint64_t id = ticket.id;
    QtConcurrent::run([s, calibration, token = ticket.token] {
        return run_catching([&]() -> std::shared_ptr<const TimelineData> {
            if (token.cancelled())
                return nullptr; // a newer request came in before this one started
            const Calibration& cal = calibration ? *calibration : builtin_calibration();
            if (s.heterogeneous()) { // every stage on its own GPU type
                const HeteroModel model(s, cal);
                auto sim = std::make_shared<const SimulatedPlan>(simulate_heterogeneous(model, &token));
                throw_if_cancelled(token);
                return build_timeline_data(sim, hetero_prediction_from_simulation(model, *sim), timeline_plan_info(s));
            }
            const PlanContext ctx(s.model, s.training, s.cluster, cal);
            // Simulated on every edit: a stale simulation stops at its next check (Cancelled).
            auto sim = std::make_shared<const SimulatedPlan>(simulate_plan(ctx, s.strategy, &token));
            throw_if_cancelled(token);
            const Prediction p = prediction_from_simulation(ctx, s.strategy, *sim);
            return build_timeline_data(sim, p, timeline_plan_info(s));
        });
    }).then(qApp, views::when_alive(this, [this, id](const TaskOutcome<std::shared_ptr<const TimelineData>>& outcome) {
        if (!m_latest.is_latest(id))
            return;
        if (!outcome.error.empty())
            emit timeline_failed(QString::fromStdString(outcome.error));
        else if (outcome.value && *outcome.value)
            emit timeline_ready(*outcome.value);
    }));
}

} // namespace parallax::app

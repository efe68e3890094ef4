#include "gui/calibration_controller.hpp"

#include "jobs/task_outcome.hpp"
#include "runs/run_catalog.hpp"
#include "spec/input_error.hpp"

#include <QDateTime>
#include <QtConcurrent/QtConcurrentRun>

namespace parallax::app {

namespace {

std::shared_ptr<const remote::StoreFit> fit_runs(const QString& path, const std::vector<std::string>& ids)
{
    auto out = std::make_shared<remote::StoreFit>();
    if (!remote::RunCatalog::store_exists(path)) {
        out->error = "no run store at " + path.toStdString();
        return out;
    }
    const std::string now = QDateTime::currentDateTimeUtc().toString(Qt::ISODate).toStdString();
    try {
        const remote::RunCatalog catalog(path);
        *out = remote::fit_selected_runs(catalog, ids, path.toStdString(), now);
    } catch (const remote::StoreError& e) {
        out->error = std::string("the run store cannot be read: ") + e.what();
    } catch (const InputError& e) {
        out->error = e.what();
    }
    return out;
}

} // namespace

CalibrationController::CalibrationController(QObject* parent)
    : QObject(parent)
{
    m_pool.setMaxThreadCount(1); // one fit at a time; a newer request's result replaces an older one's
}

CalibrationController::~CalibrationController()
{
    m_latest.cancel_all();
    m_pool.waitForDone();
}

void CalibrationController::fit(const QString& store_path, const QStringList& run_ids)
{
    const LatestRequest::Ticket ticket = m_latest.next();
    std::vector<std::string> ids;
    for (const QString& id : run_ids)
        ids.push_back(id.toStdString());
    ++m_running;
    QtConcurrent::run(&m_pool, [store_path, ids, token = ticket.token]() -> std::shared_ptr<const remote::StoreFit> {
        if (token.cancelled())
            return nullptr; // a newer request came in before this one started
        TaskOutcome<std::shared_ptr<const remote::StoreFit>> outcome
            = run_catching([&] { return fit_runs(store_path, ids); });
        if (outcome.value)
            return *outcome.value;
        auto failed = std::make_shared<remote::StoreFit>(); // a throw is reported as the fit's error
        failed->error = outcome.error.empty() ? std::string("cancelled") : "the fit failed: " + outcome.error;
        return std::shared_ptr<const remote::StoreFit>(std::move(failed));
    }).then(this, [this, id = ticket.id](std::shared_ptr<const remote::StoreFit> fit) {
        --m_running;
        if (fit && m_latest.is_latest(id))
            emit fitted(std::move(fit));
    });
}

} // namespace parallax::app

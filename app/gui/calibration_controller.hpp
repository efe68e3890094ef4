#pragma once
// "Calibrate from these runs" off the GUI thread: the run store is read and the calibration fitted on a
// worker (remote/runs/store_calibration.hpp, its own RunCatalog connection), and the result comes back on
// the GUI thread as one value. The latest request wins (jobs/latest_request.hpp): a fit asked for while
// another runs makes the older one's result stale.
#include "jobs/latest_request.hpp"
#include "runs/store_calibration.hpp"

#include <QObject>
#include <QStringList>
#include <QThreadPool>

#include <memory>

namespace parallax::app {

class CalibrationController : public QObject {
    Q_OBJECT
public:
    explicit CalibrationController(QObject* parent = nullptr);
    ~CalibrationController() override; // waits for a running fit, whose result is then dropped

    // Fits the runs of `run_ids` in the store at `store_path` (one run: every run of its cluster).
    void fit(const QString& store_path, const QStringList& run_ids);
    bool running() const { return m_running > 0; }

signals:
    void fitted(std::shared_ptr<const parallax::remote::StoreFit> fit);

private:
    QThreadPool m_pool;
    LatestRequest m_latest;
    int m_running = 0;
};

} // namespace parallax::app

#pragma once
// The timeline's simulation off the GUI thread: the event simulator runs the plan and the result is
// turned into a TimelineData value. The latest request wins (jobs/latest_request.hpp): a newer
// request makes an older one stop at its next checkpoint, and only the latest result is delivered,
// on the GUI thread (QFuture::then with this object as context, so a destroyed controller gets
// nothing).
#include "calibration/calibration.hpp"
#include "jobs/latest_request.hpp"
#include "spec/scenario.hpp"
#include "viewdata/timeline_data.hpp"

#include <QObject>

#include <memory>

namespace parallax::app {

class TimelineController : public QObject {
    Q_OBJECT
public:
    explicit TimelineController(QObject* parent = nullptr);
    ~TimelineController() override; // whatever still runs is stale

    // Simulates the plan of `s` with `calibration` (null: the shipped one); timeline_ready follows unless a
    // newer request (or cancel_all) comes first.
    void request(const Scenario& s, std::shared_ptr<const Calibration> calibration = nullptr);
    // Makes every pending simulation stale.
    void cancel_all() { m_latest.cancel_all(); }

signals:
    void timeline_ready(std::shared_ptr<const parallax::TimelineData> data);
    // The latest simulation threw (what it said); never silently dropped.
    void timeline_failed(const QString& error);

private:
    LatestRequest m_latest;
};

} // namespace parallax::app

#pragma once
// The scaling sweep off the GUI thread: the best plan (a full strategy search) at each GPU count
// from 1/8 to 4x the cluster, in whole nodes. One sweep at a time; cancel() stops it at the search's
// next checkpoint (jobs/cancel_token.hpp) and it reports what it has. Progress and the result arrive
// on the GUI thread as values.
#include "calibration/calibration.hpp"
#include "jobs/cancel_token.hpp"
#include "plots/scaling_plot.hpp"
#include "search/sweep.hpp"
#include "spec/scenario.hpp"

#include <QObject>

#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace parallax::app {

struct ScalingSweepResult {
    std::vector<views::ScalingPoint> points; // one per GPU count, ascending
    long long cluster_gpus = 0; // the scenario's own cluster, for the plot's marker
    bool stopped = false; // cancelled: the points are what was found before
    QString error; // the sweep failed (what it threw); the points are empty
};

// The GPU counts swept for a scenario: n/8, n/4, .. 4n of its n GPUs, each a whole number of nodes.
std::vector<long long> scaling_gpu_counts(const Scenario& s);

class ScalingController : public QObject {
    Q_OBJECT
public:
    using Sweep
        = std::function<std::vector<SweepPoint>(const Scenario&, const std::vector<long long>&, const SweepOptions&)>;
    // `sweep` is sweep_gpus except in tests. A sweep that throws finishes with `error` set, so the
    // controller is free for the next one.
    explicit ScalingController(QObject* parent = nullptr, Sweep sweep = {});
    ~ScalingController() override; // a running sweep stops at its next check

    // Starts a sweep of `s` and returns how many GPU counts it covers; while one runs, nothing starts
    // and it returns 0.
    // Every search evaluates with `calibration` (null: the shipped one).
    std::size_t start(const Scenario& s, std::shared_ptr<const Calibration> calibration = nullptr);
    void cancel();
    bool running() const { return m_cancel.has_value(); }

signals:
    void progress(double fraction); // 0..1
    void finished(const parallax::app::ScalingSweepResult& result);

private:
    Sweep m_sweep;
    std::optional<CancelToken> m_cancel; // set while a sweep runs
};

} // namespace parallax::app

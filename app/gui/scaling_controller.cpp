#include "gui/scaling_controller.hpp"

#include "async/when_alive.hpp"
#include "jobs/task_outcome.hpp"
#include "search/sweep.hpp"

#include <QCoreApplication>
#include <QPointer>
#include <QStringList>
#include <QtConcurrent/QtConcurrentRun>

namespace parallax::app {

namespace {

views::ScalingPoint scaling_point(const SweepPoint& p)
{
    views::ScalingPoint q;
    q.gpus = p.gpus;
    q.has_plan = p.has_best;
    q.tokens_per_s = p.tokens_per_s;
    q.scaling_efficiency = p.scaling_efficiency;
    q.marginal_efficiency = p.marginal_efficiency;
    q.family = QString::fromStdString(p.family);
    QStringList notes;
    for (const std::string& note : p.notes)
        notes << QString::fromStdString(note);
    q.notes = notes.join(QStringLiteral("; "));
    if (p.has_best && !p.search.results.empty()) {
        q.strategy = p.search.results.front().strategy;
        const PredictionInterval& band = p.search.results.front().prediction.interval;
        if (band.level > 0) {
            q.band_level = band.level;
            q.tokens_per_s_low = band.tokens_per_s_low;
            q.tokens_per_s_high = band.tokens_per_s_high;
        }
    }
    return q;
}

} // namespace

std::vector<long long> scaling_gpu_counts(const Scenario& s)
{
    const long long gpn = s.cluster.gpus_per_node;
    const long long n = s.cluster.total_gpus();
    std::vector<long long> counts;
    for (long long eighths : { 1LL, 2LL, 4LL, 8LL, 16LL, 32LL }) {
        const long long g = n * eighths / 8;
        if (g >= gpn && g % gpn == 0 && (counts.empty() || counts.back() != g))
            counts.push_back(g);
    }
    return counts;
}

ScalingController::ScalingController(QObject* parent, Sweep sweep)
    : QObject(parent)
    , m_sweep(sweep ? std::move(sweep) : Sweep(&sweep_gpus))
{
}

ScalingController::~ScalingController()
{
    cancel();
}

std::size_t ScalingController::start(const Scenario& s, std::shared_ptr<const Calibration> calibration)
{
    if (running())
        return 0;
    const std::vector<long long> counts = scaling_gpu_counts(s);
    const long long cluster_gpus = s.cluster.total_gpus();
    m_cancel = CancelToken {};
    const CancelToken cancel = *m_cancel;
    const QPointer<ScalingController> self(this);
    QtConcurrent::run([s, counts, cancel, self, calibration, sweep = m_sweep]() {
        SweepOptions o;
        o.search.cancel = cancel;
        o.search.calibration = calibration.get(); // alive as long as this lambda
        o.search.top = 1;
        // Called on the worker: the GUI thread looks at `self` before it emits.
        o.search.progress = [self](double f) {
            QMetaObject::invokeMethod(
                qApp,
                [self, f] {
                    if (self)
                        emit self->progress(f);
                },
                Qt::QueuedConnection);
        };
        return run_catching([&] { return sweep(s, counts, o); });
    })
        .then(qApp,
            views::when_alive(this, [this, cluster_gpus, cancel](const TaskOutcome<std::vector<SweepPoint>>& outcome) {
                ScalingSweepResult result;
                if (outcome.value)
                    for (const SweepPoint& p : *outcome.value)
                        result.points.push_back(scaling_point(p));
                result.error = QString::fromStdString(outcome.error);
                result.cluster_gpus = cluster_gpus;
                result.stopped = cancel.cancelled();
                m_cancel.reset();
                emit finished(result);
            }));
    return counts.size();
}

void ScalingController::cancel()
{
    if (m_cancel)
        m_cancel->cancel();
}

} // namespace parallax::app

#include "gui/core_search_engine.hpp"

#include "gui/hetero_search_report.hpp"

#include "search/search.hpp"
#include "spec/framework_support.hpp"
#include "spec/input_error.hpp"

#include <cmath>

namespace parallax::app {

namespace {

QString qs(const std::string& s)
{
    return QString::fromStdString(s);
}

SearchObjective objective_of(const Scenario& s)
{
    if (s.search && s.search->objective == "time_to_train")
        return SearchObjective::time_to_train;
    if (s.search && s.search->objective == "energy")
        return SearchObjective::energy;
    return SearchObjective::throughput;
}

} // namespace

void CoreSearchEngine::set_calibration(std::shared_ptr<const Calibration> c)
{
    const std::lock_guard<std::mutex> lock(m_mutex);
    m_calibration = std::move(c);
}

std::shared_ptr<const Calibration> CoreSearchEngine::calibration() const
{
    const std::lock_guard<std::mutex> lock(m_mutex);
    return m_calibration;
}

views::SearchReport CoreSearchEngine::run(const Scenario& s, int top, bool any_framework,
    const std::function<void(double)>& progress, const CancelToken& cancel)
{
    if (s.cluster.heterogeneous()) { // node groups: stages, replicas and layers per stage are searched
        const std::shared_ptr<const Calibration> calibration = this->calibration();
        return hetero_search_report(s, top, calibration.get(), progress, cancel);
    }
    views::SearchReport report;
    SearchOptions o;
    o.top = top;
    o.any_framework = any_framework;
    o.objective = objective_of(s);
    if (s.search)
        o.min_memory_headroom_fraction = s.search->min_memory_headroom_fraction;
    o.cancel = cancel;
    o.progress = progress;
    const std::shared_ptr<const Calibration> calibration = this->calibration(); // alive for the whole search
    o.calibration = calibration.get();
    try {
        o.fix = search_fix_from(s);
        const SearchOutcome out = search_strategies(s, o);
        report.evaluated = out.evaluated;
        report.feasible = out.feasible;
        report.seconds = out.seconds;
        report.cancelled = out.cancelled || cancel.cancelled();
        report.scope = any_framework
            ? QStringLiteral("plans of every framework")
            : QStringLiteral("plans %1 runs").arg(QString::fromUtf8(to_string(s.training.framework)));
        for (const std::string& n : out.notes)
            report.notes.push_back(qs(n));
        for (const SearchResult& r : out.results) {
            views::SearchRow row;
            row.strategy = r.strategy;
            row.prediction = r.prediction;
            row.objective = r.objective;
            row.limiter = qs(r.limiter);
            QString why = QStringLiteral("limited by ") + qs(r.limiter);
            if (r.runner_up)
                why += QStringLiteral("; next best changes %1 (%2% slower): %3")
                           .arg(qs(r.runner_up->dimension), QString::number(r.runner_up->slower_fraction * 100, 'f', 1),
                               qs(r.runner_up->because));
            row.indistinguishable_from_best = r.indistinguishable_from_best;
            row.frameworks = qs(frameworks_label(r.frameworks));
            if (r.indistinguishable_from_best)
                why = QStringLiteral("not distinguishable from #1 (their %1% error bands overlap); ")
                          .arg(std::lround(100 * r.prediction.interval.level))
                    + why;
            if (r.nearest_run)
                why += QStringLiteral("; nearest measured run: ") + qs(measured_run_match_text(*r.nearest_run));
            row.explanation = why;
            report.rows.push_back(std::move(row));
        }
    } catch (const InputError& e) {
        report.error = QString::fromStdString(e.what());
    }
    return report;
}

} // namespace parallax::app

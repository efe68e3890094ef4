#pragma once
// The search panel's engine: core's strategy search (search.hpp; on a mixed cluster the heterogeneous
// search, hetero_search_report.hpp) behind the small interface the
// panel is written against (views/search_engine.hpp), and the scaling sweep behind the scaling plot.
#include "calibration/calibration.hpp"
#include "planner/search_engine.hpp"

#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace parallax::app {

class CoreSearchEngine : public views::SearchEngine {
public:
    QString name() const override { return QStringLiteral("core search (analytic ranking, simulator refinement)"); }
    views::SearchReport run(const Scenario& s, int top, bool any_framework, const std::function<void(double)>& progress,
        const CancelToken& cancel) override;
    // The calibration the next searches evaluate with (null: the shipped one). Set on the GUI thread while
    // a search may be running on a worker, hence the lock; a running search keeps the one it started with.
    void set_calibration(std::shared_ptr<const Calibration> c);

private:
    std::shared_ptr<const Calibration> calibration() const;
    mutable std::mutex m_mutex;
    std::shared_ptr<const Calibration> m_calibration;
};

} // namespace parallax::app

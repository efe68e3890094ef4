#pragma once
// The search panel's engine: core's strategy search (search.hpp) behind the small interface the
// panel is written against (views/search_engine.hpp), and the scaling sweep behind the scaling plot.
#include "planner/search_engine.hpp"

#include <functional>
#include <vector>

namespace parallax::app {

class CoreSearchEngine : public views::SearchEngine {
public:
    QString name() const override { return QStringLiteral("core search (analytic ranking, simulator refinement)"); }
    views::SearchReport run(
        const Scenario& s, int top, const std::function<void(double)>& progress, const CancelToken& cancel) override;
};

} // namespace parallax::app

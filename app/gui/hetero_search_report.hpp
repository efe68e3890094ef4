#pragma once
// The search panel's rows for a mixed cluster (cluster.groups): core's heterogeneous search
// (search/hetero_search.hpp) as SearchReport rows, each with its stages, its numbers, the stage that
// paces it, the frameworks whose exported files run it, and the best plan's what-ifs.
#include "calibration/calibration.hpp"
#include "planner/search_engine.hpp"

#include <functional>

namespace parallax::app {

views::SearchReport hetero_search_report(const Scenario& s, int top, const Calibration* calibration,
    const std::function<void(double)>& progress, const CancelToken& cancel);

} // namespace parallax::app

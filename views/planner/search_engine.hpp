#pragma once
// What the search panel needs from a search: a small interface, so the panel does not depend on how
// (or whether) the search is built. Implementations run on a worker thread.
#include "jobs/cancel_token.hpp"
#include "spec/prediction.hpp"
#include "spec/scenario.hpp"

#include <QString>
#include <QStringList>

#include <functional>
#include <vector>

namespace parallax::views {

struct SearchRow {
    Strategy strategy;
    Prediction prediction;
    double objective = 0; // larger is better
    QString limiter; // "bubble-bound", "network-bound (TP)", ...
    QString explanation; // why it ranks where it does
    bool indistinguishable_from_best = false; // its error band overlaps the best row's
    QString frameworks; // the frameworks that can run it: "megatron, torchtitan" (framework_support.hpp)
    // A plan for a mixed cluster (cluster.groups): its pipeline stages, which applying it sets as
    // strategy.stages, and them in words ("22 L h100 TP8 | 10 L a100 TP8"). Empty for a plain plan.
    std::vector<PipelineStageSpec> stages;
    QString plan;
};

struct SearchReport {
    long long evaluated = 0;
    long long feasible = 0;
    double seconds = 0;
    bool cancelled = false;
    QString error; // bad input: said, never thrown across threads
    QString scope; // whose plans were searched: "plans megatron runs" or "plans of every framework"
    QStringList notes; // what the framework cannot run of the scenario, why nothing was found
    std::vector<SearchRow> rows; // best first
};

class SearchEngine {
public:
    virtual ~SearchEngine() = default;
    virtual QString name() const = 0;
    // `progress` takes 0..1 and may be called from any thread; the search stops early (and says so
    // in SearchReport::cancelled) once `cancel` reads cancelled. `any_framework`: every framework's plans,
    // not only what the scenario's training.framework runs.
    virtual SearchReport run(const Scenario& s, int top, bool any_framework,
        const std::function<void(double)>& progress, const CancelToken& cancel)
        = 0;
};

} // namespace parallax::views

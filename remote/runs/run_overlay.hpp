#pragma once
// What the planner draws of one stored run over the predictions: the metrics of compare_run (median of the
// steady-state steps as the marker, their min..max as the error bar, the prediction of what actually ran and
// the relative error) and, where the log reports memory per rank (Megatron's `[Rank R] ... memory (MB)`), the
// measured memory of each pipeline stage next to the stage's prediction. A value to hand to the GUI thread in
// one piece: building it reads the store and parses the log, so it is made off the GUI thread.
#include "runs/run_report.hpp"
#include "store/run_record.hpp"

#include <optional>
#include <string>
#include <vector>

namespace parallax::remote {

class RunStore;

struct StageMemoryComparison {
    int stage = 0;
    std::optional<double> predicted_GiB; // the prediction's stage total (same source as the metrics)
    std::optional<double> measured_GiB; // largest max-reserved (else max-allocated) of the stage's ranks
    std::optional<double> low_GiB; // smallest of the stage's reports
    std::optional<double> high_GiB; // largest (== measured)
    int reports = 0;
    std::optional<double> error() const
    {
        if (!measured_GiB || !predicted_GiB || *predicted_GiB == 0)
            return std::nullopt;
        return (*measured_GiB - *predicted_GiB) / *predicted_GiB;
    }
};

struct RunOverlay {
    std::string run_id;
    RunState state = RunState::created;
    std::string framework;
    std::string cluster;
    std::string description;
    std::string scenario_json; // as sent: the planner overlays on its own plan only when it is the same
    std::string layout; // "TP 2 · PP 1 · DP 1" of the plan as sent (CP, EP, VPP when above 1), for legends
    int steps = 0; // logged steps
    RunComparison comparison;
    std::vector<StageMemoryComparison> stages; // empty when the log reports no per-rank memory
    std::string stage_note; // where the per-stage values come from, or why there are none
    const MetricComparison* metric(const std::string& name) const { return comparison.find(name); }
};

// Reads the run's steps and log from `store`. Throws StoreError.
RunOverlay make_run_overlay(const RunStore& store, const RunRecord& run);

} // namespace parallax::remote

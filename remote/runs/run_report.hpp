#pragma once
// Measured against predicted, for one stored run: the numbers an overlay draws (marker = median of the
// steady-state steps, error bar = their spread) and the CLI prints. Steady state = every logged step but
// the first (start-up cost), as parse-log's summary. The prediction compared with is the one made at
// dispatch time for what actually ran: the probe's workload prediction for probe runs (same layers, batch
// and schedule as the probe trained), the plan's prediction for the frameworks (they run the plan itself).
#include "store/run_record.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace parallax::remote {

class RunStore;

struct MetricComparison {
    std::string metric; // step_time_s, tokens_per_s_per_gpu, tflops_per_gpu, memory_GiB, power_W
    std::optional<double> measured; // median over steady-state steps (memory: the peak)
    std::optional<double> spread_low; // smallest steady-state value
    std::optional<double> spread_high; // largest steady-state value
    int samples = 0;
    std::optional<double> predicted;
    // (measured - predicted) / predicted, when both exist.
    std::optional<double> error() const
    {
        if (!measured || !predicted || *predicted == 0)
            return std::nullopt;
        return (*measured - *predicted) / *predicted;
    }
};

struct RunComparison {
    // "workload" (the probe's reduced plan), "plan", or "none" (then `why` says why: a run on CPU ranks
    // measures CPUs, and the plan's GPU prediction says nothing about them).
    std::string prediction_source;
    std::string why;
    std::vector<MetricComparison> metrics;
    const MetricComparison* find(const std::string& metric) const;
};

// One metric as `runs --json` and `parse-log --scenario --json` print it: measured, low, high (the
// steady steps' range), samples, predicted, error; keys left out where there is no value.
nlohmann::ordered_json metric_comparison_json(const MetricComparison& m);

RunComparison compare_run(const RunRecord& run, const std::vector<StepRecord>& steps);

// The plan that was sent, in the planner's notation (spec/strategy_label.hpp); "" when the stored
// scenario has no readable strategy (a run stored by an older version).
std::string run_plan_label(const RunRecord& run);
// A log's steps against a prediction (predict --json) of the plan that ran on `gpus` GPUs: step time,
// tokens/s per GPU, TFLOP/s per GPU, peak memory, power and energy, each where both sides have it.
std::vector<MetricComparison> compare_steps(
    const std::vector<StepRecord>& steps, const nlohmann::ordered_json& prediction, std::optional<double> gpus);

// A run as `parallax-cli runs --json` prints it; `detailed` adds transitions, steps, benchmarks, notes and
// the files that were sent.
nlohmann::ordered_json run_to_json(const RunStore& store, const RunRecord& run, bool detailed);

// A few lines for a terminal: state, what was parsed, measured vs predicted, notes.
std::string run_summary_text(const RunStore& store, const RunRecord& run);

} // namespace parallax::remote

#pragma once
// The planner's "learn" layer: what each degree, toggle and metric is, the formula behind it with
// its source, and why a number moved between two predictions (which parts of the step time or of
// the memory changed, after which change of the strategy). Plain text, no Qt.
#include "search/degree_snapping.hpp"
#include "spec/prediction.hpp"
#include "spec/strategy.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace parallax {

struct Explanation {
    std::string title;
    std::string what; // one or two sentences for a newcomer
    std::string formula; // the formula the model uses, in the notation of its source
    std::string source; // paper / code it comes from
};

enum class Metric : unsigned char {
    step_time,
    tokens_per_s,
    tflops_per_gpu,
    mfu,
    bubble,
    power,
    energy_per_token,
    peak_memory,
    memory_weights,
    memory_gradients,
    memory_optimizer,
    memory_activations,
    memory_other,
    time_compute,
    time_recompute,
    time_bubble,
    time_tp,
    time_pp,
    time_dp,
    time_cp,
    time_ep,
    time_optimizer,
    time_offload,
    time_data_stall,
    time_host_copy,
};
inline constexpr int kMetricCount = 25;

// Toggles by their scenario key: "sequence_parallel", "recompute", "zero", "schedule",
// "offload_optimizer", "precision", "framework", "optimizer", "cp_kind", "tp_comm_overlap",
// "overlap_grad_reduce", "overlap_param_gather", "flash_attention".
const Explanation& explain_degree(Degree d);
const Explanation* explain_toggle(std::string_view key); // nullptr for an unknown key
const Explanation& explain_metric(Metric m);
std::vector<std::string> toggle_keys();

// The value of a metric in a prediction (seconds, bytes, W, J, fractions as stored).
double metric_value(const Prediction& p, Metric m);
// The metric's error band [low, high] where the prediction carries one and the metric follows the
// throughput (step time, tokens/s, TFLOP/s per GPU, MFU); nullopt otherwise.
std::optional<std::pair<double, double>> metric_interval(const Prediction& p, Metric m);
// True when larger is better (tokens/s, TFLOP/s, MFU).
bool metric_higher_is_better(Metric m);

// "tp 4 -> 8, dp 8 -> 4" (empty when the strategies are equal).
std::string describe_strategy_change(const Strategy& before, const Strategy& after);

// Why `m` differs between two predictions: the change in words and the parts that moved it most
// ("Step time 14.36 s -> 15.10 s (+5.2%): exposed TP communication +0.61 s, pipeline bubble
// +0.20 s."). Empty when nothing moved noticeably.
std::string why_moved(Metric m, const Prediction& before, const Prediction& after);

} // namespace parallax

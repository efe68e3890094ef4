#pragma once
// What it costs to take a serving instance off its GPUs and bring it back (a preemption, or a move to
// other GPUs), split into its parts: the weights coming back over the host link (or from storage), the
// KV cache of the requests in flight (recomputed by a prefill, or swapped out and back in), and the
// engine's warm-up. Reloading the model's state dominates, as measured for multi-model serving
// (Yildiz et al. 2026, arXiv:2605.19593) and for vLLM's sleep mode (vLLM blog, 2025-10-26).
#include "serving/host_link.hpp"
#include "serving/serving_model.hpp"

#include <optional>
#include <string_view>

namespace parallax {

// sleep: the engine process stays up and its weights wait in host memory (vLLM sleep level 1);
// restart: the process is stopped and started again, loading its weights and capturing its graphs anew.
enum class PreemptionMode : unsigned char { sleep, restart };
enum class KvRecovery : unsigned char { recompute, swap };
std::string_view to_string(PreemptionMode m);
std::string_view to_string(KvRecovery k);

// A cold vLLM start beyond copying the weights, per layer: process and allocator start, torch.compile,
// CUDA graph capture and kernel warm-up. vLLM 0.11 on A100, Qwen3-Coder-30B-A3B (48 layers): cold
// start 47.42 s, wake from sleep level 1 (the weights' copy alone) 2.87 s (vLLM blog "Zero-Reload Model
// Switching with vLLM Sleep Mode", 2025-10-26, switching benchmark): (47.42 - 2.87) / 48.
inline constexpr double kColdStartPerLayer_s = (47.42 - 2.87) / 48.0;

struct PreemptionSettings {
    PreemptionMode mode = PreemptionMode::sleep;
    KvRecovery kv = KvRecovery::recompute;
    std::optional<double> storage_Bps; // restart: the node's storage read rate, shared by its GPUs
};

struct PreemptionCost {
    PreemptionMode mode = PreemptionMode::sleep;
    KvRecovery kv = KvRecovery::recompute;
    double weights_bytes_per_gpu = 0; // resident weights to bring back
    double kv_bytes_per_gpu = 0; // the cache of the requests in flight
    double kv_tokens = 0; // in flight, per instance
    double weights_reload_s = 0;
    double kv_s = 0; // recompute: their prefill; swap: out and back over the host link
    double kv_steps = 0; // recompute: the prefill steps of the engine's token budget it takes
    double warm_up_s = 0;
    double total_s() const { return weights_reload_s + kv_s + warm_up_s; }
};

// One instance of `s` preempted while running as `p` predicts, `resident_weight_bytes_per_gpu` of its
// weights on each GPU (the rest already in host memory).
PreemptionCost preemption_cost(const ServingScenario& s, const ServingPrediction& p, const HostLink& link,
    const PreemptionSettings& settings, double resident_weight_bytes_per_gpu);
// The same with every weight resident.
PreemptionCost preemption_cost(
    const ServingScenario& s, const ServingPrediction& p, const HostLink& link, const PreemptionSettings& settings);

} // namespace parallax

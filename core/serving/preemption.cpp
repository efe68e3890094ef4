#include "serving/preemption.hpp"

#include "serving/kv_cache.hpp"
#include "serving/serving_context.hpp"
#include "serving/serving_memory.hpp"
#include "serving/serving_step.hpp"

#include <algorithm>
#include <cmath>

namespace parallax {

namespace {

// Tokens whose cache a running request holds on average: its prompt and half its output.
double mean_context_tokens(const ServingWorkload& w)
{
    return static_cast<double>(w.isl) + 0.5 * static_cast<double>(w.osl);
}

// The prefill of `tokens` tokens of requests whose context is `context` long, in steps of the engine's
// token budget.
double recompute_s(const ServingContext& ctx, double tokens, double context)
{
    const double budget = std::max(1.0, instance_token_budget(ctx));
    const double full_chunks = std::floor(tokens / budget);
    const double rest = tokens - full_chunks * budget;
    auto chunk_s = [&](double n) {
        StepLoad l;
        l.prefill_tokens = n;
        l.prompt_tokens = std::max(1.0, context);
        l.sampled_requests = n / std::max(1.0, context);
        return step_cost(ctx, l).time_s;
    };
    return full_chunks * chunk_s(budget) + (rest > 0 ? chunk_s(rest) : 0.0);
}

double weights_rate_Bps(const ServingScenario& s, const HostLink& link, const PreemptionSettings& settings)
{
    const int gpus = s.deployment.instance.gpus();
    const double link_Bps = host_link_Bps_per_gpu(link, gpus);
    if (settings.mode == PreemptionMode::sleep || !settings.storage_Bps)
        return link_Bps;
    const int in_node = std::max(1, std::min(gpus, s.cluster.gpus_per_node));
    return std::min(link_Bps, *settings.storage_Bps / in_node);
}

} // namespace

std::string_view to_string(PreemptionMode m)
{
    return m == PreemptionMode::sleep ? "sleep" : "restart";
}

std::string_view to_string(KvRecovery k)
{
    return k == KvRecovery::recompute ? "recompute" : "swap";
}

PreemptionCost preemption_cost(const ServingScenario& s, const ServingPrediction& p, const HostLink& link,
    const PreemptionSettings& settings, double resident_weight_bytes_per_gpu)
{
    PreemptionCost c;
    c.mode = settings.mode;
    c.kv = settings.kv;
    const ServingContext ctx(s.model, s.cluster, s.serving, s.deployment.instance);
    c.weights_bytes_per_gpu = resident_weight_bytes_per_gpu;
    c.weights_reload_s = c.weights_bytes_per_gpu / weights_rate_Bps(s, link, settings);
    const double context = mean_context_tokens(s.serving.workload);
    const double running = std::max(0.0, p.running_batch);
    c.kv_tokens = running * context;
    c.kv_bytes_per_gpu = running
        * kv_bytes_per_sequence_per_gpu(s.model, s.serving.precision.kv_cache, context, s.deployment.instance);
    if (settings.kv == KvRecovery::swap)
        c.kv_s = 2.0 * c.kv_bytes_per_gpu / host_link_Bps_per_gpu(link, s.deployment.instance.gpus());
    else {
        c.kv_s = c.kv_tokens > 0 ? recompute_s(ctx, c.kv_tokens, context) : 0.0;
        const double budget = std::max(1.0, instance_token_budget(ctx));
        c.kv_steps = std::ceil(c.kv_tokens / budget);
    }
    if (settings.mode == PreemptionMode::restart)
        c.warm_up_s = kColdStartPerLayer_s * s.model.layers;
    return c;
}

PreemptionCost preemption_cost(
    const ServingScenario& s, const ServingPrediction& p, const HostLink& link, const PreemptionSettings& settings)
{
    const ServingContext ctx(s.model, s.cluster, s.serving, s.deployment.instance);
    return preemption_cost(s, p, link, settings, weights_bytes_per_gpu(ctx));
}

} // namespace parallax

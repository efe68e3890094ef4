#include "serving/residency.hpp"

#include "model/model_math.hpp"
#include "serving/engine_traits.hpp"
#include "serving/serving_context.hpp"
#include "serving/serving_memory.hpp"

#include <algorithm>
#include <cmath>

namespace parallax {

namespace {

// Steps simulated before the period is read: the buffers' head start settles after one or two.
constexpr int kPipelineSteps = 6;
// Embedding and output projection stay resident, in bf16 (as serving_memory.cpp holds them).
constexpr double kEmbeddingBytesPerParam = 2.0;

bool is_offloaded(int layer, int layers, int offloaded)
{
    // Evenly spread: layer i is offloaded when floor((i+1) k / L) steps past floor(i k / L).
    const long long k = offloaded;
    return (static_cast<long long>(layer + 1) * k) / layers > (static_cast<long long>(layer) * k) / layers;
}

// Extra capacity that gives the engine's KV pool `freed_B` more bytes under its memory rule.
double capacity_for_freed_bytes(const EngineTraits& e, double freed_B)
{
    if (e.memory_rule == MemoryRule::free_fraction)
        return freed_B;
    return freed_B / e.memory_fraction;
}

double pipeline_slowdown(const StepCost& step, int layers, int offloaded, double fetch_s_per_layer)
{
    if (offloaded == 0 || step.time_s <= 0)
        return 1.0;
    OffloadPipeline p;
    p.layers = layers;
    p.offloaded_layers = offloaded;
    p.compute_s_per_layer = step.time_s / layers;
    p.fetch_s_per_layer = fetch_s_per_layer;
    return offloaded_step_time_s(p) / step.time_s;
}

} // namespace

double offload_slowdown(double step_s, int layers, int offloaded, double fetch_s_per_layer)
{
    StepCost step;
    step.time_s = step_s;
    return pipeline_slowdown(step, layers, offloaded, fetch_s_per_layer);
}

namespace {

void apply_slowdowns(ServingPrediction& p, const ServingWorkload& w, double decode, double prefill)
{
    const double e2e_before = p.e2e_latency_ms;
    p.ttft_ms *= prefill;
    p.tpot_ms *= decode;
    p.e2e_latency_ms = p.ttft_ms + static_cast<double>(w.osl - 1) * p.tpot_ms;
    p.output_tokens_per_s_per_user = p.tpot_ms > 0 ? 1000.0 / p.tpot_ms : 0;
    if (w.load == LoadKind::request_rate || p.e2e_latency_ms <= 0)
        return; // the arrivals set the throughput
    const double scale = e2e_before / p.e2e_latency_ms;
    p.output_tokens_per_s *= scale;
    p.output_tokens_per_s_per_gpu *= scale;
    p.requests_per_s *= scale;
}

} // namespace

double offloaded_step_time_s(const OffloadPipeline& p)
{
    const int depth = std::max(1, p.prefetch_depth);
    std::vector<double> offloaded_done; // compute end of every offloaded layer, in order
    double link_free = 0;
    double layer_done = 0;
    double previous_step_end = 0;
    double period = 0;
    for (int step = 0; step < kPipelineSteps; ++step) {
        for (int i = 0; i < p.layers; ++i) {
            double start = layer_done;
            if (is_offloaded(i, p.layers, p.offloaded_layers)) {
                const std::size_t n = offloaded_done.size();
                const double buffer_free = n >= static_cast<std::size_t>(depth) ? offloaded_done[n - depth] : 0.0;
                link_free = std::max(link_free, buffer_free) + p.fetch_s_per_layer;
                start = std::max(start, link_free);
            }
            layer_done = start + p.compute_s_per_layer;
            if (is_offloaded(i, p.layers, p.offloaded_layers))
                offloaded_done.push_back(layer_done);
        }
        period = layer_done - previous_step_end;
        previous_step_end = layer_done;
    }
    return period;
}

int offloaded_layers_at(int layers, double residency)
{
    const double r = std::clamp(residency, 0.0, 1.0);
    return std::clamp(static_cast<int>(std::lround((1.0 - r) * layers)), 0, layers);
}

double knee_residency(double step_compute_s, double fetch_all_s)
{
    if (fetch_all_s <= 0)
        return 0.0;
    return std::clamp(1.0 - step_compute_s / fetch_all_s, 0.0, 1.0);
}

double layer_weight_bytes_per_gpu(const ServingContext& ctx)
{
    const ModelSpec& m = *ctx.model;
    const double embeddings = (embedding_params(m) + output_params(m)) * kEmbeddingBytesPerParam / ctx.layout.tp;
    return std::max(0.0, weights_bytes_per_gpu(ctx) - embeddings);
}

OffloadedPrediction predict_offloaded(const ServingScenario& s, double residency, const HostLink& link)
{
    OffloadedPrediction out;
    const ServingContext ctx(s.model, s.cluster, s.serving, s.deployment.instance);
    const int layers = std::max(1, s.model.layers);
    const double per_layer_B = layer_weight_bytes_per_gpu(ctx) / layers;
    out.offloaded_layers = offloaded_layers_at(layers, residency);
    out.residency = 1.0 - static_cast<double>(out.offloaded_layers) / layers;
    out.offloaded_bytes_per_gpu = out.offloaded_layers * per_layer_B;
    const double buffers_B = std::min(out.offloaded_layers, kDefaultPrefetchDepth) * per_layer_B;
    ServingScenario shifted = s;
    shifted.cluster.gpu.memory_bytes += capacity_for_freed_bytes(ctx.engine, out.offloaded_bytes_per_gpu - buffers_B);
    out.prediction = predict_serving(shifted);
    out.prediction.memory.capacity_B = s.cluster.gpu.memory_bytes;
    out.prediction.memory.weights_B -= out.offloaded_bytes_per_gpu - buffers_B;
    if (out.offloaded_layers == 0 || !out.prediction.feasible)
        return out;
    const double fetch_s = per_layer_B / host_link_Bps_per_gpu(link, s.deployment.instance.gpus());
    out.fetch_s_per_layer = fetch_s;
    out.decode_slowdown = pipeline_slowdown(out.prediction.decode_step, layers, out.offloaded_layers, fetch_s);
    out.prefill_slowdown = pipeline_slowdown(out.prediction.prefill_step, layers, out.offloaded_layers, fetch_s);
    apply_slowdowns(out.prediction, s.serving.workload, out.decode_slowdown, out.prefill_slowdown);
    check_slo(out.prediction, s.serving.slo);
    return out;
}

ResidencyCurve residency_curve(const ServingScenario& s, const HostLink& link, int steps)
{
    ResidencyCurve c;
    const ServingContext ctx(s.model, s.cluster, s.serving, s.deployment.instance);
    const int layers = std::max(1, s.model.layers);
    const double per_layer_B = layer_weight_bytes_per_gpu(ctx) / layers;
    const double fetch_s = per_layer_B / host_link_Bps_per_gpu(link, s.deployment.instance.gpus());
    c.fetch_all_s = fetch_s * layers;
    steps = std::max(1, steps);
    std::vector<OffloadedPrediction> at;
    for (int i = 0; i <= steps; ++i)
        at.push_back(predict_offloaded(s, 1.0 - static_cast<double>(i) / steps, link));
    // The reference step: the most resident point that fits (its batch is held for the whole curve).
    for (const OffloadedPrediction& o : at)
        if (o.prediction.feasible) {
            c.step_compute_s = o.prediction.decode_step.time_s;
            break;
        }
    for (const OffloadedPrediction& o : at) {
        ResidencyPoint pt;
        pt.residency = o.residency;
        pt.offloaded_layers = o.offloaded_layers;
        StepCost reference;
        reference.time_s = c.step_compute_s;
        const double slowdown = pipeline_slowdown(reference, layers, o.offloaded_layers, fetch_s);
        pt.step_s = c.step_compute_s * slowdown;
        pt.relative_throughput = 1.0 / slowdown;
        pt.output_tokens_per_s = o.prediction.feasible ? o.prediction.output_tokens_per_s : 0.0;
        pt.fetch_bound = o.offloaded_layers * fetch_s > c.step_compute_s;
        c.points.push_back(pt);
    }
    c.knee_residency = knee_residency(c.step_compute_s, c.fetch_all_s);
    return c;
}

} // namespace parallax

#include "serving/host_bound_note.hpp"

#include "io/number_format.hpp"

#include <string>

namespace parallax {

namespace {

std::string whole(double v)
{
    return format_number("%.0f", v);
}

std::string ms(double s)
{
    return format_number("%.1f", s * 1e3);
}

} // namespace

void note_host_bound_decode(ServingPrediction& p, const ServingContext& ctx, ServingEngine engine)
{
    constexpr double kNotedShare = 0.1; // of the decode step spent waiting for the host
    const StepCost& d = p.decode_step;
    if (ctx.engine.request_host_s <= 0 || d.time_s <= 0 || d.host_wait_s < kNotedShare * d.time_s)
        return;
    const double per_rank = p.running_batch / ctx.layout.attention_dp;
    const std::string work = "the " + std::string(to_string(engine)) + " engine spends about "
        + whole(ctx.engine.request_host_s * 1e6) + " us of CPU per request and step (" + whole(per_rank)
        + " requests per rank: " + ms(per_rank * ctx.engine.request_host_s) + " ms";
    const std::string gpu_ms = ms(d.time_s - d.host_wait_s);
    // Every engine that prices per-request host work overlaps it with the GPU but for TensorRT-LLM's
    // pipeline-parallel loop (engine_traits.cpp).
    if (!ctx.engine.request_host_overlaps_gpu) {
        p.warnings.push_back("decode steps wait for the host: " + work + ", added to the GPU's " + gpu_ms
            + " ms, since its pipeline-parallel loop does not overlap the two); fewer pipeline stages would hide it");
        return;
    }
    p.warnings.push_back("decode steps wait for the host: " + work + " against the GPU's " + gpu_ms
        + " ms), so a rank streams at most " + whole(1.0 / ctx.engine.request_host_s)
        + " tokens/s; a smaller batch per rank would keep the throughput and shorten TPOT");
}

} // namespace parallax

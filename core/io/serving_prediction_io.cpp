#include "io/serving_prediction_io.hpp"

#include "io/number_format.hpp"
#include "spec/units.hpp"

#include <string>

namespace parallax {

using nlohmann::json;

namespace {

std::string layout_label(const InstanceLayout& l)
{
    return "TP " + std::to_string(l.tp) + " × PP " + std::to_string(l.pp) + " × EP " + std::to_string(l.ep)
        + " × attention-DP " + std::to_string(l.attention_dp)
        + (l.moe_exchange == MoeExchange::gather ? " (MoE gather)" : "");
}

std::string load_label(const ServingWorkload& w)
{
    std::string s = "isl " + std::to_string(w.isl) + ", osl " + std::to_string(w.osl) + ", ";
    switch (w.load) {
    case LoadKind::concurrency:
        return s + "concurrency " + std::to_string(w.concurrency);
    case LoadKind::request_rate:
        return s + format_number("%.4g requests/s (Poisson)", w.request_rate_qps);
    case LoadKind::batch_size:
        return s + "static batches of " + std::to_string(w.batch_size);
    case LoadKind::max_throughput:
        return s + "maximum throughput (offline)";
    }
    return s;
}

} // namespace

std::string deployment_label(const Deployment& d, int replicas)
{
    if (d.disaggregated) {
        const auto& x = *d.disaggregated;
        return "prefill " + std::to_string(x.prefill.workers) + " × (" + layout_label(x.prefill.layout) + "), decode "
            + std::to_string(x.decode.workers) + " × (" + layout_label(x.decode.layout) + ")";
    }
    return layout_label(d.instance) + ", " + std::to_string(replicas) + (replicas == 1 ? " replica" : " replicas");
}

std::string deployment_label(const ServingScenario& s)
{
    return deployment_label(s.deployment, s.replicas());
}

json deployment_to_json(const Deployment& d)
{
    auto layout = [](const InstanceLayout& l) {
        json j { { "tp", l.tp }, { "pp", l.pp }, { "ep", l.ep }, { "attention_dp", l.attention_dp } };
        if (l.moe_exchange != MoeExchange::all_to_all)
            j["moe_exchange"] = std::string(to_string(l.moe_exchange));
        return j;
    };
    if (d.disaggregated) {
        json pre = layout(d.disaggregated->prefill.layout);
        pre["workers"] = d.disaggregated->prefill.workers;
        json dec = layout(d.disaggregated->decode.layout);
        dec["workers"] = d.disaggregated->decode.workers;
        return { { "disaggregated", { { "prefill", pre }, { "decode", dec } } } };
    }
    json j = layout(d.instance);
    if (d.replicas)
        j["replicas"] = *d.replicas;
    return j;
}

namespace {

// The measured-error band: the intervals of output tokens/s (whole deployment and per GPU), TTFT and TPOT
// and their level, as training's "tokens_per_s_interval" and "interval_level"; null where there is none.
void add_interval_json(json& j, const ServingInterval& i)
{
    if (i.level <= 0) {
        for (const char* key : { "output_tokens_per_s_interval", "output_tokens_per_s_per_gpu_interval",
                 "ttft_ms_interval", "tpot_ms_interval", "interval_level", "interval_basis" })
            j[key] = nullptr;
        return;
    }
    j["output_tokens_per_s_interval"] = { i.tokens_per_s_low, i.tokens_per_s_high };
    j["output_tokens_per_s_per_gpu_interval"] = { i.tokens_per_s_per_gpu_low, i.tokens_per_s_per_gpu_high };
    j["ttft_ms_interval"] = { i.ttft_ms_low, i.ttft_ms_high };
    j["tpot_ms_interval"] = { i.tpot_ms_low, i.tpot_ms_high };
    j["interval_level"] = i.level;
    j["interval_basis"] = i.basis;
}

// One step's time split into what bounds its kernels, with what it reads from HBM, per GPU.
json step_to_json(const StepCost& c)
{
    return { { "time_ms", c.time_s * 1e3 }, { "compute_bound_ms", c.compute_bound_s * 1e3 },
        { "memory_bound_ms", c.memory_bound_s * 1e3 }, { "collectives_ms", c.comm_s * 1e3 },
        { "overhead_ms", c.overhead_s * 1e3 }, { "host_wait_ms", c.host_wait_s * 1e3 }, { "kernels", c.kernels },
        { "hbm_read_GB", c.hbm_bytes / units::kGB }, { "weights_read_GB", c.weight_bytes / units::kGB },
        { "kv_read_GB", c.kv_bytes / units::kGB }, { "tflop", c.flops / 1e12 } };
}

// "4.68 ms: compute 0.31, memory 3.20 (10.7 GB read: weights 10.5, KV 0.2), collectives 0.00, overhead 1.17
// (host wait 0.00)": where a step's time goes, per GPU.
std::string step_to_text(const StepCost& c)
{
    return format_number("%10.2f ms: ", c.time_s * 1e3) + format_number("compute %.2f, ", c.compute_bound_s * 1e3)
        + format_number("memory %.2f ", c.memory_bound_s * 1e3)
        + format_number("(%.2f GB read: ", c.hbm_bytes / units::kGB)
        + format_number("weights %.2f, ", c.weight_bytes / units::kGB)
        + format_number("KV %.2f), ", c.kv_bytes / units::kGB) + format_number("collectives %.2f, ", c.comm_s * 1e3)
        + format_number("overhead %.2f ", c.overhead_s * 1e3) + format_number("(host wait %.2f)", c.host_wait_s * 1e3);
}

} // namespace

json serving_prediction_to_json(const ServingPrediction& p)
{
    json j;
    j["schema"] = 1;
    j["mode"] = "serve";
    j["feasible"] = p.feasible;
    j["output_tokens_per_s"] = p.output_tokens_per_s;
    j["output_tokens_per_s_per_gpu"] = p.output_tokens_per_s_per_gpu;
    j["output_tokens_per_s_per_user"] = p.output_tokens_per_s_per_user;
    j["requests_per_s"] = p.requests_per_s;
    j["ttft_ms"] = p.ttft_ms;
    j["tpot_ms"] = p.tpot_ms;
    j["e2e_latency_ms"] = p.e2e_latency_ms;
    j["batch"] = { { "running", p.running_batch }, { "max_by_memory", p.max_batch_by_memory } };
    j["memory"] = {
        { "peak_GiB", p.memory.peak_B() / units::kGiB }, { "capacity_GiB", p.memory.capacity_B / units::kGiB },
        { "breakdown_GiB",
            { { "weights", p.memory.weights_B / units::kGiB },
                { "kv_cache", std::max(0.0, p.memory.kv_pool_B) / units::kGiB },
                { "activations", p.memory.activations_B / units::kGiB }, { "other", p.memory.other_B / units::kGiB } } }
    };
    j["power"] = { { "avg_W_per_gpu", p.avg_W_per_gpu }, { "energy_J_per_token", p.energy_J_per_token } };
    j["steps"] = { { "decode", step_to_json(p.decode_step) } };
    if (p.prefill_step.time_s > 0) {
        j["steps"]["prefill"] = step_to_json(p.prefill_step);
        j["steps"]["prefill_steps_per_prompt"] = p.prefill_steps;
    }
    j["gpus"] = p.gpus;
    j["replicas"] = p.replicas;
    j["slo_met"] = p.slo_met;
    add_interval_json(j, p.interval);
    j["warnings"] = p.warnings;
    return j;
}

std::string serving_prediction_to_text(const ServingScenario& s, const ServingPrediction& p)
{
    std::string o;
    o += s.model.name + " on " + std::to_string(s.cluster.total_gpus()) + " x " + s.cluster.gpu.name + "  ("
        + std::to_string(s.cluster.nodes) + (s.cluster.nodes == 1 ? " node" : " nodes") + " x "
        + std::to_string(s.cluster.gpus_per_node) + ")\n";
    o += "serving    " + std::string(to_string(s.serving.engine)) + ", weights "
        + std::string(to_string(s.serving.precision.weights)) + ", KV cache "
        + std::string(to_string(s.serving.precision.kv_cache)) + "; " + load_label(s.serving.workload) + "\n";
    if (const auto& d = s.serving.speculative)
        o += "speculative " + std::string(d->draft == DraftKind::mtp ? "MTP" : "EAGLE") + " draft of "
            + std::to_string(d->draft_tokens) + (d->draft_tokens == 1 ? " token" : " tokens")
            + format_number(", %.2f tokens per request per step\n", d->tokens_per_step());
    o += "deployment " + deployment_label(s) + "  (" + std::to_string(p.gpus) + " GPUs)\n";
    o += std::string("feasible   ") + (p.feasible ? "yes" : "no") + "\n";
    const ServingInterval& band = p.interval;
    // "(80%: 70.2-151.0)" after a value whose band is known.
    const auto interval = [&](const char* fmt, double lo, double hi) {
        if (band.level <= 0)
            return std::string();
        return format_number("   (%.0f%%: ", 100 * band.level) + format_number(fmt, lo) + "-" + format_number(fmt, hi)
            + ")";
    };
    o += format_number("TTFT            %10.1f ms", p.ttft_ms) + interval("%.1f", band.ttft_ms_low, band.ttft_ms_high)
        + "\n";
    o += format_number("TPOT            %10.2f ms", p.tpot_ms)
        + format_number("   (%.1f tokens/s per user)", p.output_tokens_per_s_per_user)
        + interval("%.2f", band.tpot_ms_low, band.tpot_ms_high) + "\n";
    o += format_number("end to end      %10.0f ms\n", p.e2e_latency_ms);
    o += "output tok/s    " + format_number("%10.0f", p.output_tokens_per_s)
        + format_number("   (%.1f per GPU)", p.output_tokens_per_s_per_gpu)
        + format_number(", %.2f requests/s", p.requests_per_s)
        + interval("%.0f", band.tokens_per_s_low, band.tokens_per_s_high) + "\n";
    if (band.level > 0)
        o += "error band      " + band.basis + "\n";
    o += format_number("running batch   %10.1f", p.running_batch) + " per instance, "
        + std::to_string(p.max_batch_by_memory) + " fit in memory";
    o += p.queued_requests > 0 ? format_number(", %.0f queued\n", p.queued_requests) : std::string("\n");
    o += format_number("memory          %10.1f GiB", p.memory.peak_B() / units::kGiB)
        + format_number(" of %.1f GiB:", p.memory.capacity_B / units::kGiB)
        + format_number(" weights %.1f,", p.memory.weights_B / units::kGiB)
        + format_number(" KV cache %.1f,", std::max(0.0, p.memory.kv_pool_B) / units::kGiB)
        + format_number(" activations %.1f,", p.memory.activations_B / units::kGiB)
        + format_number(" other %.1f\n", p.memory.other_B / units::kGiB);
    if (p.decode_step.time_s > 0)
        o += "decode step     " + step_to_text(p.decode_step) + "\n";
    if (p.prefill_step.time_s > 0)
        o += "prefill step    " + step_to_text(p.prefill_step) + format_number(", %.1f per prompt\n", p.prefill_steps);
    o += format_number("power           %10.0f W avg per GPU", p.avg_W_per_gpu)
        + format_number(", %.3f J per output token\n", p.energy_J_per_token);
    for (const auto& w : p.warnings)
        o += "warning: " + w + "\n";
    return o;
}

json serving_search_to_json(const ServingSearchResult& r)
{
    auto candidate = [](const ServingCandidate& c) {
        json d = deployment_to_json(c.deployment);
        if (!c.deployment.disaggregated)
            d["replicas"] = c.prediction.replicas;
        return json { { "deployment", d }, { "label", deployment_label(c.deployment, c.prediction.replicas) },
            { "pareto", c.pareto }, { "prediction", serving_prediction_to_json(c.prediction) } };
    };
    json results = json::array();
    for (const auto& c : r.results)
        results.push_back(candidate(c));
    json pareto = json::array();
    for (const auto& c : r.pareto)
        pareto.push_back(candidate(c));
    return { { "schema", 1 }, { "mode", "serve" }, { "evaluated", r.evaluated }, { "feasible", r.feasible },
        { "meet_slo", r.meet_slo }, { "seconds", r.seconds }, { "results", results }, { "pareto", pareto } };
}

std::string serving_search_to_text(const ServingScenario& s, const ServingSearchResult& r)
{
    std::string o = s.model.name + " on " + std::to_string(s.cluster.total_gpus()) + " x " + s.cluster.gpu.name + "; "
        + load_label(s.serving.workload) + "\n";
    o += std::to_string(r.evaluated) + " deployments, " + std::to_string(r.feasible) + " fit, "
        + std::to_string(r.meet_slo) + " meet the SLO" + format_number(" (%.3f s)\n", r.seconds);
    if (r.results.empty())
        return o + "no deployment fits and meets the SLO\n";
    o += "\n  #  tok/s/GPU  tok/s/user   TTFT ms   TPOT ms  GPUs  deployment\n";
    int i = 0;
    for (const auto& c : r.results) {
        const ServingPrediction& p = c.prediction;
        o += format_number("%3.0f", ++i) + format_number("  %9.1f", p.output_tokens_per_s_per_gpu)
            + format_number("  %10.1f", p.output_tokens_per_s_per_user) + format_number("  %8.1f", p.ttft_ms)
            + format_number("  %8.2f", p.tpot_ms) + format_number("  %4.0f", static_cast<double>(p.gpus)) + "  "
            + deployment_label(c.deployment, p.replicas) + (c.pareto ? "  (Pareto)" : "") + "\n";
    }
    o += "\nPareto front (tokens/s per GPU against tokens/s per user):\n";
    for (const auto& c : r.pareto)
        o += format_number("  %9.1f tok/s/GPU", c.prediction.output_tokens_per_s_per_gpu)
            + format_number(" at %7.1f tok/s/user: ", c.prediction.output_tokens_per_s_per_user)
            + deployment_label(c.deployment, c.prediction.replicas) + "\n";
    return o;
}

} // namespace parallax

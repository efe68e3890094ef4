// predict on a co-location scenario: the JSON (docs/serving.md, "Co-location") and the table.
#include "io/colocation_io.hpp"
#include "io/number_format.hpp"
#include "serving/host_link.hpp"
#include "spec/units.hpp"

#include <cstdio>

namespace parallax {

using nlohmann::json;

namespace {

json placement_to_json(const Placement& p)
{
    return json { { "group", p.group }, { "tp", p.tp }, { "replicas", p.replicas }, { "gpus", p.gpus() },
        { "residency", p.residency } };
}

json preemption_to_json(const PreemptionCost& c)
{
    return json { { "mode", std::string(to_string(c.mode)) }, { "kv", std::string(to_string(c.kv)) },
        { "weights_GiB_per_gpu", c.weights_bytes_per_gpu / units::kGiB },
        { "kv_GiB_per_gpu", c.kv_bytes_per_gpu / units::kGiB }, { "weights_reload_s", c.weights_reload_s },
        { "kv_s", c.kv_s }, { "warm_up_s", c.warm_up_s }, { "total_s", c.total_s() } };
}

json curve_to_json(const ResidencyCurve& c)
{
    json points = json::array();
    for (const ResidencyPoint& p : c.points)
        points.push_back({ { "residency", p.residency }, { "offloaded_layers", p.offloaded_layers },
            { "relative_throughput", p.relative_throughput }, { "output_tokens_per_s", p.output_tokens_per_s },
            { "fetch_bound", p.fetch_bound } });
    return json { { "knee_residency", c.knee_residency }, { "step_compute_s", c.step_compute_s },
        { "fetch_all_s", c.fetch_all_s }, { "points", points } };
}

json model_to_json(const PlacedModel& m)
{
    const ServingPrediction& p = m.offloaded.prediction;
    json j { { "name", m.name }, { "placed", m.placed } };
    if (!m.placed)
        return j;
    j["placement"] = placement_to_json(m.placement);
    j["gpu"] = m.gpu;
    j["feasible"] = p.feasible;
    j["slo_met"] = p.slo_met;
    j["ttft_ms"] = p.ttft_ms;
    j["tpot_ms"] = p.tpot_ms;
    j["output_tokens_per_s"] = p.output_tokens_per_s;
    j["output_tokens_per_s_per_gpu"] = p.output_tokens_per_s_per_gpu;
    j["offloaded_GiB_per_gpu"] = m.offloaded.offloaded_bytes_per_gpu / units::kGiB;
    j["alone"] = placement_to_json(m.alone);
    j["alone_output_tokens_per_s"] = m.alone_tokens_per_s;
    j["slowdown_vs_alone"] = m.slowdown_vs_alone;
    j["normalised_throughput"] = m.normalised_throughput;
    j["loss_at_half_residency"] = m.loss_at_half_residency;
    j["residency_curve"] = curve_to_json(m.curve);
    j["preemption"] = preemption_to_json(m.preemption);
    json by_group = json::array();
    for (const GroupPreemption& g : m.preemption_by_group) {
        json cost = preemption_to_json(g.cost);
        cost["group"] = g.group;
        cost["gpu"] = g.gpu;
        by_group.push_back(cost);
    }
    j["preemption_by_group"] = by_group;
    j["explanation"] = m.explanation;
    j["warnings"] = p.warnings;
    return j;
}

} // namespace

json colocation_result_to_json(const ColocationResult& r)
{
    json models = json::array();
    for (const PlacedModel& m : r.models)
        models.push_back(model_to_json(m));
    json pool = json::array();
    for (const PoolGroupUse& g : r.pool)
        pool.push_back({ { "group", g.group }, { "gpu", g.gpu }, { "gpus", g.gpus }, { "used", g.used },
            { "host_link",
                { { "kind", g.host_link.kind }, { "bw_GBps", g.host_link.bw_Bps / units::kGB },
                    { "shared_by", g.host_link.shared_by },
                    { "shared_GBps", host_link_shared_Bps(g.host_link) / units::kGB },
                    { "source", g.host_link.source } } } });
    return json { { "schema", 1 }, { "mode", "colocation" }, { "feasible", r.feasible },
        { "objective", { { "normalised_throughput", r.objective }, { "slo_met", r.slo_met } } },
        { "evaluated", r.evaluated }, { "seconds", r.seconds }, { "pool", pool }, { "models", models },
        { "suggestion", r.suggestion }, { "warnings", r.warnings } };
}

std::string colocation_result_to_text(const ColocationScenario& s, const ColocationResult& r)
{
    std::string out = s.description.empty() ? std::string() : s.description + "\n";
    out += "Co-location of " + std::to_string(s.models.size()) + " models";
    for (const PoolGroupUse& g : r.pool)
        out += (g.group == r.pool.front().group ? " on " : " + ") + std::to_string(g.gpus) + " " + g.gpu + " ("
            + g.group + ", " + std::to_string(g.used) + " used)";
    out += format_number("; %.0f placements in ", static_cast<double>(r.evaluated))
        + format_number("%.2f s\n", r.seconds);
    for (const PoolGroupUse& g : r.pool)
        out += "host link of " + g.group + ": " + g.host_link.kind
            + format_number(" %.1f GB/s", g.host_link.bw_Bps / units::kGB)
            + (g.host_link.shared_by > 1
                    ? format_number(", %.1f GB/s shared by ", host_link_shared_Bps(g.host_link) / units::kGB)
                        + std::to_string(g.host_link.shared_by) + " GPUs"
                    : std::string())
            + "\n";
    out += "preemption: " + std::string(to_string(s.preemption.mode)) + ", KV "
        + std::string(to_string(s.preemption.kv)) + "\n\n";
    out += "model              group   GPUs  TP x n  resid.  TTFT ms  TPOT ms   tokens/s  vs alone  preempt s "
           "(weights + KV + warm-up)\n";
    for (const PlacedModel& m : r.models) {
        if (!m.placed) {
            out += m.name + "  not placed\n";
            continue;
        }
        const ServingPrediction& p = m.offloaded.prediction;
        char line[320];
        std::snprintf(line, sizeof line,
            "%-18s %-7s %4d  %2d x %-2d  %5.0f%%  %7.0f  %7.1f  %9.0f  %7.2fx  %6.1f (%.1f + %.1f + %.1f)%s\n",
            m.name.c_str(), m.placement.group.c_str(), m.placement.gpus(), m.placement.tp, m.placement.replicas,
            100.0 * m.placement.residency, p.ttft_ms, p.tpot_ms, p.output_tokens_per_s, m.slowdown_vs_alone,
            m.preemption.total_s(), m.preemption.weights_reload_s, m.preemption.kv_s, m.preemption.warm_up_s,
            p.slo_met ? "" : "  SLO missed");
        out += line;
    }
    out += "\n";
    for (const PlacedModel& m : r.models)
        if (m.placed)
            out += "- " + m.explanation + "\n";
    out += "\nSuggestion:\n";
    for (const std::string& line : r.suggestion)
        out += "- " + line + "\n";
    for (const std::string& w : r.warnings)
        out += "warning: " + w + "\n";
    return out;
}

} // namespace parallax

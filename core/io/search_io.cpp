#include "io/search_io.hpp"

#include "io/number_format.hpp"
#include "io/prediction_io.hpp"
#include "io/scenario_io.hpp"
#include "spec/framework_support.hpp"
#include "spec/units.hpp"

#include <cstdio>

namespace parallax {

using nlohmann::json;

namespace {

std::string short_strategy(const Strategy& s)
{
    std::string out = "tp" + std::to_string(s.tp) + " pp" + std::to_string(s.pp) + " dp" + std::to_string(s.dp);
    if (s.cp > 1)
        out += " cp" + std::to_string(s.cp);
    if (s.ep > 1)
        out += " ep" + std::to_string(s.ep);
    if (s.vpp > 1)
        out += " vpp" + std::to_string(s.vpp);
    out += " mb" + std::to_string(s.micro_batch) + " " + std::string(to_string(s.schedule))
        + " rc:" + std::string(to_string(s.recompute)) + " zero" + std::to_string(s.zero)
        + (s.sequence_parallel ? " sp" : "") + (s.offload_optimizer ? " offload" : "");
    return out;
}

json frameworks_json(const std::vector<Framework>& fs)
{
    json a = json::array();
    for (Framework f : fs)
        a.push_back(std::string(to_string(f)));
    return a;
}

} // namespace

json search_result_to_json(const SearchResult& r)
{
    json j;
    j["strategy"] = strategy_to_json(r.strategy);
    j["prediction"] = prediction_to_json(r.prediction);
    json e;
    e["limiter"] = r.limiter;
    const TimeBreakdown& t = r.analytic.time;
    e["breakdown_s"] = { { "compute", t.compute_s }, { "recompute", t.recompute_s }, { "bubble", t.bubble_s },
        { "exposed_tp", t.exposed_tp_s }, { "exposed_pp", t.exposed_pp_s }, { "exposed_dp", t.exposed_dp_s },
        { "exposed_cp", t.exposed_cp_s }, { "exposed_ep", t.exposed_ep_s }, { "optimizer", t.optimizer_s },
        { "offload", t.offload_s } };
    if (r.runner_up) {
        const RunnerUp& u = *r.runner_up;
        e["runner_up"] = { { "strategy", strategy_to_json(u.strategy) }, { "differs_in", u.dimension },
            { "slower_fraction", u.slower_fraction },
            { "text",
                u.dimension + " would be " + format_number("%.1f%%", 100 * u.slower_fraction) + " slower (" + u.because
                    + ")" } };
    }
    j["explanation"] = e;
    j["indistinguishable_from_best"] = r.indistinguishable_from_best;
    j["frameworks"] = frameworks_json(r.frameworks);
    return j;
}

json search_outcome_to_json(const SearchOutcome& o)
{
    json j;
    j["schema"] = 1;
    j["evaluated"] = o.evaluated;
    j["feasible"] = o.feasible;
    j["seconds"] = o.seconds;
    j["pruned"] = o.pruned;
    j["gpus"] = o.gpus;
    j["cancelled"] = o.cancelled;
    if (o.power_budget_kW > 0)
        j["power_budget_kW"] = o.power_budget_kW;
    if (o.max_slowdown > 0) {
        j["max_slowdown"] = o.max_slowdown;
        j["fastest_step_s"] = o.fastest_step_s;
    }
    // Whose plans were searched: "any" (--any-framework) or the scenario's training.framework.
    j["framework"] = o.any_framework ? std::string("any") : std::string(to_string(o.framework));
    j["notes"] = o.notes;
    json results = json::array();
    for (const auto& r : o.results)
        results.push_back(search_result_to_json(r));
    j["results"] = results;
    json pareto = json::array();
    for (const auto& r : o.pareto)
        pareto.push_back({ { "strategy", strategy_to_json(r.strategy) }, { "tokens_per_s", r.analytic.tokens_per_s },
            { "peak_memory_GiB", r.analytic.peak_memory_bytes / units::kGiB },
            { "avg_W_per_gpu", r.analytic.power.avg_W_per_gpu }, { "cluster_avg_kW", r.analytic.power.cluster_avg_kW },
            { "frameworks", frameworks_json(r.frameworks) } });
    j["pareto"] = pareto;
    return j;
}

json sweep_to_json(const std::vector<SweepPoint>& points)
{
    json j;
    j["schema"] = 1;
    json arr = json::array();
    for (const auto& p : points) {
        json pj;
        pj["gpus"] = p.gpus;
        pj["label"] = p.label;
        pj["best"] = p.has_best ? search_result_to_json(p.search.results.front()) : json(nullptr);
        pj["tokens_per_s"] = p.tokens_per_s;
        pj["tokens_per_s_per_gpu"] = p.tokens_per_s_per_gpu;
        pj["marginal_tokens_per_s_per_added_gpu"] = p.marginal_tokens_per_s_per_added_gpu;
        pj["marginal_efficiency"] = p.marginal_efficiency;
        pj["scaling_efficiency"] = p.scaling_efficiency;
        pj["family"] = p.family;
        pj["notes"] = p.notes;
        pj["evaluated"] = p.search.evaluated;
        pj["seconds"] = p.search.seconds;
        arr.push_back(pj);
    }
    j["points"] = arr;
    return j;
}

std::string search_outcome_to_text(const SearchOutcome& o)
{
    std::string out = "searched " + std::to_string(o.evaluated) + " strategies on " + std::to_string(o.gpus) + " GPUs ("
        + std::to_string(o.feasible) + " feasible, " + std::to_string(o.pruned) + " dominated) in "
        + format_number("%.2f s", o.seconds) + (o.cancelled ? " (stopped)" : "") + "\n";
    if (o.power_budget_kW > 0)
        out += "power budget " + format_number("%.1f kW", o.power_budget_kW) + " (GPUs + node overhead, average)\n";
    if (o.max_slowdown > 0)
        out += "energy within " + format_number("%.1f%%", 100 * o.max_slowdown) + " of the fastest step ("
            + format_number("%.3f s", o.fastest_step_s) + ")\n";
    out += o.any_framework ? std::string("plans of every framework, each with the frameworks that run it\n")
                           : "plans " + std::string(to_string(o.framework)) + " runs (training.framework)\n";
    for (const auto& note : o.notes)
        out += "note: " + note + "\n";
    out += "\n";
    int rank = 1;
    for (const auto& r : o.results) {
        const Prediction& p = r.prediction;
        char line[512];
        std::snprintf(line, sizeof line,
            "%2d. %-58s %9.0f tok/s  %5.1f%% MFU  %6.2f s/step  %5.1f GiB  %5.0f W  %.3f J/tok  %s  [%s]\n", rank++,
            short_strategy(r.strategy).c_str(), p.tokens_per_s, 100 * p.mfu, p.step_time_s,
            p.peak_memory_bytes / units::kGiB, p.power.avg_W_per_gpu, p.power.energy_J_per_token, r.limiter.c_str(),
            p.fidelity == Fidelity::simulated ? "simulated" : "analytic");
        out += line;
        if (o.any_framework)
            out += "      frameworks: " + frameworks_label(r.frameworks) + "\n";
        if (r.indistinguishable_from_best)
            out += "      not distinguishable from #1: their " + format_number("%.0f%%", 100 * p.interval.level)
                + " bands overlap\n";
        if (p.interval.best_measured_mfu_exceeded > 0)
            out += "      beyond every measured run: " + format_number("%.1f%%", 100 * p.mfu)
                + " MFU predicted, the best of its class measured "
                + format_number("%.1f%%", 100 * p.interval.best_measured_mfu_exceeded) + " (band widened to it)\n";
        if (r.runner_up)
            out += "      runner-up: " + r.runner_up->dimension + " would be "
                + format_number("%.1f%%", 100 * r.runner_up->slower_fraction) + " slower (" + r.runner_up->because
                + ")\n";
    }
    if (o.results.empty())
        out += "no feasible strategy\n";
    return out;
}

std::string sweep_to_text(const std::vector<SweepPoint>& points)
{
    std::string out;
    for (const auto& p : points) {
        char line[512];
        if (p.has_best)
            std::snprintf(line, sizeof line,
                "%-20s %11.0f tok/s  %8.1f per GPU  marginal %6.0f%%  scaling %5.1f%%  %s\n", p.label.c_str(),
                p.tokens_per_s, p.tokens_per_s_per_gpu, 100 * p.marginal_efficiency, 100 * p.scaling_efficiency,
                p.family.c_str());
        else
            std::snprintf(line, sizeof line, "%-20s no feasible plan\n", p.label.c_str());
        out += line;
        for (const auto& n : p.notes)
            out += "    * " + n + "\n";
    }
    return out;
}

} // namespace parallax

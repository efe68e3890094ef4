#include "io/search_io.hpp"

#include "io/csv_writer.hpp"
#include "io/number_format.hpp"
#include "io/prediction_io.hpp"
#include "io/scenario_io.hpp"
#include "io/strategy_csv.hpp"
#include "search/search_removals.hpp"
#include "spec/framework_support.hpp"
#include "spec/strategy_label.hpp"
#include "spec/units.hpp"

#include <cstdio>

namespace parallax {

using nlohmann::json;

namespace {

json frameworks_json(const std::vector<Framework>& fs)
{
    json a = json::array();
    for (Framework f : fs)
        a.push_back(std::string(to_string(f)));
    return a;
}

} // namespace

std::vector<std::string> result_labels(const std::vector<SearchResult>& results)
{
    std::vector<Strategy> plans;
    plans.reserve(results.size());
    for (const SearchResult& r : results)
        plans.push_back(r.strategy);
    return distinguishing_labels(plans);
}

json search_result_to_json(const SearchResult& r, const std::string& label)
{
    json j;
    j["label"] = label;
    j["strategy"] = strategy_to_json(r.strategy);
    j["prediction"] = prediction_to_json(r.prediction);
    json e;
    e["limiter"] = r.limiter;
    const TimeBreakdown& t = r.analytic.time;
    e["breakdown_s"] = { { "compute", t.compute_s }, { "recompute", t.recompute_s }, { "bubble", t.bubble_s },
        { "exposed_tp", t.exposed_tp_s }, { "exposed_pp", t.exposed_pp_s }, { "exposed_dp", t.exposed_dp_s },
        { "exposed_cp", t.exposed_cp_s }, { "exposed_ep", t.exposed_ep_s }, { "optimizer", t.optimizer_s },
        { "offload", t.offload_s }, { "data_stall", t.data_stall_s } };
    if (r.runner_up) {
        const RunnerUp& u = *r.runner_up;
        e["runner_up"] = { { "label", strategy_label(u.strategy) }, { "strategy", strategy_to_json(u.strategy) },
            { "differs_in", u.dimension }, { "slower_fraction", u.slower_fraction },
            { "text",
                u.dimension + " would be " + format_number("%.1f%%", 100 * u.slower_fraction) + " slower (" + u.because
                    + ")" } };
    }
    j["explanation"] = e;
    j["indistinguishable_from_best"] = r.indistinguishable_from_best;
    j["frameworks"] = frameworks_json(r.frameworks);
    if (r.goodput_tokens_per_s > 0)
        j["goodput_tokens_per_s"] = r.goodput_tokens_per_s;
    if (r.nearest_run)
        j["nearest_measured_run"] = measured_run_match_json(*r.nearest_run);
    return j;
}

namespace {

json removals_json(const std::vector<SearchRemoval>& removed)
{
    json a = json::array();
    for (const SearchRemoval& r : removed)
        a.push_back({ { "key", r.key }, { "reason", r.reason }, { "count", r.count } });
    return a;
}

} // namespace

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
    j["removed"] = removals_json(o.removed);
    if (o.ranked_by_goodput)
        j["ranked_by"] = "goodput_tokens_per_s";
    json results = json::array();
    const std::vector<std::string> labels = result_labels(o.results);
    for (std::size_t i = 0; i < o.results.size(); ++i)
        results.push_back(search_result_to_json(o.results[i], labels[i]));
    j["results"] = results;
    json pareto = json::array();
    const std::vector<std::string> pareto_labels = result_labels(o.pareto);
    for (std::size_t i = 0; i < o.pareto.size(); ++i) {
        const SearchResult& r = o.pareto[i];
        pareto.push_back({ { "label", pareto_labels[i] }, { "strategy", strategy_to_json(r.strategy) },
            { "tokens_per_s", r.analytic.tokens_per_s },
            { "peak_memory_GiB", r.analytic.peak_memory_bytes / units::kGiB },
            { "avg_W_per_gpu", r.analytic.power.avg_W_per_gpu }, { "cluster_avg_kW", r.analytic.power.cluster_avg_kW },
            { "frameworks", frameworks_json(r.frameworks) } });
    }
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
        pj["best"] = p.has_best
            ? search_result_to_json(p.search.results.front(), strategy_label(p.search.results.front().strategy))
            : json(nullptr);
        pj["tokens_per_s"] = p.tokens_per_s;
        pj["tokens_per_s_per_gpu"] = p.tokens_per_s_per_gpu;
        pj["marginal_tokens_per_s_per_added_gpu"] = p.marginal_tokens_per_s_per_added_gpu;
        pj["marginal_efficiency"] = p.marginal_efficiency;
        pj["scaling_efficiency"] = p.scaling_efficiency;
        pj["family"] = p.family;
        pj["notes"] = p.notes;
        pj["removed"] = removals_json(p.search.removed);
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
    if (o.ranked_by_goodput)
        out += "ranked by goodput: tokens/s after interruptions, checkpoints and recovery (reliability section)\n";
    for (const auto& note : o.notes)
        out += "note: " + note + "\n";
    out += "\n";
    const std::vector<std::string> labels = result_labels(o.results);
    for (std::size_t i = 0; i < o.results.size(); ++i) {
        const SearchResult& r = o.results[i];
        const Prediction& p = r.prediction;
        // The plan on its own line: labels differ in length, and a plan that needs a hidden setting to
        // tell it from its neighbour must not push the numbers out of their columns.
        out += format_number("%2.0f. ", static_cast<double>(i + 1)) + labels[i] + "\n";
        char line[256];
        std::snprintf(line, sizeof line,
            "    %9.0f tok/s  %5.1f%% MFU  %6.2f s/step  %5.1f GiB  %5.0f W  %.3f J/tok  %s  [%s]\n", p.tokens_per_s,
            100 * p.mfu, p.step_time_s, p.peak_memory_bytes / units::kGiB, p.power.avg_W_per_gpu,
            p.power.energy_J_per_token, r.limiter.c_str(),
            p.fidelity == Fidelity::simulated ? "simulated" : "analytic");
        out += line;
        if (o.ranked_by_goodput)
            out += "    " + format_number("%.0f", r.goodput_tokens_per_s) + " goodput tok/s ("
                + format_number("%.1f%%", p.tokens_per_s > 0 ? 100 * r.goodput_tokens_per_s / p.tokens_per_s : 0.0)
                + " of the throughput)\n";
        if (o.any_framework)
            out += "    frameworks: " + frameworks_label(r.frameworks) + "\n";
        if (r.indistinguishable_from_best)
            out += "    not distinguishable from #1: their " + format_number("%.0f%%", 100 * p.interval.level)
                + " bands overlap\n";
        if (p.interval.best_measured_mfu_exceeded > 0)
            out += "    beyond every measured run: " + format_number("%.1f%%", 100 * p.mfu)
                + " MFU predicted, the best of its class measured "
                + format_number("%.1f%%", 100 * p.interval.best_measured_mfu_exceeded) + " (band widened to it)\n";
        if (r.nearest_run)
            out += "    nearest measured run: " + measured_run_match_text(*r.nearest_run) + "\n";
        if (r.runner_up)
            out += "    runner-up: " + r.runner_up->dimension + " would be "
                + format_number("%.1f%%", 100 * r.runner_up->slower_fraction) + " slower (" + r.runner_up->because
                + ")\n";
    }
    if (o.results.empty())
        out += "no feasible strategy; candidates removed, by what (the setting to relax first):\n"
            + removals_text(o.removed, "  ");
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
        if (p.has_best)
            out += "    best: " + strategy_label(p.search.results.front().strategy) + "\n";
        else
            out += removals_text(p.search.removed, "    removed ");
        for (const auto& n : p.notes)
            out += "    * " + n + "\n";
    }
    return out;
}

std::string search_outcome_to_csv(const SearchOutcome& o)
{
    CsvWriter out { "rank", "label", "tokens_per_s", "mfu", "step_time_s", "peak_memory_GiB", "avg_W_per_gpu",
        "energy_J_per_token", "limiter", "fidelity", "indistinguishable_from_best", "frameworks", "tp", "pp", "dp",
        "cp", "ep", "vpp", "micro_batch", "schedule", "zero", "recompute", "sequence_parallel", "offload_optimizer" };
    const std::vector<std::string> labels = result_labels(o.results);
    for (std::size_t i = 0; i < o.results.size(); ++i) {
        const SearchResult& r = o.results[i];
        const Prediction& p = r.prediction;
        const Strategy& s = r.strategy;
        out.integer(static_cast<long long>(i + 1))
            .field(labels[i])
            .number(p.tokens_per_s, 10)
            .number(p.mfu, 6)
            .number(p.step_time_s, 8)
            .number(p.peak_memory_bytes / units::kGiB, 6)
            .number(p.power.avg_W_per_gpu, 6)
            .number(p.power.energy_J_per_token, 6)
            .field(r.limiter)
            .field(p.fidelity == Fidelity::simulated ? "simulated" : "analytic")
            .integer(r.indistinguishable_from_best ? 1 : 0)
            .field(frameworks_label(r.frameworks));
        degree_fields(out, s)
            .field(to_string(s.schedule))
            .integer(s.zero)
            .field(to_string(s.recompute))
            .integer(s.sequence_parallel ? 1 : 0)
            .integer(s.offload_optimizer ? 1 : 0)
            .end_row();
    }
    return out.text();
}

std::string sweep_to_csv(const std::vector<SweepPoint>& points)
{
    CsvWriter out { "point", "gpus", "has_plan", "tokens_per_s", "tokens_per_s_per_gpu", "marginal_efficiency",
        "scaling_efficiency", "family", "label", "notes" };
    for (const SweepPoint& p : points) {
        std::string notes;
        for (const std::string& n : p.notes)
            notes += (notes.empty() ? "" : "; ") + n;
        out.field(p.label)
            .integer(p.gpus)
            .integer(p.has_best ? 1 : 0)
            .number(p.tokens_per_s, 10)
            .number(p.tokens_per_s_per_gpu, 8)
            .number(p.marginal_efficiency, 6)
            .number(p.scaling_efficiency, 6)
            .field(p.family)
            .field(p.has_best ? strategy_label(p.search.results.front().strategy) : std::string())
            .quoted_field(notes)
            .end_row();
    }
    return out.text();
}

} // namespace parallax

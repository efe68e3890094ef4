#include "io/prediction_io.hpp"

#include "calibration/nearest_run.hpp"

#include "io/number_format.hpp"
#include "spec/strategy_label.hpp"
#include "spec/units.hpp"

#include <cmath>
#include <cstdio>

namespace parallax {

using nlohmann::json;

namespace {

double finite(double v)
{
    return std::isfinite(v) ? v : 0.0;
}

json memory_json(const MemoryBreakdown& m)
{
    return json { { "weights", finite(m.weights / units::kGiB) }, { "gradients", finite(m.gradients / units::kGiB) },
        { "optimizer", finite(m.optimizer / units::kGiB) }, { "activations", finite(m.activations / units::kGiB) },
        { "other", finite(m.other / units::kGiB) } };
}

} // namespace

std::string format_si(double value, const char* unit, int precision)
{
    const char* prefixes[] = { "", "k", "M", "G", "T", "P", "E" };
    int i = 0;
    double v = value;
    while (std::fabs(v) >= 1000 && i < 6) {
        v /= 1000;
        ++i;
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*g %s%s", precision, v, prefixes[i], unit);
    return buf;
}

namespace {

// The error band (docs/cli.md, `predict --json`): null intervals when the prediction has none.
void add_interval_json(json& j, const PredictionInterval& i)
{
    if (i.level <= 0) {
        j["tokens_per_s_interval"] = nullptr;
        j["step_time_s_interval"] = nullptr;
        j["interval_level"] = nullptr;
        return;
    }
    j["tokens_per_s_interval"] = { finite(i.tokens_per_s_low), finite(i.tokens_per_s_high) };
    j["step_time_s_interval"] = { finite(i.step_time_s_low), finite(i.step_time_s_high) };
    j["interval_level"] = i.level;
    j["interval_basis"] = i.basis;
    j["far_from_validation"] = i.far_from_validation;
    if (i.best_measured_mfu_exceeded > 0)
        j["best_measured_mfu_exceeded"] = i.best_measured_mfu_exceeded;
    if (i.memory_level > 0) {
        j["peak_memory_GiB_interval"]
            = { finite(i.peak_memory_bytes_low / units::kGiB), finite(i.peak_memory_bytes_high / units::kGiB) };
        j["memory_interval_basis"] = i.memory_basis;
    } else {
        j["peak_memory_GiB_interval"] = nullptr;
    }
}

} // namespace

json prediction_to_json(const Prediction& p)
{
    json j;
    j["schema"] = 1;
    j["feasible"] = p.feasible;
    j["step_time_s"] = finite(p.step_time_s);
    j["tokens_per_s"] = finite(p.tokens_per_s);
    j["tflops_per_gpu"] = finite(p.tflops_per_gpu);
    j["mfu"] = finite(p.mfu);
    j["bubble_fraction"] = finite(p.bubble_fraction);
    j["memory"] = { { "peak_GiB", finite(p.peak_memory_bytes / units::kGiB) },
        { "capacity_GiB", finite(p.capacity_bytes / units::kGiB) }, { "breakdown_GiB", memory_json(p.memory) } };
    // Host memory: per node, shared by its GPUs' offloaded states and activations.
    j["memory"]["host"] = { { "per_gpu_GiB", finite(p.memory.host / units::kGiB) },
        { "per_node_GiB", finite(p.host_memory_bytes_per_node / units::kGiB) },
        { "capacity_per_node_GiB", finite(p.host_capacity_bytes_per_node / units::kGiB) } };
    j["communication_s"] = { { "tp", finite(p.communication_s.tp) }, { "pp", finite(p.communication_s.pp) },
        { "dp", finite(p.communication_s.dp) }, { "cp", finite(p.communication_s.cp) },
        { "ep", finite(p.communication_s.ep) }, { "exposed", finite(p.communication_s.exposed) } };
    j["power"]
        = { { "avg_W_per_gpu", finite(p.power.avg_W_per_gpu) }, { "peak_W_per_gpu", finite(p.power.peak_W_per_gpu) },
              { "energy_J_per_token", finite(p.power.energy_J_per_token) } };
    {
        // Additions (power_model.hpp): the step's energy, the limits, and the node / rack / cluster budget.
        const PowerEstimate& w = p.power;
        json& pj = j["power"];
        pj["energy_J_per_iteration_per_gpu"] = finite(w.energy_J_per_step_per_gpu);
        pj["energy_kWh_per_iteration"] = finite(w.energy_J_per_step / 3.6e6);
        pj["idle_W"] = finite(w.idle_W);
        pj["cap_W"] = finite(w.cap_W);
        pj["thermal_limit_W"] = finite(w.thermal_limit_W);
        pj["clock_MHz"] = finite(w.clock_MHz);
        pj["busy_fraction"] = finite(w.busy_fraction);
        pj["power_capped"] = w.power_capped;
        pj["cap_slowdown"] = finite(w.cap_slowdown);
        pj["thermally_limited"] = w.thermal_clock > 0;
        pj["node"] = { { "avg_W", finite(w.avg_W_per_node) }, { "peak_W", finite(w.peak_W_per_node) },
            { "overhead_W", finite(w.node_overhead_W) } };
        pj["rack"] = { { "nodes", finite(w.nodes_per_rack) }, { "avg_kW", finite(w.rack_avg_kW) },
            { "peak_kW", finite(w.rack_peak_kW) } };
        pj["cluster"] = { { "nodes", finite(w.nodes) }, { "racks", finite(w.racks) },
            { "avg_kW", finite(w.cluster_avg_kW) }, { "peak_kW", finite(w.cluster_peak_kW) } };
    }
    j["warnings"] = p.warnings;
    // Additions beyond the contract's required keys.
    j["fidelity"] = p.fidelity == Fidelity::analytic ? "analytic" : "simulated";
    j["hfu"] = finite(p.hfu);
    j["microbatches"] = p.microbatches;
    j["checkpoint_GiB"] = finite(p.checkpoint_bytes / units::kGiB);
    if (p.moe_dropped_fraction > 0)
        j["moe_dropped_fraction"] = finite(p.moe_dropped_fraction);
    if (!p.feasible)
        j["infeasible_reason"] = p.infeasible_reason;
    j["memory"]["peak_stage"] = p.peak_memory_stage;
    j["time_breakdown_s"] = { { "compute", finite(p.time.compute_s) }, { "recompute", finite(p.time.recompute_s) },
        { "bubble", finite(p.time.bubble_s) }, { "exposed_tp", finite(p.time.exposed_tp_s) },
        { "exposed_pp", finite(p.time.exposed_pp_s) }, { "exposed_dp", finite(p.time.exposed_dp_s) },
        { "exposed_cp", finite(p.time.exposed_cp_s) }, { "exposed_ep", finite(p.time.exposed_ep_s) },
        { "optimizer", finite(p.time.optimizer_s) }, { "offload", finite(p.time.offload_s) },
        { "data_stall", finite(p.time.data_stall_s) }, { "host_copy", finite(p.time.host_copy_s) } };
    json stages = json::array();
    for (const auto& s : p.stages) {
        stages.push_back(
            { { "stage", s.stage }, { "layers", s.layers }, { "in_flight_microbatches", s.in_flight_microbatches },
                { "forward_s", finite(s.forward_s) }, { "backward_s", finite(s.backward_s) },
                { "memory_GiB", finite(s.memory.total() / units::kGiB) }, { "breakdown_GiB", memory_json(s.memory) },
                { "clock_MHz", finite(s.clock_MHz) }, { "avg_W", finite(s.avg_W) }, { "peak_W", finite(s.peak_W) } });
    }
    j["stages"] = stages;
    j["assumptions"] = p.assumptions;
    add_interval_json(j, p.interval);
    return j;
}

namespace {

// "  80% band  1,600,000-1,810,000 tok/s, step 9.27-10.7 s", then what the band rests on.
std::string interval_text(const PredictionInterval& i)
{
    std::string out = "  " + format_number("%.0f%% band", 100 * i.level) + "  " + format_grouped(i.tokens_per_s_low, 3)
        + "-" + format_grouped(i.tokens_per_s_high, 3) + " tok/s, step " + format_number("%.3g", i.step_time_s_low)
        + "-" + format_number("%.3g s", i.step_time_s_high) + "\n";
    out += "            from " + i.basis + "\n";
    if (i.far_from_validation)
        out += "            far from every validation run: trust the ranking more than the numbers\n";
    return out;
}

} // namespace

std::string prediction_to_text(const Scenario& sc, const Prediction& p)
{
    std::string out;
    const Strategy& s = sc.strategy;
    out += sc.model.name + " on " + std::to_string(sc.cluster.total_gpus()) + " x " + sc.cluster.gpu.name + "  ("
        + std::to_string(sc.cluster.nodes) + " nodes x " + std::to_string(sc.cluster.gpus_per_node) + ")\n";
    out += "strategy   " + strategy_label(s) + "  (" + std::to_string(p.microbatches) + " micro-batches)\n";
    out += "fidelity   " + std::string(p.fidelity == Fidelity::analytic ? "analytic" : "simulated") + "\n\n";
    out += p.feasible ? "feasible   yes\n" : "feasible   NO: " + p.infeasible_reason + "\n";
    out += "step time       " + format_number("%10.3f s", p.step_time_s) + "\n";
    out += "tokens/s        " + format_number("%10.0f", p.tokens_per_s) + "   ("
        + format_number("%.1f", p.tokens_per_s / sc.cluster.total_gpus()) + " per GPU)\n";
    if (p.interval.level > 0)
        out += interval_text(p.interval);
    if (const auto near = nearest_measured_run(builtin_error_bands(), sc.model, sc.training, sc.cluster, s))
        out += "  nearest measured run: " + measured_run_match_text(*near) + "\n";
    out += "TFLOP/s per GPU " + format_number("%10.1f", p.tflops_per_gpu) + "   MFU "
        + format_number("%.1f%%", 100 * p.mfu) + "   HFU " + format_number("%.1f%%", 100 * p.hfu) + "\n";
    out += "bubble          " + format_number("%9.1f%%", 100 * p.bubble_fraction) + "\n";
    out += "memory peak     " + format_number("%10.1f GiB", p.peak_memory_bytes / units::kGiB) + " of "
        + format_number("%.1f GiB", p.capacity_bytes / units::kGiB) + " (stage " + std::to_string(p.peak_memory_stage)
        + ")\n";
    if (p.interval.memory_level > 0)
        out += "  " + format_number("%.0f%% band", 100 * p.interval.memory_level) + "  "
            + format_number("%.1f", p.interval.peak_memory_bytes_low / units::kGiB) + "-"
            + format_number("%.1f GiB", p.interval.peak_memory_bytes_high / units::kGiB) + " from "
            + p.interval.memory_basis + "\n";
    out += "  weights " + format_number("%.1f", p.memory.weights / units::kGiB) + "  gradients "
        + format_number("%.1f", p.memory.gradients / units::kGiB) + "  optimizer "
        + format_number("%.1f", p.memory.optimizer / units::kGiB) + "  activations "
        + format_number("%.1f", p.memory.activations / units::kGiB) + "  other "
        + format_number("%.1f", p.memory.other / units::kGiB) + " GiB\n";
    if (p.host_memory_bytes_per_node > 0)
        out += "host memory     " + format_number("%10.1f GiB", p.host_memory_bytes_per_node / units::kGiB)
            + " per node of " + format_number("%.0f GiB", p.host_capacity_bytes_per_node / units::kGiB) + " ("
            + format_number("%.1f GiB", p.memory.host / units::kGiB) + " per GPU offloaded)\n";
    out += "time breakdown (critical stage, per step):\n";
    auto row = [&](const char* name, double v) {
        if (v > 0)
            out += "  " + std::string(name) + std::string(14 - std::string(name).size(), ' ')
                + format_number("%9.3f s", v) + format_number("  %5.1f%%", 100 * v / p.step_time_s) + "\n";
    };
    row("compute", p.time.compute_s);
    row("recompute", p.time.recompute_s);
    row("bubble", p.time.bubble_s);
    row("exposed TP", p.time.exposed_tp_s);
    row("exposed CP", p.time.exposed_cp_s);
    row("exposed EP", p.time.exposed_ep_s);
    row("exposed PP", p.time.exposed_pp_s);
    row("exposed DP", p.time.exposed_dp_s);
    row("optimizer", p.time.optimizer_s);
    row("offload", p.time.offload_s);
    row("data stall", p.time.data_stall_s);
    if (p.time.host_copy_s > 0)
        row("host copies", p.time.host_copy_s);
    out += "power           " + format_number("%10.0f W", p.power.avg_W_per_gpu) + " avg per GPU, "
        + format_number("%.0f W", p.power.peak_W_per_gpu) + " peak, "
        + format_number("%.3f J/token", p.power.energy_J_per_token) + "\n";
    out += "energy          " + format_number("%10.0f J", p.power.energy_J_per_step_per_gpu) + " per step per GPU, "
        + format_number("%.2f kWh", p.power.energy_J_per_step / 3.6e6) + " per step in all\n";
    out += "power budget    " + format_number("%10.1f kW", p.power.avg_W_per_node / 1000) + " per node (peak "
        + format_number("%.1f", p.power.peak_W_per_node / 1000) + "), " + format_number("%.1f kW", p.power.rack_avg_kW)
        + " per rack of " + format_number("%.0f", p.power.nodes_per_rack) + ", "
        + format_number("%.1f kW", p.power.cluster_avg_kW) + " cluster (peak "
        + format_number("%.1f", p.power.cluster_peak_kW) + ")\n";
    for (const auto& w : p.warnings)
        out += "warning: " + w + "\n";
    out += "assumptions:\n";
    for (const auto& a : p.assumptions)
        out += "  - " + a + "\n";
    return out;
}

} // namespace parallax

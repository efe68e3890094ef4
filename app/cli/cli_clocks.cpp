// parallax-cli clocks SCENARIO.json [--max-slowdown F] [--json] [--no-simulate]
// The per-stage DVFS planner (clock_planner.hpp): slower clocks for stages off the critical path.
#include "cli/cli_commands.hpp"
#include "cli/cli_common.hpp"
#include "cli/cli_parser.hpp"
#include "io/csv_writer.hpp"
#include "io/number_format.hpp"
#include "power/clock_planner.hpp"
#include "spec/input_error.hpp"

#include <nlohmann/json.hpp>

namespace parallax::cli {

namespace {

nlohmann::json fidelity_json(const ClockPlanFidelity& f)
{
    return { { "base_step_s", f.base_step_s }, { "step_s", f.step_s }, { "slowdown", f.slowdown() },
        { "base_energy_J_per_step", f.base_energy_J }, { "energy_J_per_step", f.energy_J },
        { "energy_saved", f.energy_saved() } };
}

} // namespace

namespace {

std::string clock_plan_json(const ClockPlan& plan, const ClockPlanOptions& o)
{
    nlohmann::json j;
    j["schema"] = 1;
    j["max_slowdown"] = o.max_slowdown;
    j["base_clock_MHz"] = plan.base_clock_MHz;
    j["stage_clock_MHz"] = plan.stage_clock_MHz;
    j["stage_base_W"] = plan.stage_base_W;
    j["stage_W"] = plan.stage_W;
    j["moves"] = plan.moves;
    j["analytic"] = fidelity_json(plan.analytic);
    if (plan.verified)
        j["simulated"] = fidelity_json(plan.simulated);
    j["notes"] = plan.notes;
    return j.dump(2) + "\n";
}

// The per-stage table; the totals are in --json.
std::string clock_plan_csv(const ClockPlan& plan)
{
    CsvWriter csv { "stage", "clock_MHz", "base_clock_MHz", "avg_W_per_gpu", "base_avg_W_per_gpu" };
    for (std::size_t i = 0; i < plan.stage_clock_MHz.size(); ++i) {
        csv.integer(static_cast<long long>(i)).number(plan.stage_clock_MHz[i], 8).number(plan.base_clock_MHz[i], 8);
        if (i < plan.stage_W.size())
            csv.number(plan.stage_W[i], 8).number(plan.stage_base_W[i], 8);
        else
            csv.field("").field("");
        csv.end_row();
    }
    return csv.text();
}

std::string clock_plan_text(const ClockPlan& plan, const ClockPlanOptions& o, const Scenario& scenario)
{
    std::string out = "per-stage clocks for " + scenario.model.name + " (pp " + std::to_string(scenario.strategy.pp)
        + "), step-time allowance " + format_number("%.1f%%", 100 * o.max_slowdown) + "\n\n";
    out += "stage   clock MHz (from)   avg W per GPU (from)\n";
    for (std::size_t i = 0; i < plan.stage_clock_MHz.size(); ++i)
        out += format_number("%5.0f", static_cast<double>(i)) + format_number("   %9.0f", plan.stage_clock_MHz[i])
            + format_number(" (%4.0f)", plan.base_clock_MHz[i])
            + (i < plan.stage_W.size()
                    ? format_number("   %13.0f", plan.stage_W[i]) + format_number(" (%4.0f)", plan.stage_base_W[i])
                    : "")
            + "\n";
    auto row = [&](const char* name, const ClockPlanFidelity& f) {
        out += std::string(name) + format_number("energy saved %5.2f%%", 100 * f.energy_saved())
            + format_number(", step time %+.2f%%", 100 * f.slowdown()) + format_number("  (%.3f s", f.base_step_s)
            + format_number(" -> %.3f s", f.step_s) + format_number(", %.0f kJ", f.base_energy_J / 1000)
            + format_number(" -> %.0f kJ per step)\n", f.energy_J / 1000);
    };
    out += "\n";
    row("analytic   ", plan.analytic);
    if (plan.verified)
        row("simulated  ", plan.simulated);
    for (const auto& n : plan.notes)
        out += "note: " + n + "\n";
    out += "\nscenario: \"training\": { \"stage_clock_MHz\": [";
    for (std::size_t i = 0; i < plan.stage_clock_MHz.size(); ++i)
        out += (i ? ", " : "") + format_number("%.0f", plan.stage_clock_MHz[i]);
    out += "] }\n";
    return out;
}

void add_clocks_options(CommandParser& cmd)
{
    cmd.parser().addOption({ QStringLiteral("json"), QStringLiteral("Print JSON.") });
    cmd.add_csv_option();
    cmd.parser().addOption(
        { QStringLiteral("max-slowdown"), QStringLiteral("Step-time increase allowed (default 0.01 = 1%)."),
            QStringLiteral("FRACTION"), QStringLiteral("0.01") });
    cmd.parser().addOption(
        { QStringLiteral("no-simulate"), QStringLiteral("Skip the event-simulator check of the plan.") });
    cmd.parser().addOption({ QStringLiteral("calibration"),
        QStringLiteral("Calibration: a JSON file from `parallax-cli calibrate`, builtin (default) or none."),
        QStringLiteral("FILE|builtin|none"), QStringLiteral("builtin") });
}

} // namespace

int run_clocks(const QStringList& args)
{
    CommandParser cmd(
        QStringLiteral("Plans a clock per pipeline stage that saves energy at (nearly) the same step time:\n"
                       "stages off the critical path run slower and at a lower voltage (after Perseus, SOSP 2024).\n"
                       "Put the result into the scenario as training.stage_clock_MHz."),
        QStringLiteral("SCENARIO"), QStringLiteral("scenario file or preset name"));
    add_clocks_options(cmd);
    if (auto rc = cmd.parse(args, 1, 1))
        return *rc;
    ClockPlanOptions o;
    bool ok = false;
    const QString slowdown_text = cmd.parser().value(QStringLiteral("max-slowdown"));
    o.max_slowdown = slowdown_text.toDouble(&ok);
    if (!ok || !(o.max_slowdown >= 0 && o.max_slowdown <= 1)) {
        print_err("parallax-cli clocks: --max-slowdown must be a number in [0, 1], got '" + slowdown_text.toStdString()
            + "'");
        return kBadInput;
    }
    o.verify_simulated = !cmd.parser().isSet(QStringLiteral("no-simulate"));
    Scenario scenario;
    Calibration calibration;
    try {
        scenario = load_scenario_argument(cmd.positional(0).toStdString(), PresetCatalog::standard());
        calibration = calibration_argument(cmd.parser().value(QStringLiteral("calibration")));
    } catch (const InputError& e) {
        print_err(e.what());
        return kBadInput;
    }
    if (scenario.cluster.gpu.clock_MHz <= 0) {
        print_err("parallax-cli clocks: " + cmd.positional(0).toStdString() + ": cluster.gpu.clock_MHz: the GPU "
            + scenario.cluster.gpu.name + " has no nominal clock to plan from");
        return kBadInput;
    }
    o.calibration = &calibration;
    const ClockPlan plan = plan_stage_clocks(scenario, o);
    if (cmd.parser().isSet(QStringLiteral("json")))
        print_out(clock_plan_json(plan, o));
    else if (cmd.csv())
        print_out(clock_plan_csv(plan));
    else
        print_out(clock_plan_text(plan, o, scenario));
    return kOk;
}

} // namespace parallax::cli

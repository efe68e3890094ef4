// parallax-cli timeline SCENARIO.json --out trace.json
#include "cli/cli_commands.hpp"
#include "cli/cli_common.hpp"
#include "cli/cli_parser.hpp"
#include "io/chrome_trace.hpp"
#include "sim/hetero_simulation.hpp"
#include "sim/simulated_model.hpp"
#include "spec/hetero_label.hpp"
#include "spec/input_error.hpp"
#include "spec/strategy_label.hpp"

#include <cstdio>

namespace parallax::cli {

namespace {

// A plain plan, or a heterogeneous one's stages each on its own GPU type (docs/heterogeneous.md).
SimulatedPlan simulate_scenario(const Scenario& scenario)
{
    if (!scenario.heterogeneous()) {
        const PlanContext ctx(scenario.model, scenario.training, scenario.cluster);
        return simulate_plan(ctx, scenario.strategy);
    }
    const HeteroModel model(scenario);
    return simulate_heterogeneous(model);
}

} // namespace

int run_timeline(const QStringList& args)
{
    CommandParser cmd(QStringLiteral("Simulates one training step and writes its per-device timeline as a Chrome trace "
                                     "(open it in https://ui.perfetto.dev or chrome://tracing)."),
        QStringLiteral("SCENARIO"), QStringLiteral("scenario file or preset name"));
    cmd.parser().addOption(
        { QStringLiteral("out"), QStringLiteral("Trace file to write (JSON)."), QStringLiteral("trace.json") });
    if (auto rc = cmd.parse(args, 1, 1))
        return *rc;
    if (!cmd.parser().isSet(QStringLiteral("out"))) {
        print_err("parallax-cli timeline: --out FILE is required");
        return kBadInput;
    }
    try {
        const Scenario scenario = load_scenario_argument(
            cmd.positional(0).toStdString(), PresetCatalog::standard(), ScenarioUse::plan, true);
        const SimulatedPlan sim = simulate_scenario(scenario);
        const std::string out = cmd.parser().value(QStringLiteral("out")).toStdString();
        const std::string label
            = scenario.heterogeneous() ? hetero_plan_label(scenario) : strategy_label(scenario.strategy);
        write_chrome_trace(sim, scenario.model.name + " " + label, out);
        char line[256];
        std::snprintf(line, sizeof line, ": %zu ops on %d stages, step %.3f s\n", sim.lowered.graph.size(),
            sim.lowered.graph.devices, sim.result.makespan_s + sim.window.extra_s);
        print_out("wrote " + out + line + "plan  " + label + "\n");
        if (sim.window.extrapolated())
            print_out("  the trace shows a steady-state window of " + std::to_string(sim.window.simulated_microbatches)
                + " of the step's " + std::to_string(sim.window.step_microbatches)
                + " micro-batches; the step time is extrapolated from it\n");
    } catch (const InputError& e) {
        print_err(e.what());
        return kBadInput;
    }
    return kOk;
}

} // namespace parallax::cli

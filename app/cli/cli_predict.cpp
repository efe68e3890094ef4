// parallax-cli predict SCENARIO.json [--json] [--fidelity analytic|simulated]
#include "calibration/nearest_run.hpp"
#include "cli/cli_colocation.hpp"
#include "cli/cli_commands.hpp"
#include "cli/cli_common.hpp"
#include "cli/cli_parser.hpp"
#include "io/goodput_io.hpp"
#include "io/hetero_prediction_io.hpp"
#include "io/improvements_io.hpp"
#include "io/prediction_io.hpp"
#include "io/serving_prediction_io.hpp"
#include "model/analytic_model.hpp"
#include "model/goodput_plan.hpp"
#include "serving/serving_model.hpp"
#include "sim/hetero_simulation.hpp"
#include "sim/simulated_model.hpp"
#include "spec/input_error.hpp"
#include "spec/strategy_label.hpp"

namespace parallax::cli {

namespace {

// A serving scenario: the serving model (docs/serving.md); --fidelity and --calibration are training's.
int predict_serving_scenario(const ServingScenario& s, bool as_json)
{
    const ServingPrediction p = predict_serving(s);
    if (as_json) {
        nlohmann::json j = serving_prediction_to_json(p);
        j["label"] = deployment_label(s);
        print_out(j.dump(2) + "\n");
    } else {
        print_out(serving_prediction_to_text(s, p));
    }
    return p.feasible ? kOk : kInfeasible;
}

// A heterogeneous plan: the per-replica model, or its stages simulated (the improvement waterfall is
// plain-cluster only so far); the stage reports stay the analytic model's.
int predict_heterogeneous_plan(
    CommandParser& cmd, const Scenario& scenario, const Calibration& calibration, const QString& fidelity)
{
    const HeteroModel model(scenario, calibration);
    HeteroPrediction h = model.prediction();
    if (fidelity == QLatin1String("simulated"))
        h.prediction = hetero_prediction_from_simulation(model, simulate_heterogeneous(model));
    if (cmd.parser().isSet(QStringLiteral("json"))) {
        nlohmann::json j = hetero_prediction_to_json(h);
        j["improvements"] = nlohmann::json::array();
        if (scenario.reliability)
            j["goodput"] = goodput_to_json(scenario_goodput(scenario, h));
        print_out(j.dump(2) + "\n");
    } else {
        print_out(hetero_prediction_to_text(scenario, h)
            + (scenario.reliability ? goodput_to_text(scenario_goodput(scenario, h)) : std::string()));
    }
    return h.prediction.feasible ? kOk : kInfeasible;
}

} // namespace

int run_predict(const QStringList& args)
{
    CommandParser cmd(QStringLiteral("Predicts step time, throughput, memory and power of one training plan,\n"
                                     "or latency, throughput, memory and power of one serving deployment.\n"
                                     "SCENARIO is a scenario file (docs/scenario-format.md) or a preset name."),
        QStringLiteral("SCENARIO"), QStringLiteral("scenario file or preset name"));
    cmd.parser().addOption({ QStringLiteral("json"), QStringLiteral("Print the contract's JSON instead of a table.") });
    cmd.parser().addOption({ QStringLiteral("fidelity"),
        QStringLiteral("analytic (default, closed form) or simulated (event simulation of the execution DAG)."),
        QStringLiteral("analytic|simulated"), QStringLiteral("analytic") });
    cmd.parser().addOption({ QStringLiteral("calibration"),
        QStringLiteral("Calibration: a JSON file from `parallax-cli calibrate`, builtin (default) or none."),
        QStringLiteral("FILE|builtin|none"), QStringLiteral("builtin") });
    if (auto rc = cmd.parse(args, 1, 1))
        return *rc;
    const QString fidelity = cmd.parser().value(QStringLiteral("fidelity"));
    if (fidelity != QLatin1String("analytic") && fidelity != QLatin1String("simulated")) {
        print_err(
            "parallax-cli predict: --fidelity must be analytic or simulated, got '" + fidelity.toStdString() + "'");
        return kBadInput;
    }
    Scenario scenario;
    Calibration calibration;
    try {
        const bool as_json = cmd.parser().isSet(QStringLiteral("json"));
        if (auto rc = predict_colocation_argument(cmd.positional(0).toStdString(), PresetCatalog::standard(), as_json))
            return *rc;
        if (auto serving = load_serving_argument(cmd.positional(0).toStdString(), PresetCatalog::standard()))
            return predict_serving_scenario(*serving, cmd.parser().isSet(QStringLiteral("json")));
        scenario = load_scenario_argument(
            cmd.positional(0).toStdString(), PresetCatalog::standard(), ScenarioUse::plan, true);
        calibration = calibration_argument(cmd.parser().value(QStringLiteral("calibration")));
    } catch (const InputError& e) {
        print_err(e.what());
        return kBadInput;
    }
    if (scenario.heterogeneous())
        return predict_heterogeneous_plan(cmd, scenario, calibration, fidelity);
    const PlanContext ctx(scenario.model, scenario.training, scenario.cluster, calibration);
    const Prediction p = fidelity == QLatin1String("simulated") ? predict_simulated(ctx, scenario.strategy)
                                                                : AnalyticModel(ctx).predict(scenario.strategy);
    const ImprovementWaterfall improvements = plan_improvements(scenario, calibration);
    if (cmd.parser().isSet(QStringLiteral("json"))) {
        nlohmann::json j = prediction_to_json(p);
        j["label"] = strategy_label(scenario.strategy);
        if (const auto near = nearest_measured_run(
                builtin_error_bands(), scenario.model, scenario.training, scenario.cluster, scenario.strategy))
            j["nearest_measured_run"] = measured_run_match_json(*near);
        j["improvements"] = improvements_to_json(improvements);
        if (scenario.reliability)
            j["goodput"] = goodput_to_json(scenario_goodput(scenario, p, calibration));
        print_out(j.dump(2) + "\n");
    } else {
        print_out(prediction_to_text(scenario, p)
            + (scenario.reliability ? goodput_to_text(scenario_goodput(scenario, p, calibration)) : std::string())
            + improvements_to_text(improvements));
    }
    return p.feasible ? kOk : kInfeasible;
}

} // namespace parallax::cli

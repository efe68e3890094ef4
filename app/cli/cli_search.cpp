// parallax-cli search SCENARIO.json [--json] [--top N] [--threads N] [--objective ...] [--refine N] [--any-framework]
// parallax-cli sweep  SCENARIO.json --gpus 64,128,... [--json] (or --global-batch / --seq-len / --clusters)
#include "cli/cli_commands.hpp"
#include "cli/cli_common.hpp"
#include "cli/cli_logging.hpp"
#include "cli/cli_parser.hpp"
#include "io/composite_search_io.hpp"
#include "io/hetero_search_io.hpp"
#include "io/scenario_io.hpp"
#include "io/search_io.hpp"
#include "io/serving_prediction_io.hpp"
#include "search/hetero_search.hpp"
#include "search/search_removals.hpp"
#include "serving/serving_search.hpp"
#include "spec/input_error.hpp"

#include <QThread>

#include <cstdio>

namespace parallax::cli {

namespace {

void add_search_options(CommandParser& cmd)
{
    cmd.parser().addOption({ QStringLiteral("json"), QStringLiteral("Print the contract's JSON.") });
    cmd.parser().addOption({ QStringLiteral("top"), QStringLiteral("Number of results (default 10)."),
        QStringLiteral("N"), QStringLiteral("10") });
    cmd.parser().addOption({ QStringLiteral("threads"), QStringLiteral("Worker threads (default: all cores)."),
        QStringLiteral("N"), QStringLiteral("0") });
    cmd.parser().addOption(
        { QStringLiteral("objective"), QStringLiteral("throughput (default), time_to_train or energy."),
            QStringLiteral("OBJECTIVE"), QStringLiteral("") });
    cmd.parser().addOption({ QStringLiteral("calibration"),
        QStringLiteral("Calibration: a JSON file from `parallax-cli calibrate`, builtin (default) or none."),
        QStringLiteral("FILE|builtin|none"), QStringLiteral("builtin") });
    cmd.parser().addOption({ QStringLiteral("power-budget-kW"),
        QStringLiteral(
            "Cluster power budget (average kW, GPUs + node overhead): plans above it are out; fewer nodes are "
            "searched when no plan of the whole cluster fits."),
        QStringLiteral("KW"), QString() });
    cmd.parser().addOption({ QStringLiteral("max-slowdown"),
        QStringLiteral(
            "With --objective energy: only plans within this fraction of the fastest step time (0.05 = 5%)."),
        QStringLiteral("FRACTION"), QString() });
    cmd.parser().addOption({ QStringLiteral("any-framework"),
        QStringLiteral("Search the plans of every framework, not only what training.framework runs; each plan is "
                       "labelled with the frameworks that can run it.") });
    cmd.parser().addOption({ QStringLiteral("refine"),
        QStringLiteral("Re-rank the best N analytic candidates with the event simulator (default 20, 0 = off)."),
        QStringLiteral("N"), QStringLiteral("20") });
    cmd.add_csv_option();
}

bool parse_int(const CommandParser& cmd, const char* name, int min, int max, int& out)
{
    bool ok = false;
    const QString text = const_cast<CommandParser&>(cmd).parser().value(QLatin1String(name));
    const int v = text.toInt(&ok);
    if (!ok || v < min || v > max) {
        print_err(std::string("parallax-cli: --") + name + " must be an integer in [" + std::to_string(min) + ", "
            + std::to_string(max) + "], got '" + text.toStdString() + "'");
        return false;
    }
    out = v;
    return true;
}

bool search_options(CommandParser& cmd, const Scenario& scenario, SearchOptions& o, Calibration& calibration)
{
    calibration = calibration_argument(cmd.parser().value(QStringLiteral("calibration")));
    o.calibration = &calibration;
    if (!parse_int(cmd, "top", 1, 10000, o.top) || !parse_int(cmd, "threads", 0, 1024, o.threads)
        || !parse_int(cmd, "refine", 0, 1000, o.refine_top))
        return false;
    QString objective = cmd.parser().value(QStringLiteral("objective"));
    if (objective.isEmpty() && scenario.search)
        objective = QString::fromStdString(scenario.search->objective);
    if (objective.isEmpty() || objective == QLatin1String("throughput"))
        o.objective = SearchObjective::throughput;
    else if (objective == QLatin1String("time_to_train"))
        o.objective = SearchObjective::time_to_train;
    else if (objective == QLatin1String("energy"))
        o.objective = SearchObjective::energy;
    else {
        print_err("parallax-cli: --objective must be throughput, time_to_train or energy, got '"
            + objective.toStdString() + "'");
        return false;
    }
    auto number = [&](const char* name, double min, double max, std::optional<double>& out) {
        const QString text = cmd.parser().value(QLatin1String(name));
        if (text.isEmpty())
            return true;
        bool ok = false;
        const double v = text.toDouble(&ok);
        if (!ok || !(v >= min && v <= max)) {
            print_err(std::string("parallax-cli: --") + name + " must be a number in [" + std::to_string(min) + ", "
                + std::to_string(max) + "], got '" + text.toStdString() + "'");
            return false;
        }
        out = v;
        return true;
    };
    if (!number("power-budget-kW", 1e-3, 1e9, o.power_budget_kW) || !number("max-slowdown", 0, 10, o.max_slowdown))
        return false;
    o.fix = search_fix_from(scenario);
    o.any_framework = cmd.parser().isSet(QStringLiteral("any-framework"));
    return true;
}

bool parse_list(const QString& text, const char* option, std::vector<long long>& out)
{
    for (const QString& part : text.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        bool ok = false;
        const long long v = part.trimmed().toLongLong(&ok);
        if (!ok || v <= 0) {
            print_err(std::string("parallax-cli sweep: --") + option
                + " takes positive integers separated by commas, got '" + part.toStdString() + "'");
            return false;
        }
        out.push_back(v);
    }
    if (out.empty()) {
        print_err(std::string("parallax-cli sweep: --") + option + " needs at least one value");
        return false;
    }
    return true;
}

// A cluster with node groups: the heterogeneous search (docs/heterogeneous.md, "Search"). The options
// that have no meaning for it yet are refused rather than ignored.
int run_hetero_search(CommandParser& cmd, const Scenario& scenario, const SearchOptions& plain)
{
    for (const char* option : { "power-budget-kW", "max-slowdown", "csv" })
        if (cmd.parser().isSet(QLatin1String(option))) {
            print_err(std::string("parallax-cli search: --") + option
                + " is not available for clusters with node groups (cluster.groups) yet");
            return kBadInput;
        }
    if (plain.objective == SearchObjective::energy) {
        print_err("parallax-cli search: the energy objective is not available for clusters with node groups "
                  "(cluster.groups) yet; use throughput");
        return kBadInput;
    }
    HeteroSearchOptions o;
    o.calibration = plain.calibration;
    o.threads = plain.threads;
    o.top = plain.top;
    o.fix = plain.fix;
    o.rank_by_goodput = scenario.reliability.has_value();
    const HeteroSearchOutcome outcome = search_heterogeneous(scenario, o);
    qCDebug(lcCli) << "heterogeneous search:" << outcome.layouts << "layouts," << outcome.evaluated << "plans in"
                   << outcome.seconds << "s";
    if (cmd.parser().isSet(QStringLiteral("json")))
        print_out(hetero_search_to_json(scenario, outcome).dump(2) + "\n");
    else
        print_out(hetero_search_to_text(scenario, outcome));
    return outcome.results.empty() ? kInfeasible : kOk;
}

} // namespace

int run_search(const QStringList& args)
{
    CommandParser cmd(
        QStringLiteral("Finds the best strategies for the scenario's model, cluster and training settings, among "
                       "the plans training.framework can run (the scenario's degrees are ignored and need not fit; "
                       "pin dimensions under \"search\": {\"fix\": {...}})."),
        QStringLiteral("SCENARIO"), QStringLiteral("scenario file or preset name"));
    add_search_options(cmd);
    if (auto rc = cmd.parse(args, 1, 1))
        return *rc;
    try {
        if (auto serving = load_serving_argument(cmd.positional(0).toStdString(), PresetCatalog::standard())) {
            int top = 10;
            if (!parse_int(cmd, "top", 1, 10000, top))
                return kBadInput;
            const ServingSearchResult r = search_serving(*serving, top);
            if (cmd.parser().isSet(QStringLiteral("json")))
                print_out(serving_search_to_json(r).dump(2) + "\n");
            else
                print_out(serving_search_to_text(*serving, r));
            return r.results.empty() ? kInfeasible : kOk;
        }
        const Scenario scenario = load_scenario_argument(
            cmd.positional(0).toStdString(), PresetCatalog::standard(), ScenarioUse::search, true);
        SearchOptions o;
        Calibration calibration;
        if (!search_options(cmd, scenario, o, calibration))
            return kBadInput;
        if (scenario.cluster.heterogeneous())
            return run_hetero_search(cmd, scenario, o);
        // With a reliability section, plans compete on the tokens/s they keep over a long run.
        o.rank_by_goodput = scenario.reliability.has_value();
        const SearchOutcome outcome = search_strategies(scenario, o);
        qCDebug(lcCli) << "searched" << outcome.evaluated << "strategies in" << outcome.seconds << "s on"
                       << (o.threads > 0 ? o.threads : QThread::idealThreadCount()) << "threads;" << outcome.feasible
                       << "feasible," << outcome.removed.size() << "removal reasons";
        // search.composite: composites around the best plain plans, after them.
        std::optional<CompositeOutcome> composite;
        if (scenario.search && scenario.search->composite) {
            CompositeSearchOptions co;
            co.spec = *scenario.search->composite;
            co.calibration = o.calibration;
            co.threads = o.threads;
            co.min_memory_headroom_fraction = scenario.search->min_memory_headroom_fraction;
            co.fix = o.fix;
            composite = search_composites(scenario, outcome.results, co);
        }
        if (cmd.parser().isSet(QStringLiteral("json"))) {
            nlohmann::json j = search_outcome_to_json(outcome);
            if (composite)
                j["composite"] = composite_outcome_to_json(*composite);
            print_out(j.dump(2) + "\n");
        } else if (cmd.csv()) {
            print_out(search_outcome_to_csv(outcome));
            if (outcome.results.empty()) // the table cannot say why it is empty: stderr does
                print_err("parallax-cli search: no feasible strategy; candidates removed, by what:\n"
                    + removals_text(outcome.removed, "  "));
        } else
            print_out(search_outcome_to_text(outcome) + (composite ? composite_outcome_to_text(*composite) : ""));
        return outcome.results.empty() ? kInfeasible : kOk;
    } catch (const InputError& e) {
        print_err(e.what());
        return kBadInput;
    }
}

int run_sweep(const QStringList& args)
{
    CommandParser cmd(
        QStringLiteral("Searches the best plan at each point of a sweep and shows where scaling stops paying."),
        QStringLiteral("SCENARIO"), QStringLiteral("scenario file or preset name"));
    add_search_options(cmd);
    cmd.parser().addOption({ QStringLiteral("gpus"),
        QStringLiteral("GPU counts, e.g. 64,128,256 (multiples of GPUs per node)."), QStringLiteral("LIST") });
    cmd.parser().addOption({ QStringLiteral("global-batch"), QStringLiteral("Global batch sizes to sweep instead."),
        QStringLiteral("LIST") });
    cmd.parser().addOption(
        { QStringLiteral("seq-len"), QStringLiteral("Sequence lengths to sweep instead."), QStringLiteral("LIST") });
    cmd.parser().addOption({ QStringLiteral("clusters"),
        QStringLiteral("Cluster presets to compare instead, e.g. dgx-h100-superpod,dgx-b200-superpod."),
        QStringLiteral("LIST") });
    cmd.parser().addOption({ QStringLiteral("stop-paying-below"),
        QStringLiteral("Marginal efficiency under which adding GPUs is reported as not paying (default 0.5)."),
        QStringLiteral("FRACTION"), QStringLiteral("0.5") });
    if (auto rc = cmd.parse(args, 1, 1))
        return *rc;
    const int kinds = (cmd.parser().isSet(QStringLiteral("gpus")) ? 1 : 0)
        + (cmd.parser().isSet(QStringLiteral("global-batch")) ? 1 : 0)
        + (cmd.parser().isSet(QStringLiteral("seq-len")) ? 1 : 0)
        + (cmd.parser().isSet(QStringLiteral("clusters")) ? 1 : 0);
    if (kinds != 1) {
        print_err("parallax-cli sweep: give exactly one of --gpus, --global-batch, --seq-len, --clusters");
        return kBadInput;
    }
    try {
        const Scenario scenario
            = load_scenario_argument(cmd.positional(0).toStdString(), PresetCatalog::standard(), ScenarioUse::search);
        SweepOptions o;
        Calibration calibration;
        if (!search_options(cmd, scenario, o.search, calibration))
            return kBadInput;
        bool ok = false;
        o.stop_paying_below = cmd.parser().value(QStringLiteral("stop-paying-below")).toDouble(&ok);
        if (!ok || o.stop_paying_below < 0 || o.stop_paying_below > 1) {
            print_err("parallax-cli sweep: --stop-paying-below must be a fraction in [0, 1]");
            return kBadInput;
        }
        std::vector<SweepPoint> points;
        std::vector<long long> values;
        if (cmd.parser().isSet(QStringLiteral("gpus"))) {
            if (!parse_list(cmd.parser().value(QStringLiteral("gpus")), "gpus", values))
                return kBadInput;
            points = sweep_gpus(scenario, values, o);
        } else if (cmd.parser().isSet(QStringLiteral("global-batch"))) {
            if (!parse_list(cmd.parser().value(QStringLiteral("global-batch")), "global-batch", values))
                return kBadInput;
            points = sweep_global_batch(scenario, values, o);
        } else if (cmd.parser().isSet(QStringLiteral("seq-len"))) {
            if (!parse_list(cmd.parser().value(QStringLiteral("seq-len")), "seq-len", values))
                return kBadInput;
            points = sweep_seq_len(scenario, values, o);
        } else {
            std::vector<ClusterSpec> clusters;
            for (const QString& name :
                cmd.parser().value(QStringLiteral("clusters")).split(QLatin1Char(','), Qt::SkipEmptyParts)) {
                ScenarioRefs refs;
                clusters.push_back(resolve_cluster(nlohmann::json(name.trimmed().toStdString()), "--clusters",
                    "--clusters", PresetCatalog::standard(), &refs));
            }
            points = sweep_clusters(scenario, clusters, o);
        }
        if (cmd.parser().isSet(QStringLiteral("json")))
            print_out(sweep_to_json(points).dump(2) + "\n");
        else if (cmd.csv())
            print_out(sweep_to_csv(points));
        else
            print_out(sweep_to_text(points));
        return kOk;
    } catch (const InputError& e) {
        print_err(e.what());
        return kBadInput;
    }
}

} // namespace parallax::cli

// parallax-cli runs [RUN_ID] [--json] [--store FILE] [--limit N] [--log]
// Lists the runs of the run store (newest first) with measured against predicted step time, or shows one
// run in full: its state history, parsed steps, benchmarks, notes and the files that were sent. Reads only
// the local store: no network.
#include "cli/cli_commands.hpp"
#include "cli/cli_common.hpp"
#include "cli/cli_parser.hpp"
#include "cli/cli_store.hpp"
#include "io/csv_writer.hpp"
#include "io/input_limits.hpp"
#include "runs/run_catalog.hpp"
#include "runs/run_report.hpp"
#include "spec/input_error.hpp"
#include "ssh/ssh_interaction.hpp"

#include <cstdio>

namespace parallax::cli {

using namespace parallax::remote;

namespace {

std::string table(const RunCatalog& catalog, const std::vector<RunRecord>& runs)
{
    std::string out;
    char line[512];
    std::snprintf(line, sizeof line, "%-22s  %-19s  %-10s  %-12s  %-10s  %5s  %12s  %12s  %8s  plan\n", "run",
        "created (UTC)", "framework", "cluster", "state", "steps", "measured s", "predicted s", "error");
    out += line;
    for (const RunRecord& r : runs) {
        const std::vector<StepRecord> steps = catalog.steps(r.id);
        const RunComparison cmp = compare_run(r, steps);
        const MetricComparison* st = cmp.find("step_time_s");
        const auto num = [](const std::optional<double>& v, const char* fmt) {
            char b[32];
            if (!v)
                return std::string("-");
            std::snprintf(b, sizeof b, fmt, *v);
            return std::string(b);
        };
        const std::optional<double> err = st ? st->error() : std::nullopt;
        std::snprintf(line, sizeof line, "%-22s  %-19s  %-10s  %-12s  %-10s  %5zu  %12s  %12s  %8s  ", r.id.c_str(),
            r.created_at.substr(0, 19).c_str(), r.framework.c_str(), r.cluster.substr(0, 12).c_str(),
            std::string(to_string(r.state)).c_str(), steps.size(),
            num(st ? st->measured : std::nullopt, "%.4g").c_str(),
            num(st ? st->predicted : std::nullopt, "%.4g").c_str(),
            num(err ? std::optional<double>(*err * 100) : std::nullopt, "%+.1f%%").c_str());
        out += line + run_plan_label(r) + "\n";
    }
    if (runs.empty())
        out += "(no runs yet: send one with parallax-cli run SCENARIO --cluster PROFILE)\n";
    return out;
}

// `catalog` may be null when there is no store yet (no runs: the header alone).
std::string csv_table(const RunCatalog* catalog, const std::vector<RunRecord>& runs)
{
    CsvWriter csv { "run", "created_at", "framework", "cluster", "state", "steps", "measured_step_time_s",
        "predicted_step_time_s", "error", "label" };
    for (const RunRecord& r : runs) {
        const std::vector<StepRecord> steps = catalog->steps(r.id);
        const RunComparison cmp = compare_run(r, steps);
        const MetricComparison* st = cmp.find("step_time_s");
        const auto num = [&](const std::optional<double>& v) {
            if (v)
                csv.number(*v, 8);
            else
                csv.field("");
        };
        csv.field(r.id).field(r.created_at).field(r.framework).field(r.cluster).field(to_string(r.state));
        csv.integer(static_cast<long long>(steps.size()));
        num(st ? st->measured : std::nullopt);
        num(st ? st->predicted : std::nullopt);
        num(st ? st->error() : std::nullopt);
        csv.field(run_plan_label(r)).end_row();
    }
    return csv.text();
}

// Without a store: an error for a named run, else an empty list in the format asked for.
int show_no_store(const QString& path, const QString& id, bool json, bool csv)
{
    if (!id.isEmpty()) {
        print_err("parallax-cli runs: no run " + quoted_for_message(id.toStdString()) + ": there is no run store at "
            + path.toStdString() + " yet");
        return kBadInput;
    }
    if (csv) {
        print_out(csv_table(nullptr, {}));
        return kOk;
    }
    print_out(json ? nlohmann::ordered_json { { "schema", 1 }, { "store", path.toStdString() },
                         { "runs", nlohmann::ordered_json::array() } }
                         .dump(2)
                + "\n"
                   : "no runs yet: there is no run store at " + path.toStdString() + "\n");
    return kOk;
}

// One run in full: its raw log, its JSON, or its summary with the history of its states.
int show_run(const RunCatalog& catalog, const QString& path, const QString& id, bool json, bool log)
{
    const auto run = catalog.run(id.toStdString());
    if (!run) {
        print_err("parallax-cli runs: no run " + quoted_for_message(id.toStdString()) + " in " + path.toStdString());
        return kBadInput;
    }
    if (log) {
        catalog.for_each_log_chunk(
            run->id, [](std::string_view chunk) { std::fwrite(chunk.data(), 1, chunk.size(), stdout); });
        std::fflush(stdout);
        return kOk;
    }
    if (json) {
        print_out(catalog.run_json(*run, true).dump(2) + "\n");
        return kOk;
    }
    std::string text = catalog.summary_text(*run);
    text += "  history:\n";
    for (const StateTransition& t : catalog.transitions(run->id))
        text += "    " + t.at + "  " + std::string(to_string(t.state)) + ": " + terminal_text(t.detail) + "\n";
    text += "  remote folder: " + run->remote_dir + "\n  log: " + run->log_path + "\n";
    print_out(text);
    return kOk;
}

// The newest `limit` runs (all with 0) as a table, CSV or JSON.
void list_runs(const RunCatalog& catalog, const QString& path, int limit, bool json, bool csv)
{
    const std::vector<RunRecord> runs = catalog.runs(limit);
    if (json) {
        nlohmann::ordered_json j;
        j["schema"] = 1;
        j["store"] = path.toStdString();
        auto list = nlohmann::ordered_json::array();
        for (const RunRecord& r : runs)
            list.push_back(catalog.run_json(r, false));
        j["runs"] = list;
        print_out(j.dump(2) + "\n");
    } else if (csv) {
        print_out(csv_table(&catalog, runs));
    } else {
        print_out(table(catalog, runs));
    }
}

} // namespace

int run_runs(const QStringList& args)
{
    CommandParser cmd(
        QStringLiteral("Lists the runs sent to clusters (the local run store), or shows one run in full."),
        QStringLiteral("RUN_ID"), QStringLiteral("a run to show in full (optional)"));
    auto& p = cmd.parser();
    p.addOption({ QStringLiteral("json"), QStringLiteral("Print JSON: {\"schema\":1,\"runs\":[...]} or one run.") });
    p.addOption({ QStringLiteral("store"),
        QStringLiteral("Run store (SQLite); default ") + RunCatalog::default_store_path(), QStringLiteral("FILE") });
    p.addOption({ QStringLiteral("limit"), QStringLiteral("At most N runs, newest first."), QStringLiteral("N") });
    p.addOption({ QStringLiteral("log"), QStringLiteral("With RUN_ID: print the run's raw log as stored.") });
    cmd.add_csv_option();
    if (auto rc = cmd.parse(args, 0, 1))
        return *rc;
    const QString path
        = p.isSet(QStringLiteral("store")) ? p.value(QStringLiteral("store")) : RunCatalog::default_store_path();
    int limit = 0;
    if (p.isSet(QStringLiteral("limit"))) {
        bool ok = false;
        limit = p.value(QStringLiteral("limit")).toInt(&ok);
        if (!ok || limit < 1) {
            print_err("parallax-cli runs: --limit must be a positive integer");
            return kBadInput;
        }
    }
    try {
        const bool json = p.isSet(QStringLiteral("json"));
        const QString id = cmd.positional(0);
        const std::unique_ptr<RunCatalog> store = open_existing_run_store(path);
        if (!store)
            return show_no_store(path, id, json, cmd.csv());
        if (!id.isEmpty())
            return show_run(*store, path, id, json, p.isSet(QStringLiteral("log")));
        list_runs(*store, path, limit, json, cmd.csv());
    } catch (const InputError& e) {
        print_err(e.what());
        return kBadInput;
    } catch (const StoreError& e) {
        print_err(e.what());
        return kInternalError;
    }
    return kOk;
}

} // namespace parallax::cli

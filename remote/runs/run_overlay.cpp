#include "runs/run_overlay.hpp"

#include "io/preset_catalog.hpp"
#include "io/scenario_io.hpp"
#include "jobs/job_bundle.hpp"
#include "runs/measurements.hpp"
#include "store/run_store.hpp"
#include "viewdata/rank_grid.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

namespace parallax::remote {

namespace {

// Megatron's "MB" are MiB (it divides by 1024 * 1024): MiB -> GiB.
constexpr double kMiBPerGiB = 1024.0;

std::optional<double> stage_prediction(const std::string& prediction_json, int stage)
{
    if (prediction_json.empty())
        return std::nullopt;
    const nlohmann::json j = nlohmann::json::parse(prediction_json, nullptr, false);
    if (!j.is_object() || !j.contains("stages") || !j["stages"].is_array())
        return std::nullopt;
    for (const auto& s : j["stages"])
        if (s.is_object() && s.value("stage", -1) == stage && s.contains("memory_GiB") && s["memory_GiB"].is_number())
            return s["memory_GiB"].get<double>();
    return std::nullopt;
}

} // namespace

RunOverlay make_run_overlay(const RunStore& store, const RunRecord& run)
{
    RunOverlay o;
    o.run_id = run.id;
    o.state = run.state;
    o.framework = run.framework;
    o.cluster = run.cluster;
    o.description = run.description;
    o.scenario_json = run.scenario_json;
    const nlohmann::json sent = nlohmann::json::parse(run.scenario_json, nullptr, false);
    if (sent.is_object() && sent.contains("strategy") && sent["strategy"].is_object()) {
        const nlohmann::json& st = sent["strategy"];
        for (const char* d : { "tp", "pp", "dp", "cp", "ep", "vpp" }) {
            const int v = st.contains(d) && st[d].is_number_integer() ? st[d].get<int>() : 1;
            const bool always
                = std::string_view(d) == "tp" || std::string_view(d) == "pp" || std::string_view(d) == "dp";
            if (always || v > 1) {
                std::string name = d;
                for (char& c : name)
                    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
                o.layout += (o.layout.empty() ? "" : " · ") + name + " " + std::to_string(v);
            }
        }
    }
    const std::vector<StepRecord> steps = store.steps(run.id);
    o.steps = static_cast<int>(steps.size());
    o.comparison = compare_run(run, steps);

    const JobFramework fw = job_framework_from_string(run.framework).value_or(JobFramework::probe);
    const LogFormat format = log_format_for(fw);
    if (format != LogFormat::megatron && format != LogFormat::auto_detect) {
        o.stage_note
            = "the " + run.framework + " log reports memory once per step (the peak over ranks), not per stage";
        return o;
    }
    const Measurements m = parse_measurements(store.log(run.id), format);
    if (m.parsed.memory_reports.empty()) {
        o.stage_note = "no per-rank memory reports in the log yet";
        return o;
    }
    // Ranks to stages with the plan's rank order, as the run laid them out (Megatron: tp-cp-ep-dp-pp).
    std::optional<Scenario> sc;
    try {
        sc = parse_scenario(nlohmann::json::parse(run.scenario_json), "run " + run.id, PresetCatalog::standard());
    } catch (const std::exception& e) {
        o.stage_note = std::string("the stored plan does not load: ") + e.what();
        return o;
    }
    const RankGrid grid(sc->strategy, sc->cluster.gpus_per_node);
    std::map<int, StageMemoryComparison> by_stage;
    int unranked = 0;
    for (const MemoryReport& r : m.parsed.memory_reports) {
        const std::optional<double> mib = r.max_reserved_MiB ? r.max_reserved_MiB : r.max_allocated_MiB;
        if (!mib)
            continue;
        if (!r.rank || *r.rank < 0 || *r.rank >= grid.ranks()) {
            ++unranked;
            continue;
        }
        const int stage = static_cast<int>(grid.coordinate(*r.rank, ParallelDim::pp));
        StageMemoryComparison& s = by_stage[stage];
        s.stage = stage;
        const double gib = *mib / kMiBPerGiB;
        s.high_GiB = std::max(s.high_GiB.value_or(gib), gib);
        s.low_GiB = std::min(s.low_GiB.value_or(gib), gib);
        s.measured_GiB = s.high_GiB;
        ++s.reports;
    }
    const std::string& prediction = o.comparison.prediction_source == "plan" ? run.prediction_json
        : o.comparison.prediction_source == "workload"                       ? run.workload_prediction_json
                                                                             : std::string();
    for (auto& [stage, s] : by_stage) {
        s.predicted_GiB = stage_prediction(prediction, stage);
        o.stages.push_back(s);
    }
    o.stage_note = "max reserved memory of each stage's ranks (Megatron memory reports"
        + (unranked > 0 ? ", " + std::to_string(unranked) + " without a rank left out)" : std::string(")"));
    return o;
}

} // namespace parallax::remote

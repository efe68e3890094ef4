#include "io/hetero_search_io.hpp"

#include "io/hetero_io.hpp"
#include "io/hetero_prediction_io.hpp"
#include "io/number_format.hpp"
#include "io/scenario_io.hpp"
#include "spec/units.hpp"

#include <cmath>
#include <cstdio>

namespace parallax {

using nlohmann::json;

namespace {

// What-ifs shown under the best plan in the text table (the JSON has all of them).
constexpr std::size_t kWhatIfsShown = 6;

json what_if_to_json(const HeteroWhatIf& w)
{
    json j;
    j["change"] = w.change;
    j["feasible"] = w.feasible;
    j["step_time_change"] = w.feasible ? json(w.step_time_change) : json(nullptr);
    j["text"] = w.text();
    return j;
}

std::string knobs_text(const Strategy& s)
{
    return "micro-batch " + std::to_string(s.micro_batch) + ", recompute " + std::string(to_string(s.recompute))
        + ", ZeRO " + std::to_string(s.zero) + ", " + std::string(to_string(s.schedule))
        + (s.sequence_parallel ? ", sequence parallel" : "");
}

std::string stage_lines(const HeteroSearchResult& r)
{
    std::string out;
    for (const HeteroStageReport& st : r.prediction.stages) {
        out += format_number("    stage %.0f: ", static_cast<double>(st.stage))
            + format_number("%3.0f layers ", static_cast<double>(st.layers));
        // Alike replicas of a stage are one entry: "h100 (H100-SXM5-80GB) TP8 x4".
        std::size_t i = 0;
        while (i < st.replicas.size()) {
            const HeteroReplicaReport& a = st.replicas[i];
            std::size_t j = i;
            double peak = 0;
            while (j < st.replicas.size() && st.replicas[j].group == a.group && st.replicas[j].tp == a.tp)
                peak = std::max(peak, st.replicas[j++].peak_memory_bytes);
            out += (i ? " + " : " ") + a.group + " (" + a.gpu + ") TP" + std::to_string(a.tp) + " x"
                + std::to_string(j - i) + format_number(" %.1f GiB", peak / units::kGiB);
            i = j;
        }
        out += "\n";
    }
    return out;
}

} // namespace

json hetero_strategy_to_json(const HeteroSearchResult& r)
{
    json j = strategy_to_json(r.strategy);
    for (const char* key : { "tp", "pp", "dp" })
        j.erase(key);
    j["stages"] = pipeline_stages_to_json(r.stages);
    return j;
}

json hetero_search_to_json(const Scenario& s, const HeteroSearchOutcome& o)
{
    json j;
    j["schema"] = 1;
    j["heterogeneous"] = true;
    j["layouts"] = o.layouts;
    j["evaluated"] = o.evaluated;
    j["feasible"] = o.feasible;
    j["seconds"] = o.seconds;
    j["gpus"] = o.gpus;
    j["cancelled"] = o.cancelled;
    j["notes"] = o.notes;
    if (o.ranked_by_goodput)
        j["ranked_by"] = "goodput_tokens_per_s";
    json results = json::array();
    for (const HeteroSearchResult& r : o.results) {
        json rj;
        rj["label"] = layout_label(r.layout, s.cluster);
        rj["family"] = to_string(r.layout.family);
        rj["strategy"] = hetero_strategy_to_json(r);
        if (s.batch_split != BatchSplit::by_speed) // the scenario's own stages said so; the search kept it
            rj["strategy"]["batch_split"] = to_string(s.batch_split);
        rj["prediction"] = hetero_prediction_to_json(r.prediction);
        rj["idle_groups"] = r.idle_groups;
        if (r.goodput_tokens_per_s > 0)
            rj["goodput_tokens_per_s"] = r.goodput_tokens_per_s;
        json what_ifs = json::array();
        for (const HeteroWhatIf& w : r.what_ifs)
            what_ifs.push_back(what_if_to_json(w));
        rj["explanation"] = { { "what_ifs", what_ifs } };
        results.push_back(rj);
    }
    j["results"] = results;
    return j;
}

std::string hetero_search_to_text(const Scenario& s, const HeteroSearchOutcome& o)
{
    std::string out = "searched " + std::to_string(o.evaluated) + " heterogeneous plans (" + std::to_string(o.layouts)
        + " layouts) on " + std::to_string(o.gpus) + " GPUs in " + std::to_string(s.cluster.groups.size())
        + (s.cluster.groups.size() == 1 ? " group (" : " groups (") + std::to_string(o.feasible) + " fit) in "
        + format_number("%.2f s", o.seconds) + (o.cancelled ? " (stopped)" : "") + "\n";
    if (o.ranked_by_goodput)
        out += "ranked by goodput: tokens/s after interruptions, checkpoints and recovery (reliability section)\n";
    for (const std::string& note : o.notes)
        out += "note: " + note + "\n";
    out += "\n";
    for (std::size_t i = 0; i < o.results.size(); ++i) {
        const HeteroSearchResult& r = o.results[i];
        const Prediction& p = r.prediction.prediction;
        out += format_number("%2.0f. ", static_cast<double>(i + 1)) + layout_label(r.layout, s.cluster) + "\n";
        char line[256];
        std::snprintf(line, sizeof line,
            "    %9.0f tok/s  %5.1f%% MFU  %6.2f s/step  %5.1f GiB  %lld GPUs used  [analytic]\n", p.tokens_per_s,
            100 * p.mfu, p.step_time_s, p.peak_memory_bytes / units::kGiB, r.prediction.gpus_used);
        out += line;
        if (o.ranked_by_goodput)
            out += "    " + format_number("%.0f", r.goodput_tokens_per_s) + " goodput tok/s\n";
        out += "    " + knobs_text(r.strategy) + "\n";
        out += stage_lines(r);
        std::string idle;
        for (const std::string& g : r.idle_groups)
            idle += (idle.empty() ? "" : ", ") + g;
        out += "    idle groups: " + (idle.empty() ? std::string("none") : idle) + "\n";
        if (!r.what_ifs.empty()) {
            out += "    what if (step time against this plan):\n";
            for (std::size_t k = 0; k < r.what_ifs.size() && k < kWhatIfsShown; ++k)
                out += "      " + r.what_ifs[k].text() + "\n";
        }
    }
    if (o.results.empty())
        out += "no feasible heterogeneous plan\n";
    return out;
}

} // namespace parallax

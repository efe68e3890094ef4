#include "io/composite_search_io.hpp"

#include "io/number_format.hpp"
#include "io/prediction_io.hpp"
#include "io/scenario_io.hpp"
#include "spec/strategy_label.hpp"
#include "spec/units.hpp"

namespace parallax {

nlohmann::json composite_outcome_to_json(const CompositeOutcome& o)
{
    nlohmann::json j;
    j["candidates"] = o.candidates;
    j["evaluated"] = o.evaluated;
    j["memory_checks"] = o.memory_checks;
    j["feasible"] = o.feasible;
    j["truncated"] = o.truncated;
    j["cancelled"] = o.cancelled;
    j["seconds"] = o.seconds;
    j["explanation"] = o.explanation;
    j["best_plain"] = { { "label", strategy_label(o.best_plain) }, { "strategy", strategy_to_json(o.best_plain) },
        { "step_time_s", o.best_plain_prediction.step_time_s } };
    nlohmann::json results = nlohmann::json::array();
    for (const CompositeResult& r : o.results)
        results.push_back({ { "label", strategy_label(r.strategy) }, { "change", r.change },
            { "strategy", strategy_to_json(r.strategy) }, { "prediction", prediction_to_json(r.prediction) },
            { "base", { { "label", strategy_label(r.base) }, { "step_time_s", r.base_prediction.step_time_s } } } });
    j["results"] = results;
    return j;
}

std::string composite_outcome_to_text(const CompositeOutcome& o)
{
    std::string out = "\ncomposites: " + std::to_string(o.evaluated) + " of " + std::to_string(o.candidates)
        + " costed around the best plain plans (" + std::to_string(o.feasible) + " fit) in "
        + format_number("%.2f s", o.seconds) + (o.truncated ? ", grid cut at search.composite.max_candidates" : "")
        + (o.cancelled ? " (stopped)" : "") + "\n" + o.explanation + "\n";
    for (std::size_t i = 0; i < o.results.size(); ++i) {
        const CompositeResult& r = o.results[i];
        const Prediction& p = r.prediction;
        out += format_number("%2.0f. ", static_cast<double>(i + 1)) + r.change + "\n    " + strategy_label(r.strategy)
            + "\n    " + format_number("%.0f tok/s", p.tokens_per_s) + "  " + format_number("%.1f%% MFU", 100 * p.mfu)
            + "  " + format_number("%.2f s/step", p.step_time_s) + "  "
            + format_number("%.1f GiB", p.peak_memory_bytes / units::kGiB) + "  [analytic]\n";
    }
    return out;
}

} // namespace parallax

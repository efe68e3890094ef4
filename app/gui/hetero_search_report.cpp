#include "gui/hetero_search_report.hpp"

#include "io/export/hetero_launch.hpp"
#include "search/hetero_search.hpp"
#include "spec/input_error.hpp"

namespace parallax::app {

namespace {

QString qs(const std::string& s)
{
    return QString::fromStdString(s);
}

// One stage's replicas, equal neighbours counted: "h100 TP1 x8 + a100 TP2".
QString replicas_text(const PipelineStageSpec& st)
{
    QStringList parts;
    for (std::size_t i = 0; i < st.replicas.size();) {
        std::size_t n = 1;
        while (i + n < st.replicas.size() && st.replicas[i + n] == st.replicas[i])
            ++n;
        parts << QStringLiteral("%1 TP%2").arg(qs(st.replicas[i].group)).arg(st.replicas[i].tp)
                + (n > 1 ? QStringLiteral(" x%1").arg(n) : QString());
        i += n;
    }
    return parts.join(QStringLiteral(" + "));
}

// "9 L a100 TP2 x4 | 23 L h100 TP1 x8".
QString stages_text(const std::vector<PipelineStageSpec>& stages)
{
    QStringList parts;
    for (const PipelineStageSpec& st : stages)
        parts << QStringLiteral("%1 L %2").arg(st.layers).arg(replicas_text(st));
    return parts.join(QStringLiteral(" | "));
}

// The formats whose exported files run the plan as it is (hetero_launch.hpp), or why none does.
QString exporters(const Scenario& plan)
{
    QStringList ok;
    std::optional<Unsupported> first;
    for (LaunchFormat f : { LaunchFormat::megatron, LaunchFormat::torchtitan }) {
        std::optional<Unsupported> u = hetero_launch_refusal(f, plan);
        if (!u)
            ok << QString::fromUtf8(to_string(f).data(), static_cast<qsizetype>(to_string(f).size()));
        else if (!first)
            first = std::move(u);
    }
    if (!ok.isEmpty() || !first)
        return ok.join(QStringLiteral(", "));
    return QStringLiteral("no stock framework (%1)").arg(qs(first->feature));
}

views::SearchRow row_of(const Scenario& s, const HeteroSearchResult& r, bool best)
{
    views::SearchRow row;
    row.strategy = r.strategy;
    row.prediction = r.prediction.prediction;
    row.objective = r.objective;
    row.stages = r.stages;
    row.plan = stages_text(r.stages);
    const int k = r.prediction.critical_stage;
    if (k >= 0 && k < static_cast<int>(r.stages.size()))
        row.limiter
            = QStringLiteral("stage %1 paces (%2)").arg(k).arg(replicas_text(r.stages[static_cast<std::size_t>(k)]));
    QStringList why;
    if (!r.idle_groups.empty()) {
        QStringList idle;
        for (const std::string& g : r.idle_groups)
            idle << qs(g);
        why << QStringLiteral("leaves %1 idle").arg(idle.join(QStringLiteral(", ")));
    }
    if (best)
        for (const HeteroWhatIf& w : r.what_ifs)
            why << qs(w.text());
    row.explanation = why.join(QStringLiteral("; "));
    row.frameworks = exporters(hetero_plan_scenario(s, r.strategy, r.stages));
    return row;
}

} // namespace

views::SearchReport hetero_search_report(const Scenario& s, int top, const Calibration* calibration,
    const std::function<void(double)>& progress, const CancelToken& cancel)
{
    views::SearchReport report;
    HeteroSearchOptions o;
    o.calibration = calibration;
    o.top = top;
    o.progress = progress;
    o.rank_by_goodput = s.reliability.has_value(); // as `parallax-cli search` ranks them
    try {
        o.fix = search_fix_from(s);
        const HeteroSearchOutcome out = search_heterogeneous(s, o, cancel);
        report.evaluated = out.evaluated;
        report.feasible = out.feasible;
        report.seconds = out.seconds;
        report.cancelled = out.cancelled || cancel.cancelled();
        report.scope = QStringLiteral("mixed-GPU plans over %1 layouts of the cluster's groups%2")
                           .arg(out.layouts)
                           .arg(out.ranked_by_goodput ? QStringLiteral(", ranked by goodput") : QString());
        for (const std::string& n : out.notes)
            report.notes.push_back(qs(n));
        for (std::size_t i = 0; i < out.results.size(); ++i)
            report.rows.push_back(row_of(s, out.results[i], i == 0));
    } catch (const InputError& e) {
        report.error = qs(e.what());
    }
    return report;
}

} // namespace parallax::app

#include "gui/report_export.hpp"

#include "search/plan_explain.hpp"
#include "spec/units.hpp"
#include "style/view_style.hpp"
#include "viewdata/timeline_data.hpp"

#include <QDateTime>

namespace parallax::app {

namespace {

using views::format_gib;
using views::format_metric;
using views::format_percent_delta;
using views::format_seconds;

QString h(const std::string& s)
{
    return QString::fromStdString(s).toHtmlEscaped();
}
QString h(const QString& s)
{
    return s.toHtmlEscaped();
}
QString qs(std::string_view s)
{
    return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size()));
}

QString row(const QStringList& cells, bool header = false)
{
    const QString tag = header ? QStringLiteral("th") : QStringLiteral("td");
    QString out = QStringLiteral("<tr>");
    for (const QString& c : cells)
        out += u'<' + tag + u'>' + c + QStringLiteral("</") + tag + u'>';
    return out + QStringLiteral("</tr>\n");
}

// The waterfall of search/improvements.hpp: each choice on top of the ones above it.
QString improvements_table(const ImprovementWaterfall& w)
{
    QString out = QStringLiteral("<table><tr><th>choice</th><th>setting</th><th>step time</th><th>saved</th>"
                                 "<th>energy per step</th><th>saved</th><th>why</th></tr>");
    out += QStringLiteral("<tr><td>as given</td><td></td><td>%1</td><td></td><td>%2 kJ</td><td></td><td></td></tr>")
               .arg(h(format_duration(w.baseline_step_time_s)))
               .arg(w.baseline_energy_J / 1e3, 0, 'f', 1);
    for (const Improvement& i : w.steps)
        out += QStringLiteral("<tr><td>%1</td><td><code>%2</code></td><td>%3</td><td>%4 s</td><td>%5 kJ</td>"
                              "<td>%6 kJ</td><td>%7</td></tr>")
                   .arg(h(i.name), h(i.change), h(format_duration(i.step_time_s)))
                   .arg(i.step_time_s_saved, 0, 'f', 3)
                   .arg(i.energy_J / 1e3, 0, 'f', 1)
                   .arg(i.energy_J_saved / 1e3, 0, 'f', 1)
                   .arg(h(i.note));
    return out + QStringLiteral("</table>\n");
}

QString scenario_section(const Scenario& s)
{
    const ModelSpec& m = s.model;
    const ClusterSpec& c = s.cluster;
    QString out = QStringLiteral("<table class='kv'>");
    out += row({ QStringLiteral("Model"),
        h(m.name)
            + QStringLiteral(" — %1 layers, hidden %2, %3 heads (%4 KV), FFN %5, vocab %6%7")
                  .arg(m.layers)
                  .arg(m.hidden)
                  .arg(m.heads)
                  .arg(m.kv_heads)
                  .arg(m.ffn_hidden)
                  .arg(m.vocab)
                  .arg(m.is_moe() ? QStringLiteral(", MoE %1 experts top-%2").arg(m.moe->experts).arg(m.moe->top_k)
                                  : QString()) });
    out += row({ QStringLiteral("Cluster"),
        QStringLiteral("%1 × %2 %3 = %4 GPUs; in a node: %5 (%6 GB/s); between nodes: %7 (%8 GB/s)")
            .arg(c.nodes)
            .arg(c.gpus_per_node)
            .arg(h(c.gpu.name))
            .arg(c.total_gpus())
            .arg(h(c.intra_node.name))
            .arg(c.intra_node.bw_Bps / units::kGB, 0, 'f', 0)
            .arg(h(c.inter_node.name))
            .arg(c.inter_node.bw_Bps / units::kGB, 0, 'f', 0) });
    out += row({ QStringLiteral("Training"),
        QStringLiteral("global batch %1 × %2 tokens, %3, framework %4")
            .arg(s.training.global_batch)
            .arg(s.training.seq_len)
            .arg(qs(to_string(s.training.precision)))
            .arg(qs(to_string(s.training.framework))) });
    if (!s.description.empty())
        out += row({ QStringLiteral("Description"), h(s.description) });
    return out + QStringLiteral("</table>\n");
}

QStringList strategy_cells(const Strategy& s)
{
    return { QString::number(s.tp), QString::number(s.pp), QString::number(s.dp), QString::number(s.cp),
        QString::number(s.ep), QString::number(s.vpp), QString::number(s.micro_batch),
        s.sequence_parallel ? QStringLiteral("on") : QStringLiteral("off"), qs(to_string(s.recompute)),
        QString::number(s.zero), qs(to_string(s.schedule)), qs(to_string(s.optimizer)),
        s.offload_optimizer ? QStringLiteral("on") : QStringLiteral("off"),
        QString::fromStdString(to_string(s.rank_order)) };
}

const QStringList kStrategyNames
    = { QStringLiteral("tp"), QStringLiteral("pp"), QStringLiteral("dp"), QStringLiteral("cp"), QStringLiteral("ep"),
          QStringLiteral("vpp"), QStringLiteral("micro_batch"), QStringLiteral("sequence_parallel"),
          QStringLiteral("recompute"), QStringLiteral("zero"), QStringLiteral("schedule"), QStringLiteral("optimizer"),
          QStringLiteral("offload_optimizer"), QStringLiteral("rank_order") };

QString metrics_table(const Prediction& b, const Prediction* a)
{
    QString out = QStringLiteral("<table>");
    out += a ? row({ QStringLiteral("Metric"), QStringLiteral("A (pinned)"), QStringLiteral("B (current)"),
                       QStringLiteral("B vs A") },
               true)
             : row({ QStringLiteral("Metric"), QStringLiteral("Value") }, true);
    for (int i = 0; i < kMetricCount; ++i) {
        const Metric m = static_cast<Metric>(i);
        const double vb = metric_value(b, m);
        const QString name
            = QStringLiteral("<span title='%1'>%2</span>")
                  .arg(h(explain_metric(m).formula + " — " + explain_metric(m).source), h(explain_metric(m).title));
        if (a) {
            const double va = metric_value(*a, m);
            const QString d
                = std::abs(va) > 1e-12 ? format_percent_delta((vb - va) / std::abs(va)) : QStringLiteral("–");
            out += row({ name, format_metric(m, va), format_metric(m, vb), d });
        } else {
            out += row({ name, format_metric(m, vb) });
        }
    }
    return out + QStringLiteral("</table>\n");
}

QString stage_table(const Prediction& p)
{
    QString out = QStringLiteral("<table>");
    out += row(
        { QStringLiteral("Stage"), QStringLiteral("Layers"), QStringLiteral("In flight"), QStringLiteral("Weights"),
            QStringLiteral("Gradients"), QStringLiteral("Optimizer"), QStringLiteral("Activations"),
            QStringLiteral("Other"), QStringLiteral("Total"), QStringLiteral("Forward"), QStringLiteral("Backward") },
        true);
    for (const StageReport& s : p.stages) {
        const bool over = s.memory.total() > p.capacity_bytes;
        out += row({ QString::number(s.stage), QString::number(s.layers), QString::number(s.in_flight_microbatches),
            format_gib(s.memory.weights), format_gib(s.memory.gradients), format_gib(s.memory.optimizer),
            format_gib(s.memory.activations), format_gib(s.memory.other),
            (over ? QStringLiteral("<b class='bad'>") : QStringLiteral("<b>")) + format_gib(s.memory.total())
                + QStringLiteral("</b>"),
            format_seconds(s.forward_s), format_seconds(s.backward_s) });
    }
    out += QStringLiteral("</table>\n<p>Capacity per GPU: ") + format_gib(p.capacity_bytes) + QStringLiteral("</p>\n");
    if (p.host_memory_bytes_per_node > 0) // offloaded states and activations, shared by a node's GPUs
        out += QStringLiteral("<p>Host memory per node: ") + format_gib(p.host_memory_bytes_per_node)
            + QStringLiteral(" of ") + format_gib(p.host_capacity_bytes_per_node) + QStringLiteral(" (")
            + format_gib(p.memory.host) + QStringLiteral(" offloaded per GPU)</p>\n");
    return out;
}

QString list(const std::vector<std::string>& items)
{
    if (items.empty())
        return QStringLiteral("<p>none</p>\n");
    QString out = QStringLiteral("<ul>");
    for (const std::string& i : items)
        out += QStringLiteral("<li>") + h(i) + QStringLiteral("</li>");
    return out + QStringLiteral("</ul>\n");
}

QString plan_state(const PlanEvaluation& e)
{
    if (!e.valid) {
        QString out = QStringLiteral("<p class='bad'><b>Not a valid plan:</b></p><ul>");
        for (const RuleViolation& v : e.violations)
            out += QStringLiteral("<li><code>") + h(v.key) + QStringLiteral("</code>: ") + h(v.message)
                + QStringLiteral("</li>");
        return out + QStringLiteral("</ul>");
    }
    if (!e.prediction.feasible)
        return QStringLiteral("<p class='bad'><b>Does not fit in memory:</b> ") + h(e.prediction.infeasible_reason)
            + QStringLiteral("</p>");
    return {};
}

} // namespace

QString report_html(const ReportInputs& in)
{
    const PlanEvaluation& b = *in.current;
    const PlanEvaluation* a = in.pinned.get();
    const QString title = a ? QStringLiteral("Parallax: plan A vs plan B") : QStringLiteral("Parallax: plan report");
    QString out = QStringLiteral("<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'><title>") + title
        + QStringLiteral(
            "</title>\n<style>"
            "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;max-width:1100px;margin:2em auto;padding:0 "
            "1em;color:#1d1f22}"
            "table{border-collapse:collapse;margin:.5em 0 1.2em}td,th{border:1px solid #ccc;padding:.25em "
            ".6em;text-align:right}"
            "td:first-child,th:first-child{text-align:left}table.kv td{text-align:left}"
            "th{background:#f0f2f5}.bad{color:#c01c28}code{background:#f0f2f5;padding:0 .2em}"
            "img{max-width:100%;border:1px solid #ddd;margin:.3em 0}figure{margin:1em 0}figcaption{color:#555}"
            "</style></head><body>\n");
    out += QStringLiteral("<h1>") + title + QStringLiteral("</h1>\n");
    out += QStringLiteral("<p>Generated ") + QDateTime::currentDateTime().toString(Qt::ISODate)
        + QStringLiteral(" by Parallax ") + h(in.version) + QStringLiteral(". Numbers: ") + h(in.fidelity)
        + QStringLiteral(".</p>\n");
    if (a) {
        out += QStringLiteral("<p><b>A</b> = ") + h(in.pinned_label) + QStringLiteral("; <b>B</b> = ")
            + h(in.current_label) + QStringLiteral("</p>\n");
        out += QStringLiteral("<h2>Scenario A</h2>\n") + scenario_section(a->scenario);
        out += QStringLiteral("<h2>Scenario B</h2>\n") + scenario_section(b.scenario);
    } else {
        out += QStringLiteral("<p>") + h(in.current_label) + QStringLiteral("</p>\n<h2>Scenario</h2>\n")
            + scenario_section(b.scenario);
    }

    out += QStringLiteral("<h2>Strategy</h2>\n<table>");
    out += a ? row({ QStringLiteral("Setting"), QStringLiteral("A"), QStringLiteral("B") }, true)
             : row({ QStringLiteral("Setting"), QStringLiteral("Value") }, true);
    const QStringList cb = strategy_cells(b.scenario.strategy);
    const QStringList ca = a ? strategy_cells(a->scenario.strategy) : QStringList();
    for (int i = 0; i < kStrategyNames.size(); ++i) {
        if (a) {
            const bool differs = ca[i] != cb[i];
            out += row({ QStringLiteral("<code>") + kStrategyNames[i] + QStringLiteral("</code>"), ca[i],
                differs ? QStringLiteral("<b>") + cb[i] + QStringLiteral("</b>") : cb[i] });
        } else {
            out += row({ QStringLiteral("<code>") + kStrategyNames[i] + QStringLiteral("</code>"), cb[i] });
        }
    }
    out += QStringLiteral("</table>\n");

    out += QStringLiteral("<h2>Results</h2>\n");
    if (a)
        out += plan_state(*a).replace(QStringLiteral("<b>"), QStringLiteral("<b>A: "));
    out += plan_state(b);
    if (b.valid)
        out += metrics_table(b.prediction, a && a->valid ? &a->prediction : nullptr);
    if (a && a->valid && b.valid) {
        out += QStringLiteral("<h3>Why B differs from A</h3>\n<ul>");
        const std::string moved = describe_strategy_change(a->scenario.strategy, b.scenario.strategy);
        if (!moved.empty())
            out += QStringLiteral("<li>Strategy: ") + h(moved) + QStringLiteral("</li>");
        for (Metric m : { Metric::step_time, Metric::tokens_per_s, Metric::mfu, Metric::bubble, Metric::peak_memory,
                 Metric::power, Metric::energy_per_token }) {
            const std::string why = why_moved(m, a->prediction, b.prediction);
            if (!why.empty())
                out += QStringLiteral("<li>") + h(why) + QStringLiteral("</li>");
        }
        out += QStringLiteral("</ul>\n");
    }
    if (b.valid && !b.improvements.steps.empty())
        out += QStringLiteral("<h3>Choices around the degrees</h3>\n") + improvements_table(b.improvements);
    if (b.valid) {
        out += QStringLiteral("<h3>Memory and time per pipeline stage (B)</h3>\n") + stage_table(b.prediction);
        if (a && a->valid)
            out += QStringLiteral("<h3>Memory and time per pipeline stage (A)</h3>\n") + stage_table(a->prediction);
    }
    for (const ReportImage& img : in.images) {
        if (img.png.isEmpty())
            continue;
        out += QStringLiteral("<figure><img alt='") + h(img.title) + QStringLiteral("' src='data:image/png;base64,")
            + QString::fromLatin1(img.png.toBase64()) + QStringLiteral("'><figcaption>") + h(img.title)
            + QStringLiteral("</figcaption></figure>\n");
    }
    out += QStringLiteral("<h2>Assumptions</h2>\n");
    out += QStringLiteral("<p>Fidelity and calibration: ") + h(in.fidelity) + QStringLiteral("</p>\n");
    out += (a ? QStringLiteral("<h3>B</h3>\n") : QString()) + list(b.prediction.assumptions);
    if (a)
        out += QStringLiteral("<h3>A</h3>\n") + list(a->prediction.assumptions);
    out += QStringLiteral("<h2>Warnings</h2>\n") + list(b.warnings);
    if (a && !a->warnings.empty())
        out += QStringLiteral("<h3>A</h3>\n") + list(a->warnings);
    out += QStringLiteral("</body></html>\n");
    return out;
}

} // namespace parallax::app

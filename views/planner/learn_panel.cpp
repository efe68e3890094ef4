#include "planner/learn_panel.hpp"

#include "search/plan_explain.hpp"
#include "style/view_style.hpp"

#include <QSplitter>
#include <QTextBrowser>
#include <QVBoxLayout>

namespace parallax::views {

namespace {

QString entry(const Explanation& e)
{
    return QStringLiteral("<p><b>") + QString::fromStdString(e.title).toHtmlEscaped() + QStringLiteral("</b><br>")
        + QString::fromStdString(e.what).toHtmlEscaped() + QStringLiteral("<br><code>")
        + QString::fromStdString(e.formula).toHtmlEscaped() + QStringLiteral("</code><br><i>")
        + QString::fromStdString(e.source).toHtmlEscaped() + QStringLiteral("</i></p>");
}

} // namespace

LearnPanel::LearnPanel(QWidget* parent)
    : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* split = new QSplitter(Qt::Vertical, this);
    m_latest_view = new QTextBrowser(split);
    m_latest_view->setObjectName(QStringLiteral("learn_latest"));
    m_glossary_view = new QTextBrowser(split);
    m_glossary_view->setObjectName(QStringLiteral("learn_glossary"));
    split->addWidget(m_latest_view);
    split->addWidget(m_glossary_view);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 1);
    layout->addWidget(split);
    QString g = QStringLiteral("<h4>Parallel degrees</h4>");
    for (Degree d : kAllDegrees)
        g += entry(explain_degree(d));
    g += QStringLiteral("<h4>Toggles</h4>");
    for (const std::string& key : toggle_keys())
        g += entry(*explain_toggle(key));
    g += QStringLiteral("<h4>Metrics</h4>");
    for (int i = 0; i < kMetricCount; ++i)
        g += entry(explain_metric(static_cast<Metric>(i)));
    m_glossary_view->setHtml(QStringLiteral("<h4>Glossary</h4>") + g);
    m_latest = QStringLiteral("<p>Drag a degree or flip a toggle: this panel says what moved and why. Hover any "
                              "control or number for its formula and source.</p>");
    m_latest_view->setHtml(m_latest);
}

void LearnPanel::set_change(
    const PlanEvaluation& current, const Prediction* previous, const Strategy* previous_strategy, const QString& change)
{
    QString html = QStringLiteral("<h4>Latest change</h4>");
    if (!change.isEmpty())
        html += QStringLiteral("<p><b>") + change.toHtmlEscaped() + QStringLiteral("</b>");
    if (previous_strategy) {
        const std::string moved = describe_strategy_change(*previous_strategy, current.scenario.strategy);
        if (!moved.empty())
            html += QStringLiteral("<br>Strategy: ") + QString::fromStdString(moved).toHtmlEscaped();
    }
    html += QStringLiteral("</p>");
    if (!current.valid) {
        html += QStringLiteral("<p>The plan breaks a rule:</p><ul>");
        for (const RuleViolation& v : current.violations)
            html += QStringLiteral("<li><code>") + QString::fromStdString(v.key) + QStringLiteral("</code>: ")
                + QString::fromStdString(v.message).toHtmlEscaped() + QStringLiteral("</li>");
        html += QStringLiteral("</ul>");
    } else if (previous && previous->step_time_s > 0) {
        html += QStringLiteral("<ul>");
        int shown = 0;
        for (Metric m : { Metric::step_time, Metric::tokens_per_s, Metric::mfu, Metric::bubble, Metric::peak_memory,
                 Metric::power, Metric::energy_per_token }) {
            const std::string why = why_moved(m, *previous, current.prediction);
            if (why.empty())
                continue;
            html += QStringLiteral("<li>") + QString::fromStdString(why).toHtmlEscaped() + QStringLiteral("</li>");
            ++shown;
        }
        html += QStringLiteral("</ul>");
        if (shown == 0)
            html += QStringLiteral("<p>No headline number moved noticeably.</p>");
    }
    for (const std::string& w : current.warnings)
        html += QStringLiteral("<p><i>Note:</i> ") + QString::fromStdString(w).toHtmlEscaped() + QStringLiteral("</p>");
    m_latest = html;
    m_latest_view->setHtml(html);
}

} // namespace parallax::views

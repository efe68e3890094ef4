#pragma once
// The "learn" panel: what the latest change did (the strategy change and why each headline number
// moved) above a glossary of every degree, toggle and metric with its formula and source. The same
// texts appear as tooltips on the controls; this panel keeps them on screen for teaching.
#include "plan_evaluation.hpp"

#include <QTextBrowser>

namespace parallax::views {

class LearnPanel : public QTextBrowser {
    Q_OBJECT
public:
    explicit LearnPanel(QWidget* parent = nullptr);
    // `previous` may be null (first plan). `change` is the undo text of the latest edit.
    void set_change(const PlanEvaluation& current, const Prediction* previous, const Strategy* previous_strategy,
        const QString& change);
    QString latest_html() const { return m_latest; }

private:
    void rebuild();
    QString m_latest;
    QString m_glossary;
};

} // namespace parallax::views

#pragma once
// The "learn" panel: what the latest change did (the strategy change and why each headline number
// moved) above a glossary of every degree, toggle and metric with its formula and source. The same
// texts appear as tooltips on the controls; this panel keeps them on screen for teaching.
#include "viewdata/plan_evaluation.hpp"

#include <QWidget>

class QTextBrowser;

namespace parallax::views {

class LearnPanel : public QWidget {
    Q_OBJECT
public:
    explicit LearnPanel(QWidget* parent = nullptr);
    // `previous` may be null (first plan). `change` is the undo text of the latest edit.
    void set_change(const PlanEvaluation& current, const Prediction* previous, const Strategy* previous_strategy,
        const QString& change);
    QString latest_html() const { return m_latest; }
    QTextBrowser* latest_view() const { return m_latest_view; }
    QTextBrowser* glossary_view() const { return m_glossary_view; }

private:
    // Two browsers: the short "latest change" text is replaced on every change; the long glossary
    // is laid out once (re-laying it out on every drag step cost milliseconds per frame).
    QString m_latest;
    QTextBrowser* m_latest_view = nullptr;
    QTextBrowser* m_glossary_view = nullptr;
};

} // namespace parallax::views

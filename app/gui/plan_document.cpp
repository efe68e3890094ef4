#include "gui/plan_document.hpp"

#include <QUndoStack>

namespace parallax::app {

PlanDocument::PlanDocument(QObject* parent)
    : QObject(parent)
    , m_undo(new QUndoStack(this))
{
    connect(m_undo, &QUndoStack::cleanChanged, this, [this](bool) { emit modified_changed(modified()); });
}

void PlanDocument::reset(const Scenario& s, const QString& path, const QString& label)
{
    m_undo->clear();
    m_dirty_without_history = false;
    m_path = path;
    m_label = label;
    m_undo->setClean();
    set_scenario(s, QStringLiteral("Open ") + label);
    emit path_changed(path);
    emit modified_changed(false);
}

void PlanDocument::reset_modified(const Scenario& s, const QString& path, const QString& label)
{
    reset(s, path, label);
    m_dirty_without_history = true;
    emit modified_changed(true);
}

void PlanDocument::apply(const Scenario& s, const QString& what, int merge)
{
    if (!m_scenario) {
        reset(s, QString(), what);
        return;
    }
    m_undo->push(new SetScenarioCommand(this, *m_scenario, s, what, merge));
}

bool PlanDocument::modified() const
{
    return m_dirty_without_history || !m_undo->isClean();
}

void PlanDocument::mark_saved(const QString& path)
{
    const bool path_moved = path != m_path;
    m_path = path;
    m_dirty_without_history = false;
    m_undo->setClean();
    if (path_moved)
        emit path_changed(path);
    emit modified_changed(false);
}

void PlanDocument::set_scenario(const Scenario& s, const QString& what)
{
    m_scenario = s;
    emit scenario_changed(s, what);
}

SetScenarioCommand::SetScenarioCommand(
    PlanDocument* doc, Scenario before, Scenario after, const QString& what, int merge)
    : m_doc(doc)
    , m_before(std::move(before))
    , m_after(std::move(after))
    , m_merge(merge)
    , m_first_text(what)
{
    setText(what);
}

void SetScenarioCommand::undo()
{
    m_doc->set_scenario(m_before, QStringLiteral("Undo ") + text());
}
void SetScenarioCommand::redo()
{
    m_doc->set_scenario(m_after, text());
}

bool SetScenarioCommand::mergeWith(const QUndoCommand* other)
{
    const auto* o = static_cast<const SetScenarioCommand*>(other);
    if (m_merge == 0 || o->m_merge != m_merge)
        return false;
    m_after = o->m_after;
    // "TP 4 → 8" then "TP 8 → 16" reads as one step "TP 4 → 16" would; keep the gesture's latest text.
    setText(o->text());
    return true;
}

} // namespace parallax::app

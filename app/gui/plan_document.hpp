#pragma once
// The open scenario as a document: the scenario, where it lives on disk, and an undo stack of
// whole-scenario snapshots. Edits made by one drag gesture merge into one undo step (the command's
// merge key is the gesture's serial), so Ctrl+Z undoes the drag, not each pixel.
#include "spec/scenario.hpp"

#include <QObject>
#include <QString>
#include <QUndoCommand>

#include <optional>

class QUndoStack;

namespace parallax::app {

class PlanDocument : public QObject {
    Q_OBJECT
public:
    explicit PlanDocument(QObject* parent = nullptr);

    bool has_scenario() const { return m_scenario.has_value(); }
    const std::optional<Scenario>& scenario() const { return m_scenario; }
    // A freshly opened document: no undo history, unmodified.
    void reset(const Scenario& s, const QString& path, const QString& label);
    // A recovered or otherwise unsaved document: no history, but modified.
    void reset_modified(const Scenario& s, const QString& path, const QString& label);
    // An edit as one undo step; edits with the same non-zero `merge` key merge into one.
    void apply(const Scenario& s, const QString& what, int merge = 0);
    QUndoStack* undo_stack() const { return m_undo; }
    QString path() const { return m_path; }
    QString label() const { return m_label; }
    bool modified() const;
    void mark_saved(const QString& path);

signals:
    void scenario_changed(const parallax::Scenario& s, const QString& what);
    void modified_changed(bool modified);
    void path_changed(const QString& path);

private:
    friend class SetScenarioCommand;
    void set_scenario(const Scenario& s, const QString& what);

    std::optional<Scenario> m_scenario;
    QUndoStack* m_undo = nullptr;
    QString m_path;
    QString m_label;
    bool m_dirty_without_history = false;
};

class SetScenarioCommand : public QUndoCommand {
public:
    static constexpr int kMergeableId = 0x5050; // all mergeable edits share it; the merge key decides
    SetScenarioCommand(PlanDocument* doc, Scenario before, Scenario after, const QString& what, int merge);
    void undo() override;
    void redo() override;
    int id() const override { return m_merge != 0 ? kMergeableId : -1; }
    bool mergeWith(const QUndoCommand* other) override;

private:
    PlanDocument* m_doc;
    Scenario m_before;
    Scenario m_after;
    int m_merge;
    QString m_first_text;
};

} // namespace parallax::app

#pragma once
// When the open document is autosaved, and how a crashed session's plan comes back. Builds on
// Autosave (the file, its lock, atomic writes): a modification schedules one write after the
// settings' interval; only plans that load again are written, so a recovery never fails on its own
// file. A disabled controller (screenshots, benchmarks) writes nothing but still finds orphans.
#include "gui/autosave.hpp"

#include <QObject>
#include <QString>
#include <QStringList>

class QTimer;

namespace parallax::app {

class PlanDocument;
class Settings;

class AutosaveController : public QObject {
    Q_OBJECT
public:
    AutosaveController(Settings* settings, PlanDocument* doc, bool enabled, QObject* parent = nullptr);

    bool enabled() const { return m_autosave != nullptr; }
    // Writes the document now; false (with the reason in `error`) when disabled, empty or breaking a rule.
    bool write_now(QString* error = nullptr);
    // After a save or an open: nothing to recover.
    void discard();
    QString file_path() const;
    // Leaves the file behind and releases the lock, as a crash would (tests).
    void abandon();

    // Autosave files in the settings' folder that no running Parallax holds.
    QStringList orphans() const;
    // Makes `file` the (modified) document, removes it and autosaves the plan under this session's
    // file. Throws InputError when it cannot be read.
    RecoveredScenario recover(const QString& file);

private:
    void schedule(); // one write per interval while the document is modified

    Settings* m_settings;
    PlanDocument* m_doc;
    Autosave* m_autosave = nullptr; // null when disabled
    QTimer* m_timer = nullptr;
};

} // namespace parallax::app

#pragma once
// Autosave and crash recovery. A running window owns one autosave file in the autosave folder and
// holds a lock file beside it (QLockFile, so a crashed process's lock is recognised as stale). On
// start, autosave files whose lock nobody holds are what a crash left behind: they can be recovered.
// Writes are atomic (QSaveFile); a clean exit or a save removes the file.
#include "spec/scenario.hpp"

#include <QDateTime>
#include <QLockFile>
#include <QObject>
#include <QString>

#include <memory>

namespace parallax::app {

struct RecoveredScenario {
    Scenario scenario;
    QString original_path; // where the document was saved last, empty if never
    QString label;
    QDateTime saved_at;
    QString autosave_file;
};

class Autosave : public QObject {
    Q_OBJECT
public:
    explicit Autosave(const QString& dir, QObject* parent = nullptr);
    ~Autosave() override; // a clean exit: the file and the lock go away

    bool write(const Scenario& s, const QString& original_path, const QString& label, QString* error = nullptr);
    void discard(); // after a save: nothing to recover
    QString file_path() const { return m_file; }
    bool has_file() const;
    QString dir() const { return m_dir; }
    // Leaves the file behind and releases the lock, as a crash would (tests use it).
    void abandon();

    // Autosave files in `dir` that no running Parallax holds.
    static QStringList orphans(const QString& dir);
    // Reads one; throws InputError when it cannot be read.
    static RecoveredScenario load(const QString& file);
    static void remove(const QString& file);

private:
    QString m_dir;
    QString m_file;
    std::unique_ptr<QLockFile> m_lock;
};

} // namespace parallax::app

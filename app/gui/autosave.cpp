#include "gui/autosave.hpp"

#include "io/json_reader.hpp"
#include "io/preset_catalog.hpp"
#include "io/scenario_io.hpp"
#include "spec/input_error.hpp"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRandomGenerator>
#include <QSaveFile>

#include <nlohmann/json.hpp>

namespace parallax::app {

namespace {

constexpr const char* kMarker = "parallax_autosave"; // marks our files; the scenario sits under "scenario"

QString lock_of(const QString& file)
{
    return file.left(file.size() - 5) + QStringLiteral(".lock");
}

} // namespace

Autosave::Autosave(const QString& dir, QObject* parent)
    : QObject(parent)
    , m_dir(dir)
{
    QDir().mkpath(dir);
    const QString base = QStringLiteral("autosave-%1-%2")
                             .arg(QCoreApplication::applicationPid())
                             .arg(QRandomGenerator::global()->generate(), 8, 16, QLatin1Char('0'));
    m_file = QDir(dir).filePath(base + QStringLiteral(".json"));
    m_lock = std::make_unique<QLockFile>(lock_of(m_file));
    m_lock->setStaleLockTime(0); // only a dead owner makes it stale, never its age
    m_lock->tryLock(0);
}

Autosave::~Autosave()
{
    if (m_lock) {
        discard();
        m_lock->unlock();
    }
}

bool Autosave::has_file() const
{
    return QFile::exists(m_file);
}

bool Autosave::write(const Scenario& s, const QString& original_path, const QString& label, QString* error)
{
    nlohmann::json j;
    j[kMarker] = 1;
    j["original_path"] = original_path.toStdString();
    j["label"] = label.toStdString();
    j["saved_at"] = QDateTime::currentDateTimeUtc().toString(Qt::ISODate).toStdString();
    j["scenario"] = scenario_to_json(s);
    QSaveFile f(m_file);
    if (!f.open(QIODevice::WriteOnly)) {
        if (error)
            *error = m_file + QStringLiteral(": ") + f.errorString();
        return false;
    }
    const std::string text = j.dump(2);
    f.write(text.data(), static_cast<qint64>(text.size()));
    if (!f.commit()) {
        if (error)
            *error = m_file + QStringLiteral(": ") + f.errorString();
        return false;
    }
    return true;
}

void Autosave::discard()
{
    QFile::remove(m_file);
}

void Autosave::abandon()
{
    if (m_lock)
        m_lock->unlock();
    m_lock.reset();
}

QStringList Autosave::orphans(const QString& dir)
{
    QStringList out;
    const QFileInfoList files = QDir(dir).entryInfoList({ QStringLiteral("autosave-*.json") }, QDir::Files, QDir::Time);
    for (const QFileInfo& f : files) {
        QLockFile lock(lock_of(f.absoluteFilePath()));
        lock.setStaleLockTime(0);
        if (!lock.tryLock(0))
            continue; // a running window owns it
        lock.unlock();
        out << f.absoluteFilePath();
    }
    return out;
}

RecoveredScenario Autosave::load(const QString& file)
{
    const std::string path = file.toStdString();
    const nlohmann::json j = parse_json_text(read_text_file(path), path);
    if (!j.is_object() || !j.contains(kMarker) || !j.contains("scenario"))
        throw InputError(path, "", "not a Parallax autosave file");
    RecoveredScenario r;
    r.scenario = parse_scenario(j["scenario"], path + " (autosave)", PresetCatalog::standard());
    r.original_path = QString::fromStdString(j.value("original_path", std::string()));
    r.label = QString::fromStdString(j.value("label", std::string()));
    r.saved_at = QDateTime::fromString(QString::fromStdString(j.value("saved_at", std::string())), Qt::ISODate);
    r.autosave_file = file;
    return r;
}

void Autosave::remove(const QString& file)
{
    QFile::remove(file);
    QFile::remove(lock_of(file));
}

} // namespace parallax::app

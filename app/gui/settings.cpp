#include "gui/settings.hpp"

#include <QDir>
#include <QFileInfo>
#include <QStandardPaths>

namespace parallax::app {

namespace {

QString key(const char* k)
{
    return QString::fromLatin1(k);
}

} // namespace

Settings::Settings(QObject* parent)
    : QObject(parent)
    , m_s(std::make_unique<QSettings>())
{
}

Settings::Settings(const QString& ini_path, QObject* parent)
    : QObject(parent)
    , m_s(std::make_unique<QSettings>(ini_path, QSettings::IniFormat))
{
}

Theme Settings::theme() const
{
    const QString t = m_s->value(key(keys::theme), QStringLiteral("system")).toString();
    if (t == QStringLiteral("light"))
        return Theme::light;
    if (t == QStringLiteral("dark"))
        return Theme::dark;
    return Theme::system;
}

void Settings::set_theme(Theme t)
{
    if (t == theme())
        return;
    const QString name = t == Theme::light ? QStringLiteral("light")
        : t == Theme::dark                 ? QStringLiteral("dark")
                                           : QStringLiteral("system");
    m_s->setValue(key(keys::theme), name);
    emit theme_changed(t);
}

QStringList Settings::recent_files() const
{
    return m_s->value(key(keys::recent_files)).toStringList();
}

void Settings::add_recent_file(const QString& path)
{
    const QString abs = QFileInfo(path).absoluteFilePath();
    QStringList files = recent_files();
    files.removeAll(abs);
    files.prepend(abs);
    while (files.size() > kMaxRecentFiles)
        files.removeLast();
    m_s->setValue(key(keys::recent_files), files);
    emit recent_files_changed(files);
}

void Settings::remove_recent_file(const QString& path)
{
    QStringList files = recent_files();
    if (files.removeAll(QFileInfo(path).absoluteFilePath()) == 0 && files.removeAll(path) == 0)
        return;
    m_s->setValue(key(keys::recent_files), files);
    emit recent_files_changed(files);
}

void Settings::remove_missing_recent_files()
{
    const QStringList files = recent_files();
    QStringList kept;
    for (const QString& f : files)
        if (QFileInfo(f).isFile())
            kept << f;
    if (kept.size() == files.size())
        return;
    m_s->setValue(key(keys::recent_files), kept);
    emit recent_files_changed(kept);
}

void Settings::clear_recent_files()
{
    if (recent_files().isEmpty())
        return;
    m_s->setValue(key(keys::recent_files), QStringList());
    emit recent_files_changed({});
}

QByteArray Settings::window_geometry() const
{
    return m_s->value(key(keys::window_geometry)).toByteArray();
}
void Settings::set_window_geometry(const QByteArray& g)
{
    m_s->setValue(key(keys::window_geometry), g);
}
QByteArray Settings::window_state() const
{
    return m_s->value(key(keys::window_state)).toByteArray();
}
void Settings::set_window_state(const QByteArray& s)
{
    m_s->setValue(key(keys::window_state), s);
}

int Settings::autosave_interval_s() const
{
    return m_s->value(key(keys::autosave_interval_s), kDefaultAutosaveSeconds).toInt();
}

void Settings::set_autosave_interval_s(int s)
{
    if (s == autosave_interval_s())
        return;
    m_s->setValue(key(keys::autosave_interval_s), s);
    emit autosave_interval_changed(s);
}

QString Settings::autosave_dir() const
{
    const QString fallback
        = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + QStringLiteral("/autosave");
    return m_s->value(key(keys::autosave_dir), fallback).toString();
}

void Settings::set_autosave_dir(const QString& dir)
{
    m_s->setValue(key(keys::autosave_dir), dir);
}

QString Settings::grid_dimension() const
{
    return m_s->value(key(keys::grid_dimension), QStringLiteral("tp")).toString();
}
void Settings::set_grid_dimension(const QString& d)
{
    m_s->setValue(key(keys::grid_dimension), d);
}
QString Settings::sensitivity_degree() const
{
    return m_s->value(key(keys::sensitivity_degree), QStringLiteral("tp")).toString();
}
void Settings::set_sensitivity_degree(const QString& d)
{
    m_s->setValue(key(keys::sensitivity_degree), d);
}

QString Settings::calibration() const
{
    return m_s->value(key(keys::calibration), QString::fromLatin1(kShippedCalibration)).toString();
}
void Settings::set_calibration(const QString& choice)
{
    m_s->setValue(key(keys::calibration), choice);
}

} // namespace parallax::app

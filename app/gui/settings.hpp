#pragma once
// One Settings object for the planner: typed getters and setters over QSettings, a change signal
// for each, and the keys as constants in one place (STYLE.md). The window layout is saved with a
// version so an old layout is ignored rather than restored wrongly.
#include <QObject>
#include <QSettings>
#include <QStringList>

#include <memory>

namespace parallax::app {

namespace keys {
inline constexpr const char* theme = "ui/theme";
inline constexpr const char* window_geometry = "ui/window_geometry";
inline constexpr const char* window_state = "ui/window_state";
inline constexpr const char* grid_dimension = "ui/grid_dimension";
inline constexpr const char* sensitivity_degree = "ui/sensitivity_degree";
// "shipped", "none" or the absolute path of a calibration JSON file.
inline constexpr const char* calibration = "model/calibration";
inline constexpr const char* recent_files = "files/recent";
inline constexpr const char* autosave_interval_s = "files/autosave_interval_s";
inline constexpr const char* autosave_dir = "files/autosave_dir";
} // namespace keys

enum class Theme { system, light, dark };

class Settings : public QObject {
    Q_OBJECT
public:
    static constexpr int kLayoutVersion = 2; // bump when docks are added or renamed (2: runs)
    static constexpr int kMaxRecentFiles = 10;
    static constexpr int kDefaultAutosaveSeconds = 30;

    explicit Settings(QObject* parent = nullptr); // the user's settings (QSettings: organisation/application)
    Settings(const QString& ini_path, QObject* parent); // a private file (tests)

    Theme theme() const;
    void set_theme(Theme t);
    QStringList recent_files() const;
    void add_recent_file(const QString& path);
    void remove_recent_file(const QString& path);
    void remove_missing_recent_files(); // files that no longer exist leave the list
    void clear_recent_files();
    QByteArray window_geometry() const;
    void set_window_geometry(const QByteArray& g);
    QByteArray window_state() const;
    void set_window_state(const QByteArray& s);
    int autosave_interval_s() const;
    void set_autosave_interval_s(int s);
    QString autosave_dir() const; // default: <AppDataLocation>/autosave
    void set_autosave_dir(const QString& dir);
    QString grid_dimension() const;
    void set_grid_dimension(const QString& d);
    QString sensitivity_degree() const;
    void set_sensitivity_degree(const QString& d);
    // The calibration the planner evaluates with: kShippedCalibration, kNoCalibration or a file's path.
    static constexpr const char* kShippedCalibration = "shipped";
    static constexpr const char* kNoCalibration = "none";
    QString calibration() const;
    void set_calibration(const QString& choice);

signals:
    void theme_changed(parallax::app::Theme t);
    void recent_files_changed(const QStringList& files);
    void autosave_interval_changed(int seconds);

private:
    std::unique_ptr<QSettings> m_s;
};

} // namespace parallax::app

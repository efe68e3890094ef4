#pragma once
// A planner main window for tests: settings and autosave in a scratch folder (never the user's), no saved
// layout restored, not shown.
#include "gui/main_window.hpp"
#include "gui/settings.hpp"

#include <QTemporaryDir>

namespace parallax::test {

struct TestMainWindow {
    QTemporaryDir dir;
    app::Settings settings { dir.filePath(QStringLiteral("settings.ini")), nullptr };
    app::MainWindow window { options(settings, dir) };

    static app::MainWindow::Options options(app::Settings& settings, const QTemporaryDir& dir)
    {
        settings.set_autosave_dir(dir.filePath(QStringLiteral("autosave")));
        app::MainWindow::Options o;
        o.restore_layout = false;
        o.settings = &settings;
        return o;
    }
};

} // namespace parallax::test

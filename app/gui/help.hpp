#pragma once
// The Help menu's content: the About text, the keyboard shortcuts as the window's actions define them,
// and where the documentation is. Kept out of MainWindow so that tests can check each piece alone.
#include <QList>
#include <QString>
#include <QUrl>

class QDialog;
class QMainWindow;
class QWidget;

namespace parallax::app {

struct ShortcutEntry {
    QString menu; // "File", "Runs > Calibration", or "" for an action outside the menus
    QString action; // the action's text without mnemonics ("Open scenario...")
    QString shortcuts; // its shortcuts in the platform's notation, separated by ", "
};

// Every action of `window` that has a shortcut, read from the actions themselves: the menu bar's in menu
// order first, then any other action of the window (a panel's, a toolbar's). Each action once.
QList<ShortcutEntry> collect_shortcuts(const QMainWindow& window);

// A dialog listing `entries` in a table (menu, action, shortcut); the caller shows it.
QDialog* make_shortcuts_dialog(const QList<ShortcutEntry>& entries, QWidget* parent);

// About Parallax (rich text): version, what it is, the licenses, where the documentation is.
QString about_text();

// The documentation to open: the installed README (<prefix>/share/doc/parallax/README.md next to the
// executable's <prefix>/bin), else the source tree's the program was built from; empty when neither exists.
QUrl documentation_url();

} // namespace parallax::app

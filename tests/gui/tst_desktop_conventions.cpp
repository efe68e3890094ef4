// The planner's desktop conventions, offscreen: the Help menu (About, keyboard shortcuts read from the
// window's actions, the documentation opened through QDesktopServices), recent files (at most 10, vanished
// files dropped, a Clear entry), and files dropped on the window (a scenario opens, a Chrome trace goes under
// the timeline).
#include "gui/file_drop.hpp"
#include "gui/help.hpp"
#include "gui/main_window.hpp"
#include "gui/settings.hpp"
#include "timeline/timeline_canvas.hpp"
#include "timeline/timeline_view.hpp"

#include "../support/planner_test_main.hpp"

#include <QAction>
#include <QDesktopServices>
#include <QDialog>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFile>
#include <QFileInfo>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QSet>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QUrl>

#include <memory>

using namespace parallax;
using parallax::app::MainWindow;

namespace {

const QByteArray kScenario = R"({
  "schema": 1,
  "model": "llama3-8b",
  "cluster": { "gpu": "H100-SXM5-80GB", "nodes": 2, "gpus_per_node": 8,
               "intra_node": "nvlink4-nvswitch", "inter_node": "ib-ndr" },
  "training": { "global_batch": 64, "seq_len": 4096, "precision": "bf16" },
  "strategy": { "tp": 2, "pp": 2, "dp": 4 }
})";

// A PyTorch-profiler-like trace: two kernels on one GPU stream.
const QByteArray kTrace = R"({"traceEvents": [
  {"name": "gemm", "ph": "X", "cat": "kernel", "ts": 100, "dur": 50, "pid": 0, "tid": 7},
  {"name": "nccl", "ph": "X", "cat": "kernel", "ts": 160, "dur": 20, "pid": 0, "tid": 7}
]})";

// A Hugging Face config.json: JSON, but neither a scenario nor a trace.
const QByteArray kHfConfig = R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 4096})";

// Receives the URLs QDesktopServices is asked to open.
class UrlCatcher : public QObject {
    Q_OBJECT
public:
    QList<QUrl> urls;
public slots:
    void open(const QUrl& url) { urls << url; }
};

struct Window {
    QTemporaryDir dir;
    std::unique_ptr<app::Settings> settings;
    std::unique_ptr<MainWindow> window;

    // `recent`: recent files to put in the settings before the window starts.
    explicit Window(const QStringList& recent = {})
    {
        settings = std::make_unique<app::Settings>(dir.filePath(QStringLiteral("settings.ini")), nullptr);
        settings->set_autosave_dir(dir.filePath(QStringLiteral("autosave")));
        for (auto it = recent.crbegin(); it != recent.crend(); ++it)
            settings->add_recent_file(*it);
        MainWindow::Options o;
        o.restore_layout = false;
        o.autosave = false;
        o.settings = settings.get();
        o.run_store = dir.filePath(QStringLiteral("runs.sqlite"));
        o.profiles_file = dir.filePath(QStringLiteral("profiles.ini"));
        window = std::make_unique<MainWindow>(o);
        window->resize(1400, 900);
        window->show();
    }

    QString write(const QString& name, const QByteArray& bytes) const
    {
        const QString path = dir.filePath(name);
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly) || f.write(bytes) != bytes.size())
            qWarning("cannot write %s", qPrintable(path));
        return path;
    }

    QMenu* menu(const QString& title) const
    {
        for (QAction* a : window->menuBar()->actions())
            if (a->menu() && a->text().remove(u'&') == title)
                return a->menu();
        return nullptr;
    }

    QMenu* recent_menu() const
    {
        if (QMenu* file = menu(QStringLiteral("File")))
            for (QAction* a : file->actions())
                if (a->menu() && a->text().remove(u'&').startsWith(QStringLiteral("Open recent")))
                    return a->menu();
        return nullptr;
    }

    // Drags `path` over the window and drops it; returns whether the drag was accepted.
    bool drop(const QString& path) const
    {
        QMimeData mime;
        mime.setUrls({ QUrl::fromLocalFile(path) });
        const QPointF at(window->width() / 2.0, window->height() / 2.0);
        QDragEnterEvent enter(at.toPoint(), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(window.get(), &enter);
        if (!enter.isAccepted())
            return false;
        QDropEvent drop(at, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(window.get(), &drop);
        return drop.isAccepted();
    }
};

} // namespace

class TestDesktopConventions : public QObject {
    Q_OBJECT
private slots:
    void helpMenuHasItsThreeEntries();
    void shortcutsAreReadFromTheActions();
    void shortcutsDialogListsThem();
    void aboutSaysVersionAndLicenses();
    void documentationOpensTheReadme();
    void recentFilesKeepTenAndDropVanishedOnes();
    void recentFileThatVanishedIsRemovedWhenOpened();
    void recentFilesCanBeCleared();
    void filesAreClassifiedByContent();
    void droppedScenarioOpens();
    void droppedTraceGoesUnderTheTimeline();
};

void TestDesktopConventions::helpMenuHasItsThreeEntries()
{
    Window w;
    QMenu* help = w.menu(QStringLiteral("Help"));
    QVERIFY(help);
    QStringList names;
    for (QAction* a : help->actions())
        names << a->objectName();
    for (const char* name : { "help_documentation", "help_shortcuts", "help_about" })
        QVERIFY2(names.contains(QLatin1String(name)), name);
    // Help is the last menu, as on every desktop.
    QCOMPARE(w.window->menuBar()->actions().constLast()->menu(), help);
}

void TestDesktopConventions::shortcutsAreReadFromTheActions()
{
    Window w;
    const QList<app::ShortcutEntry> entries = app::collect_shortcuts(*w.window);
    const auto find = [&](const QString& action) -> const app::ShortcutEntry* {
        for (const auto& e : entries)
            if (e.action == action)
                return &e;
        return nullptr;
    };
    const app::ShortcutEntry* open = find(QStringLiteral("Open scenario..."));
    QVERIFY(open);
    QCOMPARE(open->menu, QStringLiteral("File"));
    QVERIFY2(open->shortcuts.startsWith(QKeySequence(QKeySequence::Open).toString(QKeySequence::NativeText)),
        qPrintable(open->shortcuts));
    QVERIFY(find(QStringLiteral("Keyboard shortcuts")));
    QVERIFY(find(QStringLiteral("Pin plan as baseline (A)")));
    // Every listed action really has that shortcut, and no action is listed twice.
    QSet<QString> seen;
    for (const auto& e : entries) {
        QVERIFY2(!e.shortcuts.isEmpty(), qPrintable(e.action));
        QVERIFY2(!seen.contains(e.menu + e.action), qPrintable(e.action));
        seen.insert(e.menu + e.action);
    }
    // A new action of the window appears without anyone updating a list.
    auto* extra = new QAction(QStringLiteral("&Frobnicate"), w.window.get());
    extra->setShortcut(QKeySequence(Qt::CTRL | Qt::ALT | Qt::Key_F));
    w.window->addAction(extra);
    const QList<app::ShortcutEntry> again = app::collect_shortcuts(*w.window);
    QCOMPARE(again.size(), entries.size() + 1);
    QCOMPARE(again.constLast().action, QStringLiteral("Frobnicate"));
    QVERIFY(again.constLast().menu.isEmpty());
}

void TestDesktopConventions::shortcutsDialogListsThem()
{
    Window w;
    w.window->show_keyboard_shortcuts();
    auto* dialog = w.window->findChild<QDialog*>(QStringLiteral("shortcuts_dialog"));
    QVERIFY(dialog);
    QVERIFY(dialog->isVisible());
    auto* table = dialog->findChild<QTableWidget*>(QStringLiteral("shortcuts_table"));
    QVERIFY(table);
    QCOMPARE(table->rowCount(), app::collect_shortcuts(*w.window).size());
    QStringList shortcuts;
    for (int r = 0; r < table->rowCount(); ++r)
        shortcuts << table->item(r, 0)->text();
    QVERIFY(shortcuts.contains(QKeySequence(Qt::CTRL | Qt::Key_Slash).toString(QKeySequence::NativeText)));
    dialog->close();
}

void TestDesktopConventions::aboutSaysVersionAndLicenses()
{
    const QString text = app::about_text();
    QVERIFY(text.contains(QStringLiteral("Parallax ")));
    QVERIFY(text.contains(QStringLiteral("License")));
    QVERIFY(text.contains(QString::fromLatin1(qVersion())));
    for (const char* lib : { "LGPL-3.0", "GPL-3.0", "MIT" })
        QVERIFY2(text.contains(QLatin1String(lib)), lib);
    Window w;
    w.window->show_about();
    auto* box = w.window->findChild<QMessageBox*>(QStringLiteral("about_box"));
    QVERIFY(box);
    QVERIFY(box->isVisible());
    QCOMPARE(box->text(), text);
    box->close();
}

void TestDesktopConventions::documentationOpensTheReadme()
{
    UrlCatcher catcher;
    QDesktopServices::setUrlHandler(QStringLiteral("file"), &catcher, "open");
    Window w;
    QVERIFY(w.window->open_documentation());
    QDesktopServices::unsetUrlHandler(QStringLiteral("file"));
    QCOMPARE(catcher.urls.size(), 1);
    const QString path = catcher.urls.first().toLocalFile();
    QCOMPARE(QFileInfo(path).fileName(), QStringLiteral("README.md"));
    QVERIFY(QFileInfo::exists(path));
    QVERIFY(QFileInfo::exists(QFileInfo(path).dir().filePath(QStringLiteral("docs/scenario-format.md"))));
}

void TestDesktopConventions::recentFilesKeepTenAndDropVanishedOnes()
{
    QTemporaryDir files;
    QStringList recent;
    for (int i = 0; i < 12; ++i) {
        const QString p = files.filePath(QStringLiteral("plan%1.json").arg(i));
        QFile f(p);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(kScenario);
        recent << p;
    }
    const QString gone = files.filePath(QStringLiteral("gone.json"));
    recent.insert(1, gone); // never existed
    Window w(recent);
    const QStringList kept = w.settings->recent_files();
    QVERIFY(!kept.contains(gone));
    QVERIFY(kept.size() <= app::Settings::kMaxRecentFiles);
    QCOMPARE(kept.first(), recent.first());
    QMenu* menu = w.recent_menu();
    QVERIFY(menu);
    QStringList texts;
    for (QAction* a : menu->actions())
        if (!a->isSeparator())
            texts << a->text();
    QCOMPARE(texts.size(), kept.size() + 1); // the files, then "Clear recent files"
    QVERIFY(!texts.contains(QStringLiteral("gone.json")));
    // A file deleted while the window runs leaves the list when the menu opens.
    QVERIFY(QFile::remove(kept.at(1)));
    emit menu->aboutToShow();
    QVERIFY(!w.settings->recent_files().contains(kept.at(1)));
}

void TestDesktopConventions::recentFileThatVanishedIsRemovedWhenOpened()
{
    Window w;
    const QString path = w.write(QStringLiteral("plan.json"), kScenario);
    QVERIFY2(w.window->open_recent_file(path), qPrintable(w.window->last_error()));
    QCOMPARE(w.settings->recent_files().first(), QFileInfo(path).absoluteFilePath());
    const std::string model = w.window->scenario()->model.name;
    QVERIFY(QFile::remove(path));
    QVERIFY(!w.window->open_recent_file(path));
    QVERIFY(w.window->last_error().contains(QStringLiteral("no longer exists")));
    QVERIFY(!w.settings->recent_files().contains(QFileInfo(path).absoluteFilePath()));
    QCOMPARE(w.window->scenario()->model.name, model); // the plan on screen stays
}

void TestDesktopConventions::recentFilesCanBeCleared()
{
    Window w;
    w.window->open_recent_file(w.write(QStringLiteral("a.json"), kScenario));
    QVERIFY(!w.settings->recent_files().isEmpty());
    QAction* clear = w.recent_menu()->findChild<QAction*>(QStringLiteral("clear_recent_files"));
    if (!clear)
        for (QAction* a : w.recent_menu()->actions())
            if (a->objectName() == QStringLiteral("clear_recent_files"))
                clear = a;
    QVERIFY(clear);
    clear->trigger();
    QVERIFY(w.settings->recent_files().isEmpty());
    QVERIFY(!w.recent_menu()->isEnabled());
}

void TestDesktopConventions::filesAreClassifiedByContent()
{
    Window w;
    using app::DroppedFileKind;
    QCOMPARE(app::classify_dropped_file(w.write(QStringLiteral("x.json"), kScenario)), DroppedFileKind::scenario);
    QCOMPARE(app::classify_dropped_file(w.write(QStringLiteral("t.json"), kTrace)), DroppedFileKind::chrome_trace);
    QCOMPARE(app::classify_dropped_file(w.write(QStringLiteral("a.json"), "  [{\"ph\": \"X\"}]")),
        DroppedFileKind::chrome_trace);
    QCOMPARE(app::classify_dropped_file(w.write(QStringLiteral("config.json"), kHfConfig)), DroppedFileKind::other);
    QCOMPARE(app::classify_dropped_file(w.write(QStringLiteral("train.sh"), "torchrun pretrain_gpt.py\n")),
        DroppedFileKind::other);
    QCOMPARE(app::classify_dropped_file(w.dir.filePath(QStringLiteral("missing.json"))), DroppedFileKind::other);
    QCOMPARE(app::classify_dropped_file(w.dir.path()), DroppedFileKind::other);
}

void TestDesktopConventions::droppedScenarioOpens()
{
    Window w;
    QVERIFY(w.window->acceptDrops());
    const QString path = w.write(QStringLiteral("dropped.json"), kScenario);
    QVERIFY(w.drop(path));
    QCOMPARE(w.window->current_path(), QFileInfo(path).absoluteFilePath());
    QVERIFY(w.window->scenario());
    QCOMPARE(w.window->scenario()->model.name, std::string("llama3-8b"));
}

void TestDesktopConventions::droppedTraceGoesUnderTheTimeline()
{
    Window w;
    QVERIFY(w.window->open_scenario_preset(QStringLiteral("default")));
    const QString path = w.write(QStringLiteral("trace.json"), kTrace);
    QVERIFY(w.drop(path));
    const auto& measured = w.window->timeline_view()->timeline()->measured();
    QVERIFY2(measured, qPrintable(w.window->last_error()));
    QCOMPARE(measured->events, std::size_t(2));
    QVERIFY(w.window->dock(QStringLiteral("timeline"))->isVisible());
    // The plan stays: a trace is drawn under it, not opened instead of it.
    QVERIFY(w.window->current_path().isEmpty());
}

PARALLAX_PLANNER_TEST_MAIN(TestDesktopConventions)
#include "tst_desktop_conventions.moc"

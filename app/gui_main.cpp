// parallax: the planner GUI.
//   parallax [--scenario FILE|PRESET] [FILE|PRESET]   (the positional form is what the desktop entry passes)
//   parallax --scenario FILE|PRESET --screenshot OUT.png [--panel NAME] [--dark] [--dpi-scale 2] [--size WxH]
//            [--store RUNS.sqlite [--run RUN_ID]]
// With --screenshot the window renders offscreen (unless a platform is forced), the PNG is written
// and the program exits: 0 written, 1 cannot write, 2 bad input.
#include "gui/colocation_window.hpp"
#include "gui/main_window.hpp"
#include "gui/serving_window.hpp"
#include "gui/settings.hpp"
#include "gui/theme.hpp"
#include "io/scenario_kind.hpp"
#include "remote/remote_controller.hpp"
#include "remote/runs_panel.hpp"

#include <QApplication>
#include <QCommandLineParser>
#include <QDockWidget>
#include <QFile>
#include <QIcon>
#include <QSize>
#include <QTemporaryDir>

#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>

namespace {

// Options that must act before QApplication exists (platform and scale factor).
void early_options(int argc, char** argv)
{
    bool screenshot = false;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--screenshot") == 0)
            screenshot = true;
        if (std::strcmp(argv[i], "--dpi-scale") == 0 && i + 1 < argc)
            qputenv("QT_SCALE_FACTOR", QByteArray(argv[i + 1]));
    }
    if (screenshot && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
}

void fail(const QString& message)
{
    std::fprintf(stderr, "parallax: %s\n", message.toLocal8Bit().constData());
}

using parallax::app::ColocationWindow;
using parallax::app::MainWindow;
using parallax::app::ServingWindow;
using parallax::app::Settings;
using parallax::app::Theme;

void add_options(QCommandLineParser& parser)
{
    parser.setApplicationDescription(QStringLiteral("Parallax: a planner for hybrid parallelism in LLM training."));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addOption({ QStringLiteral("scenario"),
        QStringLiteral("Scenario file or preset to open (default: the built-in default)."),
        QStringLiteral("FILE|PRESET"), QStringLiteral("default") });
    parser.addPositionalArgument(QStringLiteral("FILE"),
        QStringLiteral("Scenario file or preset to open (the same as --scenario; a file manager passes it)."),
        QStringLiteral("[FILE|PRESET]"));
    parser.addOption({ QStringLiteral("screenshot"), QStringLiteral("Render the window offscreen to a PNG and exit."),
        QStringLiteral("OUT.png") });
    parser.addOption({ QStringLiteral("panel"),
        QStringLiteral("With --screenshot: the panel to show and capture (%1).")
            .arg(MainWindow::panel_names().join(QStringLiteral(", "))),
        QStringLiteral("NAME"), QStringLiteral("window") });
    parser.addOption({ QStringLiteral("dark"), QStringLiteral("Use the dark palette.") });
    parser.addOption({ QStringLiteral("light"), QStringLiteral("Use the light palette.") });
    parser.addOption({ QStringLiteral("dpi-scale"), QStringLiteral("Scale factor for high-DPI rendering (e.g. 2)."),
        QStringLiteral("FACTOR") });
    parser.addOption({ QStringLiteral("size"), QStringLiteral("With --screenshot: window size in logical pixels."),
        QStringLiteral("WxH"), QStringLiteral("1600x1000") });
    parser.addOption({ QStringLiteral("store"),
        QStringLiteral("Run store (SQLite) of the Runs panel; default: $PARALLAX_RUN_STORE or the user's (with "
                       "--screenshot: an empty one)."),
        QStringLiteral("FILE") });
    parser.addOption({ QStringLiteral("run"),
        QStringLiteral("Select this run in the Runs panel (its overlay and log), or several separated by commas to "
                       "compare them; with --screenshot the newest run is selected when none is given."),
        QStringLiteral("RUN_ID[,RUN_ID...]") });
}

// Screenshots never read or write the user's settings and leave no autosave behind: their settings,
// run store and profiles live in `scratch`.
MainWindow::Options window_options(
    const QCommandLineParser& parser, const QTemporaryDir& scratch, Settings* scratch_settings)
{
    MainWindow::Options options;
    if (scratch_settings) {
        options.restore_layout = false;
        options.autosave = false;
        options.settings = scratch_settings;
        // A screenshot reads the run store it is given and never contacts a cluster.
        options.run_store = parser.isSet(QStringLiteral("store")) ? parser.value(QStringLiteral("store"))
                                                                  : scratch.filePath(QStringLiteral("runs.sqlite"));
        options.profiles_file = scratch.filePath(QStringLiteral("profiles.ini"));
    } else {
        options.interactive = true;
        options.run_store = parser.value(QStringLiteral("store"));
        options.attach_runs = true; // watch unfinished runs again after a restart
    }
    return options;
}

Theme theme_option(const QCommandLineParser& parser, Theme fallback)
{
    if (parser.isSet(QStringLiteral("dark")))
        return Theme::dark;
    if (parser.isSet(QStringLiteral("light")))
        return Theme::light;
    return fallback;
}

// The Runs panel of a screenshot: its table, then the chosen (or newest) run's overlay and log.
// Returns the exit code on failure.
std::optional<int> show_runs_for_screenshot(
    MainWindow& window, const QCommandLineParser& parser, const QString& panel, QSize size)
{
    parallax::views::RemoteRunsController* remote = window.remote();
    if (!remote->wait_until_idle(20000)) {
        fail(QStringLiteral("the run store could not be read in time"));
        return 1;
    }
    if (remote->panel()->model()->rowCount() == 0)
        return std::nullopt;
    QStringList runs = parser.value(QStringLiteral("run")).split(u',', Qt::SkipEmptyParts);
    if (runs.isEmpty())
        runs << remote->panel()->proxy()->index(0, 0).data(parallax::views::RunsModel::RunIdRole).toString();
    if (!remote->panel()->select_runs(runs)) {
        fail(QStringLiteral("--run: no run \"%1\" in %2").arg(runs.join(u','), remote->store_path()));
        return 2;
    }
    if (!remote->wait_until_idle(20000)) {
        fail(QStringLiteral("the run's overlay could not be read in time"));
        return 1;
    }
    // A picture of the window with runs in it shows them: the Runs dock in front, with room.
    if (panel == QStringLiteral("window")) {
        const int w = size.width();
        const int h = size.height();
        window.show_panel(QStringLiteral("runs"));
        window.resizeDocks({ window.dock(QStringLiteral("runs")) }, { h * 46 / 100 }, Qt::Vertical);
        window.resizeDocks({ window.dock(QStringLiteral("grid")), window.dock(QStringLiteral("runs")),
                               window.dock(QStringLiteral("learn")) },
            { w * 21 / 100, w * 58 / 100, w * 21 / 100 }, Qt::Horizontal);
    }
    return std::nullopt;
}

// Once queued replots and layouts have run, `target` as a PNG at --screenshot. Returns the exit code.
int save_screenshot(QWidget* target, const QCommandLineParser& parser)
{
    for (int i = 0; i < 3; ++i)
        QApplication::processEvents();
    if (!target->grab().save(parser.value(QStringLiteral("screenshot")), "PNG")) {
        fail(QStringLiteral("cannot write ") + parser.value(QStringLiteral("screenshot")));
        return 1;
    }
    return 0;
}

// --screenshot: shows the panel, waits for its numbers and pictures, writes the PNG. Returns the exit code.
int take_screenshot(MainWindow& window, const QCommandLineParser& parser)
{
    const QString panel = parser.value(QStringLiteral("panel"));
    if (!MainWindow::panel_names().contains(panel)) {
        fail(QStringLiteral("--panel: unknown panel \"%1\"; one of %2")
                 .arg(panel, MainWindow::panel_names().join(QStringLiteral(", "))));
        return 2;
    }
    const QStringList size = parser.value(QStringLiteral("size")).split(u'x');
    const int w = size.value(0).toInt();
    const int h = size.value(1).toInt();
    if (size.size() != 2 || w < 200 || h < 150) {
        fail(QStringLiteral("--size: expected WxH such as 1600x1000"));
        return 2;
    }
    window.resize(w, h);
    window.show();
    window.show_panel(panel);
    if (!window.wait_for_evaluation(20000)) {
        fail(QStringLiteral("the evaluation did not finish"));
        return 1;
    }
    if (panel == QStringLiteral("timeline") && !window.wait_for_timeline(60000)) {
        fail(QStringLiteral("the simulation for the timeline did not finish"));
        return 1;
    }
    if (const std::optional<int> failed = show_runs_for_screenshot(window, parser, panel, QSize(w, h)))
        return *failed;
    return save_screenshot(window.panel(panel), parser);
}

// --screenshot of a serving scenario: its own window (panels window, metrics, curve, search; the search
// panel runs the deployment search first).
int take_serving_screenshot(ServingWindow& window, const QCommandLineParser& parser)
{
    const QString panel = parser.value(QStringLiteral("panel"));
    if (!ServingWindow::panel_names().contains(panel)) {
        fail(QStringLiteral("--panel: unknown panel \"%1\" for a serving scenario; one of %2")
                 .arg(panel, ServingWindow::panel_names().join(QStringLiteral(", "))));
        return 2;
    }
    QWidget* target = window.panel(panel);
    if (!window.wait_for_evaluation(20000)) {
        fail(QStringLiteral("the evaluation did not finish"));
        return 1;
    }
    if (panel == QStringLiteral("search") || panel == QStringLiteral("window")) {
        window.start_search();
        if (!window.wait_for_search(60000)) {
            fail(QStringLiteral("the deployment search did not finish"));
            return 1;
        }
    }
    return save_screenshot(target, parser);
}

int take_colocation_screenshot(ColocationWindow& window, const QCommandLineParser& parser)
{
    if (!window.wait_for_evaluation(60000)) {
        fail(QStringLiteral("the placement did not finish"));
        return 1;
    }
    return save_screenshot(&window, parser);
}

// A serving or co-location scenario opens in its own window alone; with --screenshot, `capture` waits for
// the window's results and writes the picture.
template <class Window>
int run_own_window(
    const QString& path, const QCommandLineParser& parser, int (*capture)(Window&, const QCommandLineParser&))
{
    const bool screenshot = parser.isSet(QStringLiteral("screenshot"));
    Window window(!screenshot);
    window.setAttribute(Qt::WA_DeleteOnClose, false);
    window.setWindowIcon(QIcon(QStringLiteral(":/parallax/icons/parallax.svg")));
    parallax::app::apply_theme(theme_option(parser, Theme::light));
    if (!window.open_file(path)) {
        fail(window.last_error());
        return 2;
    }
    if (screenshot) {
        const QStringList size = parser.value(QStringLiteral("size")).split(u'x');
        window.resize(size.value(0).toInt(), size.value(1).toInt());
    }
    window.show();
    return screenshot ? capture(window, parser) : QApplication::exec();
}

// --run without --screenshot: select the runs once the store's rows are in.
void select_runs_when_loaded(MainWindow& window, const QString& run)
{
    auto* remote = window.remote();
    QObject::connect(remote, &parallax::views::RemoteRunsController::rows_loaded, &window, [&window, remote, run] {
        if (remote->panel()->selected_run_ids().isEmpty()
            && remote->panel()->select_runs(run.split(u',', Qt::SkipEmptyParts)))
            window.show_panel(QStringLiteral("runs"));
    });
}

} // namespace

int main(int argc, char** argv)
{
    early_options(argc, argv);
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("Parallax"));
    QApplication::setOrganizationName(QStringLiteral("Parallax"));
    QApplication::setApplicationVersion(QStringLiteral(PARALLAX_VERSION));
    QCommandLineParser parser;
    add_options(parser);
    parser.process(app);

    const QStringList positional = parser.positionalArguments();
    if (positional.size() > 1) {
        fail(QStringLiteral("at most one scenario file or preset, got %1").arg(positional.join(u' ')));
        return 2;
    }
    const QString scenario = positional.isEmpty() ? parser.value(QStringLiteral("scenario")) : positional.first();
    const parallax::ScenarioKind kind = QFile::exists(scenario) ? parallax::scenario_file_kind(scenario.toStdString())
                                                                : parallax::ScenarioKind::training;
    if (kind == parallax::ScenarioKind::serving)
        return run_own_window<ServingWindow>(scenario, parser, &take_serving_screenshot);
    if (kind == parallax::ScenarioKind::colocation)
        return run_own_window<ColocationWindow>(scenario, parser, &take_colocation_screenshot);

    const bool screenshot = parser.isSet(QStringLiteral("screenshot"));
    QTemporaryDir scratch;
    std::unique_ptr<Settings> scratch_settings;
    if (screenshot)
        scratch_settings = std::make_unique<Settings>(scratch.filePath(QStringLiteral("settings.ini")), nullptr);
    MainWindow window(window_options(parser, scratch, scratch_settings.get()));
    window.setWindowIcon(QIcon(QStringLiteral(":/parallax/icons/parallax.svg")));
    parallax::app::apply_theme(theme_option(parser, screenshot ? Theme::light : window.settings()->theme()));

    const bool ok
        = QFile::exists(scenario) ? window.open_scenario_file(scenario) : window.open_scenario_preset(scenario);
    if (!ok)
        fail(window.last_error());
    if (screenshot)
        return ok ? take_screenshot(window, parser) : 2;

    window.show();
    if (parser.isSet(QStringLiteral("run")))
        select_runs_when_loaded(window, parser.value(QStringLiteral("run")));
    window.offer_recovery();
    return QApplication::exec();
}

// parallax: the planner GUI.
//   parallax [--scenario FILE|PRESET] [--screenshot OUT.png]
#include "main_window.hpp"

#include <QApplication>
#include <QCommandLineParser>
#include <QFile>
#include <QIcon>
#include <QTimer>

#include <cstdio>

int main(int argc, char** argv)
{
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("Parallax"));
    QApplication::setOrganizationName(QStringLiteral("Parallax"));
    QApplication::setApplicationVersion(QStringLiteral(PARALLAX_VERSION));
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Parallax: a planner for hybrid parallelism in LLM training."));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addOption({ QStringLiteral("scenario"), QStringLiteral("Scenario file or preset to open (default: the built-in default)."),
        QStringLiteral("FILE|PRESET"), QStringLiteral("default") });
    parser.addOption({ QStringLiteral("screenshot"), QStringLiteral("Render the window to a PNG and exit."), QStringLiteral("OUT.png") });
    parser.process(app);

    parallax::app::MainWindow window;
    const QString scenario = parser.value(QStringLiteral("scenario"));
    const bool ok = QFile::exists(scenario) ? window.open_scenario_file(scenario) : window.open_scenario_preset(scenario);
    if (!ok)
        std::fprintf(stderr, "parallax: %s\n", window.last_error().toLocal8Bit().constData());

    if (parser.isSet(QStringLiteral("screenshot"))) {
        window.show();
        const QString out = parser.value(QStringLiteral("screenshot"));
        QTimer::singleShot(200, &window, [&window, out] {
            const bool saved = window.grab().save(out);
            if (!saved)
                std::fprintf(stderr, "parallax: cannot write %s\n", out.toLocal8Bit().constData());
            QApplication::exit(saved ? 0 : 1);
        });
        return QApplication::exec();
    }
    window.show();
    return QApplication::exec();
}

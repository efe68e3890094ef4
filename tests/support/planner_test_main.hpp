#pragma once
// The main() of a test that opens the planner's windows: the offscreen platform at 96 dpi, settings and
// data in Qt's test locations under a test application name (never the user's own), and the light
// theme that screenshots and colour checks expect.
#include "gui/theme.hpp"

#include <QApplication>
#include <QStandardPaths>
#include <QTest>

namespace parallax::test {

inline void prepare_planner_test_environment()
{
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication::setAttribute(Qt::AA_Use96Dpi);
    QStandardPaths::setTestModeEnabled(true);
}

inline void name_planner_test_application()
{
    QApplication::setApplicationName(QStringLiteral("ParallaxTest"));
    QApplication::setOrganizationName(QStringLiteral("Parallax"));
    app::apply_theme(app::Theme::light);
}

} // namespace parallax::test

// A macro because QTEST_SET_MAIN_SOURCE_PATH must expand in the test's own file (__FILE__).
#define PARALLAX_PLANNER_TEST_MAIN(TestObject)                                                                         \
    int main(int argc, char** argv)                                                                                    \
    {                                                                                                                  \
        parallax::test::prepare_planner_test_environment();                                                            \
        QApplication app(argc, argv);                                                                                  \
        parallax::test::name_planner_test_application();                                                               \
        TestObject test;                                                                                               \
        QTEST_SET_MAIN_SOURCE_PATH                                                                                     \
        return QTest::qExec(&test, argc, argv);                                                                        \
    }

#include <QTest>
class T : public QObject { Q_OBJECT private slots: void t() { QVERIFY(false); } };
QTEST_MAIN(T)
#include "tst_scenario_io.moc"

// The CSV writer: RFC 4180 quoting, LF row ends, and numbers written exactly as the Qt exports wrote
// them (QString::number(v, 'g', n)), so that moving an export onto the writer keeps its bytes.
#include "io/csv_writer.hpp"

#include <QString>
#include <QTest>

#include <cmath>
#include <limits>
#include <string>

using namespace parallax;

class TestCsvWriter : public QObject {
    Q_OBJECT
private slots:
    void headerAndRows();
    void quotesOnlyWhenNeeded();
    void quotedFieldAlwaysQuotes();
    void numbersMatchQt();
};

void TestCsvWriter::headerAndRows()
{
    CsvWriter csv { "stage", "layers", "watts" };
    csv.integer(0).integer(20).number(612.5, 8).end_row();
    csv.integer(-1).field("").number(0.1, 10).end_row();
    QCOMPARE(QString::fromStdString(csv.text()), QStringLiteral("stage,layers,watts\n0,20,612.5\n-1,,0.1\n"));
    CsvWriter empty;
    empty.end_row();
    QCOMPARE(empty.text(), std::string("\n"));
}

void TestCsvWriter::quotesOnlyWhenNeeded()
{
    QCOMPARE(CsvWriter::escaped("plain text"), std::string("plain text"));
    QCOMPARE(CsvWriter::escaped("a,b"), std::string("\"a,b\""));
    QCOMPARE(CsvWriter::escaped("say \"hi\""), std::string("\"say \"\"hi\"\"\""));
    QCOMPARE(CsvWriter::escaped("two\nlines"), std::string("\"two\nlines\""));
    QCOMPARE(CsvWriter::escaped("cr\r"), std::string("\"cr\r\""));
    CsvWriter csv;
    csv.field("x,y").field("z").end_row();
    QCOMPARE(csv.text(), std::string("\"x,y\",z\n"));
}

void TestCsvWriter::quotedFieldAlwaysQuotes()
{
    CsvWriter csv;
    csv.quoted_field("1F1B").quoted_field("").quoted_field("a \"b\"").end_row();
    QCOMPARE(csv.text(), std::string("\"1F1B\",\"\",\"a \"\"b\"\"\"\n"));
}

void TestCsvWriter::numbersMatchQt()
{
    const double values[] = { 0.0, -0.0, 1.0, -1.0, 0.1, 1.0 / 3.0, 2.0 / 3.0, 123456789.0, 1234567890123.0, 1e-5,
        1.5e-7, 9.999999999e9, 1e10, 1e100, 5e-324, 612.5, 0.00012345678901234, 70.0e9 / (1 << 30),
        std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
        std::numeric_limits<double>::quiet_NaN() };
    for (int digits : { 6, 8, 10 }) {
        for (double v : values) {
            QCOMPARE(QString::fromStdString(CsvWriter::format_number(v, digits)), QString::number(v, 'g', digits));
            QCOMPARE(QString::fromStdString(CsvWriter::format_number(v, digits)),
                QStringLiteral("%1").arg(v, 0, 'g', digits));
        }
        double x = 0.7;
        for (int i = 0; i < 400; ++i, x *= -1.37)
            QCOMPARE(QString::fromStdString(CsvWriter::format_number(x, digits)), QString::number(x, 'g', digits));
    }
}

QTEST_APPLESS_MAIN(TestCsvWriter)
#include "tst_csv_writer.moc"

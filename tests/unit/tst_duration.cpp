// Durations as policy files write them, and the ways Idem writes them back in that spelling
// (for people: core/text/humanduration.h, tests/unit/tst_humanduration.cpp).
#include <QtTest>

#include "core/policy/duration.h"

using namespace idem::policy;

class TestDuration : public QObject {
  Q_OBJECT

 private slots:
  void parsesEachUnit_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<qint64>("ms");
    QTest::newRow("ms") << "250ms" << qint64(250);
    QTest::newRow("s") << "2s" << qint64(2'000);
    QTest::newRow("m") << "30m" << qint64(1'800'000);
    QTest::newRow("h") << "24h" << qint64(86'400'000);
    QTest::newRow("d") << "30d" << qint64(2'592'000'000);
    QTest::newRow("zero") << "0s" << qint64(0);
    QTest::newRow("leading zero") << "07s" << qint64(7'000);
    QTest::newRow("400 days") << "400d" << qint64(34'560'000'000);
  }
  void parsesEachUnit() {
    QFETCH(QString, text);
    QFETCH(qint64, ms);
    const auto d = parseDuration(text.toStdString());
    QVERIFY2(d.has_value(), qPrintable(text));
    QCOMPARE(qint64(d->count()), ms);
  }

  void rejectsWhatIsNotOneIntegerAndOneUnit_data() {
    QTest::addColumn<QString>("text");
    QTest::newRow("empty") << "";
    QTest::newRow("no unit") << "30";
    QTest::newRow("no number") << "h";
    QTest::newRow("unknown unit") << "24x";
    QTest::newRow("upper case unit") << "24H";
    QTest::newRow("fraction") << "1.5h";
    QTest::newRow("negative") << "-5s";
    QTest::newRow("plus sign") << "+5s";
    QTest::newRow("two units") << "1h30m";
    QTest::newRow("space before unit") << "5 s";
    QTest::newRow("leading space") << " 5s";
    QTest::newRow("trailing space") << "5s ";
    QTest::newRow("word unit") << "5min";
    QTest::newRow("weeks") << "2w";
    QTest::newRow("overflows int64 ms") << "9999999999999999d";
    QTest::newRow("overflows digits") << "99999999999999999999ms";
  }
  void rejectsWhatIsNotOneIntegerAndOneUnit() {
    QFETCH(QString, text);
    QVERIFY2(!parseDuration(text.toStdString()).has_value(), qPrintable(text));
  }

  void formatUsesTheLargestExactUnit_data() {
    QTest::addColumn<qint64>("ms");
    QTest::addColumn<QString>("text");
    QTest::newRow("day") << qint64(86'400'000) << "1d";
    QTest::newRow("90s") << qint64(90'000) << "90s";
    QTest::newRow("1500ms") << qint64(1'500) << "1500ms";
    QTest::newRow("30m") << qint64(1'800'000) << "30m";
    QTest::newRow("25h") << qint64(90'000'000) << "25h";
    QTest::newRow("400d") << qint64(34'560'000'000) << "400d";
    QTest::newRow("zero") << qint64(0) << "0s";
    QTest::newRow("negative") << qint64(-2'000) << "-2s";
  }
  void formatUsesTheLargestExactUnit() {
    QFETCH(qint64, ms);
    QFETCH(QString, text);
    QCOMPARE(QString::fromStdString(formatDuration(Millis(ms))), text);
  }

  void formatThenParseIsIdentity_data() {
    QTest::addColumn<qint64>("ms");
    for (const qint64 ms : {qint64(1), qint64(999), qint64(61'000), qint64(3'600'001), qint64(604'800'000)})
      QTest::newRow(qPrintable(QString::number(ms))) << ms;
  }
  void formatThenParseIsIdentity() {
    QFETCH(qint64, ms);
    const auto back = parseDuration(formatDuration(Millis(ms)));
    QVERIFY(back.has_value());
    QCOMPARE(qint64(back->count()), ms);
  }

  void intervalIsMilliseconds_data() {
    QTest::addColumn<qint64>("ms");
    QTest::addColumn<QString>("text");
    QTest::newRow("day") << qint64(86'400'000) << "86400000 milliseconds";
    QTest::newRow("zero") << qint64(0) << "0 milliseconds";
    QTest::newRow("250ms") << qint64(250) << "250 milliseconds";
  }
  void intervalIsMilliseconds() {
    QFETCH(qint64, ms);
    QFETCH(QString, text);
    QCOMPARE(QString::fromStdString(toInterval(Millis(ms))), text);
  }
};

QTEST_APPLESS_MAIN(TestDuration)
#include "tst_duration.moc"

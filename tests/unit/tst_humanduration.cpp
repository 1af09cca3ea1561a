// The one rule for durations people read (core/text/humanduration.h): every surface (the
// explanation, the policy page, the tiers report, the console) prints what this test pins.
#include <QtTest>

#include "core/text/humanduration.h"

using namespace std::chrono;
using idem::text::humanDuration;

class TestHumanDuration : public QObject {
  Q_OBJECT

 private slots:
  void oneRuleFromMillisecondsToMonths_data() {
    QTest::addColumn<qint64>("us");
    QTest::addColumn<QString>("text");
    const qint64 ms = 1'000, s = 1'000 * ms, min = 60 * s, h = 60 * min, day = 24 * h;
    QTest::newRow("zero") << qint64(0) << "0 ms";
    QTest::newRow("sub-millisecond truncated") << qint64(999) << "0 ms";
    QTest::newRow("250 ms") << 250 * ms << "250 ms";
    QTest::newRow("999 ms") << 999 * ms << "999 ms";
    QTest::newRow("1 s") << s << "1 s";
    QTest::newRow("1.5 s") << 1'500 * ms << "1.5 s";
    QTest::newRow("4.5 s") << 4'500 * ms << "4.5 s";
    QTest::newRow("tenths truncated") << 9'999 * ms << "9.9 s";
    QTest::newRow("10 s") << 10 * s << "10 s";
    QTest::newRow("45 s") << 45 * s << "45 s";
    QTest::newRow("1 min") << min << "1 min";
    QTest::newRow("1 min 30 s") << 90 * s << "1 min 30 s";
    QTest::newRow("3 min 20 s") << 200 * s << "3 min 20 s";
    QTest::newRow("32 min") << 32 * min << "32 min";
    QTest::newRow("1 h") << h << "1 h";
    QTest::newRow("third unit dropped") << 3 * h + 12 * min + 30 * s << "3 h 12 min";
    QTest::newRow("truncated, never rounded up") << 2 * h - 1 << "1 h 59 min";
    QTest::newRow("zero second unit omitted") << h + 5 * s << "1 h";
    QTest::newRow("24 h") << 24 * h << "24 h";
    QTest::newRow("24 h 33 min") << 24 * h + 33 * min << "24 h 33 min";
    QTest::newRow("30 h") << 30 * h << "30 h";
    QTest::newRow("47 h 59 min") << 48 * h - 1 << "47 h 59 min";
    QTest::newRow("48 h reads 2 days") << 48 * h << "2 days";
    QTest::newRow("3 days") << 72 * h << "3 days";
    QTest::newRow("3 days 2 h") << 3 * day + 2 * h + 5 * s << "3 days 2 h";
    QTest::newRow("8 days 6 h") << 8 * day + 6 * h << "8 days 6 h";
    QTest::newRow("30 days") << 30 * day << "30 days";
    QTest::newRow("59 days 23 h") << 60 * day - 1 << "59 days 23 h";
    QTest::newRow("90 days, whole days") << 90 * day + 5 * h << "90 days";
    QTest::newRow("400 days") << 400 * day << "400 days";
    QTest::newRow("negative") << -5 * s << "-5 s";
    QTest::newRow("negative two units") << -(26 * h + 12 * min) << "-26 h 12 min";
    QTest::newRow("most negative") << std::numeric_limits<qint64>::min() << "-106751991 days";
  }
  void oneRuleFromMillisecondsToMonths() {
    QFETCH(qint64, us);
    QFETCH(QString, text);
    QCOMPARE(QString::fromStdString(humanDuration(microseconds(us))), text);
  }

  void millisecondsConvert() {
    QCOMPARE(humanDuration(milliseconds(4'500)), std::string("4.5 s"));
    QCOMPARE(humanDuration(hours(48)), std::string("2 days"));
  }
};

QTEST_APPLESS_MAIN(TestHumanDuration)
#include "tst_humanduration.moc"

// Times for people (core/text/humantime.h): the format, zones with and without letter
// abbreviations, daylight saving, truncation, the names --tz accepts.
#include <QtTest>

#include <cstdlib>

#include "core/explain/history.h"
#include "core/text/humantime.h"

using namespace idem;
using text::TimePrecision;
using text::TimeZone;

namespace {

std::int64_t at(const char* iso) {
  auto t = explain::parseIsoUtc(iso);
  if (!t) throw std::runtime_error(std::string("bad test time ") + iso);
  return t->micros;
}

TimeZone zone(const char* name) {
  auto z = TimeZone::parse(name);
  if (!z) throw std::runtime_error(std::string("no zone ") + name);
  return *z;
}

}  // namespace

class TestHumanTime : public QObject {
  Q_OBJECT

 private slots:
  void utcByDefault() {
    QCOMPARE(text::humanTime(at("2026-12-04T11:05:00Z"), TimeZone()), std::string("4 Dec 2026, 11:05 UTC"));
    QCOMPARE(text::humanTime(at("2026-12-04T11:05:09.5Z"), TimeZone(), TimePrecision::Second),
             std::string("4 Dec 2026, 11:05:09 UTC"));
    QCOMPARE(text::humanTime(0, TimeZone()), std::string("1 Jan 1970, 00:00 UTC"));
    QCOMPARE(TimeZone().name(), std::string("UTC"));
  }

  void truncatedNeverRoundedUp() {
    QCOMPARE(text::humanTime(at("2026-12-31T23:59:59.999999Z"), TimeZone()), std::string("31 Dec 2026, 23:59 UTC"));
    QCOMPARE(text::humanTime(at("2026-12-31T23:59:59.999999Z"), TimeZone(), TimePrecision::Second),
             std::string("31 Dec 2026, 23:59:59 UTC"));
    // Before 1970 too: floored, not truncated towards zero.
    QCOMPARE(text::humanTime(at("1969-12-31T23:59:59.5Z"), TimeZone(), TimePrecision::Second),
             std::string("31 Dec 1969, 23:59:59 UTC"));
  }

  void namedZonesWithDaylightSaving() {
    const TimeZone paris = zone("Europe/Paris");
    QCOMPARE(paris.name(), std::string("Europe/Paris"));
    QCOMPARE(text::humanTime(at("2026-12-04T11:05:00Z"), paris), std::string("4 Dec 2026, 12:05 CET"));
    QCOMPARE(text::humanTime(at("2026-07-01T11:05:00Z"), paris), std::string("1 Jul 2026, 13:05 CEST"));
    // Across midnight the date is the zone's.
    QCOMPARE(text::humanTime(at("2026-12-31T23:30:00Z"), paris), std::string("1 Jan 2027, 00:30 CET"));
    QCOMPARE(text::humanTime(at("2026-12-04T11:05:00Z"), zone("America/New_York")),
             std::string("4 Dec 2026, 06:05 EST"));
    QCOMPARE(text::humanTime(at("2026-12-04T11:05:00Z"), zone("Asia/Kolkata")), std::string("4 Dec 2026, 16:35 IST"));
  }

  void zonesWithoutALetterAbbreviationSayTheirOffset() {
    QCOMPARE(text::humanTime(at("2026-12-04T11:05:00Z"), zone("Asia/Dubai")), std::string("4 Dec 2026, 15:05 UTC+4"));
    QCOMPARE(text::humanTime(at("2026-12-04T11:05:00Z"), zone("Asia/Kathmandu")),
             std::string("4 Dec 2026, 16:50 UTC+5:45"));
    QCOMPARE(text::humanTime(at("2026-12-04T11:05:00Z"), zone("America/Sao_Paulo")),
             std::string("4 Dec 2026, 08:05 UTC-3"));
  }

  void namesTzAccepts() {
    QVERIFY(TimeZone::parse("UTC")->isUtc());
    QVERIFY(TimeZone::parse("utc")->isUtc());
    QVERIFY(!TimeZone::parse("Mars/Olympus"));
    QVERIFY(!TimeZone::parse(""));
    // "local" follows $TZ, as every program on the machine does.
    const QByteArray saved = qgetenv("TZ");
    qputenv("TZ", "Europe/Paris");
    const auto local = TimeZone::parse("local");
    qputenv("TZ", ":Asia/Tokyo");
    const auto tokyo = TimeZone::local();
    if (saved.isNull()) qunsetenv("TZ");
    else qputenv("TZ", saved);
    QVERIFY(local);
    QCOMPARE(local->name(), std::string("Europe/Paris"));
    QCOMPARE(tokyo.name(), std::string("Asia/Tokyo"));
  }
};

QTEST_GUILESS_MAIN(TestHumanTime)
#include "tst_humantime.moc"

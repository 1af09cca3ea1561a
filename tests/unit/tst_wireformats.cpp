// The small encoders the hot path uses instead of general-purpose ones: UTC calendar fields
// (checked against the C library), HTTP-dates, and the stored-headers codec (checked against a
// general JSON parser, including the shapes it must hand over to it).
#include <QtTest>
#include <algorithm>
#include <ctime>
#include <nlohmann/json.hpp>
#include <random>

#include "core/server/accesslog.h"
#include "core/enforce/problem.h"
#include "core/store/headercodec.h"
#include "core/text/civiltime.h"

using namespace idem;

class TestWireFormats : public QObject {
  Q_OBJECT

 private slots:
  void civilTimeAgreesWithGmtime() {
    std::mt19937_64 rng(20261202);
    // ±400 years around 1970, plus the edges that catch off-by-one errors in the day arithmetic.
    std::uniform_int_distribution<long long> anyMs(-12'623'040'000'000LL, 12'623'040'000'000LL);
    std::vector<long long> instants{0, -1, 1, 86'399'999, 86'400'000, -86'400'000, 951'782'400'000LL /*2000-02-29*/,
                                    4'107'542'400'000LL /*2100-03-01*/, -2'208'988'800'001LL};
    for (int i = 0; i < 20000; ++i) instants.push_back(anyMs(rng));
    for (const long long ms : instants) {
      const long long floorSec = ms >= 0 ? ms / 1000 : (ms - 999) / 1000;
      const std::time_t secs = static_cast<std::time_t>(floorSec);
      std::tm tm{};
      QVERIFY(gmtime_r(&secs, &tm));
      const text::CivilTime t = text::civilFromEpochMs(ms);
      const QByteArray at = QByteArray::number(ms);
      QVERIFY2(t.year == tm.tm_year + 1900 && t.month == tm.tm_mon + 1 && t.day == tm.tm_mday, at.constData());
      QVERIFY2(t.hour == tm.tm_hour && t.minute == tm.tm_min && t.second == tm.tm_sec, at.constData());
      QVERIFY2(t.weekday == tm.tm_wday, at.constData());
      QCOMPARE(t.millisecond, static_cast<int>(ms - floorSec * 1000));
    }
  }

  void paddedDigits() {
    std::string s;
    text::appendPadded(s, 7, 2);
    text::appendPadded(s, 2026, 4);
    text::appendPadded(s, 5, 3);
    text::appendPadded(s, 123456, 2);
    QCOMPARE(QByteArray::fromStdString(s), QByteArray("072026005123456"));
  }

  void httpDateIsRfc9110Imf() {
    // RFC 9110 §5.6.7's example instant.
    QCOMPARE(QByteArray::fromStdString(enforce::httpDate(784'111'777'000LL)), QByteArray("Sun, 06 Nov 1994 08:49:37 GMT"));
    QCOMPARE(QByteArray::fromStdString(enforce::httpDate(951'782'400'999LL)), QByteArray("Tue, 29 Feb 2000 00:00:00 GMT"));
  }

  void headersRoundTrip() {
    const std::vector<http::Headers> cases{
        {},
        {{"Content-Type", "application/json"}},
        {{"Location", "/v1/payments/pay_1"}, {"Link", "<a>; rel=next"}, {"Link", "<b>; rel=prev"}},
        // Escapes and non-ASCII go through the general parser: same answer.
        {{"X-Quote", "say \"hi\" \\ back"}, {"X-Unicode", "caf\xC3\xA9 \xE2\x82\xAC"}, {"X-Tab", "a\tb"}},
    };
    for (const auto& headers : cases) {
      const std::string stored = store::headersToJson(headers);
      QCOMPARE(store::headersFromJson(stored), headers);
      // jsonb gives the array back with its own spacing.
      const std::string jsonbText = nlohmann::json::parse(stored).dump(1);
      QCOMPARE(store::headersFromJson(jsonbText), headers);
    }
    QCOMPARE(store::headersFromJson(R"([["Content-Type", "application/json"], ["Location", "/x"]])"),
             (http::Headers{{"Content-Type", "application/json"}, {"Location", "/x"}}));
  }

  void malformedStoredHeadersYieldNone() {
    for (const char* text : {"", "[", "[[\"a\"]]", "{\"a\":\"b\"}", "[[\"a\",1]]", "[[\"a\",\"b\"]] x", "null"}) {
      QVERIFY2(store::headersFromJson(text).empty(), text);
    }
    // A pair that is not a pair is skipped; the others stay.
    QCOMPARE(store::headersFromJson(R"([["a","b"],["c"],["d","e"]])"), (http::Headers{{"a", "b"}, {"d", "e"}}));
  }

  void accessLogLineIsOneJsonObject() {
    server::LogRecord r;
    r.atMs = 1'764'676'800'123LL;  // 2025-12-02 12:00:00.123 UTC
    r.method = "POST";
    r.path = "/v1/payments";
    r.status = 201;
    r.key = "k\xff" "1";  // a client may send any bytes: replaced, never an exception
    r.replayed = true;
    r.latencyMs = 0.12345;
    const std::string line = server::formatLogLine(r);
    QVERIFY(line.ends_with("\n"));
    QCOMPARE(std::count(line.begin(), line.end(), '\n'), 1);
    const auto j = nlohmann::json::parse(line);
    QCOMPARE(j.at("ts").get<std::string>(), std::string("2025-12-02T12:00:00.123Z"));
    QCOMPARE(j.at("status").get<int>(), 201);
    QCOMPARE(j.at("latency_ms").get<double>(), 0.123);
    QVERIFY(j.at("replayed").get<bool>());
    QVERIFY(!j.contains("tenant"));  // empty fields are left out
    QVERIFY(!j.contains("generation"));
    QCOMPARE(j.at("idempotency_key").get<std::string>(), std::string("k\xEF\xBF\xBD" "1"));
  }
};

QTEST_APPLESS_MAIN(TestWireFormats)
#include "tst_wireformats.moc"

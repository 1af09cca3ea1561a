// Bad input over real HTTP: every case gets a clear 4xx (problem+json), nothing is stored, and
// the server keeps serving afterwards.
#include <QtTest>

#include "tests/endpoint/endpoint_support.h"
#include "tests/endpoint/raw_status.h"

using namespace idem;
using test::jsonHeaders;
using test::kPayment;
using test::parse;
using test::rawStatus;

namespace {
std::string rawPost(const std::string& extraHeaderLines, const std::string& body = kPayment) {
  return "POST /v1/payments HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccount-Id: acct_1\r\n" +
         extraHeaderLines + "Content-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
}
}  // namespace

class TestBadInput : public QObject {
  Q_OBJECT

  std::unique_ptr<test::LiveServer> m_s;

  void assertNothingStored() {
    QCOMPARE(m_s->count("SELECT count(*) AS n FROM idem.keys"), 0LL);
    QCOMPARE(m_s->count("SELECT count(*) AS n FROM idem_demo.ledger"), 0LL);
  }
  void assertStillServing() {
    auto h = m_s->client()->get("/healthz");
    QCOMPARE(h.status, 200);
  }

 private slots:
  void initTestCase() { m_s = std::make_unique<test::LiveServer>("ep_badinput"); }
  void cleanupTestCase() {
    // Everything above was refused: no key, no ledger row.
    assertNothingStored();
    m_s.reset();
  }

  void badKeys_data() {
    QTest::addColumn<QByteArray>("key");
    QTest::newRow("overlong") << QByteArray(256, 'k');
    QTest::newRow("overlong sf-string") << ("\"" + QByteArray(256, 'k') + "\"");
    QTest::newRow("quote inside") << QByteArray("ab\"cd");
    QTest::newRow("unterminated sf-string") << QByteArray("\"abc");
    QTest::newRow("empty sf-string") << QByteArray("\"\"");
    QTest::newRow("backslash") << QByteArray("ab\\cd");
    QTest::newRow("space inside") << QByteArray("ab cd");
    QTest::newRow("tab inside") << QByteArray("ab\tcd");
    QTest::newRow("control character") << QByteArray(
        "ab\x01"
        "cd");
    QTest::newRow("DEL") << QByteArray(
        "ab\x7f"
        "cd");
    QTest::newRow("non-ASCII (UTF-8)") << QByteArray("caf\xc3\xa9");
    QTest::newRow("non-ASCII (Latin-1)") << QByteArray("caf\xe9");
  }
  void badKeys() {
    QFETCH(QByteArray, key);
    std::string response;
    const int status =
        rawStatus(m_s->server->port(), rawPost("Idempotency-Key: " + key.toStdString() + "\r\n"), &response);
    QCOMPARE(status, 400);
    QVERIFY2(response.find("application/problem+json") != std::string::npos, response.c_str());
    QVERIFY2(response.find("#key-malformed") != std::string::npos || response.find("#bad-request") != std::string::npos,
             response.c_str());
    assertStillServing();
  }

  void megabyteHeader() {
    const std::string big(1024 * 1024, 'x');
    std::string response;
    const int status =
        rawStatus(m_s->server->port(), rawPost("Idempotency-Key: big-1\r\nX-Big: " + big + "\r\n"), &response);
    QVERIFY2(status >= 400 && status < 500, response.c_str());
    QVERIFY2(response.find("application/problem+json") != std::string::npos, response.c_str());
    // Also as the key itself.
    const int asKey = rawStatus(m_s->server->port(), rawPost("Idempotency-Key: " + big + "\r\n"));
    QVERIFY(asKey >= 400 && asKey < 500);
    assertStillServing();
  }

  void invalidJson() {
    auto r = m_s->client()->post("/v1/payments", jsonHeaders("bad-json"), R"({"amount":1000,)");
    QCOMPARE(r.status, 400);
    QCOMPARE(r.header("Content-Type"), std::string("application/problem+json"));
    QVERIFY(parse(r)["type"].get<std::string>().ends_with("#body-invalid"));
    assertStillServing();
  }

  void invalidFields_data() {
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("body");
    QTest::addColumn<QString>("field");
    QTest::newRow("array body") << "/v1/payments"
                                << "[1,2]"
                                << "object";
    QTest::newRow("amount missing") << "/v1/payments"
                                    << R"({"currency":"usd","customer":"c"})"
                                    << "amount";
    QTest::newRow("amount string") << "/v1/payments"
                                   << R"({"amount":"10","currency":"usd","customer":"c"})"
                                   << "amount";
    QTest::newRow("amount negative") << "/v1/payments"
                                     << R"({"amount":-5,"currency":"usd","customer":"c"})"
                                     << "amount";
    QTest::newRow("amount fractional") << "/v1/payments"
                                       << R"({"amount":1.5,"currency":"usd","customer":"c"})"
                                       << "amount";
    QTest::newRow("currency") << "/v1/payments"
                              << R"({"amount":5,"currency":"dollars","customer":"c"})"
                              << "currency";
    QTest::newRow("customer") << "/v1/payments"
                              << R"({"amount":5,"currency":"usd","customer":7})"
                              << "customer";
    QTest::newRow("refund payment") << "/v1/refunds"
                                    << R"({"payment":"ch_1","amount":5})"
                                    << "payment";
    QTest::newRow("order quantity") << "/v1/orders"
                                    << R"({"item":"sku","quantity":0})"
                                    << "quantity";
  }
  void invalidFields() {
    QFETCH(QString, path);
    QFETCH(QString, body);
    QFETCH(QString, field);
    auto r = m_s->client()->post(path.toStdString(), jsonHeaders("bad-fields"), body.toStdString());
    QCOMPARE(r.status, 400);
    QCOMPARE(r.header("Content-Type"), std::string("application/problem+json"));
    QVERIFY2(parse(r)["detail"].get<std::string>().find(field.toStdString()) != std::string::npos, r.body.c_str());
  }

  void wrongContentType() {
    auto h = jsonHeaders("bad-ct");
    h[0].second = "text/plain";
    auto r = m_s->client()->post("/v1/payments", h, kPayment);
    QCOMPARE(r.status, 415);
    QCOMPARE(r.header("Content-Type"), std::string("application/problem+json"));
    h[0].second = "application/jsonp";
    QCOMPARE(m_s->client()->post("/v1/payments", h, kPayment).status, 415);
    h.erase(h.begin());  // no Content-Type at all
    QCOMPARE(m_s->client()->post("/v1/payments", h, kPayment).status, 415);
  }

  void unknownRouteAndMethod() {
    auto r = m_s->client()->get("/v1/nothing-here");
    QCOMPARE(r.status, 404);
    QCOMPARE(r.header("Content-Type"), std::string("application/problem+json"));
    QVERIFY(parse(r)["type"].get<std::string>().ends_with("#not-found"));
    auto p = m_s->client()->post("/v1/charges", jsonHeaders("route-1"), kPayment);
    QCOMPARE(p.status, 404);
    std::string response;
    QCOMPARE(rawStatus(m_s->server->port(), "DELETE /v1/payments HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                       &response),
             405);
  }

  void bodyTooLarge() {
    const std::string body = "{\"pad\":\"" + std::string(2 * 1024 * 1024, 'a') + "\"}";
    auto r = m_s->client()->post("/v1/payments", jsonHeaders("too-big"), body);
    QCOMPARE(r.status, 413);
    QCOMPARE(r.header("Content-Type"), std::string("application/problem+json"));
    assertStillServing();
  }

  void faultHeadersWithoutFlagAre400() {
    test::LiveServer plain("ep_nofaults", test::kEndpointPolicy, false);
    auto h = jsonHeaders("fault-1");
    h.emplace_back("Sim-Delay-Ms", "100");
    auto r = plain.client()->post("/v1/payments", h, kPayment);
    QCOMPARE(r.status, 400);
    QVERIFY(parse(r)["detail"].get<std::string>().find("--allow-fault-injection") != std::string::npos);
    QCOMPARE(plain.keyRows("fault-1"), 0LL);
  }

  void badFaultValues() {
    for (auto [name, value] : {std::pair{"Sim-Delay-Ms", "-1"},
                               {"Sim-Delay-Ms", "61000"},
                               {"Sim-Delay-Ms", "1e3"},
                               {"Sim-Fail", "sometimes"}}) {
      auto h = jsonHeaders("fault-2");
      h.emplace_back(name, value);
      auto r = m_s->client()->post("/v1/payments", h, kPayment);
      QCOMPARE(r.status, 400);
    }
  }

  void badListQuery() {
    auto r = m_s->client()->get("/v1/payments?limit=0");
    QCOMPARE(r.status, 400);
    QCOMPARE(r.header("Content-Type"), std::string("application/problem+json"));
  }
};

QTEST_GUILESS_MAIN(TestBadInput)
#include "tst_badinput.moc"

// The contract every front keeps, tested once through the gate (docs/design.md §2): replay,
// 409 while in flight, 422 for another payload, 400 for a malformed or missing key, bypass of
// routes no tier covers, keys scoped by tenant. Each test runs against both shapes of an
// execution: on the event loop (the proxy's) and on a handler thread (the demo API's).
#include <QtTest>
#include <future>
#include <thread>

#include "tests/gate/gate_support.h"

using namespace idem;
using namespace std::chrono_literals;

class TstContract : public QObject {
  Q_OBJECT

  std::unique_ptr<test::GatePair> m_pair;

  long long keyRows(const std::string& endpoint) const {
    auto c = m_pair->db.connect();
    return c.exec("SELECT count(*) AS n FROM idem.keys WHERE endpoint = $1", {endpoint}).integer(0, "n");
  }

 private slots:
  void initTestCase() { m_pair = std::make_unique<test::GatePair>("gate_contract"); }
  void cleanupTestCase() { m_pair.reset(); }
  void initTestCase_data() { test::GatePair::addShapes(); }

  void aRetryReplaysTheFirstAnswer() {
    auto& s = m_pair->server();
    const int before = s.execution->calls();
    const auto first = s.post("/v1/charges", test::keyed(test::GatePair::key("replay")));
    const auto again = s.post("/v1/charges", test::keyed(test::GatePair::key("replay")));
    QCOMPARE(first.status, 201);
    QCOMPARE(again.status, 201);
    QCOMPARE(again.body, first.body);
    QCOMPARE(again.header("Idempotent-Replayed"), std::string("true"));
    QVERIFY(first.header("Idempotent-Replayed").empty());
    QCOMPARE(s.execution->calls(), before + 1);
    QVERIFY(s.execution->last().keyed);
  }

  void aRetryWhileTheFirstRunsIs409() {
    auto& s = m_pair->server();
    const int before = s.execution->calls();
    http::Headers held = test::keyed(test::GatePair::key("inflight"));
    held.emplace_back("X-Hold", "1");
    auto first = std::async(std::launch::async, [&] { return s.post("/v1/charges", held); });
    QTRY_COMPARE(s.execution->held(), std::size_t(1));
    const auto retry = s.post("/v1/charges", test::keyed(test::GatePair::key("inflight")));
    QCOMPARE(retry.status, 409);
    QVERIFY(test::problemOf(retry)["type"].get<std::string>().ends_with("#request-in-progress"));
    QVERIFY(!retry.header("Retry-After").empty());
    s.execution->release();
    QCOMPARE(first.get().status, 201);
    QCOMPARE(s.execution->calls(), before + 1);
  }

  void anotherPayloadUnderTheKeyIs422() {
    auto& s = m_pair->server();
    QCOMPARE(s.post("/v1/charges", test::keyed(test::GatePair::key("mismatch")), R"({"amount":1})").status, 201);
    const int before = s.execution->calls();
    const auto other = s.post("/v1/charges", test::keyed(test::GatePair::key("mismatch")), R"({"amount":2})");
    QCOMPARE(other.status, 422);
    QVERIFY(test::problemOf(other)["type"].get<std::string>().ends_with("#payload-mismatch"));
    QCOMPARE(s.execution->calls(), before);
  }

  void aMalformedOrMissingKeyIs400() {
    auto& s = m_pair->server();
    const int before = s.execution->calls();
    const auto malformed = s.post("/v1/charges", test::keyed("has space"));
    QCOMPARE(malformed.status, 400);
    QVERIFY(test::problemOf(malformed)["type"].get<std::string>().ends_with("#key-malformed"));
    const auto missing = s.post("/v1/charges", test::keyed(""));
    QCOMPARE(missing.status, 400);
    QVERIFY(test::problemOf(missing)["type"].get<std::string>().ends_with("#key-missing"));
    QCOMPARE(s.execution->calls(), before);
  }

  void routesNoTierCoversBypassTheStore() {
    auto& s = m_pair->server();
    const int before = s.execution->calls();
    const auto plain = s.post("/v1/other", test::keyed(""));
    QCOMPARE(plain.status, 201);
    QCOMPARE(s.execution->calls(), before + 1);
    QVERIFY(!s.execution->last().keyed);
    QCOMPARE(keyRows("POST /v1/other"), 0LL);
    // A key there cannot be honoured: refused, not run (fail closed).
    const auto withKey = s.post("/v1/other", test::keyed(test::GatePair::key("uncovered")));
    QCOMPARE(withKey.status, 400);
    QVERIFY(test::problemOf(withKey)["type"].get<std::string>().ends_with("#key-not-honoured"));
    QCOMPARE(s.execution->calls(), before + 1);
  }

  void keysAreScopedByTenant() {
    auto& s = m_pair->server();
    const int before = s.execution->calls();
    const auto alice = s.post("/v1/charges", test::keyed(test::GatePair::key("shared"), "acct_alice"));
    const auto bob = s.post("/v1/charges", test::keyed(test::GatePair::key("shared"), "acct_bob"));
    QCOMPARE(alice.status, 201);
    QCOMPARE(bob.status, 201);
    QVERIFY(bob.header("Idempotent-Replayed").empty());  // never alice's answer
    QCOMPARE(s.execution->calls(), before + 2);
    QCOMPARE(s.execution->last().tenant, std::string("acct_bob"));
  }
};

QTEST_GUILESS_MAIN(TstContract)
#include "tst_contract.moc"

// Rollout `observe` through the gate, for both shapes of an execution (docs/policy.md,
// "Rollout"): the execution runs for every request — a retry of a completed key, a second
// request while the first is held (at once: on_conflict wait:5s is not applied), another
// payload, a keyless one, and what the gate itself refuses (a missing tenant, a key named in
// Connection) — and each is labelled `observed` with the decision not enforced counted in
// idem_observed_total{route,would}.
#include <QtTest>
#include <future>

#include "tests/gate/gate_support.h"

using namespace idem;

namespace {
const std::string kRoute = "POST /v1/observed";
}

class TstObserve : public QObject {
  Q_OBJECT

  std::unique_ptr<test::GatePair> m_pair;

 private slots:
  void initTestCase() { m_pair = std::make_unique<test::GatePair>("gate_observe"); }
  void cleanupTestCase() { m_pair.reset(); }
  void initTestCase_data() { test::GatePair::addShapes(); }

  void everyDecisionRunsAndIsCounted() {
    auto& s = m_pair->server();
    const std::string key = test::GatePair::key("obs");
    const int before = s.execution->calls();

    QCOMPARE(s.post("/v1/observed", test::keyed(key)).status, 201);
    QVERIFY(s.execution->last().keyed);  // the first request of a key is claimed and stored
    const auto retry = s.post("/v1/observed", test::keyed(key));
    QCOMPARE(retry.status, 201);
    QVERIFY(retry.header("Idempotent-Replayed").empty());
    QVERIFY(!s.execution->last().keyed);  // ran without a claim
    QCOMPARE(s.post("/v1/observed", test::keyed(key), R"({"amount":2})").status, 201);
    QCOMPARE(s.post("/v1/observed", test::keyed("")).status, 201);
    QCOMPARE(s.execution->calls(), before + 4);

    QCOMPARE(s.observed(kRoute, "replayed"), 1LL);
    QCOMPARE(s.observed(kRoute, "mismatch"), 1LL);
    QCOMPARE(s.observed(kRoute, "key_missing"), 1LL);
    QCOMPARE(s.requests("observed", "observed", 201), 3LL);
    QCOMPARE(s.requests("observed", "executed", 201), 1LL);
  }

  void aSecondRequestWhileTheFirstIsHeldRunsAtOnce() {
    auto& s = m_pair->server();
    const std::string key = test::GatePair::key("held");
    http::Headers held = test::keyed(key);
    held.emplace_back("X-Hold", "1");
    auto first = std::async(std::launch::async, [&] { return s.post("/v1/observed", held); });
    QTRY_COMPARE(s.execution->held(), std::size_t(1));
    // Enforcement would answer 409 or wait up to 5 s for the first: observe runs it now, while
    // the first is still held.
    QCOMPARE(s.post("/v1/observed", test::keyed(key)).status, 201);
    QCOMPARE(s.execution->held(), std::size_t(1));
    QCOMPARE(s.observed(kRoute, "conflict"), 1LL);
    s.execution->release();
    QCOMPARE(first.get().status, 201);
  }

  // What the gate refuses before the enforcer passes too, named by the gate's label.
  void theGatesOwnRefusalsPass() {
    auto& s = m_pair->server();
    const int before = s.execution->calls();
    QCOMPARE(s.post("/v1/observed", test::keyed(test::GatePair::key("no-tenant"), "")).status, 201);
    http::Headers named = test::keyed(test::GatePair::key("named"));
    named.emplace_back("Connection", "Idempotency-Key");
    QCOMPARE(s.post("/v1/observed", named).status, 201);
    QCOMPARE(s.execution->calls(), before + 2);
    QCOMPARE(s.observed(kRoute, "tenant_rejected"), 1LL);
    QCOMPARE(s.observed(kRoute, "bad_request"), 1LL);
    // The same requests on an enforced tier are refused, as ever.
    QCOMPARE(s.post("/v1/charges", test::keyed(test::GatePair::key("no-tenant"), "")).status, 400);
  }
};

QTEST_GUILESS_MAIN(TstObserve)
#include "tst_observe.moc"

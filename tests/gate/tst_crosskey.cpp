// Duplicates across keys through the gate, for both shapes of an execution (docs/policy.md,
// "Duplicates across keys"): the same request under a second key inside the tier's window is
// executed and flagged (observe), held with 409 #suspected-duplicate until the client confirms
// (hold), or refused (reject) — each proven from the execution's own count, the trace row that
// names both keys, and idem_suspected_duplicates_total{route,mode}. What must not match: another
// tenant, another body, the same key's own retry, a claim that was released, a match past its
// window.
#include <QtTest>
#include <future>

#include "tests/gate/gate_support.h"

using namespace idem;

namespace {

/// Each shape its own account: the two servers share one store, and a match is per tenant.
std::string account() { return test::GatePair::rowOnLoop() ? "acct_loop" : "acct_handlers"; }
http::Headers keyed(const std::string& key) { return test::keyed(test::GatePair::key(key), account()); }
http::Headers confirmed(const std::string& key) {
  auto h = keyed(key);
  h.emplace_back("Idempotency-Duplicate-Confirmed", "?1");
  return h;
}

}  // namespace

class TstCrossKey : public QObject {
  Q_OBJECT

  std::unique_ptr<test::GatePair> m_pair;

  /// The trace rows on `key` that matched another key: outcome and related key, in order.
  std::vector<std::pair<std::string, std::string>> matches(const std::string& key) {
    auto c = m_pair->db.connect();
    auto r = c.exec("SELECT outcome, related_key FROM idem.events WHERE idem_key = $1 AND related_key IS NOT NULL "
                    "ORDER BY at, id",
                    {test::GatePair::key(key)});
    std::vector<std::pair<std::string, std::string>> out;
    for (int i = 0; i < r.rows(); ++i) out.emplace_back(r.text(i, 0), r.text(i, 1));
    return out;
  }
  long long suspected(const std::string& route, const std::string& mode) {
    return m_pair->server().sample("idem_suspected_duplicates_total{route=\"" + route + "\",mode=\"" + mode + "\"} ");
  }

 private slots:
  void initTestCase() { m_pair = std::make_unique<test::GatePair>("gate_crosskey"); }
  void cleanupTestCase() { m_pair.reset(); }
  void initTestCase_data() { test::GatePair::addShapes(); }

  void observeRunsTheSecondAndFlagsIt() {
    auto& s = m_pair->server();
    const int before = s.execution->calls();
    const std::string body = R"({"amount":700,"to":"obs"})";
    QCOMPARE(s.post("/v1/dup-observe", keyed("obs-1"), body).status, 201);
    QCOMPARE(s.post("/v1/dup-observe", keyed("obs-2"), body).status, 201);
    QCOMPARE(s.execution->calls(), before + 2);  // observe: both ran
    // The same key's own retry is a replay, not a match; another body is another request.
    QCOMPARE(s.post("/v1/dup-observe", keyed("obs-2"), body).header("Idempotent-Replayed"), std::string("true"));
    QCOMPARE(s.post("/v1/dup-observe", keyed("obs-3"), R"({"amount":701,"to":"obs"})").status, 201);
    // Another tenant sending the same body matches nothing of this one's.
    QCOMPARE(s.post("/v1/dup-observe", test::keyed(test::GatePair::key("obs-4"), account() + "_b"), body).status, 201);
    QCOMPARE(s.execution->calls(), before + 4);

    QCOMPARE(suspected("POST /v1/dup-observe", "observe"), 1LL);
    QTRY_COMPARE(matches("obs-2").size(), std::size_t(1));
    QCOMPARE(matches("obs-2")[0], std::make_pair(std::string("duplicate_observed"), test::GatePair::key("obs-1")));
    QVERIFY(matches("obs-3").empty());
    QVERIFY(matches("obs-4").empty());
  }

  void holdAnswers409UntilConfirmed() {
    auto& s = m_pair->server();
    const int before = s.execution->calls();
    const std::string body = R"({"amount":900,"to":"hold"})";
    QCOMPARE(s.post("/v1/dup-hold", keyed("hold-1"), body).status, 201);
    const auto held = s.post("/v1/dup-hold", keyed("hold-2"), body);
    QCOMPARE(held.status, 409);
    QCOMPARE(s.execution->calls(), before + 1);
    const auto problem = test::problemOf(held);
    QCOMPARE(problem.value("type", ""), std::string("https://docs.test/idempotency#suspected-duplicate"));
    const std::string detail = problem.value("detail", "");
    QVERIFY2(detail.find(test::GatePair::key("hold-1")) != std::string::npos, detail.c_str());
    QVERIFY2(detail.find("Idempotency-Duplicate-Confirmed: ?1") != std::string::npos, detail.c_str());
    QCOMPARE(held.header("Idempotency-Key"), "\"" + test::GatePair::key("hold-2") + "\"");

    // The held key was not claimed: the client confirms under the same key, and it runs.
    QCOMPARE(s.post("/v1/dup-hold", confirmed("hold-2"), body).status, 201);
    QCOMPARE(s.execution->calls(), before + 2);
    // Its retry replays it (a key once run is never a duplicate of itself).
    QCOMPARE(s.post("/v1/dup-hold", keyed("hold-2"), body).header("Idempotent-Replayed"), std::string("true"));
    QCOMPARE(s.execution->calls(), before + 2);

    QCOMPARE(suspected("POST /v1/dup-hold", "hold"), 2LL);
    QTRY_COMPARE(matches("hold-2").size(), std::size_t(2));
    const auto rows = matches("hold-2");
    QCOMPARE(rows[0], std::make_pair(std::string("duplicate_held"), test::GatePair::key("hold-1")));
    QCOMPARE(rows[1], std::make_pair(std::string("duplicate_confirmed"), test::GatePair::key("hold-1")));
  }

  // Hedged requests: two keys, one body, sent while the first still runs. One execution.
  void aConcurrentTwinIsHeldWhileTheFirstRuns() {
    auto& s = m_pair->server();
    const int before = s.execution->calls();
    const std::string body = R"({"amount":901,"to":"hedge"})";
    auto first = keyed("hedge-1");
    first.emplace_back("X-Hold", "1");
    auto running = std::async(std::launch::async, [&] { return s.post("/v1/dup-hold", first, body); });
    QTRY_COMPARE(s.execution->held(), std::size_t(1));
    const auto twin = s.post("/v1/dup-hold", keyed("hedge-2"), body);
    QCOMPARE(twin.status, 409);
    QVERIFY2(test::problemOf(twin).value("detail", "").find("still running") != std::string::npos, twin.body.c_str());
    s.execution->release();
    QCOMPARE(running.get().status, 201);
    QCOMPARE(s.execution->calls(), before + 1);
  }

  // A claim released before its work started (here a 503 under 2xx-only) ran nothing: the same
  // request under a new key is no duplicate of it.
  void aReleasedClaimIsNoMatch() {
    auto& s = m_pair->server();
    const std::string body = R"({"amount":902,"to":"released"})";
    auto refused = keyed("rel-1");
    refused.emplace_back("X-Then", "release");
    QCOMPARE(s.post("/v1/dup-hold", refused, body).status, 503);
    QCOMPARE(s.post("/v1/dup-hold", keyed("rel-2"), body).status, 201);
    QVERIFY(matches("rel-2").empty());
  }

  void rejectRefusesEvenConfirmedUntilTheWindowPasses() {
    auto& s = m_pair->server();
    const int before = s.execution->calls();
    const std::string body = R"({"amount":903,"to":"reject"})";
    QCOMPARE(s.post("/v1/dup-reject", keyed("rej-1"), body).status, 201);
    const auto refused = s.post("/v1/dup-reject", keyed("rej-2"), body);
    QCOMPARE(refused.status, 409);
    QCOMPARE(test::problemOf(refused).value("type", ""), std::string("https://docs.test/idempotency#duplicate-rejected"));
    QCOMPARE(s.post("/v1/dup-reject", confirmed("rej-2"), body).status, 409);
    QCOMPARE(s.execution->calls(), before + 1);
    QCOMPARE(suspected("POST /v1/dup-reject", "reject"), 2LL);
    // The tier's window is 2 s: past it, the same request is a new operation.
    QTest::qWait(2200);
    QCOMPARE(s.post("/v1/dup-reject", keyed("rej-3"), body).status, 201);
    QCOMPARE(s.execution->calls(), before + 2);
    QTRY_COMPARE(matches("rej-2").size(), std::size_t(2));
    QCOMPARE(matches("rej-2")[0].first, std::string("duplicate_rejected"));
    QVERIFY(matches("rej-3").empty());
  }
};

QTEST_GUILESS_MAIN(TstCrossKey)
#include "tst_crosskey.moc"

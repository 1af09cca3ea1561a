// Replays answered from memory (core/enforce/replaycache.h) through a real `idemctl proxy` on a
// real store, counted from the sample service's side: an operator's purge or early archive is
// obeyed once the cache's max age has passed, nothing is replayed after the key's expiry by the
// database's clock, the trace counts every replay, another payload is still a 422 and another
// tenant never sees the answer.
#include <QtTest>
#include <chrono>
#include <thread>

#include "tests/proxy/proxy_support.h"

using namespace idem;
using test::charge;
using test::kCharge;
using Clock = std::chrono::steady_clock;

namespace {

long long metric(const test::ProxyRig& rig, const std::string& name) {
  client::Client admin("127.0.0.1", rig.adminPort());
  return test::metricSample(admin.get("/metrics").body, name);
}

bool replayed(const client::ClientResponse& r) { return r.header("Idempotent-Replayed") == "true"; }

long long dbNowMs(pg::Connection& c) {
  return c.exec("SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS ms").integer(0, "ms");
}

}  // namespace

class TestReplayCache : public QObject {
  Q_OBJECT

 private slots:
  void repeatedReplaysAreAnsweredFromMemory() {
    test::ProxyRig rig("px_rc_hits", {"--replay-cache", "10m"});
    auto c = rig.client();
    const auto first = c->post("/v1/charges", charge("hits-1"), kCharge);
    QCOMPARE(first.status, 201);
    const auto storeReads = metric(rig, "idem_claims_total");
    for (int i = 0; i < 20; ++i) {
      const auto again = c->post("/v1/charges", charge("hits-1"), kCharge);
      QCOMPARE(again.status, 201);
      QVERIFY(replayed(again));
      QCOMPARE(again.body, first.body);
      QCOMPARE(again.header("Location"), first.header("Location"));
      QVERIFY(!again.header("Idempotency-Expires").empty());
    }
    // The first retry read the store; the other 19 did not.
    QCOMPARE(metric(rig, "idem_claims_total") - storeReads, 1LL);
    QCOMPARE(metric(rig, "idem_replay_cache_hits_total"), 19LL);
    QCOMPARE(metric(rig, "idem_replay_cache_entries"), 1LL);
    QCOMPARE(rig.upstream.executions("hits-1"), 1);
  }

  void replaysOffReadTheStoreEveryTime() {
    test::ProxyRig rig("px_rc_off", {"--replay-cache", "off"});
    auto c = rig.client();
    QCOMPARE(c->post("/v1/charges", charge("off-1"), kCharge).status, 201);
    for (int i = 0; i < 5; ++i) QVERIFY(replayed(c->post("/v1/charges", charge("off-1"), kCharge)));
    QCOMPARE(metric(rig, "idem_replay_cache_hits_total"), 0LL);
    QCOMPARE(metric(rig, "idem_claims_total"), 6LL);
  }

  void traceCountsEveryReplay() {
    test::ProxyRig rig("px_rc_trace", {"--replay-cache", "10m"});
    auto c = rig.client();
    QCOMPARE(c->post("/v1/charges", charge("trace-1"), kCharge).status, 201);
    constexpr int kReplays = 200;
    for (int i = 0; i < kReplays; ++i) QVERIFY(replayed(c->post("/v1/charges", charge("trace-1"), kCharge)));
    QVERIFY(metric(rig, "idem_replay_cache_hits_total") >= kReplays - 1);
    // Folded rows stand for several decisions (repeats); every replay is counted once.
    auto db = rig.db.connect();
    long long counted = 0;
    for (int i = 0; i < 100 && counted < kReplays; ++i) {
      counted = db.exec("SELECT coalesce(sum(repeats), 0)::bigint AS n FROM idem.events "
                        "WHERE idem_key = 'trace-1' AND outcome = 'replayed'")
                    .integer(0, "n");
      if (counted < kReplays) QThread::msleep(50);
    }
    QCOMPARE(counted, static_cast<long long>(kReplays));
    // Each row carries the key's generation and a database time inside the key's life.
    const auto bad = db.exec(
        "SELECT count(*) AS n FROM idem.events e JOIN idem.keys k USING (tenant, endpoint, idem_key) "
        "WHERE e.idem_key = 'trace-1' AND e.outcome = 'replayed' "
        "AND (e.generation <> k.generation OR e.at < k.created_at OR e.at >= k.expires_at)");
    QCOMPARE(bad.integer(0, "n"), 0LL);
  }

  void differentPayloadIsStill422() {
    test::ProxyRig rig("px_rc_422", {"--replay-cache", "10m"});
    auto c = rig.client();
    QCOMPARE(c->post("/v1/charges", charge("mm-1"), kCharge).status, 201);
    QVERIFY(replayed(c->post("/v1/charges", charge("mm-1"), kCharge)));
    QVERIFY(replayed(c->post("/v1/charges", charge("mm-1"), kCharge)));  // from memory
    QCOMPARE(metric(rig, "idem_replay_cache_hits_total"), 1LL);
    const auto other = c->post("/v1/charges", charge("mm-1"), R"({"amount":2000,"currency":"usd"})");
    QCOMPARE(other.status, 422);
    QCOMPARE(rig.upstream.executions("mm-1"), 1);
    // The same payload in another spelling is the same fingerprint: still a hit.
    QVERIFY(replayed(c->post("/v1/charges", charge("mm-1"), R"({ "currency": "usd", "amount": 1000 })")));
    QCOMPARE(metric(rig, "idem_replay_cache_hits_total"), 2LL);
  }

  void anotherTenantNeverGetsTheAnswer() {
    test::ProxyRig rig("px_rc_tenant", {"--replay-cache", "10m", "--tenant-header", "X-Tenant-Id"});
    auto c = rig.client();
    const auto a = c->post("/v1/charges", charge("shared-1", {{"X-Tenant-Id", "acme"}}), kCharge);
    QCOMPARE(a.status, 201);
    QVERIFY(replayed(c->post("/v1/charges", charge("shared-1", {{"X-Tenant-Id", "acme"}}), kCharge)));
    QVERIFY(replayed(c->post("/v1/charges", charge("shared-1", {{"X-Tenant-Id", "acme"}}), kCharge)));
    QCOMPARE(metric(rig, "idem_replay_cache_hits_total"), 1LL);
    const auto b = c->post("/v1/charges", charge("shared-1", {{"X-Tenant-Id", "globex"}}), kCharge);
    QCOMPARE(b.status, 201);
    QVERIFY(!replayed(b));
    QVERIFY(b.body != a.body);
    QCOMPARE(rig.upstream.executions("shared-1", "acme"), 1);
    QCOMPARE(rig.upstream.executions("shared-1", "globex"), 1);
  }

  void operatorPurgeIsObeyedWithinTheMaxAge() {
    const auto maxAge = std::chrono::milliseconds(1500);
    test::ProxyRig rig("px_rc_purge", {"--replay-cache", "1500ms"});
    auto c = rig.client();
    QCOMPARE(c->post("/v1/charges", charge("purge-1"), kCharge).status, 201);
    const auto read = Clock::now();  // before the store's replay that fills the cache
    QVERIFY(replayed(c->post("/v1/charges", charge("purge-1"), kCharge)));
    QVERIFY(replayed(c->post("/v1/charges", charge("purge-1"), kCharge)));
    QCOMPARE(metric(rig, "idem_replay_cache_hits_total"), 1LL);
    // The operator deletes the key so that the customer's retry runs again.
    auto db = rig.db.connect();
    db.exec("DELETE FROM idem.keys WHERE idem_key = 'purge-1'");
    std::this_thread::sleep_until(read + maxAge + std::chrono::milliseconds(50));
    const auto after = c->post("/v1/charges", charge("purge-1"), kCharge);
    QCOMPARE(after.status, 201);
    QVERIFY(!replayed(after));
    QCOMPARE(rig.upstream.executions("purge-1"), 2);
    // And the new answer is what retries get from then on.
    const auto again = c->post("/v1/charges", charge("purge-1"), kCharge);
    QVERIFY(replayed(again));
    QCOMPARE(again.body, after.body);
  }

  void operatorArchiveIsObeyedWithinTheMaxAge() {
    const auto maxAge = std::chrono::milliseconds(1500);
    test::ProxyRig rig("px_rc_archive", {"--replay-cache", "1500ms"});
    auto c = rig.client();
    QCOMPARE(c->post("/v1/renewals", charge("arch-1"), kCharge).status, 201);  // on_expired: execute
    const auto read = Clock::now();
    QVERIFY(replayed(c->post("/v1/renewals", charge("arch-1"), kCharge)));
    // The operator ends the key early and the sweeper archives it.
    auto db = rig.db.connect();
    db.exec("UPDATE idem.keys SET expires_at = now() WHERE idem_key = 'arch-1'");
    QCOMPARE(db.exec("SELECT idem.sweep_archive(10, ARRAY[]::text[], ARRAY[]::interval[], interval '1 day') AS n")
                 .integer(0, "n"),
             1LL);
    std::this_thread::sleep_until(read + maxAge + std::chrono::milliseconds(50));
    const auto after = c->post("/v1/renewals", charge("arch-1"), kCharge);
    QCOMPARE(after.status, 201);
    QVERIFY(!replayed(after));
    QCOMPARE(rig.upstream.executions("arch-1"), 2);
  }

  void nothingIsReplayedAfterExpiryByTheDatabaseClock() {
    // Max age far longer than the key's life: only the expiry bound ends the cached answer.
    test::ProxyRig rig("px_rc_expiry", {"--replay-cache", "10m"});
    auto c = rig.client();
    QCOMPARE(c->post("/v1/renewals", charge("exp-1"), kCharge).status, 201);  // ttl 2s, on_expired: execute
    auto db = rig.db.connect();
    const long long expiresAt =
        db.exec("SELECT (extract(epoch FROM expires_at) * 1000)::bigint AS ms FROM idem.keys WHERE idem_key = 'exp-1'")
            .integer(0, "ms");
    int replays = 0;
    for (;;) {
      const long long sentAtDb = dbNowMs(db);  // the database's clock before the request is sent
      const auto r = c->post("/v1/renewals", charge("exp-1"), kCharge);
      QCOMPARE(r.status, 201);
      if (!replayed(r)) {
        // The first answer that is no replay comes at or after the expiry, never before it.
        QVERIFY(sentAtDb + 1000 >= expiresAt);
        break;
      }
      // A replay of a request sent at or after the expiry would serve a lapsed key.
      QVERIFY2(sentAtDb < expiresAt, "replayed a request sent after the key's expiry");
      ++replays;
      QThread::msleep(20);
    }
    QVERIFY(replays > 10);
    QVERIFY(metric(rig, "idem_replay_cache_hits_total") >= replays / 2);  // the last ~250 ms read the store
    QCOMPARE(rig.upstream.executions("exp-1"), 2);
  }
};

QTEST_GUILESS_MAIN(TestReplayCache)
#include "tst_replaycache.moc"

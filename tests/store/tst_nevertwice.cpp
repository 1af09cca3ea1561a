// The races that used to run a key a second time, each reproduced against real PostgreSQL:
// a fresh claim racing the sweeper, a row whose generation clashes with the archive, and a
// request that runs past its lease and its TTL while its process is alive.
#include <QtTest>

#include <future>
#include <thread>

#include "core/fingerprint/fingerprint.h"
#include "core/store/sweeper.h"
#include "tests/support/harness.h"
#include "tests/support/testdb.h"

using namespace idem;
using Kind = enforce::Decision::Kind;
using namespace std::chrono_literals;

class TestNeverTwice : public QObject {
  Q_OBJECT

  std::unique_ptr<test::TestDatabase> m_db;
  std::unique_ptr<test::Harness> m_h;

  long long count(const std::string& sql, const std::vector<pg::Param>& params = {}) {
    auto c = m_db->connect();
    return c.exec(sql, params).integer(0, "n");
  }
  store::ClaimRequest claimFor(const std::string& route, const std::string& key, const std::string& body = R"({"a":1})") {
    const policy::Tier& tier = *m_h->policy.tierFor("POST", route);
    store::ClaimRequest q;
    q.scope = {"acct_1", "POST " + route, key};
    q.fingerprint = fp::compute(tier.fingerprint, body, {});
    q.tier = tier.name;
    q.ttl = tier.ttl;
    q.lease = tier.lease;
    q.rejectExpired = tier.onExpired == policy::OnExpired::Reject;
    q.archiveRetention = tier.archiveRetention;
    q.requestId = "req_race";
    return q;
  }

 private slots:
  void init() {
    m_db = std::make_unique<test::TestDatabase>("nevertwice");
    m_h = std::make_unique<test::Harness>(m_db->conninfo());
  }
  void cleanup() {
    m_h.reset();
    m_db.reset();
  }

  void freshClaimRacingTheSweeperNumbersAfterTheArchive_data() {
    QTest::addColumn<QString>("route");
    QTest::addColumn<int>("decision");
    QTest::newRow("on_expired reject: 422") << "/v1/strict" << int(store::Decision::RejectedExpired);
    QTest::newRow("on_expired execute: generation 2") << "/v1/short" << int(store::Decision::ExecuteAfterExpiry);
  }
  void freshClaimRacingTheSweeperNumbersAfterTheArchive() {
    QFETCH(QString, route);
    QFETCH(int, decision);
    const std::string path = route.toStdString();
    int executions = 0;
    m_h->roundTrip(test::Harness::post(path, "k-race", R"({"a":1})"), 201, &executions);
    QCOMPARE(executions, 1);
    std::this_thread::sleep_for(1300ms);  // past the 1s TTL (and a second past the 200ms lease)

    // A sweeper archives the key and has not committed yet.
    auto sweeper = m_db->connect();
    sweeper.exec("BEGIN");
    QCOMPARE(sweeper.exec("SELECT idem.sweep_archive(100, '{}'::text[], '{}'::interval[], '400 days') AS n")
                 .integer(0, "n"),
             1LL);

    // Meanwhile a process that never saw the key claims it: claim first, as for any new key.
    store::RecentKeys unseen(1024);
    store::KeyStore otherProcess(m_h->pool, unseen);
    auto claimed = std::async(std::launch::async, [&] { return otherProcess.claim(claimFor(path, "k-race")); });
    QVERIFY2(claimed.wait_for(300ms) == std::future_status::timeout, "the claim must wait for the sweeper's row lock");
    sweeper.exec("COMMIT");
    const store::ClaimResult r = claimed.get();

    QCOMPARE(int(r.decision), decision);
    if (r.decision == store::Decision::ExecuteAfterExpiry) QCOMPARE(r.generation, 2);
    QCOMPARE(count("SELECT count(*) AS n FROM idem.key_archive WHERE idem_key = 'k-race' AND generation = 1"), 1LL);
    QCOMPARE(count("SELECT count(*) AS n FROM idem.keys WHERE idem_key = 'k-race' AND generation = 1"), 0LL);
    // The store stays sweepable: no generation clashes with the archive.
    auto c = m_db->connect();
    const auto report = store::sweep(c, store::SweepOptions{});
    QVERIFY(report.unarchivable.empty());
  }

  void aLiveGenerationIsAlwaysNewerThanTheArchive() {
    m_h->roundTrip(test::Harness::post("/v1/short", "k-inv", R"({"a":1})"));
    std::this_thread::sleep_for(1300ms);
    auto c = m_db->connect();
    c.exec("SELECT idem.sweep_archive(100, '{}'::text[], '{}'::interval[], '400 days')");
    try {
      c.exec("INSERT INTO idem.keys (tenant, endpoint, idem_key, generation, tier, fingerprint, state, lease_token, "
             "lease_until, expires_at) VALUES ('acct_1', 'POST /v1/short', 'k-inv', 1, 'short', '\\x00', "
             "'processing', gen_random_uuid(), now() + interval '1 s', now() + interval '1 h')");
      QFAIL("a live generation 1 next to an archived generation 1 was accepted");
    } catch (const pg::QueryError& e) {
      QCOMPARE(e.sqlstate(), std::string("IDA01"));
    }
  }

  void sweeperLeavesAClashingRowAndArchivesTheRest() {
    for (const char* key : {"k-a", "k-b", "k-c"}) m_h->roundTrip(test::Harness::post("/v1/short", key, "{}"));
    std::this_thread::sleep_for(1300ms);
    // The state the race left in stores of schema 13: archive and live both hold generation 1.
    auto c = m_db->connect();
    c.exec("SET session_replication_role = replica");  // as the old code wrote it: no trigger
    c.exec("INSERT INTO idem.key_archive (tenant, endpoint, idem_key, generation, tier, fingerprint, state, "
           "created_at, expires_at, archived_at, archived_by, purge_after) "
           "SELECT tenant, endpoint, idem_key, generation, tier, fingerprint, state, created_at, expires_at, now(), "
           "'sweeper', now() + interval '400 days' FROM idem.keys WHERE idem_key = 'k-b'");
    c.exec("RESET session_replication_role");

    const auto report = store::sweep(c, store::SweepOptions{});
    QCOMPARE(report.archived, 2LL);
    QCOMPARE(report.unarchivable.size(), std::size_t(1));
    QCOMPARE(report.unarchivable[0].key, std::string("k-b"));
    QCOMPARE(report.unarchivable[0].archivedGeneration, 1);
    // Both generation-1 records are kept: neither execution is dropped.
    QCOMPARE(count("SELECT count(*) AS n FROM idem.keys WHERE idem_key = 'k-b'"), 1LL);
    QCOMPARE(count("SELECT count(*) AS n FROM idem.key_archive WHERE idem_key = 'k-b'"), 1LL);
    QCOMPARE(count("SELECT count(*) AS n FROM idem.key_archive WHERE idem_key IN ('k-a', 'k-c')"), 2LL);
  }

  void aRunningKeyIsNeverExpiredNorTakenOver() {
    // ttl 1s, lease 200ms: the request runs 1.6s, past both, while its process is alive.
    auto first = m_h->enforcer.begin(test::Harness::post("/v1/short", "k-long", R"({"a":1})"));
    QVERIFY(first.kind == Kind::Execute);
    std::this_thread::sleep_for(1600ms);

    auto c = m_db->connect();
    QCOMPARE(store::sweep(c, store::SweepOptions{}).archived, 0LL);
    auto retry = m_h->enforcer.begin(test::Harness::post("/v1/short", "k-long", R"({"a":1})"));
    QVERIFY(retry.kind == Kind::Respond);
    QCOMPARE(retry.response.status, 409);
    QCOMPARE(retry.outcome, std::string("conflict"));
    QVERIFY(m_h->enforcer.leases().renewals() > 0);

    auto done = m_h->enforcer.complete(*first.ticket, enforce::Response{201, {}, R"({"id":"pay_long"})"});
    QCOMPARE(done.status, 201);
    auto replay = m_h->roundTrip(test::Harness::post("/v1/short", "k-long", R"({"a":1})"));
    QCOMPARE(replay.status, 201);
    QCOMPARE(test::header(replay, "Idempotent-Replayed"), std::string("true"));
    QCOMPARE(replay.body, std::string(R"({"id":"pay_long"})"));
    QCOMPARE(count("SELECT count(*) AS n FROM idem.key_archive WHERE idem_key = 'k-long'"), 0LL);
  }

  void aTakeoverNearTheEndOfTheTtlKeepsTheKeyPastItsLease() {
    // An executor that died (claimed through the store, never renewed), its key taken over
    // 0.8s into a 1s TTL: the new owner's lease must end inside the key's life.
    (void)m_h->store.claim(claimFor("/v1/short", "k-late"));
    std::this_thread::sleep_for(800ms);
    auto taker = m_h->enforcer.begin(test::Harness::post("/v1/short", "k-late", R"({"a":1})"));
    QVERIFY(taker.kind == Kind::Execute);
    QVERIFY(taker.ticket->takenOver());
    QCOMPARE(count("SELECT count(*) AS n FROM idem.keys WHERE idem_key = 'k-late' "
                   "AND expires_at >= lease_until + interval '1 second'"),
             1LL);
    (void)m_h->enforcer.complete(*taker.ticket, enforce::Response{201, {}, "{}"});
  }

  void theKeyOutlivesItsLeaseByARetryAfter() {
    // Every write of a lease keeps the key honoured a second past it (Retry-After's resolution).
    auto d = m_h->enforcer.begin(test::Harness::post("/v1/short", "k-margin", R"({"a":1})"));
    QVERIFY(d.kind == Kind::Execute);
    for (int i = 0; i < 3; ++i) {
      QVERIFY(count("SELECT count(*) AS n FROM idem.keys WHERE idem_key = 'k-margin' "
                    "AND expires_at >= lease_until + interval '1 second'") == 1);
      std::this_thread::sleep_for(150ms);  // across renewals
    }
    (void)m_h->enforcer.complete(*d.ticket, enforce::Response{201, {}, "{}"});
  }
};

QTEST_GUILESS_MAIN(TestNeverTwice)
#include "tst_nevertwice.moc"

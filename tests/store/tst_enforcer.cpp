// The docs/design.md §2 decision table, row by row, through the library against real PostgreSQL.
#include <QtTest>

#include <nlohmann/json.hpp>
#include <thread>

#include "core/explain/explain.h"
#include "core/explain/loader.h"
#include "tests/support/harness.h"
#include "tests/support/testdb.h"

using namespace idem;
using test::header;
using Kind = enforce::Decision::Kind;

class TestEnforcer : public QObject {
  Q_OBJECT

  std::unique_ptr<test::TestDatabase> m_db;
  std::unique_ptr<test::Harness> m_h;

  long long count(const std::string& sql, const std::vector<pg::Param>& params = {}) {
    auto c = m_db->connect();
    return c.exec(sql, params).integer(0, "n");
  }
  long long keyRows(const std::string& key) {
    return count("SELECT count(*) AS n FROM idem.keys WHERE idem_key = $1", {key});
  }
  long long events(const std::string& key, const std::string& outcome) {
    m_h->trace.flush();
    return count("SELECT count(*) AS n FROM idem.events WHERE idem_key = $1 AND outcome = $2", {key, outcome});
  }
  static nlohmann::json body(const enforce::Response& r) { return nlohmann::json::parse(r.body); }

 private slots:
  void init() {
    m_db = std::make_unique<test::TestDatabase>("enforcer");
    m_h = std::make_unique<test::Harness>(m_db->conninfo());
  }
  void cleanup() {
    m_h.reset();
    m_db.reset();
  }

  void missingKeyIs400WithPolicyLink() {
    auto r = m_h->roundTrip(test::Harness::post("/v1/payments", "", R"({"amount":1})"));
    QCOMPARE(r.status, 400);
    QCOMPARE(header(r, "Content-Type"), std::string("application/problem+json"));
    QCOMPARE(body(r)["type"].get<std::string>(), std::string("https://docs.test/idempotency#key-missing"));
    QCOMPARE(count("SELECT count(*) AS n FROM idem.keys"), 0LL);
  }

  void malformedKeyIs400_data() {
    QTest::addColumn<QByteArray>("key");
    QTest::newRow("too long") << QByteArray(256, 'a');
    QTest::newRow("space") << QByteArray("ab cd");
    QTest::newRow("backslash") << QByteArray("ab\\cd");
    QTest::newRow("quote inside") << QByteArray("ab\"cd");
    QTest::newRow("control") << QByteArray("ab\x01" "cd");
    QTest::newRow("non-ascii") << QByteArray("caf\xc3\xa9");
    QTest::newRow("empty sf-string") << QByteArray("\"\"");
    QTest::newRow("unterminated sf-string") << QByteArray("\"abc");
  }
  void malformedKeyIs400() {
    QFETCH(QByteArray, key);
    auto r = m_h->roundTrip(test::Harness::post("/v1/payments", key.toStdString(), "{}"));
    QCOMPARE(r.status, 400);
    QCOMPARE(body(r)["type"].get<std::string>(), std::string("https://docs.test/idempotency#key-malformed"));
    QVERIFY(!body(r)["detail"].get<std::string>().empty());
    QCOMPARE(count("SELECT count(*) AS n FROM idem.keys"), 0LL);
  }

  void newKeyExecutesAndIsStored() {
    int executions = 0;
    auto r = m_h->roundTrip(test::Harness::post("/v1/payments", "k-new", R"({"amount":1})"), 201, &executions);
    QCOMPARE(executions, 1);
    QCOMPARE(r.status, 201);
    QCOMPARE(header(r, "Idempotency-Key"), std::string("\"k-new\""));
    QVERIFY(header(r, "Idempotency-Expires").ends_with(" GMT"));
    QVERIFY(header(r, "Idempotent-Replayed").empty());
    QCOMPARE(count("SELECT count(*) AS n FROM idem.keys WHERE idem_key = 'k-new' AND state = 'done' "
                   "AND generation = 1 AND resp_status = 201"),
             1LL);
    QCOMPARE(events("k-new", "executed"), 1LL);
  }

  void doneKeyReplaysWithAllowListedHeaders() {
    int executions = 0;
    auto first = m_h->roundTrip(test::Harness::post("/v1/payments", "k-replay", R"({"amount":1,"currency":"usd"})"),
                                201, &executions);
    // Same JSON, other member order and whitespace: the json fingerprint says same request.
    auto again = m_h->roundTrip(
        test::Harness::post("/v1/payments", "\"k-replay\"", R"({ "currency" : "usd", "amount" : 1 })"), 201,
        &executions);
    QCOMPARE(executions, 1);
    QCOMPARE(again.status, 201);
    QCOMPARE(again.body, first.body);
    QCOMPARE(header(again, "Idempotent-Replayed"), std::string("true"));
    QCOMPARE(header(again, "Location"), std::string("/v1/x"));
    QVERIFY(header(again, "Set-Cookie").empty());
    QCOMPARE(header(again, "Idempotency-Expires"), header(first, "Idempotency-Expires"));
    QCOMPARE(events("k-replay", "replayed"), 1LL);
  }

  void differentPayloadIs422EvenWhileProcessing() {
    auto d = m_h->enforcer.begin(test::Harness::post("/v1/payments", "k-mm", R"({"amount":1})"));
    QVERIFY(d.kind == Kind::Execute);
    // Processing + other payload: 422 wins over 409.
    auto r = m_h->roundTrip(test::Harness::post("/v1/payments", "k-mm", R"({"amount":2})"));
    QCOMPARE(r.status, 422);
    QCOMPARE(body(r)["type"].get<std::string>(), std::string("https://docs.test/idempotency#payload-mismatch"));
    (void)m_h->enforcer.complete(*d.ticket, enforce::Response{201, {}, "{}"});
    // Done + other payload: still 422, and the stored response is never given to it.
    r = m_h->roundTrip(test::Harness::post("/v1/payments", "k-mm", R"({"amount":2})"));
    QCOMPARE(r.status, 422);
    QCOMPARE(events("k-mm", "mismatch"), 2LL);
  }

  void processingKeyIs409WithRetryAfter() {
    auto d = m_h->enforcer.begin(test::Harness::post("/v1/payments", "k-409", R"({"amount":1})"));
    QVERIFY(d.kind == Kind::Execute);
    auto r = m_h->roundTrip(test::Harness::post("/v1/payments", "k-409", R"({"amount":1})"));
    QCOMPARE(r.status, 409);
    QCOMPARE(header(r, "Content-Type"), std::string("application/problem+json"));
    const int retryAfter = std::stoi(header(r, "Retry-After"));
    QVERIFY(retryAfter >= 1 && retryAfter <= 30);
    QVERIFY(!header(r, "Idempotency-Expires").empty());
    QCOMPARE(events("k-409", "conflict"), 1LL);
  }

  void waitTierReplaysOnceTheOriginalFinishes() {
    auto d = m_h->enforcer.begin(test::Harness::post("/v1/wait", "k-wait", R"({"a":1})"));
    QVERIFY(d.kind == Kind::Execute);
    std::thread finisher([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(400));
      (void)m_h->enforcer.complete(*d.ticket, enforce::Response{201, {}, R"({"id":"ord_1"})"});
    });
    auto r = m_h->roundTrip(test::Harness::post("/v1/wait", "k-wait", R"({"a":1})"));
    finisher.join();
    QCOMPARE(r.status, 201);
    QCOMPARE(r.body, std::string(R"({"id":"ord_1"})"));
    QCOMPARE(header(r, "Idempotent-Replayed"), std::string("true"));
  }

  // The keeper's thread wakes to renew, or when a lease falls due before it would wake anyway:
  // not once per execution (each wake was a thread switch on every new key's path).
  void theLeaseKeeperIsNotWokenPerExecution() {
    auto run = [&](const std::string& key) {
      auto d = m_h->enforcer.begin(test::Harness::post("/v1/payments", key, R"({"amount":1})"));
      QVERIFY(d.kind == Kind::Execute);
      QCOMPARE(m_h->enforcer.complete(*d.ticket, enforce::Response{201, {}, "{}"}).status, 201);
    };
    run("k-keeper-0");  // starts the keeper's thread
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const long long before = m_h->enforcer.leases().wakeUps();
    for (int i = 1; i <= 200; ++i) run("k-keeper-" + std::to_string(i));
    // One wake at most for the first lease after the keeper went idle; none for the 199 after,
    // which fall due (10 s on) after the one it already waits for. Leases of 30 s renew at 10 s.
    QVERIFY2(m_h->enforcer.leases().wakeUps() - before <= 2,
             qPrintable(QString("the keeper woke %1 times for 200 executions").arg(m_h->enforcer.leases().wakeUps() - before)));
    QCOMPARE(m_h->enforcer.leases().renewals(), 0LL);
  }

  // A shorter lease than the one the keeper waits for still wakes it in time.
  void aShorterLeaseStillWakesTheKeeper() {
    auto longLease = m_h->enforcer.begin(test::Harness::post("/v1/payments", "k-long", R"({"a":1})"));
    QVERIFY(longLease.kind == Kind::Execute);  // 30 s: due in 10 s
    auto shortLease = m_h->enforcer.begin(test::Harness::post("/v1/lease", "k-short-lease", R"({"a":1})"));
    QVERIFY(shortLease.kind == Kind::Execute);  // 1 s: due in 333 ms
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    QVERIFY2(m_h->enforcer.leases().renewals() >= 2, "the 1 s lease was not renewed while the keeper waited for the 30 s one");
    // Held past its length, it is still ours: a retry is a conflict, not a takeover.
    QCOMPARE(m_h->roundTrip(test::Harness::post("/v1/lease", "k-short-lease", R"({"a":1})")).status, 409);
    (void)m_h->enforcer.complete(*shortLease.ticket, enforce::Response{201, {}, "{}"});
    (void)m_h->enforcer.complete(*longLease.ticket, enforce::Response{201, {}, "{}"});
  }

  void expiredLeaseIsTakenOverAndTheLateOwnerLoses() {
    auto first = m_h->enforcer.begin(test::Harness::post("/v1/lease", "k-lease", R"({"a":1})"));
    QVERIFY(first.kind == Kind::Execute);
    m_h->enforcer.leases().setPaused(true);  // the owner stops as a stopped process would
    std::this_thread::sleep_for(std::chrono::milliseconds(1300));  // lease is 1 s
    auto second = m_h->enforcer.begin(test::Harness::post("/v1/lease", "k-lease", R"({"a":1})"));
    QVERIFY(second.kind == Kind::Execute);
    QVERIFY(second.ticket->takenOver());
    QCOMPARE(events("k-lease", "lease_takeover"), 1LL);
    // The presumed-dead owner finishes late: its response must not overwrite the new owner's.
    (void)m_h->enforcer.complete(*first.ticket, enforce::Response{201, {}, R"({"who":"first"})"});
    (void)m_h->enforcer.complete(*second.ticket, enforce::Response{201, {}, R"({"who":"second"})"});
    auto replay = m_h->roundTrip(test::Harness::post("/v1/lease", "k-lease", R"({"a":1})"));
    QCOMPARE(replay.body, std::string(R"({"who":"second"})"));
    QCOMPARE(events("k-lease", "lease_lost"), 1LL);
  }

  void expiredKeyExecutesAsNewGenerationAndArchivesTheOld() {
    int executions = 0;
    m_h->roundTrip(test::Harness::post("/v1/short", "k-exp", R"({"a":1})"), 201, &executions);
    m_h->roundTrip(test::Harness::post("/v1/short", "k-exp", R"({"a":1})"), 201, &executions);
    QCOMPARE(executions, 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(1300));  // ttl is 1 s
    auto r = m_h->roundTrip(test::Harness::post("/v1/short", "k-exp", R"({"a":1})"), 201, &executions);
    QCOMPARE(executions, 2);
    QCOMPARE(body(r)["generation"].get<int>(), 2);
    QCOMPARE(count("SELECT count(*) AS n FROM idem.key_archive WHERE idem_key = 'k-exp' AND generation = 1 "
                   "AND archived_by = 'reuse' AND state = 'done' AND resp_status = 201"),
             1LL);
    QCOMPARE(events("k-exp", "executed_after_expiry"), 1LL);
  }

  void sweptKeyStillCountsAsExpired() {
    int executions = 0;
    m_h->roundTrip(test::Harness::post("/v1/payments", "k-swept", R"({"a":1})"), 201, &executions);
    // What a sweeper does: move the generation to the archive.
    auto c = m_db->connect();
    c.exec("INSERT INTO idem.key_archive (tenant, endpoint, idem_key, generation, tier, fingerprint, state, "
           "created_at, expires_at, archived_by, purge_after) SELECT tenant, endpoint, idem_key, generation, tier, "
           "fingerprint, state, created_at, now(), 'sweeper', now() + interval '1 day' FROM idem.keys "
           "WHERE idem_key = 'k-swept'");
    c.exec("DELETE FROM idem.keys WHERE idem_key = 'k-swept'");
    auto r = m_h->roundTrip(test::Harness::post("/v1/payments", "k-swept", R"({"a":1})"), 201, &executions);
    QCOMPARE(executions, 2);
    QCOMPARE(body(r)["generation"].get<int>(), 2);
    QCOMPARE(events("k-swept", "executed_after_expiry"), 1LL);
  }

  void rejectTierAnswers422AfterExpiry() {
    int executions = 0;
    m_h->roundTrip(test::Harness::post("/v1/strict", "k-rej", R"({"a":1})"), 201, &executions);
    std::this_thread::sleep_for(std::chrono::milliseconds(1300));
    auto r = m_h->roundTrip(test::Harness::post("/v1/strict", "k-rej", R"({"a":1})"), 201, &executions);
    QCOMPARE(executions, 1);
    QCOMPARE(r.status, 422);
    QCOMPARE(body(r)["type"].get<std::string>(), std::string("https://docs.test/idempotency#key-expired"));
    QVERIFY(body(r)["detail"].get<std::string>().find("reconcile") != std::string::npos);
    QCOMPARE(events("k-rej", "rejected_expired"), 1LL);
  }

  void afterStartCachesA500() {
    int executions = 0;
    auto first = m_h->roundTrip(test::Harness::post("/v1/payments", "k-500", R"({"a":1})"), 500, &executions);
    auto again = m_h->roundTrip(test::Harness::post("/v1/payments", "k-500", R"({"a":1})"), 201, &executions);
    QCOMPARE(executions, 1);
    QCOMPARE(again.status, 500);
    QCOMPARE(header(again, "Idempotent-Replayed"), std::string("true"));
  }

  void successOnlyTierDoesNotStoreFailures() {
    int executions = 0;
    auto first = m_h->roundTrip(test::Harness::post("/v1/success", "k-2xx", R"({"a":1})"), 500, &executions);
    QCOMPARE(first.status, 500);
    QCOMPARE(keyRows("k-2xx"), 0LL);
    auto again = m_h->roundTrip(test::Harness::post("/v1/success", "k-2xx", R"({"a":1})"), 201, &executions);
    QCOMPARE(executions, 2);
    QCOMPARE(again.status, 201);
  }

  void failureBeforeExecutionReleasesTheClaim() {
    auto d = m_h->enforcer.begin(test::Harness::post("/v1/payments", "k-rel", R"({"a":1})"));
    QVERIFY(d.kind == Kind::Execute);
    auto r = m_h->enforcer.release(*d.ticket, enforce::Response{429, {}, "slow down"}, "rate limited");
    QCOMPARE(r.status, 429);
    QCOMPARE(keyRows("k-rel"), 0LL);
    QCOMPARE(events("k-rel", "released"), 1LL);
    int executions = 0;
    auto again = m_h->roundTrip(test::Harness::post("/v1/payments", "k-rel", R"({"a":1})"), 201, &executions);
    QCOMPARE(executions, 1);
    QCOMPARE(body(again)["generation"].get<int>(), 1);
  }

  void invalidJsonBodyIs400AndNotStored() {
    auto r = m_h->roundTrip(test::Harness::post("/v1/payments", "k-badjson", R"({"amount":)"));
    QCOMPARE(r.status, 400);
    QCOMPARE(body(r)["type"].get<std::string>(), std::string("https://docs.test/idempotency#body-invalid"));
    QCOMPARE(keyRows("k-badjson"), 0LL);
  }

  void sameKeyUnderTwoTenantsIsTwoKeys() {
    int executions = 0;
    auto a = m_h->roundTrip(test::Harness::post("/v1/payments", "k-shared", R"({"a":1})", "acct_A"), 201, &executions);
    auto b = m_h->roundTrip(test::Harness::post("/v1/payments", "k-shared", R"({"a":1})", "acct_B"), 201, &executions);
    QCOMPARE(executions, 2);
    QVERIFY(header(b, "Idempotent-Replayed").empty());
    QCOMPARE(keyRows("k-shared"), 2LL);
  }

  void optionalTierBypassesWithoutKey() {
    auto d = m_h->enforcer.begin(test::Harness::post("/v1/optional", "", "{}"));
    QVERIFY(d.kind == Kind::Bypass);
    QCOMPARE(d.tier, std::string("optional"));
    auto unrouted = m_h->enforcer.begin(test::Harness::post("/v1/unknown", "", "{}"));
    QVERIFY(unrouted.kind == Kind::Bypass);
    QVERIFY(unrouted.tier.empty());
    // With a key, an unmatched route fails closed (tst_enforcer_failures has the details).
    QCOMPARE(m_h->enforcer.begin(test::Harness::post("/v1/unknown", "k", "{}")).response.status, 400);
  }

  void sideStatementsCommitWithTheKeyOnly() {
    auto c = m_db->connect();
    c.exec("CREATE TABLE ledger (key text, generation int)");
    auto d = m_h->enforcer.begin(test::Harness::post("/v1/lease", "k-side", R"({"a":1})"));
    enforce::CompleteOptions opts;
    opts.resourceRef = "pay_side";
    opts.sameTransaction.push_back({"INSERT INTO ledger VALUES ($1, $2)", {std::string("k-side"), 1}});
    auto r = m_h->enforcer.complete(*d.ticket, enforce::Response{201, {}, "{}"}, opts);
    QCOMPARE(r.status, 201);
    QCOMPARE(count("SELECT count(*) AS n FROM ledger"), 1LL);
    QCOMPARE(count("SELECT count(*) AS n FROM idem.keys WHERE resource_ref = 'pay_side'"), 1LL);

    // A late owner whose lease was taken over: its ledger row must roll back with it.
    auto late = m_h->enforcer.begin(test::Harness::post("/v1/lease", "k-side2", R"({"a":1})"));
    m_h->enforcer.leases().setPaused(true);  // the late owner stalls: nothing renews its lease
    std::this_thread::sleep_for(std::chrono::milliseconds(1300));
    auto taker = m_h->enforcer.begin(test::Harness::post("/v1/lease", "k-side2", R"({"a":1})"));
    QVERIFY(taker.kind == Kind::Execute);
    enforce::CompleteOptions lateOpts;
    lateOpts.sameTransaction.push_back({"INSERT INTO ledger VALUES ($1, $2)", {std::string("k-side2"), 1}});
    auto lost = m_h->enforcer.complete(*late.ticket, enforce::Response{201, {}, "{}"}, lateOpts);
    QCOMPARE(lost.status, 409);
    QCOMPARE(count("SELECT count(*) AS n FROM ledger WHERE key = 'k-side2'"), 0LL);
    // The trace tells the same story: one execution with its resource, the late one lost its lease.
    QCOMPARE(events("k-side", "executed"), 1LL);
    QCOMPARE(count("SELECT count(*) AS n FROM idem.events WHERE idem_key = 'k-side' AND detail = 'pay_side'"), 1LL);
    QCOMPARE(events("k-side2", "executed"), 0LL);
    QCOMPARE(events("k-side2", "lease_lost"), 1LL);
  }

  void executionRowIsTheCompletions() {
    auto c = m_db->connect();
    const char* nowMs = "SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS n";
    const long long before = c.exec(nowMs).integer(0, "n");
    auto request = test::Harness::post("/v1/payments", "k-row", R"({"amount":7})");
    request.requestId = "req_row";
    auto d = m_h->enforcer.begin(request);
    QVERIFY(d.kind == Kind::Execute);
    std::this_thread::sleep_for(std::chrono::milliseconds(30));  // the handler's work
    enforce::CompleteOptions opts;
    opts.resourceRef = "pay_row";
    QCOMPARE(m_h->enforcer.complete(*d.ticket, enforce::Response{201, {}, "{}"}, opts).status, 201);
    const long long after = c.exec(nowMs).integer(0, "n");
    QVERIFY(m_h->trace.flush());
    auto row = c.exec(
        "SELECT e.generation, e.tier, e.status, e.latency_ms, e.request_id, e.detail, e.repeats, "
        "(extract(epoch FROM e.at) * 1000)::bigint AS at_ms, "
        "(extract(epoch FROM k.completed_at) * 1000)::bigint AS completed_ms, e.fingerprint = k.fingerprint AS same_fp "
        "FROM idem.events e JOIN idem.keys k USING (tenant, endpoint, idem_key) "
        "WHERE e.idem_key = 'k-row' AND e.outcome = 'executed'");
    QCOMPARE(row.rows(), 1);
    QCOMPARE(row.integer(0, "generation"), 1LL);
    QCOMPARE(row.str(0, "tier"), std::string("payments"));
    QCOMPARE(row.integer(0, "status"), 201LL);
    QVERIFY(row.boolean(0, "same_fp"));
    QVERIFY2(row.real(0, "latency_ms") >= 30, "the latency runs from the claim to the completion");
    QCOMPARE(row.str(0, "request_id"), std::string("req_row"));
    QCOMPARE(row.str(0, "detail"), std::string("pay_row"));
    QCOMPARE(row.integer(0, "repeats"), 1LL);
    // The database's clock at the completion, not the client's.
    QCOMPARE(row.integer(0, "at_ms"), row.integer(0, "completed_ms"));
    QVERIFY(row.integer(0, "at_ms") >= before && row.integer(0, "at_ms") <= after);
  }

  void lostExecutionRowStillCountsTheExecution() {
    // A process that dies (or whose trace cannot reach the store) before its batch is written
    // loses the execution's trace row; the key, which committed first, still says it ran.
    store::Pool deadEnd("host=127.0.0.1 port=1 connect_timeout=1", 1, std::chrono::milliseconds(200));
    {
      trace::TraceWriter lostTrace(deadEnd, trace::TraceWriter::Options{std::chrono::milliseconds(20), 1000, 100000});
      enforce::Enforcer enforcer(m_h->policy, 0, m_h->store, lostTrace);
      auto d = enforcer.begin(test::Harness::post("/v1/payments", "k-lost-row", R"({"amount":1})"));
      QVERIFY(d.kind == Kind::Execute);
      QCOMPARE(enforcer.complete(*d.ticket, enforce::Response{201, {}, "{}"}).status, 201);
      QCOMPARE(lostTrace.written(), 0LL);
    }  // stops with the store out of reach: the queued row is given up
    QCOMPARE(events("k-lost-row", "executed"), 0LL);
    QCOMPARE(count("SELECT count(*) AS n FROM idem.keys WHERE idem_key = 'k-lost-row' AND state = 'done'"), 1LL);
    auto c = m_db->connect();
    const auto x = explain::explain(explain::loadByKey(c, "k-lost-row"));
    QCOMPARE(x.executions, 1);
    QVERIFY2(x.narrative.find("xecuted") != std::string::npos, x.narrative.c_str());
  }

  void sixtyFourThreadsOneKeyExecuteOnce() {
    test::Harness h(m_db->conninfo(), test::kTestPolicy, 64);
    for (int round = 0; round < 50; ++round) {
      std::atomic<int> executions{0}, replays{0}, conflicts{0}, other{0};
      const std::string key = "k-race-" + std::to_string(round);
      std::vector<std::thread> threads;
      for (int t = 0; t < 64; ++t)
        threads.emplace_back([&] {
          int n = 0;
          auto r = h.roundTrip(test::Harness::post("/v1/payments", key, R"({"a":1})"), 201, &n);
          executions += n;
          if (n == 0 && r.status == 201) ++replays;
          else if (r.status == 409) ++conflicts;
          else if (n == 0) ++other;
        });
      for (auto& t : threads) t.join();
      QCOMPARE(executions.load(), 1);
      QCOMPARE(other.load(), 0);
      QCOMPARE(replays.load() + conflicts.load(), 63);
    }
  }
};

QTEST_GUILESS_MAIN(TestEnforcer)
#include "tst_enforcer.moc"

// The enforcer when the store refuses work or the caller drops its ticket (issue 16, items 4,
// 5, 6 and 12), in process against real PostgreSQL: nothing runs twice while the process that
// ran the work is alive.
#include <QtTest>

#include <nlohmann/json.hpp>
#include <thread>

#include "tests/support/harness.h"
#include "tests/support/testdb.h"

using namespace idem;
using test::header;
using Kind = enforce::Decision::Kind;

class TestEnforcerFailures : public QObject {
  Q_OBJECT

  std::unique_ptr<test::TestDatabase> m_db;

  long long count(const std::string& sql, const std::vector<pg::Param>& params = {}) {
    auto c = m_db->connect();
    return c.exec(sql, params).integer(0, "n");
  }
  void alterDatabase(const std::string& setting) {
    auto c = m_db->connect();
    c.exec("SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE");  // also when the database is read-only
    c.exec("ALTER DATABASE " + pg::quoteIdentifier(m_db->name()) + " " + setting);
  }
  static enforce::Request post(const std::string& path, const std::string& key, const std::string& body = R"({"a":1})",
                               const std::string& tenant = "acct_1") {
    return test::Harness::post(path, key, body, tenant);
  }

 private slots:
  void init() { m_db = std::make_unique<test::TestDatabase>("enf_fail"); }
  void cleanup() { m_db.reset(); }

  void readOnlyStoreBeforeExecutionIs503() {
    alterDatabase("SET default_transaction_read_only = on");
    test::Harness h(m_db->conninfo());  // its connections open read-only
    enforce::Decision d;
    try {
      d = h.enforcer.begin(post("/v1/payments", "k-ro"));
    } catch (const std::exception& e) {
      QFAIL(qPrintable(QString("begin() threw: ") + e.what()));
    }
    QVERIFY(d.kind == Kind::Respond);
    QCOMPARE(d.response.status, 503);
    QVERIFY(std::stoi(header(d.response, "Retry-After")) >= 1);
    QVERIFY2(d.response.body.find("read-only") == std::string::npos, d.response.body.c_str());
    alterDatabase("RESET default_transaction_read_only");
    QCOMPARE(count("SELECT count(*) AS n FROM idem.keys"), 0LL);
  }

  void completionThatTimesOutIsRetriedNotRunAgain() {
    alterDatabase("SET statement_timeout = '200ms'");
    test::Harness h(m_db->conninfo());
    auto d = h.enforcer.begin(post("/v1/payments", "k-lock"));
    QVERIFY(d.kind == Kind::Execute);
    // Someone holds the key's row while the work finishes: the first completions time out.
    auto locker = m_db->connect();
    locker.exec("BEGIN");
    locker.exec("SELECT 1 FROM idem.keys WHERE idem_key = 'k-lock' FOR UPDATE");
    std::thread unlock([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(900));
      locker.exec("COMMIT");
    });
    enforce::Response r;
    try {
      r = h.enforcer.complete(*d.ticket, enforce::Response{201, {{"Content-Type", "application/json"}}, R"({"id":1})"});
    } catch (const std::exception& e) {
      unlock.join();
      QFAIL(qPrintable(QString("complete() threw: ") + e.what()));
    }
    unlock.join();
    QCOMPARE(r.status, 201);
    QCOMPARE(count("SELECT count(*) AS n FROM idem.keys WHERE idem_key = 'k-lock' AND state = 'done' AND resp_status = 201"),
             1LL);
    // A retry replays; it does not run the work again.
    auto again = h.enforcer.begin(post("/v1/payments", "k-lock"));
    QVERIFY(again.kind == Kind::Respond);
    QCOMPARE(header(again.response, "Idempotent-Replayed"), std::string("true"));
    QVERIFY(h.trace.flush());
    QCOMPARE(count("SELECT count(*) AS n FROM idem.events WHERE idem_key = 'k-lock' AND outcome = 'executed' "
                   "AND detail LIKE '%attempt%'"),
             1LL);
  }

  // The work ran, then the store stayed away longer than complete()'s retries and the key's
  // lease: the response waits in the process's backlog instead of being dropped. A retry in this
  // process gets it at once; once the store is back it is stored, so a retry anywhere replays
  // it instead of taking the lapsed lease over and running the work again.
  void completionOutlivingItsRetriesIsKeptUntilStored() {
    alterDatabase("SET statement_timeout = '200ms'");
    test::Harness h(m_db->conninfo());
    h.enforcer.setCompletionRetry({std::chrono::milliseconds(300), std::chrono::milliseconds(25),
                                   std::chrono::milliseconds(100)});
    auto d = h.enforcer.begin(post("/v1/lease", "k-outage"));  // lease 1 s
    QVERIFY(d.kind == Kind::Execute);
    auto locker = m_db->connect();
    locker.exec("BEGIN");
    locker.exec("SELECT 1 FROM idem.keys WHERE idem_key = 'k-outage' FOR UPDATE");
    std::thread unlock([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(2500));  // past the lease
      locker.exec("COMMIT");
    });
    auto joinUnlock = qScopeGuard([&] { if (unlock.joinable()) unlock.join(); });
    const auto r = h.enforcer.complete(*d.ticket, enforce::Response{201, {{"Content-Type", "application/json"}},
                                                                    R"({"id":"pay_1"})"});
    QCOMPARE(r.status, 201);
    // While the store is still away, a retry in this process is answered from the backlog.
    auto during = h.enforcer.begin(post("/v1/lease", "k-outage"));
    QVERIFY(during.kind == Kind::Respond);
    QCOMPARE(during.response.status, 201);
    QCOMPARE(header(during.response, "Idempotent-Replayed"), std::string("true"));
    QCOMPARE(during.response.body, std::string(R"({"id":"pay_1"})"));
    // A different payload under the key is still a mismatch, not a replay.
    QCOMPARE(h.enforcer.begin(post("/v1/lease", "k-outage", R"({"a":2})")).response.status, 422);
    unlock.join();
    QTRY_COMPARE_WITH_TIMEOUT(count("SELECT count(*) AS n FROM idem.keys WHERE idem_key = 'k-outage' "
                                    "AND state = 'done' AND resp_status = 201"),
                              1LL, 5000);
    // Another process (another enforcer on the same store) replays; nothing runs twice.
    test::Harness other(m_db->conninfo());
    auto retry = other.enforcer.begin(post("/v1/lease", "k-outage"));
    QVERIFY(retry.kind == Kind::Respond);
    QCOMPARE(retry.response.status, 201);
    QCOMPARE(header(retry.response, "Idempotent-Replayed"), std::string("true"));
    QVERIFY(h.trace.flush());
    QCOMPARE(count("SELECT count(*) AS n FROM idem.events WHERE idem_key = 'k-outage' AND outcome = 'executed'"), 1LL);
  }

  void abandonedTicketUnderAfterStartStoresA500() {
    test::Harness h(m_db->conninfo());
    try {
      auto d = h.enforcer.begin(post("/v1/lease", "k-abandon"));
      QVERIFY(d.kind == Kind::Execute);
      throw std::runtime_error("the handler failed");  // the ticket is dropped on the floor
    } catch (const std::runtime_error&) {
    }
    QCOMPARE(count("SELECT count(*) AS n FROM idem.keys WHERE idem_key = 'k-abandon' AND state = 'done' "
                   "AND resp_status = 500"),
             1LL);
    // Even after the lease (1 s) a retry replays the stored 500: the work may have run.
    std::this_thread::sleep_for(std::chrono::milliseconds(1200));
    auto retry = h.enforcer.begin(post("/v1/lease", "k-abandon"));
    QVERIFY(retry.kind == Kind::Respond);
    QCOMPARE(retry.response.status, 500);
    QCOMPARE(header(retry.response, "Idempotent-Replayed"), std::string("true"));
  }

  void abandonedTicketUnder2xxOnlyIsReleased() {
    test::Harness h(m_db->conninfo());
    { auto d = h.enforcer.begin(post("/v1/success", "k-abandon-2xx")); QVERIFY(d.kind == Kind::Execute); }
    QCOMPARE(count("SELECT count(*) AS n FROM idem.keys WHERE idem_key = 'k-abandon-2xx'"), 0LL);
    auto retry = h.enforcer.begin(post("/v1/success", "k-abandon-2xx"));
    QVERIFY(retry.kind == Kind::Execute);  // runs now, not a 409 until the lease ends
    (void)h.enforcer.complete(*retry.ticket, enforce::Response{201, {}, "{}"});
  }

  void movedTicketEndsOnce() {
    test::Harness h(m_db->conninfo());
    auto d = h.enforcer.begin(post("/v1/payments", "k-move"));
    QVERIFY(d.kind == Kind::Execute);
    enforce::Ticket moved = std::move(*d.ticket);
    d.ticket.reset();  // the moved-from ticket ends nothing
    QCOMPARE(count("SELECT count(*) AS n FROM idem.keys WHERE idem_key = 'k-move' AND state = 'processing'"), 1LL);
    QCOMPARE(h.enforcer.complete(moved, enforce::Response{201, {}, "{}"}).status, 201);
    QCOMPARE(count("SELECT count(*) AS n FROM idem.keys WHERE idem_key = 'k-move' AND state = 'done'"), 1LL);
  }

  void routeSpellingsShareOneScope_data() {
    QTest::addColumn<QString>("path");
    QTest::newRow("trailing slash") << "/v1/payments/";
    QTest::newRow("upper case") << "/V1/PAYMENTS";
    QTest::newRow("double slash") << "/v1//payments";
    QTest::newRow("encoded") << "/v1/%70ayments";
    QTest::newRow("dot segments") << "/v1/a/../payments/.";
  }
  void routeSpellingsShareOneScope() {
    QFETCH(QString, path);
    test::Harness h(m_db->conninfo());
    int executions = 0;
    h.roundTrip(post("/v1/payments", "k-route"), 201, &executions);
    auto r = h.roundTrip(post(path.toStdString(), "k-route"), 201, &executions);
    QCOMPARE(executions, 1);
    QCOMPARE(header(r, "Idempotent-Replayed"), std::string("true"));
  }

  void tenantComesFromTheCallerNotAHeader() {
    test::Harness h(m_db->conninfo());
    auto forged = post("/v1/payments", "k-tenant");
    forged.headers.emplace_back("Account-Id", "acct_victim");  // what a client may send
    int executions = 0;
    h.roundTrip(forged, 201, &executions);
    QCOMPARE(count("SELECT count(*) AS n FROM idem.keys WHERE idem_key = 'k-tenant' AND tenant = 'acct_1'"), 1LL);
    // No tenant from the caller: the test policy names a tenant header, so one is required.
    auto none = post("/v1/payments", "k-none", R"({"a":1})");
    none.tenant.reset();
    auto d = h.enforcer.begin(none);
    QVERIFY(d.kind == Kind::Respond);
    QCOMPARE(d.response.status, 400);
    QVERIFY(d.response.body.find("tenant-missing") != std::string::npos);
    auto bad = post("/v1/payments", "k-bad", R"({"a":1})", "acct 1");
    QCOMPARE(h.enforcer.begin(bad).response.status, 400);
    QCOMPARE(count("SELECT count(*) AS n FROM idem.keys WHERE idem_key IN ('k-none', 'k-bad')"), 0LL);
  }

  void keyedRequestOnAnUnmatchedRouteFailsClosed() {
    test::Harness h(m_db->conninfo());
    for (const char* path : {"/v1%2Fpayments", "/v1/unknown"}) {
      auto d = h.enforcer.begin(post(path, "k-unmatched"));
      QVERIFY2(d.kind == Kind::Respond, path);
      QCOMPARE(d.response.status, 400);
    }
    // Without a key, or with a safe method, an unmatched route is the handler's business.
    QVERIFY(h.enforcer.begin(post("/v1/unknown", "")).kind == Kind::Bypass);
    auto get = post("/v1/unknown", "k-get");
    get.method = "GET";
    QVERIFY(h.enforcer.begin(get).kind == Kind::Bypass);
    QCOMPARE(count("SELECT count(*) AS n FROM idem.keys"), 0LL);
  }
};

QTEST_GUILESS_MAIN(TestEnforcerFailures)
#include "tst_enforcer_failures.moc"

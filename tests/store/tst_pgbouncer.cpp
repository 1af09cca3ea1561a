// docs/design.md §8: Idem stays compatible with PgBouncer in transaction pooling mode. A pooler that
// does not keep prepared statements (PgBouncer before 1.21: Debian 12 ships 1.18) hands each
// transaction to whichever server connection is free, so a statement prepared by one
// transaction is unknown to the next one's server connection — or already prepared there by
// another client. Before this suite, half the endpoint's requests through it answered 500.
//
// The first tests provoke both errors on a direct connection, deterministically; the rest run
// the enforcement stack and idemctl through a real PgBouncer with two server connections.
#include <QtTest>

#include <atomic>
#include <thread>
#include <vector>

#include "core/store/migrations.h"
#include "tests/support/harness.h"
#include "tests/support/pgbouncer.h"
#include "tests/support/testdb.h"

using namespace idem;
using Kind = enforce::Decision::Kind;

class TestPgBouncer : public QObject {
  Q_OBJECT

  std::unique_ptr<test::TestDatabase> m_db;
  std::unique_ptr<test::PgBouncer> m_bouncer;

  [[nodiscard]] std::string viaBouncer() const { return m_bouncer->conninfo(m_db->name()); }

 private slots:
  void initTestCase() {
    // Not migrated: migrating through the pooler is one of the things under test.
    m_db = std::make_unique<test::TestDatabase>("pgbouncer", test::Schema::None);
    m_bouncer = std::make_unique<test::PgBouncer>(test::sharedClusterConninfo(), 2);
  }

  void cleanupTestCase() {
    m_bouncer.reset();
    m_db.reset();
  }

  // ---- the two errors a pooler causes, provoked on a direct connection ----

  void statementGoneFromTheServerConnectionRunsUnnamed() {
    auto conn = m_db->connect();
    QCOMPARE(conn.execPrepared("probe", "SELECT $1::integer + 1 AS v", {41}).integer(0, "v"), 42LL);
    QVERIFY(conn.preparedStatements());
    conn.exec("DEALLOCATE ALL");  // what the next server connection looks like: 26000
    QCOMPARE(conn.execPrepared("probe", "SELECT $1::integer + 1 AS v", {1}).integer(0, "v"), 2LL);
    QVERIFY(!conn.preparedStatements());
    // From now on unnamed: nothing is prepared on the server any more.
    QCOMPARE(conn.execPrepared("probe2", "SELECT 7 AS v").integer(0, "v"), 7LL);
    QCOMPARE(conn.exec("SELECT count(*) AS n FROM pg_prepared_statements").integer(0, "n"), 0LL);
  }

  void statementAlreadyOnTheServerConnectionRunsUnnamed() {
    auto conn = m_db->connect();
    QCOMPARE(conn.execPrepared("dup", "SELECT 5 AS v").integer(0, "v"), 5LL);
    // Forget what this side prepared while the server keeps it: the next PREPARE meets a
    // statement of that name, as when another client prepared it on this server connection.
    conn.setPreparedStatements(false);
    conn.setPreparedStatements(true);
    QCOMPARE(conn.execPrepared("dup", "SELECT 5 AS v").integer(0, "v"), 5LL);
    QVERIFY(!conn.preparedStatements());
  }

  void aStatementNameCannotRunOtherSql() {
    // Two Idem versions behind one pooler during a rolling deploy may name different SQL alike.
    auto conn = m_db->connect();
    QCOMPARE(conn.execPrepared("same_name", "SELECT 1 AS v").integer(0, "v"), 1LL);
    conn.setPreparedStatements(false);
    conn.setPreparedStatements(true);  // a fresh client side, the old statement still on the server
    QCOMPARE(conn.execPrepared("same_name", "SELECT 2 AS v").integer(0, "v"), 2LL);
    QVERIFY2(conn.preparedStatements(), "different text: a different server-side name, no clash");
    QCOMPARE(conn.exec("SELECT count(*) AS n FROM pg_prepared_statements").integer(0, "n"), 2LL);
  }

  void inATransactionBlockTheErrorIsReported() {
    auto conn = m_db->connect();
    conn.execPrepared("tx_probe", "SELECT 1 AS v");
    conn.exec("BEGIN");
    conn.exec("DEALLOCATE ALL");
    // The error aborted the caller's transaction: running the statement again would hide that.
    bool threw = false;
    try {
      conn.execPrepared("tx_probe", "SELECT 1 AS v");
    } catch (const pg::QueryError& e) {
      threw = true;
      QCOMPARE(e.sqlstate(), std::string("26000"));
    }
    QVERIFY(threw);
    conn.exec("ROLLBACK");
    QVERIFY(!conn.preparedStatements());
    QCOMPARE(conn.execPrepared("tx_probe", "SELECT 1 AS v").integer(0, "v"), 1LL);
  }

  // ---- through a real PgBouncer in transaction mode ----

  void migrateThroughThePoolerTwiceAtOnce() {
    // A session advisory lock would be taken on one server connection and released on another.
    std::string out1, out2;
    int rc1 = -1, rc2 = -1;
    std::thread other([&] { rc1 = test::runIdemctl({"migrate", "--db", viaBouncer()}, &out1); });
    rc2 = test::runIdemctl({"migrate", "--db", viaBouncer()}, &out2);
    other.join();
    QVERIFY2(rc1 == 0, out1.c_str());
    QVERIFY2(rc2 == 0, out2.c_str());
    auto conn = m_db->connect();
    const auto expected = static_cast<long long>(store::knownMigrations().size());
    QCOMPARE(conn.exec("SELECT count(*) AS n FROM idem.schema_migrations").integer(0, "n"), expected);
    std::string again;
    QCOMPARE(test::runIdemctl({"migrate", "--db", viaBouncer()}, &again), 0);
    QVERIFY2(again.find("up to date") != std::string::npos, again.c_str());
    // No session lock left behind on any server connection of this database (pg_locks is the
    // whole cluster's: other suites running at the same time hold advisory locks of their own).
    QCOMPARE(conn.exec("SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' "
                       "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())")
                 .integer(0, "n"),
             0LL);
  }

  void everyDecisionRightWithSixteenClientsOnTwoServerConnections() {
    test::Harness h(viaBouncer(), test::kTestPolicy, 16);
    constexpr int kThreads = 16, kKeys = 25;
    std::atomic<int> executions{0}, replays{0}, wrong{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        for (int pass = 0; pass < 2; ++pass)
          for (int k = 0; k < kKeys; ++k) {
            int n = 0;
            const auto key = "pgb-" + std::to_string(t) + "-" + std::to_string(k);
            const auto r = h.roundTrip(test::Harness::post("/v1/payments", key, R"({"amount":1})"), 201, &n);
            executions += n;
            if (n == 0 && r.status == 201 && test::header(r, "Idempotent-Replayed") == "true") ++replays;
            if (r.status != 201) ++wrong;
          }
      });
    for (auto& t : threads) t.join();
    QCOMPARE(wrong.load(), 0);
    QCOMPARE(executions.load(), kThreads * kKeys);
    QCOMPARE(replays.load(), kThreads * kKeys);
    h.trace.flush();
    auto conn = m_db->connect();
    QCOMPARE(conn.exec("SELECT count(*) AS n FROM idem.keys WHERE idem_key LIKE 'pgb-%' AND state = 'done'")
                 .integer(0, "n"),
             static_cast<long long>(kThreads * kKeys));
    qInfo("prepared statements after the run: %s", h.pool.stats().preparedStatements ? "on" : "off (pooler met)");
  }

  void sixteenThreadsOneKeyExecuteOnceThroughThePooler() {
    test::Harness h(viaBouncer(), test::kTestPolicy, 16);
    for (int round = 0; round < 20; ++round) {
      std::atomic<int> executions{0}, answered{0};
      const std::string key = "pgb-race-" + std::to_string(round);
      std::vector<std::thread> threads;
      for (int t = 0; t < 16; ++t)
        threads.emplace_back([&] {
          int n = 0;
          const auto r = h.roundTrip(test::Harness::post("/v1/payments", key, R"({"a":1})"), 201, &n);
          executions += n;
          if (r.status == 201 || r.status == 409) ++answered;
        });
      for (auto& t : threads) t.join();
      QCOMPARE(executions.load(), 1);
      QCOMPARE(answered.load(), 16);
    }
  }

  void unnamedStatementsWhenToldSo() {
    test::Harness h(viaBouncer(), test::kTestPolicy, 4);
    h.pool.setPreparedStatements(false);
    int n = 0;
    QCOMPARE(h.roundTrip(test::Harness::post("/v1/payments", "pgb-unnamed", R"({"a":1})"), 201, &n).status, 201);
    QCOMPARE(n, 1);
    const auto replay = h.roundTrip(test::Harness::post("/v1/payments", "pgb-unnamed", R"({"a":1})"), 201, &n);
    QCOMPARE(test::header(replay, "Idempotent-Replayed"), std::string("true"));
    QVERIFY(!h.pool.stats().preparedStatements);
  }

  void serveRejectsABadPreparedStatementsValue() {
    std::string out;
    QCOMPARE(test::runIdemctl({"serve", "--db", viaBouncer(), "--prepared-statements", "maybe"}, &out), 2);
    QVERIFY2(out.find("--prepared-statements must be on or off") != std::string::npos, out.c_str());
  }
};

QTEST_GUILESS_MAIN(TestPgBouncer)
#include "tst_pgbouncer.moc"

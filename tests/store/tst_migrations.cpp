// Migrations: applied from nothing, and a second run changes nothing. `idemctl migrate` creates
// the store's schema only; the demo's tables come with --demo (issue 31, item 6), and a store
// migrated before the split keeps working.
#include <QtTest>

#include <cstdlib>
#include <set>

#include "core/cluster/localcluster.h"
#include "core/store/migrations.h"
#include "tests/support/testdb.h"

using namespace idem;

class TestMigrations : public QObject {
  Q_OBJECT

  static std::string schemaFingerprint(pg::Connection& c) {
    // Everything a migration could change: relations, columns, functions, indexes.
    auto r = c.exec(R"sql(
      SELECT string_agg(line, E'\n' ORDER BY line) AS s FROM (
        SELECT 'col ' || table_name || '.' || column_name || ' ' || data_type AS line
          FROM information_schema.columns WHERE table_schema = 'idem'
        UNION ALL SELECT 'idx ' || indexname || ' ' || indexdef FROM pg_indexes WHERE schemaname = 'idem'
        UNION ALL SELECT 'fn ' || p.proname || ' ' || md5(p.prosrc) FROM pg_proc p
          JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'idem'
        UNION ALL SELECT 'ver ' || version || ' ' || name FROM idem.schema_migrations) x)sql");
    return r.str(0, "s");
  }

 private slots:
  void appliesFromNothingThenIsIdempotent() {
    test::TestDatabase db("migrations", test::Schema::None);
    auto conn = db.connect();
    QCOMPARE(store::appliedSchemaVersion(conn), 0);

    auto first = store::migrate(conn);
    QCOMPARE(first.from, 0);
    QCOMPARE(first.to, store::expectedSchemaVersion());
    QCOMPARE(static_cast<int>(first.applied.size()), static_cast<int>(store::knownMigrations().size()));
    const auto before = schemaFingerprint(conn);
    QVERIFY(before.find("col keys.idem_key") != std::string::npos);

    auto second = store::migrate(conn);
    QVERIFY(second.applied.empty());
    QCOMPARE(second.to, first.to);
    QCOMPARE(schemaFingerprint(conn), before);
  }

  void versionsAreUnique() {
    // Two files with one version number would leave one of them never applied.
    std::set<int> seen;
    for (const auto& m : store::knownMigrations()) QVERIFY2(seen.insert(m.version).second, m.name.c_str());
    QVERIFY(!seen.empty());
  }

  void cliMigrateTwiceReportsUpToDate() {
    test::TestDatabase db("migrations_cli", test::Schema::None);
    std::string out;
    QCOMPARE(test::runIdemctl({"migrate", "--db", db.conninfo()}, &out), 0);
    QVERIFY2(out.find("applied 0001") != std::string::npos, out.c_str());
    QCOMPARE(test::runIdemctl({"migrate", "--db", db.conninfo()}, &out), 0);
    QVERIFY2(out.find("up to date") != std::string::npos, out.c_str());
  }

  static long long demoTables(pg::Connection& c) {
    return c.exec("SELECT count(*) AS n FROM pg_tables WHERE schemaname = 'idem_demo'").integer(0, "n");
  }

  void migrateCreatesNoDemoTablesAndDemoAddsThem() {
    test::TestDatabase db("migrations_demo", test::Schema::None);
    std::string out;
    QCOMPARE(test::runIdemctl({"migrate", "--db", db.conninfo()}, &out), 0);
    QVERIFY2(out.find("ledger") == std::string::npos, out.c_str());
    auto conn = db.connect();
    QCOMPARE(demoTables(conn), 0LL);
    QCOMPARE(conn.exec("SELECT count(*) AS n FROM pg_namespace WHERE nspname = 'idem_demo'").integer(0, "n"), 0LL);
    QCOMPARE(store::appliedSchemaVersion(conn), store::expectedSchemaVersion());

    // The demo's migrations are numbered below the store's newest: they still apply afterwards.
    QCOMPARE(test::runIdemctl({"migrate", "--db", db.conninfo(), "--demo"}, &out), 0);
    QVERIFY2(out.find("applied 0004_ledger.sql") != std::string::npos, out.c_str());
    QVERIFY2(out.find("applied 0021_fault_attempts.sql") != std::string::npos, out.c_str());
    QCOMPARE(demoTables(conn), 2LL);
    QCOMPARE(test::runIdemctl({"migrate", "--db", db.conninfo(), "--demo"}, &out), 0);
    QVERIFY2(out.find("up to date") != std::string::npos, out.c_str());
  }

  void aStoreMigratedBeforeTheSplitIsUpToDate() {
    // The old `migrate` applied every file, the demo's among them, under the same versions and
    // names the demo set keeps; migrating with the demo set from nothing leaves that state.
    test::TestDatabase db("migrations_old", test::Schema::None);
    auto conn = db.connect();
    const auto old = store::migrate(conn, store::kDefaultLockTimeout, /*withDemo=*/true);
    QCOMPARE(static_cast<int>(old.applied.size()),
             static_cast<int>(store::knownMigrations().size() + store::knownMigrations(store::MigrationSet::Demo).size()));
    QCOMPARE(conn.exec("SELECT name FROM idem.schema_migrations WHERE version = 4").str(0, "name"),
             std::string("0004_ledger.sql"));
    conn.exec("INSERT INTO idem_demo.ledger (id, kind, endpoint, status, payload) "
              "VALUES ('pay_old', 'payment', 'POST /v1/payments', 'succeeded', '{}')");
    const auto before = schemaFingerprint(conn);

    std::string out;
    QCOMPARE(test::runIdemctl({"migrate", "--db", db.conninfo()}, &out), 0);
    QVERIFY2(out.find("up to date") != std::string::npos, out.c_str());
    QCOMPARE(test::runIdemctl({"migrate", "--db", db.conninfo(), "--demo"}, &out), 0);
    QVERIFY2(out.find("up to date") != std::string::npos, out.c_str());
    QCOMPARE(schemaFingerprint(conn), before);
    QCOMPARE(conn.exec("SELECT count(*) AS n FROM idem_demo.ledger").integer(0, "n"), 1LL);
  }

  void serveRefusesAStoreWithoutTheDemoTables() {
    test::TestDatabase db("migrations_serve", test::Schema::Store);
    std::string out;
    // Bounded: a serve that started anyway is stopped after 20 s and the test fails.
    const int rc = cluster::runProgram({"/usr/bin/timeout", "20", std::getenv("IDEMCTL"), "serve", "--db", db.conninfo(),
                                        "--listen", "127.0.0.1:0"},
                                       &out, false);
    QCOMPARE(rc, 2);
    QVERIFY2(out.find("no idem_demo.ledger") != std::string::npos, out.c_str());
    QVERIFY2(out.find("idemctl migrate --demo") != std::string::npos, out.c_str());
  }

  void unreachableServerIsAClearError() {
    std::string out;
    int rc = test::runIdemctl({"migrate", "--db", "host=/nonexistent-socket-dir port=1 dbname=x connect_timeout=2"}, &out);
    QCOMPARE(rc, 3);
    QVERIFY2(out.find("cannot connect") != std::string::npos, out.c_str());
  }
};

QTEST_GUILESS_MAIN(TestMigrations)
#include "tst_migrations.moc"

// Migrations: applied from nothing, and a second run changes nothing.
#include <QtTest>

#include <set>

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
    test::TestDatabase db("migrations", /*migrate=*/false);
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
    test::TestDatabase db("migrations_cli", /*migrate=*/false);
    std::string out;
    QCOMPARE(test::runIdemctl({"migrate", "--db", db.conninfo()}, &out), 0);
    QVERIFY2(out.find("applied 0001") != std::string::npos, out.c_str());
    QCOMPARE(test::runIdemctl({"migrate", "--db", db.conninfo()}, &out), 0);
    QVERIFY2(out.find("up to date") != std::string::npos, out.c_str());
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

// Least privilege covers the built-ins that lock or write (issue 28, scenario 7): the read-only
// console could hold the enforcers' advisory lock so no `serve`, `proxy` or `migrate` started,
// write WAL at will with pg_logical_emit_message inside READ ONLY, and create temporary tables.
// migrate revokes those from PUBLIC (and says what it could not, with the SQL), and every lock
// wait at start is bounded and names the session holding the lock.
#include <QtTest>
#include <chrono>
#include <fstream>

#include "core/cluster/localcluster.h"
#include "tests/endpoint/endpoint_support.h"
#include "tests/endpoint/login_role.h"

using namespace idem;
using test::sqlstateOf;

namespace {

constexpr const char* kDenied = "42501";
constexpr const char* kReadOnly = "BEGIN READ ONLY";  // what the console's jobs run in

/// idemctl with a hard stop, so a start that waits forever (the old behaviour) fails the test
/// instead of hanging it: exit 124 means it was still waiting after 30 s.
int runBounded(const std::vector<std::string>& args, std::string* out, std::chrono::milliseconds* took) {
  std::vector<std::string> argv{"/usr/bin/timeout", "30", std::getenv("IDEMCTL")};
  argv.insert(argv.end(), args.begin(), args.end());
  const auto started = std::chrono::steady_clock::now();
  const int rc = cluster::runProgram(argv, out, false);
  *took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
  return rc;
}

/// A session that holds a lock: opened with an application_name the error must name.
pg::Connection holder(const std::string& conninfo, const std::string& app) {
  return pg::Connection(conninfo + " application_name=" + app);
}

}  // namespace

class TestLeastPrivilege : public QObject {
  Q_OBJECT

 private slots:
  void consoleAndServiceCannotLockOrWrite() {
    test::TestDatabase db("ep_lp_builtins");
    test::LoginRole console(db, "idem_console");
    test::LoginRole service(db, "idem_service");
    test::LoginRole admin(db, "idem_admin");
    for (const auto* role : {&console, &service, &admin}) {
      const std::string& c = role->conninfo;
      // The enforcers' and migrate's locks, in every form.
      QCOMPARE(sqlstateOf(c, "SELECT pg_advisory_lock(x'1de30002'::bigint)", kReadOnly), std::string(kDenied));
      QCOMPARE(sqlstateOf(c, "SELECT pg_try_advisory_lock(x'1de30001'::bigint)", kReadOnly), std::string(kDenied));
      QCOMPARE(sqlstateOf(c, "SELECT pg_advisory_lock_shared(0, x'1de30002'::int)", kReadOnly), std::string(kDenied));
      // WAL, xids, the notification queue, large objects — all possible in READ ONLY before.
      QCOMPARE(sqlstateOf(c, "SELECT pg_logical_emit_message(false, 'x', repeat('x', 1000))", kReadOnly),
               std::string(kDenied));
      QCOMPARE(sqlstateOf(c, "SELECT pg_current_xact_id()", kReadOnly), std::string(kDenied));
      QCOMPARE(sqlstateOf(c, "SELECT txid_current()", kReadOnly), std::string(kDenied));
      QCOMPARE(sqlstateOf(c, "SELECT pg_notify('idem', 'x')", kReadOnly), std::string(kDenied));
      QCOMPARE(sqlstateOf(c, "SELECT lo_from_bytea(0, 'x')", kReadOnly), std::string(kDenied));
      QCOMPARE(sqlstateOf(c, "SELECT lo_create(0)", kReadOnly), std::string(kDenied));
    }
    // Temporary tables (outside READ ONLY, where they would otherwise be allowed).
    pg::Connection c(console.conninfo);
    try {
      c.exec("CREATE TEMP TABLE scratch (a int)");
      QFAIL("the console created a temporary table");
    } catch (const pg::QueryError& e) {
      QCOMPARE(e.sqlstate(), std::string(kDenied));
    }
    // What Idem's own roles take is granted back: the transaction-scoped policy lock.
    QCOMPARE(sqlstateOf(service.conninfo, "SELECT pg_advisory_xact_lock(x'1de30002'::bigint)", kReadOnly),
             std::string());
    QCOMPARE(sqlstateOf(admin.conninfo, "SELECT pg_advisory_xact_lock(x'1de30002'::bigint)", kReadOnly), std::string());
  }

  void migrateWithoutTheRightSaysWhatIsLeft() {
    // The schema's owner, not a superuser: it cannot revoke a built-in's privilege, and says so
    // with the SQL a superuser runs; its own database's TEMPORARY it does revoke.
    test::TestDatabase db("ep_lp_owner", test::Schema::None);
    auto su = db.connect();
    const std::string owner = "t_owner_" + std::to_string(getpid());
    su.exec("CREATE ROLE " + owner + " LOGIN PASSWORD 'pw'");
    su.exec("ALTER DATABASE " + db.name() + " OWNER TO " + owner);
    su.exec("GRANT CREATE ON DATABASE " + db.name() + " TO " + owner);
    std::string out;
    QCOMPARE(test::runIdemctl({"migrate", "--db", db.conninfo() + " user=" + owner + " password=pw"}, &out), 0);
    QVERIFY2(out.find("warning: the console and service roles may still run built-ins") != std::string::npos,
             out.c_str());
    QVERIFY2(out.find("REVOKE EXECUTE ON FUNCTION pg_logical_emit_message(boolean,text,text) FROM PUBLIC;") !=
                 std::string::npos,
             out.c_str());
    QVERIFY2(out.find("takes a superuser") != std::string::npos, out.c_str());
    QVERIFY2(out.find("TEMPORARY on database") == std::string::npos, out.c_str());  // the owner could
    // A superuser's run closes the rest, and says nothing more.
    QCOMPARE(test::runIdemctl({"migrate", "--db", db.conninfo()}, &out), 0);
    QVERIFY2(out.find("warning") == std::string::npos, out.c_str());
    QVERIFY2(out.find("up to date") != std::string::npos, out.c_str());
    su.exec("DROP OWNED BY " + owner);
    su.exec("ALTER DATABASE " + db.name() + " OWNER TO CURRENT_USER");
    su.exec("DROP ROLE " + owner);
  }

  void startsWaitBoundedAndNameTheHolder() {
    test::TestDatabase db("ep_lp_wait");
    test::LoginRole service(db, "idem_service");
    std::string out;
    std::chrono::milliseconds took{};

    // serve: another service's session holds the policy lock in an open transaction.
    {
      auto h = holder(service.conninfo, "lock-holder-serve");
      h.exec("BEGIN");
      h.exec("SELECT pg_advisory_xact_lock(x'1de30002'::bigint)");
      const std::string pid = std::to_string(h.exec("SELECT pg_backend_pid() AS p").integer(0, "p"));
      const int rc = runBounded({"serve", "--db", service.conninfo, "--lock-timeout", "1s"}, &out, &took);
      QCOMPARE(rc, 3);
      QVERIFY2(took < std::chrono::seconds(15), out.c_str());
      QVERIFY2(out.find("policy lock") != std::string::npos, out.c_str());
      QVERIFY2(out.find("pid " + pid + " (user " + service.name) != std::string::npos, out.c_str());
      QVERIFY2(out.find("application_name 'lock-holder-serve'") != std::string::npos, out.c_str());
      QVERIFY2(out.find("since ") != std::string::npos, out.c_str());
    }
    // migrate: a session holds the migration lock.
    {
      auto h = holder(db.conninfo(), "lock-holder-migrate");
      h.exec("BEGIN");
      h.exec("SELECT pg_advisory_xact_lock(x'1de30001'::bigint)");
      const std::string pid = std::to_string(h.exec("SELECT pg_backend_pid() AS p").integer(0, "p"));
      const int rc = runBounded({"migrate", "--db", db.conninfo(), "--lock-timeout", "1s"}, &out, &took);
      QCOMPARE(rc, 1);
      QVERIFY2(took < std::chrono::seconds(15), out.c_str());
      QVERIFY2(out.find("migration lock") != std::string::npos, out.c_str());
      QVERIFY2(out.find("pid " + pid) != std::string::npos, out.c_str());
      QVERIFY2(out.find("application_name 'lock-holder-migrate'") != std::string::npos, out.c_str());
    }
    // sweep: the service (UPDATE on keys lets it LOCK TABLE … IN SHARE MODE) blocks its deletes.
    {
      auto store = db.connect();
      store.exec(
          "INSERT INTO idem.keys (tenant, endpoint, idem_key, tier, fingerprint, state, expires_at) "
          "VALUES ('t', 'POST /v1/payments', 'old', 'payments', '\\x00', 'done', now() - interval '1 hour')");
      auto h = holder(service.conninfo, "lock-holder-sweep");
      h.exec("BEGIN");
      h.exec("LOCK TABLE idem.keys IN SHARE MODE");
      const std::string pid = std::to_string(h.exec("SELECT pg_backend_pid() AS p").integer(0, "p"));
      const int rc = runBounded({"sweep", "--db", db.conninfo(), "--lock-timeout", "1s"}, &out, &took);
      QCOMPARE(rc, 1);
      QVERIFY2(took < std::chrono::seconds(15), out.c_str());
      QVERIFY2(out.find("pid " + pid) != std::string::npos, out.c_str());
      QVERIFY2(out.find("ShareLock on idem.keys") != std::string::npos, out.c_str());
    }
  }
};

QTEST_GUILESS_MAIN(TestLeastPrivilege)
#include "tst_leastprivilege.moc"

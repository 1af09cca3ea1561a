// Each face of Idem runs under its documented least-privilege role (README, "Roles"):
// `idemctl serve` as a login member of idem_service (new keys, replays, releases, expiry reuse,
// an on_expired reject), `idemctl sweep` as idem_admin (archive, purge the archive, purge events),
// the console's reads as idem_console — and each role is refused what it must not do. Every
// function in schema idem runs with a pinned search_path and is not executable by PUBLIC.
#include <QtTest>
#include <fstream>

#include "tests/endpoint/endpoint_support.h"
#include "tests/endpoint/login_role.h"
#include "tests/endpoint/serve_process.h"

using namespace idem;
using test::sqlstateOf;

namespace {

// refunds: expires after 1 s and executes again (the claim's reuse path archives the old
// generation); webhooks: expires after 1 s and is refused (422). Both keep archived rows for
// 1 s only, so a second sweep purges them and the events of the generations they held.
const char* const kRolesPolicy =
    R"({"docs_url":"https://d/i","tenant_header":"Account-Id","tiers":[)"
    R"({"name":"payments","routes":["POST /v1/payments"],"ttl":"1h","lease":"30s"},)"
    R"({"name":"refunds","routes":["POST /v1/refunds"],"ttl":"1s","lease":"200ms","on_expired":"execute",)"
    R"("archive_retention":"1s"},)"
    R"({"name":"webhooks","routes":["POST /v1/webhooks/ack"],"ttl":"1s","lease":"200ms","on_expired":"reject",)"
    R"("archive_retention":"1s"}]})";

std::string writePolicy() {
  const std::string path = "/tmp/idem-roles-policy-" + std::to_string(getpid()) + ".json";
  std::ofstream(path) << kRolesPolicy;
  return path;
}

constexpr const char* kDenied = "42501";  // insufficient_privilege (also: must be owner)

}  // namespace

class TestRoles : public QObject {
  Q_OBJECT

 private slots:
  void serviceRunsServeAndAdminSweeps() {
    test::TestDatabase db("ep_roles");
    test::LoginRole service(db, "idem_service");
    test::LoginRole admin(db, "idem_admin");
    const std::string policy = writePolicy();
    std::unique_ptr<test::ServeProcess> started;
    try {
      started = std::make_unique<test::ServeProcess>(
          std::vector<std::string>{"--db", service.conninfo, "--policy", policy, "--allow-fault-injection"});
    } catch (const std::exception& e) {
      QFAIL(e.what());  // its reason is on stderr
    }
    test::ServeProcess& serve = *started;
    client::Client c("127.0.0.1", serve.port());

    // A new key, its replay.
    auto first = c.post("/v1/payments", test::jsonHeaders("role-pay"), test::kPayment);
    QCOMPARE(first.status, 201);
    auto replay = c.post("/v1/payments", test::jsonHeaders("role-pay"), test::kPayment);
    QCOMPARE(replay.status, 201);
    QCOMPARE(replay.header("Idempotent-Replayed"), std::string("true"));
    QCOMPARE(replay.body, first.body);
    // A failure before execution releases the claim (DELETE on idem.keys); the retry executes.
    auto h = test::jsonHeaders("role-released");
    h.emplace_back("Sim-Fail", "before");
    QCOMPARE(c.post("/v1/payments", h, test::kPayment).status, 503);
    QCOMPARE(c.post("/v1/payments", test::jsonHeaders("role-released"), test::kPayment).status, 201);
    // Expiry: refunds executes again (the old generation is archived by the claim), webhooks
    // answers 422.
    const std::string refund = R"({"payment":"pay_1","amount":500})";
    const std::string ack = R"({"event":"evt_1"})";
    QCOMPARE(c.post("/v1/refunds", test::jsonHeaders("role-reuse"), refund).status, 201);
    QCOMPARE(c.post("/v1/webhooks/ack", test::jsonHeaders("role-reject"), ack).status, 200);
    QCOMPARE(c.post("/v1/refunds", test::jsonHeaders("role-swept"), refund).status, 201);
    QThread::msleep(1300);
    auto reused = c.post("/v1/refunds", test::jsonHeaders("role-reuse"), refund);
    QCOMPARE(reused.status, 201);
    QVERIFY(reused.header("Idempotent-Replayed").empty());
    QCOMPARE(c.post("/v1/webhooks/ack", test::jsonHeaders("role-reject"), ack).status, 422);
    auto store = db.connect();
    QCOMPARE(store.exec("SELECT count(*) AS n FROM idem.key_archive WHERE idem_key = 'role-reuse' "
                        "AND archived_by = 'reuse'")
                 .integer(0, "n"),
             1LL);
    QCOMPARE(store.exec("SELECT count(*) AS n FROM idem_demo.ledger WHERE idem_key = 'role-reuse'").integer(0, "n"),
             2LL);
    // The trace writer's COPY as the service reaches the store.
    QTRY_VERIFY_WITH_TIMEOUT(
        store.exec("SELECT count(*) AS n FROM idem.events WHERE outcome = 'replayed'").integer(0, "n") >= 1, 10000);
    serve.kill(SIGTERM);
    QCOMPARE(serve.wait(), 0);

    // The sweeper as idem_admin: archives the expired keys, then (past the 1 s archive
    // retention) purges the archive and the events of the generations no longer stored.
    QThread::msleep(1300);  // role-reuse's second generation expires too
    std::string out;
    // The service recorded its policy but cannot make it the one in force: the admin does.
    QCOMPARE(test::runIdemctl({"policy", "activate", policy, "--db", admin.conninfo}, &out), 0);
    QVERIFY2(out.find("is in force for service default") != std::string::npos, out.c_str());
    QCOMPARE(test::runIdemctl({"sweep", "--db", admin.conninfo}, &out), 0);
    QVERIFY2(out.find("archived 3 expired keys") != std::string::npos, out.c_str());
    // The generation the claim archived 1.3 s before is past its retention already.
    QVERIFY2(out.find("purged 1 archived generation past retention") != std::string::npos, out.c_str());
    // Events are kept for the longest archive retention of any tier (400 days by default):
    // two of a generation long gone stand for an old trace.
    store.exec("INSERT INTO idem.events (at, tenant, endpoint, idem_key, generation, outcome) "
               "SELECT now() - interval '500 days', 'acct_1', 'POST /v1/payments', 'role-ancient', 1, 'executed' "
               "FROM generate_series(1, 2)");
    QThread::msleep(1300);
    QCOMPARE(test::runIdemctl({"sweep", "--db", admin.conninfo}, &out), 0);
    QVERIFY2(out.find("purged 3 archived generations past retention, purged 2 old events") != std::string::npos,
             out.c_str());
    QCOMPARE(store.exec("SELECT count(*) AS n FROM idem.key_archive").integer(0, "n"), 0LL);
    QCOMPARE(store.exec("SELECT count(*) AS n FROM idem.events WHERE idem_key = 'role-ancient'").integer(0, "n"), 0LL);
    // The payment (TTL 1 h) and its trace are untouched.
    QCOMPARE(store.exec("SELECT count(*) AS n FROM idem.keys WHERE idem_key = 'role-pay'").integer(0, "n"), 1LL);
  }

  void serviceIsRefusedWhatItMustNotDo() {
    test::TestDatabase db("ep_roles_svc");
    test::LoginRole service(db, "idem_service");
    const std::string& s = service.conninfo;
    // The archive is append-only for the service; the trace is too.
    QCOMPARE(sqlstateOf(s, "DELETE FROM idem.key_archive"), std::string(kDenied));
    QCOMPARE(sqlstateOf(s, "UPDATE idem.key_archive SET resp_body = NULL"), std::string(kDenied));
    QCOMPARE(sqlstateOf(s, "DELETE FROM idem.events"), std::string(kDenied));
    QCOMPARE(sqlstateOf(s, "UPDATE idem.events SET detail = 'x'"), std::string(kDenied));
    QCOMPARE(sqlstateOf(s, "TRUNCATE idem.events"), std::string(kDenied));
    QCOMPARE(sqlstateOf(s, "UPDATE idem.policies SET source = 'x'"), std::string(kDenied));
    QCOMPARE(sqlstateOf(s, "DELETE FROM idem.policies"), std::string(kDenied));
    QCOMPARE(sqlstateOf(s, "DELETE FROM idem_demo.ledger"), std::string(kDenied));
    // No DDL.
    QCOMPARE(sqlstateOf(s, "CREATE TABLE idem.x (a int)"), std::string(kDenied));
    QCOMPARE(sqlstateOf(s, "ALTER TABLE idem.keys ADD COLUMN x int"), std::string(kDenied));
    QCOMPARE(sqlstateOf(s, "DROP TABLE idem.events"), std::string(kDenied));
    QCOMPARE(sqlstateOf(s, "CREATE FUNCTION idem.f() RETURNS int LANGUAGE sql AS 'SELECT 1'"), std::string(kDenied));
    // Not the sweeper's work (it could otherwise empty the live keys into the archive).
    QCOMPARE(sqlstateOf(s, "SELECT idem.sweep_archive(10, '{}', '{}', '0 s')"), std::string(kDenied));
    QCOMPARE(sqlstateOf(s, "SELECT idem.purge_archive(10)"), std::string(kDenied));
    QCOMPARE(sqlstateOf(s, "SELECT idem.purge_events(10, '0 s')"), std::string(kDenied));
    QCOMPARE(sqlstateOf(s, "SELECT idem.drop_archived_bodies(10, 'payments', '0 s')"), std::string(kDenied));
    // It renews the leases of the requests it runs (a request longer than a third of its lease).
    QCOMPARE(sqlstateOf(s, "SELECT * FROM idem.renew_leases('{}', '{}', '{}', '{}', '{}')"), std::string());
  }

  void adminIsRefusedWhatItMustNotDo() {
    test::TestDatabase db("ep_roles_adm");
    test::LoginRole admin(db, "idem_admin");
    const std::string& a = admin.conninfo;
    // The sweeper's functions are its only writes: no live key, archived row, trace row or
    // policy is written, changed or deleted by hand, and no claim is made.
    QCOMPARE(sqlstateOf(a, "INSERT INTO idem.keys (tenant, endpoint, idem_key, tier, fingerprint, state, expires_at) "
                           "VALUES ('', 'POST /x', 'k', 't', '\\x00', 'done', now())"),
             std::string(kDenied));
    QCOMPARE(sqlstateOf(a, "UPDATE idem.keys SET resp_body = NULL"), std::string(kDenied));
    QCOMPARE(sqlstateOf(a, "DELETE FROM idem.keys"), std::string(kDenied));
    QCOMPARE(sqlstateOf(a, "UPDATE idem.key_archive SET purge_after = now()"), std::string(kDenied));
    QCOMPARE(sqlstateOf(a, "DELETE FROM idem.key_archive"), std::string(kDenied));
    QCOMPARE(sqlstateOf(a, "DELETE FROM idem.events"), std::string(kDenied));
    QCOMPARE(sqlstateOf(a, "UPDATE idem.events SET detail = 'x'"), std::string(kDenied));
    QCOMPARE(sqlstateOf(a, "INSERT INTO idem.events (tenant, endpoint, idem_key, outcome) "
                           "VALUES ('', 'POST /x', 'k', 'replayed')"),
             std::string(kDenied));
    // It records and chooses policies (idemctl policy activate) but changes no recorded one.
    QCOMPARE(sqlstateOf(a, "UPDATE idem.policies SET document = '{}'"), std::string(kDenied));
    QCOMPARE(sqlstateOf(a, "DELETE FROM idem.policies"), std::string(kDenied));
    QCOMPARE(sqlstateOf(a, "DELETE FROM idem.policy_choices"), std::string(kDenied));
    QCOMPARE(sqlstateOf(a, "INSERT INTO idem.policy_choices (version, chosen_by) VALUES (1, 'someone else')"),
             std::string(kDenied));
    QCOMPARE(sqlstateOf(a, "TRUNCATE idem.key_archive"), std::string(kDenied));
    QCOMPARE(sqlstateOf(a, "CREATE TABLE idem.x (a int)"), std::string(kDenied));
    QCOMPARE(sqlstateOf(a, "ALTER TABLE idem.events DROP COLUMN detail"), std::string(kDenied));
    QCOMPARE(sqlstateOf(a, "SELECT * FROM idem.claim('', 'POST /x', 'k', '\\x00', 't', NULL, '1 h', '30 s', "
                           "'execute', 'r', '1 d')"),
             std::string(kDenied));
    QCOMPARE(sqlstateOf(a, "SELECT idem.release('', 'POST /x', 'k', gen_random_uuid(), 500, 'r', 'x')"),
             std::string(kDenied));
    QCOMPARE(sqlstateOf(a, "SELECT * FROM idem.renew_leases('{}', '{}', '{}', '{}', '{}')"), std::string(kDenied));
    // It reads what explain and the sweeper read, and what the sweeper had to leave live.
    QCOMPARE(sqlstateOf(a, "SELECT count(*) FROM idem.keys, idem.key_archive, idem.events, idem.policies"),
             std::string());
    QCOMPARE(sqlstateOf(a, "SELECT * FROM idem.unarchivable_keys(10)"), std::string());
  }

  void consoleOnlyReads() {
    test::TestDatabase db("ep_roles_con");
    test::LoginRole console(db, "idem_console");
    const std::string& c = console.conninfo;
    QCOMPARE(sqlstateOf(c, "SELECT (SELECT count(*) FROM idem.keys) + (SELECT count(*) FROM idem.key_archive) + "
                           "(SELECT count(*) FROM idem.events) + (SELECT count(*) FROM idem.policies) + "
                           "(SELECT count(*) FROM idem.schema_migrations) + (SELECT count(*) FROM idem_demo.ledger)"),
             std::string());
    for (const char* table : {"idem.keys", "idem.key_archive", "idem.events", "idem.policies",
                              "idem.schema_migrations", "idem_demo.ledger"}) {
      QCOMPARE(sqlstateOf(c, std::string("DELETE FROM ") + table), std::string(kDenied));
      QCOMPARE(sqlstateOf(c, std::string("TRUNCATE ") + table), std::string(kDenied));
    }
    QCOMPARE(sqlstateOf(c, "UPDATE idem.keys SET resp_body = NULL"), std::string(kDenied));
    QCOMPARE(sqlstateOf(c, "INSERT INTO idem.policies (sha256, document) VALUES ('x', '{}')"), std::string(kDenied));
    QCOMPARE(sqlstateOf(c, "INSERT INTO idem.events (tenant, endpoint, idem_key, outcome) "
                           "VALUES ('', 'POST /x', 'k', 'replayed')"),
             std::string(kDenied));
    QCOMPARE(sqlstateOf(c, "CREATE TABLE idem.x (a int)"), std::string(kDenied));
    QCOMPARE(sqlstateOf(c, "SELECT * FROM idem.claim('', 'POST /x', 'k', '\\x00', 't', NULL, '1 h', '30 s', "
                           "'execute', 'r', '1 d')"),
             std::string(kDenied));
    QCOMPARE(sqlstateOf(c, "SELECT idem.purge_events(10, '0 s')"), std::string(kDenied));
    QCOMPARE(sqlstateOf(c, "SELECT idem.sweep_archive(10, '{}', '{}', '0 s')"), std::string(kDenied));
  }

  // A function that runs with the caller's search_path can be made to call the caller's own
  // objects in place of pg_catalog's; one executable by PUBLIC is open to every role.
  void functionsPinSearchPathAndAreNotPublic() {
    test::TestDatabase db("ep_roles_fn");
    auto c = db.connect();
    auto r = c.exec(
        "SELECT p.oid::regprocedure::text AS fn, "
        "coalesce((SELECT true FROM unnest(p.proconfig) s WHERE s LIKE 'search_path=%'), false) AS pinned, "
        "coalesce((SELECT true FROM aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) a "
        "          WHERE a.grantee = 0 AND a.privilege_type = 'EXECUTE'), false) AS public_exec "
        "FROM pg_proc p WHERE p.pronamespace = 'idem'::regnamespace ORDER BY 1");
    QVERIFY(r.rows() >= 9);
    for (int i = 0; i < r.rows(); ++i) {
      QVERIFY2(r.boolean(i, "pinned"), (r.str(i, "fn") + " runs with the caller's search_path").c_str());
      QVERIFY2(!r.boolean(i, "public_exec"), (r.str(i, "fn") + " is executable by PUBLIC").c_str());
    }
  }
};

QTEST_MAIN(TestRoles)
#include "tst_roles.moc"
